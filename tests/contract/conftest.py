"""Port contract suites run against every implementation listed in ``IMPLEMENTATIONS``.

Each implementation is a factory returning a UnitOfWorkFactory over a fresh, empty store. The
PostgreSQL adapter adds itself here when it lands.
"""

from collections.abc import Callable

import pytest

from ecp_core.memory import MemoryStore
from ecp_core.ports import UnitOfWorkFactory


def memory() -> UnitOfWorkFactory:
    return MemoryStore().unit_of_work


IMPLEMENTATIONS: dict[str, Callable[[], UnitOfWorkFactory]] = {"memory": memory}


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def uow(request) -> UnitOfWorkFactory:
    return IMPLEMENTATIONS[request.param]()
