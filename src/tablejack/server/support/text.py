"""Text that may travel from a client into the log: :data:`SafeText` refuses control characters.

Every free-text string of a REST body and of a WebSocket message (a void reason, a procedure
note, a tilt reason, a dealer's name, a voucher code, a table id, a token …) is a
:data:`SafeText`. It refuses the characters U+0000 to U+001F and U+007F — NUL, which a
PostgreSQL text column cannot hold, and the other control characters, which have no business in
a one-line reason and would make a log unreadable. Nothing else is special; the fields are one
line, so newlines and tabs are refused too.

>>> from pydantic import TypeAdapter
>>> TypeAdapter(SafeText).validate_python("shoe replaced")
'shoe replaced'
>>> from pydantic import ValidationError
>>> try:
...     TypeAdapter(SafeText).validate_python("nul\\x00here")
... except ValidationError as error:
...     print(error.errors()[0]["msg"])
Text may not hold control characters (U+0000 to U+001F, U+007F); U+0000 at character 4 is refused (text: no control characters).
>>> printable("a\\x00b\\nc")
'a\\\\x00b\\\\x0ac'
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

__all__ = [
    "CONTROL_CHARACTERS",
    "REFUSE_CONTROL_CHARACTERS",
    "TEXT_RULE",
    "SafeText",
    "control_character_refusal",
    "first_control_character",
    "printable",
]

TEXT_RULE = "text: no control characters"
"""The rule a refused text names."""
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f]")
"""What :data:`SafeText` refuses."""
_REFUSAL = (
    "Text may not hold control characters (U+0000 to U+001F, U+007F); {code} at character "
    "{at} is refused ({rule})."
)


def first_control_character(text: str) -> tuple[int, str] | None:
    """The position (from 1) and code point (``U+0000``) of the first control character of
    ``text``, or None."""
    found = CONTROL_CHARACTERS.search(text)
    if found is None:
        return None
    return found.start() + 1, f"U+{ord(found.group()):04X}"


def control_character_refusal(text: str) -> str | None:
    """The sentence that refuses ``text``, or None when it holds no control character."""
    found = first_control_character(text)
    if found is None:
        return None
    return _REFUSAL.format(code=found[1], at=found[0], rule=TEXT_RULE)


def _refuse_control_characters(text: str) -> str:
    found = first_control_character(text)
    if found is not None:
        at, code = found
        context = {"code": code, "at": at, "rule": TEXT_RULE}
        raise PydanticCustomError("control_character", _REFUSAL, context)
    return text


REFUSE_CONTROL_CHARACTERS = AfterValidator(_refuse_control_characters)
"""The validator of :data:`SafeText`."""
SafeText = Annotated[str, REFUSE_CONTROL_CHARACTERS]
"""A string without control characters (see the module docstring); length limits and patterns
are added where the field is declared (``reason: SafeText = Field(max_length=200)``). A text
that may be null and has a pattern puts the pattern first,
``Annotated[str, Field(pattern=…), REFUSE_CONTROL_CHARACTERS] | None``, so that the published
schema keeps it (pydantic leaves out a nullable field's pattern applied after a validator)."""


def printable(text: str, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters with each control character written as ``\\xNN``:
    what the server quotes of a client's input in a log line or an audit message."""
    cut = text[:limit] + ("…" if len(text) > limit else "")
    return CONTROL_CHARACTERS.sub(lambda m: f"\\x{ord(m.group()):02x}", cut)
