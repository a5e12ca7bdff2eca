"""The card reader line protocol over a raw TCP socket (``tablejack serve --reader-port P``).

A card-reading shoe that speaks plain TCP connects, authenticates once, and then sends one card
code per line; every card goes through :meth:`tablejack.server.table.Table.reader_card`, the same
validation as the HTTP path (``POST /api/tables/{id}/reader``) and the console:

* client: ``AUTH <dealer token> <table id>`` → server: ``OK <table id>`` (else
  ``ERR <rule> <message>`` and the connection closes);
* client: a card code (``10S``, ``QH``, ``AD``) → server: ``OK <round id> <seq>`` or
  ``ERR <rule> <message>`` (a card the engine did not ask for halts the table as an
  irregularity, as on every path); blank lines and lines starting with ``#`` get no answer;
* client: ``QUIT`` → server: ``BYE`` and the connection closes;
* client: ``FAULT <text>`` (the reader's own fault report) → server: ``OK TILT reader_fault``:
  the table is locked until a supervisor clears it (PA 605a); a connection that drops without
  ``QUIT`` while the engine waits for a card is the same ``reader_fault`` tilt;
* client: ``LOAD``, then the shuffler's count of the new shoe — one card code per line, or
  ``<code> <count>`` — and ``END`` → server: ``OK LOAD <cards> cards, <N> decks``, or
  ``ERR …`` when the shoe is not exactly N full decks (a ``card_inventory`` tilt);
  ``UNLOAD`` … ``END`` with the count of the cards left in the shoe ends it (the cards read
  plus those counted out must be the inventory, else a ``card_inventory`` tilt); the lines
  inside a block get no answer (:mod:`tablejack.server.duties.inventory`).

Lines are ASCII, at most 128 bytes, ended by ``\\n`` (a ``\\r`` before it is ignored). Every
refusal is written to the audit log like a refused HTTP or WebSocket request. When the server
has a TLS certificate (``--tls-cert``/``--tls-key``) the reader port speaks TLS with it, and only
TLS.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from typing import TYPE_CHECKING

from tablejack.server.table import RefusedError, Table

if TYPE_CHECKING:
    from tablejack.server.floor.floor import Floor

__all__ = ["MAX_LINE", "CardReaders", "LineSession"]

log = logging.getLogger("tablejack.server")
MAX_LINE = 128
AUTH_RULE = "role: dealer"


async def _line(reader: asyncio.StreamReader) -> str | None:
    try:
        raw = await reader.readline()
    except ValueError:  # longer than the stream's limit
        return "\x00"
    if not raw:
        return None
    if len(raw) > MAX_LINE:
        return "\x00"
    return raw.decode("ascii", errors="replace").rstrip("\r\n")


class CardReaders:
    """The card readers of one floor on the raw TCP port (the composition root makes it): the
    listener, and the connections open per table — the last one of a table dropping without
    ``QUIT`` while the engine waits for a card is a ``reader_fault`` tilt."""

    def __init__(self, floor: Floor) -> None:
        self.floor = floor
        self._open: dict[str, int] = {}

    def open_at(self, table_id: str) -> int:
        """The reader connections open now at table ``table_id``."""
        return self._open.get(table_id, 0)

    async def listen(
        self, host: str, port: int, *, tls: ssl.SSLContext | None = None
    ) -> asyncio.Server:
        """Listen for card readers on ``host:port`` (port 0: any free port); with ``tls`` (the
        server's certificate, :mod:`tablejack.server.support.tls`) the port speaks TLS only."""

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                await self._session(reader, writer)
            except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
                pass
            finally:
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()

        return await asyncio.start_server(
            serve,
            host,
            port,
            limit=MAX_LINE * 2,
            ssl=tls,
            ssl_handshake_timeout=10 if tls else None,
        )

    async def _session(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        floor = self.floor

        def send(text: str) -> None:
            writer.write(text.encode("ascii", errors="replace") + b"\n")

        first = await _line(reader)
        if first is None:
            return
        parts = first.split()
        found = (
            await floor.auth.authenticate(parts[1], fresh=True)
            if len(parts) == 3 and parts[0] == "AUTH"
            else None
        )
        table = floor.tables.get(parts[2]) if found is not None else None
        if found is None or found.role != "dealer" or table is None:
            where = floor.elsewhere(parts[2]) if len(parts) == 3 and found is not None else None
            message = (
                "The first line is AUTH <dealer token> <table id>."
                if len(parts) != 3 or parts[0] != "AUTH"
                else f"Table {parts[2]} is run by the floor's process at {where}; connect there."
                if where and found is not None and found.role == "dealer"
                else "A dealer token and a table of this floor are required."
            )
            await floor.store.audit("reader", message, terminal="reader-tcp", rule=AUTH_RULE)
            send(f"ERR {AUTH_RULE} {message}")
            await writer.drain()
            return
        dealer = found.subject
        send(f"OK {table.id}")
        await writer.drain()
        session = LineSession(floor, table, dealer, "reader-tcp")
        self._open[table.id] = self._open.get(table.id, 0) + 1
        quit_ = False
        try:
            while True:
                line = await _line(reader)
                if line is None:
                    return
                code = line.strip()
                if code == "\x00":
                    send(f"ERR protocol A line is at most {MAX_LINE} bytes.")
                    await writer.drain()
                    return
                if code.upper() == "QUIT":
                    quit_ = True
                    send("BYE")
                    await writer.drain()
                    return
                answer = await session.line(code)
                if answer is not None:
                    send(answer)
                    await writer.drain()
        finally:
            self._open[table.id] -= 1
            if not quit_ and not self._open[table.id]:
                await _dropped(table, dealer)


async def _dropped(table: Table, dealer: str) -> None:
    """The reader's connection dropped without ``QUIT``: while the engine waits for a card that
    is a ``reader_fault`` tilt (PA 605a)."""
    from tablejack.server.duties.tilts import raise_tilt

    round_ = table.round
    if table.shoe is not None or round_ is None or round_.is_complete:
        return
    if round_.card_request is None or table.status == "halted":
        return
    with contextlib.suppress(Exception):
        async with table.lock:
            await raise_tilt(
                table,
                "reader_fault",
                f"the card reader's connection dropped while the table waited for "
                f"{round_.card_request.describe()}.",
                by=dealer,
                terminal="reader-tcp",
            )


class LineSession:
    """One reader's lines (TCP or ``POST /api/tables/{id}/reader``): card codes, ``FAULT
    <text>``, and the ``LOAD``/``UNLOAD`` blocks of the shoe inventory. :meth:`line` gives the
    answer line, or None (blank and ``#`` lines, the lines inside a block)."""

    def __init__(self, floor: Floor, table: Table, dealer: str, terminal: str) -> None:
        self.floor, self.table, self.dealer, self.terminal = floor, table, dealer, terminal
        self.block: str | None = None
        self.cards: list[str] = []

    async def line(self, text: str) -> str | None:
        """Apply one line; the answer (``OK …``/``ERR <rule> <message>``) or None."""
        code = text.strip()
        if not code or code.startswith("#"):
            return None
        word = code.split()[0].upper()
        try:
            if self.block is not None:
                return await self._in_block(code, word)
            if word in ("LOAD", "UNLOAD") and code.upper() == word:
                self.block, self.cards = word, []
                return None
            if word == "FAULT":
                return await self._fault(code[5:].strip() or "no detail")
            reply = await self.table.reader_card(code, self.dealer, self.terminal)
        except RefusedError as refusal:
            await self.floor.store.audit(
                refusal.code,
                refusal.message,
                table_id=self.table.id,
                actor=self.dealer,
                terminal=self.terminal,
                rule=refusal.rule,
            )
            return f"ERR {refusal.rule} {refusal.message}"
        return f"OK {reply['round_id']} {reply['seq']}"

    async def _in_block(self, code: str, word: str) -> str | None:
        from tablejack.server.duties import inventory

        if word != "END":
            parts = code.split()
            if len(parts) == 2 and parts[1].isdigit() and int(parts[1]) <= 10_000:
                self.cards += [parts[0]] * int(parts[1])
            else:
                self.cards += parts
            return None
        block, self.block = self.block, None
        counts = inventory.counts_of(self.cards)
        if block == "LOAD":
            done = await inventory.load(self.table, counts, by=self.dealer, source=self.terminal)
            return f"OK LOAD {done['loaded']} cards, {done['decks']} decks"
        ended = await inventory.unload(self.table, counts, by=self.dealer, source=self.terminal)
        return f"OK UNLOAD {ended['read']} read, {sum(counts.values())} counted out"

    async def _fault(self, detail: str) -> str:
        from tablejack.server.duties.tilts import raise_tilt

        async with self.table.lock:
            await raise_tilt(
                self.table,
                "reader_fault",
                f"the card reader reports a fault: {detail[:100]}",
                by=self.dealer,
                terminal=self.terminal,
            )
        return "OK TILT reader_fault"
