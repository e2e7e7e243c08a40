"""Entitlements: the plans' quotas and the meters that count usage per billing period."""
