"""The SQL store of the table system: accounts, the double-entry ledger in integer cents, the
append-only hash-chained round event log, meters, role tokens and the audit log.

SQLite (a file, zero set-up) by default; PostgreSQL by URL. The schema is created and upgraded
by Alembic migrations shipped inside the package (:meth:`Store.open` applies them).
"""

from __future__ import annotations

from tablejack.store import cage_models as cage_models  # the cage's dual control, drawers
from tablejack.store import floor_models as floor_models  # the 605a tables
from tablejack.store import lease_models as lease_models  # a floor of several processes
from tablejack.store.db import (
    CAGE,
    GENESIS,
    DuplicateEventError,
    EventIn,
    EventRecord,
    FencedError,
    InsufficientFundsError,
    LimitRefusedError,
    Step,
    Store,
    StoreError,
    Transfer,
    async_url,
    chain_hash,
    now_us,
)
from tablejack.store.fencing import Fence

__all__ = [
    "CAGE",
    "GENESIS",
    "DuplicateEventError",
    "EventIn",
    "EventRecord",
    "Fence",
    "FencedError",
    "InsufficientFundsError",
    "LimitRefusedError",
    "Step",
    "Store",
    "StoreError",
    "Transfer",
    "async_url",
    "chain_hash",
    "now_us",
]
