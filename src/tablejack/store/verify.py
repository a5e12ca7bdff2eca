"""``verify-log``: everything the store can prove about itself, each problem named by its row.

:func:`verify` reads the whole database once and checks:

1. **The chains.** Every round's and log's events follow each other (``seq`` 1, 2, …), each
   hash is the SHA-256 of the one before and the event's own fields, and the round row names
   the last link (a removed tail shows).
2. **The ledger against the events.** Every ledger row names the event that caused it, and that
   event lists the posting (``postings`` in its payload, which its hash covers): a row with no
   event, a row whose amount or accounts differ from the posting, and a posting with no row are
   each reported by row. The amounts are also checked against what the events imply: a wager
   event's amount, each settlement of a round's ``complete`` event (the wager escrowed, the
   part returned, lost and won), a void's refunds, and the amount of every buy-in, cash-out,
   voucher, hand pay and tip event.
3. **The invariants** of the money-movement policy (:data:`tablejack.store.policy.INVARIANTS`):
   every balance equals its ledger rows and all sum to zero; no player below zero; each
   table's escrow equals the open wagers of its unfinished rounds; the vouchers account equals
   the vouchers outstanding, and every voucher row agrees with the events that issued and
   redeemed it; a credential row that no event issued, or bound since to another terminal,
   parent or device credential than it was issued with, is reported.
4. **The rows kept beside the log.** The ``meters`` table (drop and win per table and wager
   kind, raised with every step) against the ledger rows it must equal (the wagers less the
   refunds, the losses less the winnings: what ``meters_report`` derives); every floor setting
   against the last event of the settings log that set it
   (:data:`tablejack.store.settings.SETTINGS_LOG`).
5. **The signed checkpoints** (:mod:`tablejack.store.checkpoints`), given the public keys:
   every signature, the chain of statements, each Merkle root against its heads, and every
   stream's events up to the last head a checkpoint signed (an edited or recomputed event, a
   deleted tail or round, events reordered); events no checkpoint covers yet (written after
   the last one — or forged); and, given the append-only checkpoint files (one per process of
   a floor), both ways: that the database holds every checkpoint a file holds (a database
   rolled back to an older copy), and that the files hold every checkpoint the database holds
   (a line dropped from a file — its last one too). A checkpoint signed in the last
   :data:`FILE_GRACE_SECONDS` that no file holds yet is only pending (its process appends it
   right after writing it to the database), unless ``strict``.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from sqlalchemy import ColumnElement, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from tablejack.store.checkpoints import (
    CheckpointRecord,
    leaf,
    merkle_root,
    read_checkpoint_file,
    signature_ok,
    statement_hash,
)
from tablejack.store.credentials import AUTH_LOG
from tablejack.store.db import GENESIS, Store, chain_hash, now_us
from tablejack.store.floor_models import SETTINGS, VOUCHERS
from tablejack.store.keys import key_id
from tablejack.store.models import (
    ACCOUNTS,
    CHECKPOINT_HEADS,
    CHECKPOINTS,
    CREDENTIALS,
    EVENTS,
    LEDGER,
    METERS,
    ROUNDS,
    TRUST_META,
)
from tablejack.store.policy import INVARIANTS, MOVEMENTS, AccountKind, account_kind_of
from tablejack.store.settings import SETTINGS_LOG

__all__ = ["FILE_GRACE_SECONDS", "Report", "verify", "verify_chains"]

SETTLEMENT_KINDS = ("returned", "lost", "winnings")
FILE_GRACE_SECONDS = 60.0
"""How long a checkpoint of the database may be missing from the checkpoint files before it is
a problem (not ``strict``): the process that signed it appends it to its file right after the
database, and the other processes of a floor at their next checkpoint."""
ACCOUNT_EVENTS = {
    "fund": "fund",
    "bill_in": "bill_in",
    "voucher_out": "voucher_out",
    "voucher_in": "voucher_in",
    "voucher_paid": "voucher_paid",
    "voucher_sold": "voucher_sold",
    "host_voucher_in": "host_voucher_in",
    "host_redeemed": "host_redeemed",
    "voucher_voided": "voucher_voided",
    "tip": "tip",
}
"""Account-log events and the movement kind each books (a hand pay books its own kind)."""


@dataclass
class Report:
    """What :func:`verify` found: ``problems`` (each names its row), ``pending`` (events no
    signed checkpoint covers yet) and ``notes``."""

    problems: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    streams: int = 0
    rounds: int = 0
    events: int = 0
    ledger_rows: int = 0
    checkpoints: int = 0

    @property
    def ok(self) -> bool:
        """No problem found."""
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        """Plain data for the API and ``--json``."""
        return {
            "ok": self.ok,
            "problems": self.problems,
            "pending": self.pending,
            "notes": self.notes,
            "streams": self.streams,
            "rounds": self.rounds,
            "events": self.events,
            "ledger_rows": self.ledger_rows,
            "checkpoints": self.checkpoints,
        }


def _ordered(store: Store, column: Any) -> ColumnElement[Any]:
    """``column`` in byte order on both databases (Python's ``<`` on these ASCII ids agrees)."""
    return column.collate("C") if store.dialect == "postgresql" else column  # type: ignore[no-any-return]


VOUCHER_STATES = ("issued", "redeemed", "voided")
"""The states of a voucher row: issued by a ``voucher_out`` or ``voucher_sold`` event,
redeemed by a ``voucher_in``, ``voucher_paid`` or ``host_redeemed`` event (a casino system's
ticket, ``host_voucher_in``, is recorded already redeemed), voided (a voucher the cage sold) by a
``voucher_voided`` event."""
LEGACY_VOUCHER_US = 60_000_000
"""A voucher issued or redeemed before its event named the time (``issued_us``,
``redeemed_us``): its row's time is at most this far (µs) before the event's own."""


def _time_differs(row_us: Any, event: dict[str, Any], named: str) -> bool:
    """Whether a voucher row's time differs from its event's: the time the event names, or
    (an event from before it named one) the event's own time, a moment after the row's."""
    if row_us is None:
        return True
    if named in event:
        return bool(event[named] != row_us)
    return not 0 <= int(event["at_us"]) - int(row_us) <= LEGACY_VOUCHER_US


def _issue_differs(number: str, row: Any, issued: dict[str, Any]) -> list[str]:
    """A voucher row's issue — its time (its expiry runs from it), the terminal, the host
    that validated it — against the event that issued it."""
    found = []
    where = issued["where"]
    issuer: Any
    if issued.get("kind") == "host_voucher_in":
        # a casino system's ticket: its row names the system that issued it, its event is on
        # the log of the terminal it was inserted at
        issuer, log = str(issued.get("validated_by"))[:64], f"acct:{issued.get('terminal')}"
    else:
        issuer, log = issued.get("terminal"), f"acct:{row['terminal']}"
    if row["terminal"] != issuer or issued["log"] != log:
        found.append(
            f"voucher {number}: its row names terminal {str(row['terminal'])[:64]!r} but "
            f"{where} issued it at {issuer!r}"
        )
    if _time_differs(row["issued_us"], issued, "issued_us"):
        found.append(
            f"voucher {number}: its row was issued at {row['issued_us']} µs but {where} issued "
            f"it at {issued.get('issued_us', issued['at_us'])} µs (its expiry runs from it)"
        )
    if row["validated_by"] != issued.get("validated_by"):
        found.append(
            f"voucher {number}: its row says validated by {row['validated_by']!r} but {where} "
            f"says {issued.get('validated_by')!r}"
        )
    return found


def _redemption_differs(number: str, row: Any, event: dict[str, Any]) -> list[str]:
    """A redeemed voucher row — when, to whom, where — against the event that redeemed it."""
    where = event["where"]
    terminal: Any
    if event["kind"] == "host_redeemed":  # redeemed elsewhere on the casino system's floor
        terminal = str(event.get("validated_by"))[:64]
    else:
        terminal = event.get("terminal", "cage" if event["kind"] == "voucher_paid" else None)
    if (
        row["redeemed_account"] != event.get("account")
        or row["redeemed_terminal"] != terminal
        or _time_differs(row["redeemed_us"], event, "redeemed_us")
    ):
        return [
            f"voucher {number}: its row says redeemed by {row['redeemed_account']!r} at "
            f"{row['redeemed_terminal']!r} ({row['redeemed_us']} µs) but {where} redeemed it "
            f"for {event.get('account')!r} at {terminal!r} "
            f"({event.get('redeemed_us', event['at_us'])} µs)"
        ]
    return []


def _void_differs(
    number: str, row: Any, redeemed: list[dict[str, Any]], voided: list[dict[str, Any]]
) -> list[str]:
    """A voided voucher row against the event that voided it: one void, of the voucher's
    amount, of a voucher the cage sold, never redeemed, at the time and place its row says."""
    found = []
    if len(voided) > 1:
        places = ", ".join(v["where"] for v in voided)
        found.append(f"voucher {number}: voided {len(voided)} times ({places})")
    if row["status"] == "voided" and not voided:
        found.append(f"voucher {number}: marked voided but no event voided it")
    if row["status"] != "voided" and voided:
        found.append(
            f"voucher {number}: marked {str(row['status'])[:32]} but {voided[0]['where']} voided it"
        )
    if voided and redeemed:
        found.append(f"voucher {number}: voided and redeemed ({redeemed[0]['where']})")
    for event in voided:
        if event.get("amount") != row["amount"] or row["account"] != "cage":
            found.append(
                f"voucher {number}: {event['where']} voided {event.get('amount')} cents of a "
                f"voucher of {row['amount']} issued to {str(row['account'])[:64]!r} (only a "
                "voucher the cage sold is voided)"
            )
    if row["status"] == "voided" and len(voided) == 1:
        event = voided[0]
        if (
            row["redeemed_account"] != "cage"
            or row["redeemed_terminal"] != "cage"
            or _time_differs(row["redeemed_us"], event, "voided_us")
        ):
            found.append(
                f"voucher {number}: its row says voided at {row['redeemed_terminal']!r} "
                f"({row['redeemed_us']} µs) but {event['where']} voided it at the cage "
                f"({event.get('voided_us', event['at_us'])} µs)"
            )
    return found


@dataclass
class _Round:
    """What one stream's events and ledger rows add up to."""

    table: str = ""
    kind: str = "round"
    status: str = "open"
    """As the stream's own events say (``complete``, ``void``), not the round row."""
    wagered: Counter[int] = field(default_factory=Counter)
    out: dict[str, Counter[int]] = field(default_factory=lambda: defaultdict(Counter))
    players: dict[tuple[str, int], set[str]] = field(default_factory=lambda: defaultdict(set))


async def verify_chains(store: Store, round_ids: Iterable[str] | None = None) -> list[str]:
    """Only the hash chains (of ``round_ids``, or all): one line per problem."""
    wanted = None if round_ids is None else set(round_ids)
    problems: list[str] = []
    async with store.snapshot() as connection:  # the heads and the events of one moment
        statement = select(ROUNDS.c.id, ROUNDS.c.last_seq, ROUNDS.c.head_hash)
        events = select(EVENTS).order_by(EVENTS.c.round_id, EVENTS.c.seq)
        if wanted is not None:
            statement = statement.where(ROUNDS.c.id.in_(wanted))
            events = events.where(EVENTS.c.round_id.in_(wanted))
        heads = {
            row[0]: (int(row[1]), str(row[2]))
            for row in (await connection.execute(statement)).all()
        }
        state: dict[str, tuple[int, str]] = {}
        result = await connection.stream(events)
        async for row in result.mappings():
            _check_link(row, heads, state, problems, orphans=wanted is None)
    _check_ends(heads, state, problems)
    return problems


def _check_link(
    row: Any,
    heads: dict[str, tuple[int, str]],
    state: dict[str, tuple[int, str]],
    problems: list[str],
    *,
    orphans: bool = True,
) -> None:
    round_id = row["round_id"]
    if round_id not in heads:
        if orphans and round_id not in state:
            problems.append(f"{round_id}: events without a round row")
        state[round_id] = (row["seq"], row["hash"])
        return
    seq, prev = state.get(round_id, (0, GENESIS))
    if row["seq"] != seq + 1:
        problems.append(f"{round_id}: event {row['seq']} follows event {seq}")
    if row["prev_hash"] != prev:
        problems.append(f"{round_id} #{row['seq']}: the chain is broken before it")
    digest = chain_hash(
        row["prev_hash"],
        round_id,
        row["seq"],
        row["at_us"],
        row["kind"],
        row["actor"],
        row["terminal"],
        row["payload"],
    )
    if digest != row["hash"]:
        problems.append(f"{round_id} #{row['seq']}: the event was altered")
    state[round_id] = (row["seq"], row["hash"])


def _check_ends(
    heads: dict[str, tuple[int, str]], state: dict[str, tuple[int, str]], problems: list[str]
) -> None:
    for round_id, (last_seq, head_hash) in heads.items():
        seen = state.get(round_id, (0, GENESIS))
        if seen != (last_seq, head_hash):
            problems.append(
                f"{round_id}: the log ends at event {seen[0]} but the round row names event "
                f"{last_seq}" + ("" if seen[0] != last_seq else " with another hash")
            )


def _posting_text(posting: Sequence[Any]) -> str:
    kind, source, target, amount, wager = posting
    wager_text = "" if wager is None else f" wager {wager}"
    return f"{kind} {amount} {source}→{target}{wager_text}"


async def verify(
    store: Store,
    *,
    public_keys: Sequence[Ed25519PublicKey] = (),
    checkpoint_file: Path | None = None,
    checkpoint_files: Sequence[Path] = (),
    strict: bool = False,
) -> Report:
    """Verify the whole store (see the module's documentation). ``checkpoint_file`` and
    ``checkpoint_files``: the append-only checkpoint files (a floor of several processes: each
    process's). ``strict``: events no signed checkpoint covers, and checkpoints no file holds
    yet, are problems (a stopped server has signed and written everything)."""
    report = Report()
    files = [*([] if checkpoint_file is None else [checkpoint_file]), *checkpoint_files]
    # The files are read before the database's snapshot is taken: a checkpoint is committed to
    # the database before its line is appended to a file, so every line read here is in the
    # snapshot, even while a running server signs the next checkpoint.
    read = {path: read_checkpoint_file(path) if path.exists() else None for path in files}
    async with store.snapshot() as connection:
        run = _Verification(store, connection, report)
        await run.load()
        await run.stream()
        await run.accounts()
        await run.vouchers()
        await run.credentials()
        await run.meters()
        await run.settings()
        await run.checkpoints(list(public_keys), read, strict=strict)
    if strict:
        report.problems.extend(report.pending)
    return report


class _Verification:
    """One verification's reads, all on one connection in one snapshot
    (:meth:`~tablejack.store.db.Store.snapshot`): a step a live server commits meanwhile is
    either wholly seen or not at all, never its ledger rows without its events or a round row
    ahead of the events it names."""

    def __init__(self, store: Store, connection: AsyncConnection, report: Report) -> None:
        self.store = store
        self.connection = connection
        self.report = report
        self.heads: dict[str, tuple[int, str]] = {}
        self.rows: dict[str, dict[str, Any]] = {}
        self.state: dict[str, tuple[int, str]] = {}
        self.hashes_at: dict[tuple[str, int], str] = {}
        self.covered: dict[str, tuple[int, str, int]] = {}
        self.legacy_ledger = 0
        self.migrated: set[str] = set()
        self.holding: Counter[str] = Counter()
        """Per table: what its unfinished rounds hold in escrow by the ledger."""
        self.issued: dict[str, dict[str, Any]] = {}
        """Voucher number → its voucher_out event."""
        self.redeemed: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.voided: dict[str, list[dict[str, Any]]] = defaultdict(list)
        """Voucher number → the voucher_voided events that voided it (one at most)."""
        self.credential_events: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.settings_set: dict[str, dict[str, Any]] = {}
        """Floor setting → the last event of the settings log that set it."""

    async def load(self) -> None:
        async with self._reads() as connection:
            for row in (
                await connection.execute(
                    select(
                        ROUNDS.c.id,
                        ROUNDS.c.last_seq,
                        ROUNDS.c.head_hash,
                        ROUNDS.c.table_id,
                        ROUNDS.c.kind,
                        ROUNDS.c.status,
                    )
                )
            ).all():
                self.heads[row[0]] = (int(row[1]), str(row[2]))
                self.rows[row[0]] = {"table": row[3], "kind": row[4], "status": row[5]}
            for fact in (await connection.execute(select(TRUST_META))).all():
                if fact[0] == "legacy_ledger_id":
                    self.legacy_ledger = int(fact[1])
                if fact[0] == "migrated_credentials":
                    self.migrated = set(json.loads(fact[1]))
            for head in (
                await connection.execute(
                    select(
                        CHECKPOINT_HEADS.c.stream,
                        CHECKPOINT_HEADS.c.seq,
                        CHECKPOINT_HEADS.c.hash,
                        CHECKPOINT_HEADS.c.number,
                    )
                )
            ).all():
                seen = self.covered.get(head[0])
                if seen is None or int(head[1]) > seen[0]:
                    self.covered[head[0]] = (int(head[1]), str(head[2]), int(head[3]))
        self.report.streams = len(self.heads)
        self.report.rounds = sum(1 for r in self.rows.values() if r["kind"] == "round")

    async def stream(self) -> None:
        """One pass over the events and the ledger, both in (stream, seq) order."""
        store = self.store
        report = self.report
        async with self._reads() as connection:
            events = await connection.stream(
                select(EVENTS).order_by(_ordered(store, EVENTS.c.round_id), EVENTS.c.seq)
            )
            ledger = await connection.stream(
                select(LEDGER).order_by(
                    _ordered(store, LEDGER.c.round_id), LEDGER.c.seq, LEDGER.c.id
                )
            )
            ledger_rows = ledger.mappings().__aiter__()
            pending_row: Any = await _next(ledger_rows)
            current: str | None = None
            group: list[Any] = []
            async for row in events.mappings():
                report.events += 1
                _check_link(row, self.heads, self.state, report.problems)
                if row["round_id"] in self.covered:
                    self.hashes_at[(row["round_id"], row["seq"])] = row["hash"]
                if row["round_id"] != current:
                    if current is not None:
                        pending_row = await self._round(current, group, ledger_rows, pending_row)
                    current, group = row["round_id"], []
                group.append(row)
            if current is not None:
                pending_row = await self._round(current, group, ledger_rows, pending_row)
            while pending_row is not None:
                self._orphan(pending_row)
                pending_row = await _next(ledger_rows)
        _check_ends(self.heads, self.state, report.problems)

    def _reads(self) -> AbstractAsyncContextManager[AsyncConnection]:
        """The verification's one connection (held open by :func:`verify`)."""
        return nullcontext(self.connection)

    def _orphan(self, row: Any, *, counted: bool = False) -> None:
        if not counted:
            self.report.ledger_rows += 1
        if int(row["id"]) <= self.legacy_ledger:
            return
        where = (
            "names no event"
            if row["round_id"] is None
            else f"names event {row['round_id']} #{row['seq']}, which does not exist"
        )
        self.report.problems.append(
            f"ledger row {row['id']} ({row['kind']} {row['amount']} {row['from_account']}→"
            f"{row['to_account']}) {where}: a posting with no event behind it"
        )

    async def _round(
        self, round_id: str, events: list[Any], ledger_rows: Any, pending_row: Any
    ) -> Any:
        """Check one stream: its ledger rows against its events' postings and what they imply."""
        rows: list[Any] = []
        while pending_row is not None and (pending_row["round_id"] or "") < round_id:
            self._orphan(pending_row)
            pending_row = await _next(ledger_rows)
        while pending_row is not None and pending_row["round_id"] == round_id:
            rows.append(pending_row)
            pending_row = await _next(ledger_rows)
        self.report.ledger_rows += len(rows)
        by_seq: dict[int, list[Any]] = defaultdict(list)
        for row in rows:
            by_seq[int(row["seq"])].append(row)
        info = self.rows.get(round_id, {"table": "", "kind": "round", "status": "open"})
        summary = _Round(table=str(info["table"]), kind=str(info["kind"]))
        for event in events:
            seq = int(event["seq"])
            try:
                payload = json.loads(event["payload"])
            except ValueError:
                self.report.problems.append(f"{round_id} #{seq}: the payload is not JSON")
                continue
            postings = payload.get("postings") or []
            self._match(round_id, seq, postings, by_seq.pop(seq, []))
            self._event(round_id, event, payload, postings, summary)
        for leftover in by_seq.values():  # rows naming an event the stream does not have
            for row in leftover:
                self._orphan(row, counted=True)
        if summary.kind == "round":
            self._settled(round_id, summary)
        return pending_row

    def _match(self, round_id: str, seq: int, postings: list[Any], rows: list[Any]) -> None:
        """Each ledger row of an event is one of its postings, and each posting one row."""
        wanted = Counter(tuple(p) for p in postings)
        for row in rows:
            key = (
                row["kind"],
                row["from_account"],
                row["to_account"],
                int(row["amount"]),
                row["wager_id"],
            )
            if int(row["id"]) <= self.legacy_ledger:
                continue
            if wanted[key] > 0:
                wanted[key] -= 1
                continue
            self.report.problems.append(
                f"ledger row {row['id']} ({_posting_text(key)}) is not a posting of event "
                f"{round_id} #{seq}: the ledger was changed"
            )
        for posting, left in wanted.items():
            for _ in range(left):
                self.report.problems.append(
                    f"event {round_id} #{seq} lists the posting {_posting_text(posting)}, which "
                    "no ledger row books"
                )

    def _event(
        self,
        round_id: str,
        event: Any,
        payload: dict[str, Any],
        postings: list[Any],
        summary: _Round,
    ) -> None:
        """What one event implies about the money of its postings."""
        kind = event["kind"]
        seq = event["seq"]
        where = f"{round_id} #{seq}"
        for posting in postings:
            try:
                move, source, target, amount, wager = posting
            except ValueError:
                self.report.problems.append(f"{where}: a posting is malformed")
                continue
            if move not in MOVEMENTS:
                self.report.problems.append(f"{where}: {move!r} is not a movement kind")
            if move == "wager":
                summary.wagered[wager] += amount
                summary.players[("wager", wager)].add(source)
            elif move in (*SETTLEMENT_KINDS, "refund"):
                summary.out[move][wager] += amount
                if move != "lost":
                    summary.players[(move, wager)].add(target)
        if kind == "wager" and "amount" in payload:
            booked = sum(p[3] for p in postings if p[0] == "wager")
            if booked != payload["amount"]:
                self.report.problems.append(
                    f"{where}: the wager event is for {payload['amount']} cents but its postings "
                    f"escrow {booked}"
                )
        if kind in ACCOUNT_EVENTS or kind == "hand_pay":
            move = payload.get("kind") if kind == "hand_pay" else ACCOUNT_EVENTS[kind]
            booked = sum(p[3] for p in postings if p[0] == move)
            if booked != payload.get("amount") or len(postings) != 1:
                self.report.problems.append(
                    f"{where}: the {kind} event is for {payload.get('amount')} cents but its "
                    f"postings book {booked}"
                )
            account = payload.get("account")
            if postings and account not in (postings[0][1], postings[0][2]):
                self.report.problems.append(
                    f"{where}: the {kind} event names account {account!r}, its posting does not"
                )
        if kind in ("voucher_out", "voucher_sold"):
            self.issued[str(payload.get("voucher"))] = {
                **payload,
                "where": where,
                "at_us": int(event["at_us"]),
                "log": round_id,
            }
        if kind == "voucher_voided":
            self.voided[str(payload.get("voucher"))].append(
                {**payload, "where": where, "at_us": int(event["at_us"])}
            )
        if kind in ("voucher_in", "voucher_paid", "host_redeemed"):
            self.redeemed[str(payload.get("voucher"))].append(
                {**payload, "where": where, "at_us": int(event["at_us"]), "kind": kind}
            )
        if kind == "host_voucher_in":  # a casino system's ticket: recorded and redeemed at once
            voucher = str(payload.get("voucher"))
            at_us = int(event["at_us"])
            account = payload.get("system_account")
            self.issued[voucher] = {
                **payload,
                "account": account,
                "where": where,
                "at_us": at_us,
                "log": round_id,
                "kind": kind,
            }
            self.redeemed[voucher].append({**payload, "where": where, "at_us": at_us, "kind": kind})
        if round_id == AUTH_LOG and kind.startswith("credential_"):
            self.credential_events[str(payload.get("credential"))].append(
                {**payload, "kind": kind, "where": where}
            )
        if round_id == SETTINGS_LOG and kind == "setting":
            self.settings_set[str(payload.get("key"))] = {**payload, "where": where}
        if kind == "complete":
            summary.status = "complete"
            self._complete(where, payload, summary)
        if kind == "void":
            summary.status = "voided"
            for refund in payload.get("refunds") or []:
                wager = refund.get("wager_id")
                if summary.out["refund"][wager] != refund.get("amount"):
                    self.report.problems.append(
                        f"{where}: the void refunds {refund.get('amount')} cents of wager "
                        f"{wager}, the ledger {summary.out['refund'][wager]}"
                    )

    def _complete(self, where: str, payload: dict[str, Any], summary: _Round) -> None:
        """Each settlement of the round against the ledger: escrowed, returned, lost, won."""
        settled = set()
        for item in payload.get("settlements") or []:
            wager = item.get("wager_id")
            settled.add(wager)
            amount, returned = int(item["amount"]), int(item["returned"])
            back = min(returned, amount)
            expected = {
                "wager": amount,
                "returned": back,
                "lost": amount - back,
                "winnings": max(returned - amount, 0),
            }
            found = {  # (less what was taken back before the first card, 633c.5(k))
                "wager": summary.wagered[wager] - summary.out["refund"][wager],
                **{k: summary.out[k][wager] for k in SETTLEMENT_KINDS},
            }
            for name, cents in expected.items():
                if found[name] != cents:
                    self.report.problems.append(
                        f"{where}: wager {wager} of {item.get('player')} settled {item.get('result')}"
                        f" implies {name} {cents} cents; the ledger books {found[name]}"
                    )
            for name in ("returned", "winnings"):
                if summary.players[(name, wager)] - {item.get("player")}:
                    self.report.problems.append(
                        f"{where}: the {name} of wager {wager} went to "
                        f"{sorted(summary.players[(name, wager)])}, not to {item.get('player')}"
                    )
        for wager in summary.wagered:
            if wager not in settled and summary.wagered[wager] != summary.out["refund"][wager]:
                self.report.problems.append(
                    f"{where}: wager {wager} is escrowed but the round settled no such wager"
                )

    def _settled(self, round_id: str, summary: _Round) -> None:
        """An unfinished round's open wagers count toward its table's escrow; a finished one
        leaves nothing in escrow."""
        held = sum(summary.wagered.values()) - sum(
            sum(summary.out[k].values()) for k in ("returned", "lost", "refund")
        )
        if summary.status in ("complete", "voided"):
            if held != 0:
                self.report.problems.append(
                    f"{round_id}: the round is {summary.status} but leaves {held} cents in escrow"
                )
        else:
            self.holding[summary.table] += held

    async def accounts(self) -> None:
        """Balances against the ledger and the invariants of each account kind."""
        problems = self.report.problems
        async with self._reads() as connection:
            rows = (
                await connection.execute(select(ACCOUNTS.c.id, ACCOUNTS.c.kind, ACCOUNTS.c.balance))
            ).all()
            sums: Counter[str] = Counter()
            for account, amount in (
                await connection.execute(
                    select(LEDGER.c.to_account, func.sum(LEDGER.c.amount)).group_by(
                        LEDGER.c.to_account
                    )
                )
            ).all():
                sums[account] += int(amount)
            for account, amount in (
                await connection.execute(
                    select(LEDGER.c.from_account, func.sum(LEDGER.c.amount)).group_by(
                        LEDGER.c.from_account
                    )
                )
            ).all():
                sums[account] -= int(amount)
            outstanding = int(
                await connection.scalar(
                    select(func.coalesce(func.sum(VOUCHERS.c.amount), 0)).where(
                        VOUCHERS.c.status == "issued"
                    )
                )
                or 0
            )
        total = 0
        for account, kind, stored in rows:
            balance = int(stored)
            total += balance
            named = account_kind_of(account)
            if named is None or named.value != kind:
                problems.append(f"account {account}: a {kind} account with an id of another kind")
                continue
            if balance != sums[account]:
                problems.append(
                    f"account {account}: balance {balance} but the ledger sums to {sums[account]}"
                )
            invariant = INVARIANTS[named]
            if named in (AccountKind.PLAYER, AccountKind.ESCROW, AccountKind.TIPS) and balance < 0:
                problems.append(f"account {account}: {balance} breaks '{invariant.statement}'")
            if named is AccountKind.BILLS and balance > 0:
                problems.append(f"account {account}: {balance} breaks '{invariant.statement}'")
            if named is AccountKind.ESCROW:
                table = account.partition(":")[2]
                if balance != self.holding.get(table, 0):
                    problems.append(
                        f"account {account}: holds {balance} cents but the open wagers of table "
                        f"{table}'s unfinished rounds are {self.holding.get(table, 0)}"
                    )
            if named is AccountKind.VOUCHERS and balance != outstanding:
                problems.append(
                    f"account {account}: holds {balance} cents but the vouchers outstanding "
                    f"are {outstanding}"
                )
        if total != 0:
            problems.append(f"the balances sum to {total}, not 0")

    async def vouchers(self) -> None:
        """Every voucher row against the events that issued and redeemed it."""
        problems = self.report.problems
        async with self._reads() as connection:
            rows = (await connection.execute(select(VOUCHERS))).mappings().all()
        numbers = set()
        for row in rows:
            number = f"{int(row['id']):012d}"
            numbers.add(number)
            issued = self.issued.get(number)
            if issued is None:
                problems.append(f"voucher {number}: no voucher_out or voucher_sold event issued it")
            elif (
                issued.get("code_sha256") != row["code_hash"]
                or issued.get("amount") != row["amount"]
                or issued.get("account") != row["account"]
            ):
                problems.append(
                    f"voucher {number}: its row ({row['amount']} cents, {row['account']}) differs "
                    f"from the event that issued it ({issued['where']})"
                )
            if issued is not None:
                problems.extend(_issue_differs(number, row, issued))
            redeemed = self.redeemed.get(number, [])
            if len(redeemed) > 1:
                places = ", ".join(r["where"] for r in redeemed)
                problems.append(f"voucher {number}: redeemed {len(redeemed)} times ({places})")
            if row["status"] not in VOUCHER_STATES:
                problems.append(
                    f"voucher {number}: its state is {str(row['status'])[:32]!r}, which no event "
                    "makes (issued, redeemed or voided)"
                )
            problems.extend(_void_differs(number, row, redeemed, self.voided.get(number, [])))
            if row["status"] == "redeemed" and not redeemed:
                problems.append(f"voucher {number}: marked redeemed but no event redeemed it")
            if row["status"] == "issued" and redeemed:
                problems.append(
                    f"voucher {number}: marked issued but {redeemed[0]['where']} redeemed it"
                )
            for event in redeemed:
                if event.get("amount") != row["amount"]:
                    problems.append(
                        f"voucher {number}: {event['where']} redeemed {event.get('amount')} "
                        f"cents of a voucher of {row['amount']}"
                    )
            if row["status"] == "redeemed" and len(redeemed) == 1:
                problems.extend(_redemption_differs(number, row, redeemed[0]))
        for number, event in self.issued.items():
            if number not in numbers:
                problems.append(f"voucher {number}: issued by {event['where']} but its row is gone")

    async def credentials(self) -> None:
        """Every credential row against the events that issued, renewed and revoked it."""
        problems = self.report.problems
        async with self._reads() as connection:
            rows = (await connection.execute(select(CREDENTIALS))).mappings().all()
        unbound = 0
        for row in rows:
            events = self.credential_events.get(row["id"], [])
            issued = [e for e in events if e["kind"] in ("credential_issued", "credential_renewed")]
            if not issued:
                if row["id"] not in self.migrated:
                    problems.append(
                        f"credential {row['id']} ({row['role']} {row['subject']}): no event "
                        "issued it (written into the database behind the server's back)"
                    )
                continue
            last = issued[-1]
            if "terminal" not in last:  # issued before its event named the terminal
                unbound += row["terminal"] is not None
            if (
                last.get("token_sha256") != row["token_hash"]
                or last.get("role") != row["role"]
                or last.get("subject") != row["subject"]
                or last.get("expires_us") != row["expires_us"]
                or any(  # what it is bound to, as issued (the oldest events do not say)
                    field in issued[0] and issued[0][field] != row[field]
                    for field in ("terminal", "parent", "device")
                )
            ):
                problems.append(
                    f"credential {row['id']} ({row['role']} {row['subject']}): the row differs "
                    f"from the event that issued it ({last['where']})"
                )
            revoked = any(e["kind"] == "credential_revoked" for e in events)
            if revoked and row["revoked_us"] is None:
                problems.append(
                    f"credential {row['id']} ({row['role']} {row['subject']}): revoked by an "
                    "event but the row is not"
                )
        if unbound:
            self.report.notes.append(
                f"{unbound} credential(s) bound to a terminal were issued before their event named "
                "the terminal: their terminal is not checked"
            )

    async def meters(self) -> None:
        """The ``meters`` rows against the ledger: per table and wager kind (the first word of
        a row's memo), the drop is the wagers into the table's escrow less its refunds, the
        win what the house took (``lost``) less what it paid (``winnings``). The ledger rows
        written before it named the wager kind (``legacy_ledger_id``) are compared per table."""
        problems = self.report.problems
        expected: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
        async with self._reads() as connection:
            stored = {
                (str(r[0]), str(r[1])): (int(r[2]), int(r[3]))
                for r in (
                    await connection.execute(
                        select(METERS.c.table_id, METERS.c.wager_kind, METERS.c.drop, METERS.c.win)
                    )
                ).all()
            }
            into = select(LEDGER.c.to_account, LEDGER.c.memo, func.sum(LEDGER.c.amount)).where(
                (LEDGER.c.kind == "wager") & LEDGER.c.to_account.like("escrow:%")
            )
            for account, memo, amount in (
                await connection.execute(into.group_by(LEDGER.c.to_account, LEDGER.c.memo))
            ).all():
                expected[(str(account)[7:], _meter_kind(memo))][0] += int(amount)
            out = select(
                LEDGER.c.kind, LEDGER.c.from_account, LEDGER.c.memo, func.sum(LEDGER.c.amount)
            ).where(LEDGER.c.kind.in_(("refund", "lost", "winnings")))
            for kind, account, memo, amount in (
                await connection.execute(
                    out.group_by(LEDGER.c.kind, LEDGER.c.from_account, LEDGER.c.memo)
                )
            ).all():
                table = str(account).partition(":")[2]
                entry = expected[(table, _meter_kind(memo))]
                if kind == "refund" and str(account).startswith("escrow:"):
                    entry[0] -= int(amount)
                elif kind == "lost" and str(account).startswith("escrow:"):
                    entry[1] += int(amount)
                elif kind == "winnings" and str(account).startswith("house:"):
                    entry[1] -= int(amount)
            to_house = LEDGER.c.to_account.like("house:%")
            legacy = select(LEDGER.c.from_account, to_house, func.sum(LEDGER.c.amount)).where(
                LEDGER.c.kind == "settle"
            )
            for account, house, amount in (
                await connection.execute(legacy.group_by(LEDGER.c.from_account, to_house))
            ).all():
                source = str(account)
                entry = expected[(source.partition(":")[2], "unclassified")]
                if source.startswith("escrow:") and house:
                    entry[1] += int(amount)
                elif source.startswith("house:"):
                    entry[1] -= int(amount)
        keys = set(stored) | {k for k, v in expected.items() if v != [0, 0]}
        compared: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
        for table, kind in keys:  # before the migration kinds are unknown: per table then
            found = compared[(table, "all kinds" if self.legacy_ledger else kind)]
            have, want = stored.get((table, kind), (0, 0)), expected.get((table, kind), [0, 0])
            for index, cents in enumerate((*have, *want)):
                found[index] += cents
        for (table, kind), (drop, win, ledger_drop, ledger_win) in sorted(compared.items()):
            if (drop, win) != (ledger_drop, ledger_win):
                problems.append(
                    f"meters {table} {kind}: drop {drop}, win {win} but the ledger books drop "
                    f"{ledger_drop}, win {ledger_win} (the meters row was changed)"
                )

    async def settings(self) -> None:
        """Every floor setting row against the last event of the settings log that set it."""
        problems = self.report.problems
        async with self._reads() as connection:
            rows = (await connection.execute(select(SETTINGS.c.key, SETTINGS.c.value))).all()
        stored = {str(key): value for key, value in rows}
        for key, text_value in sorted(stored.items()):
            event = self.settings_set.get(key)
            try:
                value = json.loads(text_value)
            except ValueError:
                value = text_value
            if event is None:
                problems.append(
                    f"floor setting {key}: no event of the settings log set it (written into "
                    "the database behind the server's back — or stored before settings were "
                    "logged: set it again through PUT /api/floor/settings)"
                )
            elif json.dumps(value, sort_keys=True) != json.dumps(
                event.get("value"), sort_keys=True
            ):
                problems.append(
                    f"floor setting {key} is {json.dumps(value)} but {event['where']} set it to "
                    f"{json.dumps(event.get('value'))} (the row was changed)"
                )
        for key, event in sorted(self.settings_set.items()):
            if key not in stored:
                problems.append(
                    f"floor setting {key}: set by {event['where']} but its row is gone (the "
                    "default applies now)"
                )

    async def checkpoints(
        self,
        public_keys: list[Ed25519PublicKey],
        read: dict[Path, tuple[list[CheckpointRecord], list[str]] | None],
        *,
        strict: bool,
    ) -> None:
        """Signatures, the chain of statements, the roots, the signed heads against the
        events, what no checkpoint covers yet, and the files outside the database (``read``:
        each file's contents, None for a file missing, read before the snapshot)."""
        report = self.report
        problems = report.problems
        keys = {key_id(key): key for key in public_keys}
        files = list(read)
        async with self._reads() as connection:
            rows = (
                (await connection.execute(select(CHECKPOINTS).order_by(CHECKPOINTS.c.number)))
                .mappings()
                .all()
            )
            heads: dict[int, list[tuple[str, int, str]]] = defaultdict(list)
            for head in (
                await connection.execute(
                    select(
                        CHECKPOINT_HEADS.c.number,
                        CHECKPOINT_HEADS.c.stream,
                        CHECKPOINT_HEADS.c.seq,
                        CHECKPOINT_HEADS.c.hash,
                    )
                )
            ).all():
                heads[int(head[0])].append((str(head[1]), int(head[2]), str(head[3])))
        report.checkpoints = len(rows)
        if not rows:
            report.notes.append(
                "no signed checkpoint: the log is tamper-evident only against someone who cannot "
                "recompute the hashes (configure a checkpoint key)"
            )
        elif not keys:
            report.notes.append(
                f"{len(rows)} checkpoints not verified: give the public key (--public-key)"
            )
        prev = GENESIS
        by_number: dict[int, str] = {}
        signed_at: dict[int, int] = {}
        for expected, row in enumerate(rows, start=1):
            number = int(row["number"])
            by_number[number] = row["statement"]
            signed_at[number] = int(row["at_us"])
            where = f"checkpoint {number}"
            if number != expected:
                problems.append(f"{where}: expected checkpoint {expected} (one was deleted)")
            try:
                statement = json.loads(row["statement"])
            except ValueError:
                problems.append(f"{where}: the statement is not JSON")
                continue
            if keys:
                key = keys.get(str(row["key_id"]))
                if key is None or statement.get("key_id") != row["key_id"]:
                    problems.append(
                        f"{where}: signed with key {row['key_id'][:16]}…, not a key given"
                    )
                elif not signature_ok(row["statement"], row["signature"], key):
                    problems.append(f"{where}: the signature does not verify (forged or altered)")
            if statement.get("number") != number or statement.get("prev") != prev:
                problems.append(f"{where}: does not follow checkpoint {number - 1} (chain broken)")
            covered = sorted(heads.get(number, []))
            if statement.get("heads") != len(covered) or statement.get("root") != merkle_root(
                [leaf(*h) for h in covered]
            ):
                problems.append(
                    f"{where}: its heads in the database are not the ones it signed (heads "
                    "deleted or changed)"
                )
            prev = statement_hash(row["statement"])
        for stream, (seq, digest, number) in sorted(self.covered.items()):
            found = self.hashes_at.get((stream, seq))
            ends = self.state.get(stream, (0, GENESIS))[0]
            if stream not in self.heads and stream not in self.state:
                problems.append(f"{stream}: deleted — checkpoint {number} signed its event #{seq}")
            elif found is None:
                problems.append(
                    f"{stream}: the log ends at event {ends} but checkpoint {number} signed event "
                    f"#{seq} (events deleted)"
                )
            elif found != digest:
                problems.append(
                    f"{stream} #{seq}: not the event checkpoint {number} signed (an event up to "
                    "it was changed, reordered or its chain recomputed)"
                )
        last = rows[-1]["number"] if rows else 0
        for stream, (ends, _) in sorted(self.state.items()):
            signed = self.covered.get(stream, (0, "", 0))[0]
            if ends > signed:
                report.pending.append(
                    f"{stream}: events #{signed + 1}–#{ends} are covered by no signed checkpoint "
                    f"(written after checkpoint {last}, or forged)"
                )
        if files:
            held: set[int] = set()
            for path in files:
                held |= self._file(path, read[path], by_number, keys)
            self._in_files(held, signed_at, [path.name for path in files], strict)

    def _in_files(
        self, held: set[int], signed_at: dict[int, int], names: list[str], strict: bool
    ) -> None:
        """Every checkpoint of the database is in one of the files (the check's other way):
        one signed just now may not be there yet (pending, unless ``strict``)."""
        now = now_us()
        where = ", ".join(names)
        for number in sorted(set(signed_at) - held):
            age = (now - signed_at[number]) / 1e6
            if age < FILE_GRACE_SECONDS and not strict:
                self.report.pending.append(
                    f"checkpoint {number} (signed {max(age, 0.0):.1f} s ago) is in no checkpoint "
                    f"file yet ({where})"
                )
            else:
                self.report.problems.append(
                    f"checkpoint {number} of the database is in no checkpoint file ({where}): "
                    "its line was dropped from the file, or a file of the floor was not given"
                )

    def _file(
        self,
        path: Path,
        read: tuple[list[CheckpointRecord], list[str]] | None,
        by_number: dict[int, str],
        keys: dict[str, Ed25519PublicKey],
    ) -> set[int]:
        """Check one checkpoint file, as read before the database (``None``: no such file),
        against the database; the numbers it holds."""
        problems = self.report.problems
        if read is None:
            if by_number:
                problems.append(
                    f"{path}: the checkpoint file does not exist, the database holds "
                    f"{len(by_number)} checkpoints"
                )
            else:
                self.report.notes.append(f"{path}: no checkpoint file yet")
            return set()
        held, bad = read
        problems.extend(bad)
        for record in held:
            where = f"checkpoint {record.number} of {path.name}"
            if keys:
                key = keys.get(record.key_id)
                if key is None or not signature_ok(record.statement, record.signature, key):
                    problems.append(f"{where}: the signature does not verify")
                    continue
            stored = by_number.get(record.number)
            if stored is None:
                problems.append(
                    f"{where} is not in the database: the database was rolled back to an older "
                    "copy, or its checkpoints were deleted"
                )
            elif stored != record.statement:
                problems.append(f"{where} differs from the database's checkpoint {record.number}")
        if held:
            self.report.notes.append(
                f"{path.name}: {len(held)} checkpoints, up to {max(r.number for r in held)}"
            )
        return {record.number for record in held if record.number in by_number}


def _meter_kind(memo: Any) -> str:
    """The wager kind a ledger row's memo names first (as ``meters_report`` reads it)."""
    return str(memo or "").split(" ", 1)[0] or "unclassified"


async def _next(iterator: Any) -> Any:
    try:
        return await iterator.__anext__()
    except StopAsyncIteration:
        return None
