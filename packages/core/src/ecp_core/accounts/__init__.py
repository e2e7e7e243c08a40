"""Hosted accounts: an identity provider organization bound to a tenant, and its activation."""
