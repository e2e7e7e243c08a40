"""The command line shared by the documents rendered from code (``errors_doc``, ``permissions_doc``).

Each prints its rendering, or writes it to ``--output``; a test holds the committed file to it.
"""

import argparse
import pathlib
import sys
from collections.abc import Callable, Sequence


def document_main(prog: str, render: Callable[[], str], argv: Sequence[str] | None = None) -> int:
    """Print ``render()``, or write it to ``--output``; return the exit status."""
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--output", type=pathlib.Path, help="write here instead of stdout")
    args = parser.parse_args(argv)
    text = render()
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
    return 0
