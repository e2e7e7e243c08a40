"""The entitlements port: meters per tenant and billing period."""
