"""What a table is handed instead of importing it: small interfaces (typing protocols) that the
floor implements.

* :class:`Host` — the floor that runs the table: the store, the clock, the players' balances
  (checked before a commit, booked after it) and how long a busy table gathers its changes.
* :class:`LockOut` — the table's tilts (PA 605a lock-out): restored at start, raised on an
  irregularity, and on a step the store failed to write.
* :class:`CardInventory` — the card inventory of a reader table's shoe (PA 605a): restored at
  start, a missing shoe that stops dealing, every card read taken out of it.
* :class:`Subscriber` — a socket watching the table: what the broadcast sends it.

The floor makes one :class:`LockOut` and one :class:`CardInventory` for each table (each knows
its table); the table calls them and never the floor's modules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from tablejack.server.table.errors import RefusedError
from tablejack.store import EventRecord, Store, Transfer

__all__ = ["CardInventory", "Host", "LockOut", "Subscriber"]


class Host(Protocol):
    """What a table uses of the floor that runs it."""

    @property
    def store(self) -> Store:
        """The store every step is committed to."""

    @property
    def balances(self) -> Mapping[str, int]:
        """The players' balances as this process knows them (the balance cache)."""

    @property
    def broadcast_interval(self) -> float:
        """Seconds a table gathers changes before it sends one update (0: next loop turn)."""

    @property
    def step_window(self) -> float:
        """Seconds a table's worker, idle when a terminal's request arrives, waits for the
        requests that follow it, to apply them all as one step (0: those waiting at the next
        loop turn)."""

    @property
    def step_wait(self) -> float:
        """Seconds at most a table's worker waits, in a decision window, for the answers of
        every player the window waits for."""

    def clock(self) -> float:
        """The floor clock in seconds."""

    def now_us(self) -> int:
        """The floor clock in microseconds."""

    def check_funds(self, transfers: Iterable[Transfer]) -> None:
        """Refuse (:class:`~tablejack.store.InsufficientFundsError`) transfers a player's cached
        balance cannot cover; the database refuses them too."""

    def book(self, transfers: Iterable[Transfer]) -> None:
        """Apply committed transfers to the balance cache."""


class Subscriber(Protocol):
    """A socket watching a table: who it is, what it was last sent, and its queue."""

    @property
    def role(self) -> str:
        """``player``, or a member of staff."""

    @property
    def subject(self) -> str:
        """The player's account, or the staff member's name."""

    @property
    def terminal(self) -> str:
        """The terminal (a player's) or console (staff) the socket speaks for."""

    last_state: tuple[Any, ...] | None
    """What the last broadcast state showed this socket (an unchanged state is not sent)."""

    told: tuple[str | None, int]
    """The round and sequence number a broadcast last told this socket."""

    wants_seq: int | None
    """A command in flight (0), or answered at a sequence number not told yet; None: none."""

    def push(self, message: dict[str, Any] | str | None) -> None:
        """Queue a message (a dict, or its JSON text already encoded; None: close)."""

    def end(self, reason: str) -> None:
        """Close the socket (1008 ``reason``) after the messages already waiting."""


class LockOut(Protocol):
    """A table's tilts (PA 605a lock-out), made for it by the floor."""

    def restore(self, records: Sequence[EventRecord]) -> None:
        """Take the table's active tilts from its procedure log (at start)."""

    async def started(self) -> None:
        """After the start's recovery: a table under an active tilt stays locked, and the
        locks of its terminals are shown."""

    async def raise_tilt(self, code: str, message: str, *, by: str, rule: str) -> dict[str, Any]:
        """Lock the table with a tilt ``code`` (the table's lock is held): locked in memory
        first, then written; the tilt."""

    async def storage_fault(self, error: BaseException) -> RefusedError:
        """A step's commit failed: rebuild the round from its log, lock the table with
        ``storage_error``, and the refusal the request gets."""


class CardInventory(Protocol):
    """The card inventory of a table's shoe (PA 605a), made for it by the floor."""

    @property
    def rule(self) -> str:
        """The rule a refusal of the inventory names."""

    async def restore(self, records: Sequence[EventRecord]) -> None:
        """Rebuild the shoe in use from the procedure log and the rounds dealt since (at
        start)."""

    def problem(self) -> RefusedError | None:
        """Why the table may not deal for want of a loaded shoe, or None."""

    def take(self, code: str) -> bool:
        """Count a card read out of the shoe; False when the inventory has no copy left."""
