"""The card reader line protocol over a raw TCP socket (``tablejack serve --reader-port P``).

A card-reading shoe that speaks plain TCP connects, authenticates once, and then sends one card
code per line; every card goes through :meth:`tablejack.server.table.Table.reader_card`, the same
validation as the HTTP path (``POST /api/tables/{id}/reader``) and the console:

* client: ``AUTH <dealer token> <table id>`` → server: ``OK <table id>`` (else
  ``ERR <rule> <message>`` and the connection closes);
* client: a card code (``10S``, ``QH``, ``AD``) → server: ``OK <round id> <seq>`` or
  ``ERR <rule> <message>`` (a card the engine did not ask for halts the table as an
  irregularity, as on every path); blank lines and lines starting with ``#`` get no answer;
* client: ``QUIT`` → server: ``BYE`` and the connection closes.

Lines are ASCII, at most 128 bytes, ended by ``\\n`` (a ``\\r`` before it is ignored). Every
refusal is written to the audit log like a refused HTTP or WebSocket request.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from tablejack.server.table import RefusedError

if TYPE_CHECKING:
    from tablejack.server.floor import Floor

__all__ = ["MAX_LINE", "start_reader_listener"]

log = logging.getLogger("tablejack.server")
MAX_LINE = 128
AUTH_RULE = "role: dealer"


async def start_reader_listener(floor: Floor, host: str, port: int) -> asyncio.Server:
    """Listen for card readers on ``host:port`` (port 0: any free port)."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await _session(floor, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    return await asyncio.start_server(serve, host, port, limit=MAX_LINE * 2)


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


async def _session(
    floor: Floor, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    def send(text: str) -> None:
        writer.write(text.encode("ascii", errors="replace") + b"\n")

    first = await _line(reader)
    if first is None:
        return
    parts = first.split()
    found = await floor.authenticate(parts[1]) if len(parts) == 3 and parts[0] == "AUTH" else None
    table = floor.tables.get(parts[2]) if found is not None else None
    if found is None or found[0] != "dealer" or table is None:
        message = (
            "The first line is AUTH <dealer token> <table id>."
            if len(parts) != 3 or parts[0] != "AUTH"
            else "A dealer token and a table of this floor are required."
        )
        await floor.store.audit("reader", message, terminal="reader-tcp", rule=AUTH_RULE)
        send(f"ERR {AUTH_RULE} {message}")
        await writer.drain()
        return
    dealer = found[1]
    send(f"OK {table.id}")
    await writer.drain()
    while True:
        line = await _line(reader)
        if line is None:
            return
        code = line.strip()
        if code == "\x00":
            send(f"ERR protocol A line is at most {MAX_LINE} bytes.")
            await writer.drain()
            return
        if not code or code.startswith("#"):
            continue
        if code.upper() == "QUIT":
            send("BYE")
            await writer.drain()
            return
        try:
            reply = await table.reader_card(code, dealer, "reader-tcp")
        except RefusedError as refusal:
            await floor.store.audit(
                refusal.code,
                refusal.message,
                table_id=table.id,
                actor=dealer,
                terminal="reader-tcp",
                rule=refusal.rule,
            )
            send(f"ERR {refusal.rule} {refusal.message}")
        else:
            send(f"OK {reply['round_id']} {reply['seq']}")
        await writer.drain()
