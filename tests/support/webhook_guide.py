"""The receiver guide's verifiers (docs/webhooks.md), run as written.

Every ```python block of the guide is executed in order in one namespace, so tests call the very
functions a reader copies: ``verify_with_library``, ``verify_standard``, ``signing_key`` and
``verified``.
"""

import pathlib
import re
from typing import Any

GUIDE = pathlib.Path(__file__).parents[2] / "docs" / "webhooks.md"


def guide_verifiers() -> dict[str, Any]:
    """The namespace left by running every Python block of the guide."""
    namespace: dict[str, Any] = {}
    for number, code in enumerate(re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.DOTALL)):
        exec(compile(code, f"{GUIDE}#python-{number}", "exec"), namespace)  # noqa: S102 - our own document
    return namespace
