"""Errors of the PostgreSQL adapter that are not errors of the core (start-up only)."""


class DatabaseUnavailable(Exception):
    """The database cannot be reached, or the embedded server did not start.

    The message is one line for an operator and never holds a password.
    """
