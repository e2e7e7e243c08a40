"""Storable text and JSON values."""

from typing import Any

from hypothesis import strategies as st

from ecp_core.canonical import MAX_SAFE_INTEGER

STORABLE = st.characters(exclude_characters="\x00", exclude_categories=["Cs"])
"""Characters a text column can store: no U+0000, no lone surrogates."""


def text(*, min_size: int = 0, max_size: int | None = None) -> st.SearchStrategy[str]:
    """Storable text: ECP refuses U+0000 everywhere, since PostgreSQL cannot store it."""
    return st.text(alphabet=STORABLE, min_size=min_size, max_size=max_size)


json_scalars: st.SearchStrategy[Any] = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-MAX_SAFE_INTEGER, max_value=MAX_SAFE_INTEGER)
    | st.floats(allow_nan=False, allow_infinity=False)
    | text(max_size=20)
)
"""JSON scalars ECP accepts: integers within the safe range, finite floats, storable text."""

json_values: st.SearchStrategy[Any] = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
"""Small JSON documents of :data:`json_scalars`."""
