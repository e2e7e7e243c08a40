"""The accounts port: external identity bindings and the identity provider."""
