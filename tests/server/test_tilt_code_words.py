"""A tilt raised with a code the store does not know is refused in a sentence that lists the
codes (PA 633c.5 lock-out; the codes of store/protections.py), never a Python tuple."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from tablejack.server.duties.tilts import raise_tilt
from tablejack.store.protections import TILT_CODES


def test_633c5_an_unknown_tilt_code_is_refused_in_a_sentence_listing_the_codes() -> None:
    # the code is checked before the table is touched: no table is needed to be refused
    with pytest.raises(ValueError) as refused:
        asyncio.run(raise_tilt(cast(Any, None), "door_ajar", "a door", by="dana"))
    text = str(refused.value)
    assert text == f"A tilt code is one of {', '.join(TILT_CODES)}, not door_ajar."
    assert "(" not in text and "'" not in text
