"""The receiver guide's verification snippet works on a real signature."""

import pathlib
import re

import pytest

from ecp_core.webhooks import sign_body

GUIDE = pathlib.Path(__file__).parents[2] / "docs" / "webhooks.md"


@pytest.mark.spec("§5 outbound-signature")
def test_the_guides_snippet_verifies_signatures():
    code = re.search(r"```python\n(.*?)```", GUIDE.read_text(), re.DOTALL).group(1)
    namespace: dict = {}
    exec(compile(code, str(GUIDE), "exec"), namespace)  # noqa: S102 - our own document
    body = b'{"event_id":"e-1","event_type":"run.completed"}'
    assert namespace["verified"](
        "a-long-enough-secret", body, sign_body("a-long-enough-secret", body)
    )
    assert not namespace["verified"](
        "a-long-enough-secret", body + b"\n", sign_body("a-long-enough-secret", body)
    )
