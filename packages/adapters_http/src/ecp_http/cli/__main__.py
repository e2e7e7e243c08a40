"""``python -m ecp_http.cli``: the ``ecp`` command line."""

import sys

from ecp_http.cli import main

if __name__ == "__main__":
    sys.exit(main())
