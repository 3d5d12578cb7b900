"""The dialects that keep views over JSON objects lose nothing: ``dump(load(x)) == x`` for any array
of objects, whatever keys and values they hold (the codec's promise, ``ctxmodel.dialects.Dialect``)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxmodel.dialects import get

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)


@pytest.mark.parametrize("name", ["gemini", "bedrock-converse"])
@settings(max_examples=60, deadline=None)
@given(value=st.lists(st.dictionaries(st.text(max_size=6), _json, max_size=4), max_size=4))
def test_dump_of_load_is_the_input(name: str, value: list[dict[str, Any]]) -> None:
    dialect = get(name)
    assert dialect.dump(dialect.load(value)) == value
