"""The ``console`` fixture: one served console per browser test module."""

from collections.abc import Iterator

import pytest
from tests.support.console_browser import Console, console_server


@pytest.fixture(scope="module")
def console(postgres_url: str, migrated_template: str) -> Iterator[Console]:
    """A server on its own database whose console cookies travel over loopback HTTP."""
    with console_server(postgres_url, migrated_template) as served:
        yield served
