"""PostgreSQL adapter for ECP (psycopg 3, yoyo migrations, embedded pgserver).

A skeleton for now: later issues fill it in behind the ports of `ecp_core`.
"""

__all__: list[str] = []
