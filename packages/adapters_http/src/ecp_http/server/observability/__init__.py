"""What the running server tells its operators: request ids and access lines, metrics, traces.

The request middleware, the Prometheus registry, OpenTelemetry traces (the ``otel`` extra)
and the unit of work that counts what commits. Structured logs are :mod:`ecp_http.logs`.
"""
