"""Argument types the commands of ``ecp`` share: argparse turns their refusals into usage errors."""

import argparse
from collections.abc import Callable


def whole_number(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` (to ``high`` when given), in ASCII digits."""
    span = f"{low}..{high}" if high is not None else f"at least {low}"

    def parse(text: str) -> int:
        if not (text.isascii() and text.isdigit()):
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number ({span})")
        value = int(text)
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{text!r} is not within {span}")
        return value

    return parse


positive = whole_number(1)
"""An argparse type: a whole number of at least 1."""

port = whole_number(0, 65535)
"""An argparse type: a TCP port, 0 for one the system picks."""
