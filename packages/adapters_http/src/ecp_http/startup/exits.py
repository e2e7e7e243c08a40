"""How a command of ``ecp`` ends badly: one line on stderr and an exit status (ADR 0053).

``ecp`` exits 2 when a command cannot run as given (a usage error, invalid settings, missing
credentials or secrets, a start-up refusal) and 1 when it ran and failed (the service answered
with a problem or could not be reached, a file could not be read, the core refused).
"""

USAGE = 2
"""Exit status of a command that cannot run as given."""

FAILURE = 1
"""Exit status of a command that ran and failed."""

INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT), as shells report it."""


class CommandRefused(Exception):
    """The command cannot run as given; the message says what to set or change (exit 2)."""


class CommandFailed(Exception):
    """The command ran and failed; the message says what happened (exit 1).

    The first line is the whole story; a refused request's failing fields may follow, indented.
    """


class RefusedToStart(Exception):
    """A server (or the plug-ins its settings name) refuses to start: ``ecp: <line>``, exit 2."""
