"""Settings: read once from an injected mapping into frozen objects, each bad value named.

The settings of each area (hosted offer, backtests, connectors), the model catalog file and
the secrets actions name by reference are read here; nothing here imports the server.
"""
