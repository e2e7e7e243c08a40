"""Lets the test import the adapter beside it (in your project the adapter is installed)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
