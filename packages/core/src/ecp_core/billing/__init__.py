"""The merchant-of-record subscription of a hosted tenant: its plan, state and billing period."""
