"""What a table answers when it refuses: :class:`RefusedError` (a code, the rule and a
sentence; nothing was changed), and the engine's wager refusal that comes first,
:class:`WageringClosedError`."""

from __future__ import annotations

from tablejack.core.errors import IllegalActionError, TablejackError

__all__ = ["RefusedError", "WageringClosedError", "fault"]


class RefusedError(Exception):
    """A request the server refuses: ``code`` (machine), ``rule`` (clause or server rule) and
    a sentence. Nothing was changed."""

    def __init__(self, code: str, message: str, rule: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.rule = rule
        self.message = message

    @classmethod
    def from_engine(cls, error: TablejackError) -> RefusedError:
        """An engine refusal (illegal action or bad notation); an error may name its own
        ``code`` (:class:`WageringClosedError`)."""
        code = getattr(error, "code", None) or (
            "illegal" if isinstance(error, IllegalActionError) else "invalid"
        )
        return cls(str(code), error.message, error.rule)


class WageringClosedError(IllegalActionError):
    """A wager outside the round's wagering phase: refused before the engine looks at the
    wager itself, so the player reads that wagering is closed (code ``wagering_closed``), not
    that he already has a wager or that a limit is passed."""

    code = "wagering_closed"


def fault(error: BaseException) -> str:
    """What a store's error says, in one short line (its type and first line)."""
    lines = str(error).strip().splitlines()
    text = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
    return text if len(text) <= 160 else text[:159] + "…"
