"""The significant events of a SAS gaming machine: their exception codes and the queue a
general poll reads them from — priority exceptions first and never lost, the others in a
queue of :data:`QUEUE_SIZE` that reports an overflow. Safe to use from two threads (the
floor's event loop reports, a line's thread answers general polls).
"""

from __future__ import annotations

import threading
from collections import deque

__all__ = ["EXCEPTIONS", "PRIORITY", "QUEUE_SIZE", "ExceptionQueue"]

EXCEPTIONS: dict[str, int] = {
    "door_open": 0x11,  # slot door was opened
    "door_closed": 0x12,  # slot door was closed
    "power_applied": 0x17,  # AC power was applied to the gaming machine
    "power_lost": 0x18,  # AC power was lost from the gaming machine
    "tilt": 0x20,  # general tilt
    "bill_accepted": 0x4F,  # bill accepted (non-real-time event reporting)
    "ticket_printed": 0x3D,  # a cash out ticket has been printed
    "handpay_validated": 0x3E,  # a handpay has been validated
    "handpay_pending": 0x51,  # handpay is pending
    "handpay_reset": 0x52,  # handpay was reset
    "validation_request": 0x57,  # system validation request
    "printer_error": 0x60,  # printer communication error
    "ticket_inserted": 0x67,  # ticket has been inserted
    "ticket_complete": 0x68,  # ticket transfer complete
    "buffer_overflow": 0x70,  # exception buffer overflow
    "game_start": 0x7E,  # game has started
    "game_end": 0x7F,  # game has ended
    "disabled": 0x86,  # gaming machine is out of service (by attendant)
}
"""The significant events a terminal reports, and their SAS exception codes."""

PRIORITY = frozenset({0x3D, 0x3E, 0x51, 0x52, 0x57, 0x67, 0x68})
"""Priority exceptions: reported before the others, and never lost to an overflow."""

QUEUE_SIZE = 32
"""Exceptions kept for the host (SAS asks for at least 20); one more drops the oldest and
reports 0x70 (exception buffer overflow)."""


class ExceptionQueue:
    """The exceptions waiting for the host."""

    def __init__(self) -> None:
        self.queue: deque[int] = deque()
        self.priority: deque[int] = deque()
        self.overflowed = False
        self._lock = threading.Lock()

    def report(self, code: int) -> None:
        """Queue an exception: a priority one always; another drops the oldest when the
        queue is full (and the overflow is reported next)."""
        with self._lock:
            if code in PRIORITY:
                self.priority.append(code)
                return
            if len(self.queue) >= QUEUE_SIZE:
                self.queue.popleft()
                self.overflowed = True
            self.queue.append(code)

    def next_priority(self) -> int | None:
        """The next priority exception, then the overflow's, or None."""
        with self._lock:
            if self.priority:
                return self.priority.popleft()
            if self.overflowed:
                self.overflowed = False
                return EXCEPTIONS["buffer_overflow"]
            return None

    def next_other(self) -> int:
        """The oldest other exception, or 0x00."""
        with self._lock:
            return self.queue.popleft() if self.queue else 0x00
