"""The README's embedding example runs as written."""

import pathlib
import re

import pytest

pytestmark = pytest.mark.unit

README = pathlib.Path(__file__).parents[2] / "README.md"


def test_readme_example_runs():
    code = re.search(r"```python\n(.*?)```", README.read_text(), re.DOTALL).group(1)
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 - our own README
    run = namespace["ecp"].runs.get("acme", namespace["run"].run_id)
    assert run.status.value == "COMPLETED"
    assert run.state["category"] == "refund"  # the example's own action ran
    assert namespace["ecp"].actions.described("classify").source == "plugin"
    assert len(code.strip().splitlines()) <= 16
