"""The texts the event log's hashes cover are the ones ``json.dumps`` gives with the arguments
the log was written with: an encoder made once must not change a byte of them, or every chain
written before would stop verifying."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tablejack.store.chain import canonical, chain_hash

_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(st.dictionaries(st.text(), _VALUES, max_size=6))
def test_canonical_is_sorted_compact_json_as_dumps_writes_it(payload: dict[str, Any]) -> None:
    assert canonical(payload) == json.dumps(
        payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )


@given(
    st.text(),
    st.text(),
    st.integers(min_value=0),
    st.integers(min_value=0),
    st.text(),
    st.text(),
    st.text(),
    st.dictionaries(st.text(), _VALUES, max_size=4),
)
def test_chain_hash_covers_the_text_dumps_writes(
    prev: str,
    round_id: str,
    seq: int,
    at_us: int,
    kind: str,
    actor: str,
    terminal: str,
    payload: dict[str, Any],
) -> None:
    text = canonical(payload)
    expected = json.dumps(
        [prev, round_id, seq, at_us, kind, actor, terminal, text],
        separators=(",", ":"),
        ensure_ascii=False,
    )
    digest = chain_hash(prev, round_id, seq, at_us, kind, actor, terminal, text)
    assert digest == hashlib.sha256(expected.encode()).hexdigest()
