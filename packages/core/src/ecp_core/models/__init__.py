"""Model calls: the catalog of models the service may call, their prices, and what a call returns."""
