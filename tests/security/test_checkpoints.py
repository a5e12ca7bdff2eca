"""The signed checkpoints themselves: when they are taken (start, every T seconds, every N events,
each gaming-day close, shutdown), the chain they form, the Merkle tree, and the rotation of the
signing key."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from tablejack.games.hybrid_rules import HybridRules
from tablejack.server.app import create_app
from tablejack.server.http.trust import CheckpointSettings
from tablejack.server.table import TableConfig
from tablejack.store import Store
from tablejack.store.checkpoints import leaf, merkle_root, read_checkpoint_file
from tablejack.store.keys import SignatureError, generate_key_pair, load_public_key
from tablejack.store.verify import verify
from tests.support.floor import auth
from tests.support.store import Backend

from .conftest import Floorkit, setup_floor


def _h(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def test_the_merkle_root_is_rfc_6962s() -> None:
    """RFC 6962 § 2.1: leaves hashed with 0x00, nodes with 0x01, split at the largest power of
    two below the size (checked by hand for 1, 2, 3 and 5 leaves)."""
    a, b, c, d, e = (bytes([n]) for n in b"abcde")
    la, lb, lc, ld, le = (_h(b"\x00" + x) for x in (a, b, c, d, e))
    assert merkle_root([a]) == la.hex()
    assert merkle_root([a, b]) == _h(b"\x01" + la + lb).hex()
    assert merkle_root([a, b, c]) == _h(b"\x01" + _h(b"\x01" + la + lb) + lc).hex()
    four = _h(b"\x01" + _h(b"\x01" + la + lb) + _h(b"\x01" + lc + ld))
    assert merkle_root([a, b, c, d, e]) == _h(b"\x01" + four + le).hex()
    assert leaf("A1-000001", 3, "ab") == b'["A1-000001",3,"ab"]'


def test_checkpoints_chain_each_to_the_one_before_and_cover_what_moved(floor: Floorkit) -> None:
    floor.play_round()
    floor.stop()
    records, bad = read_checkpoint_file(floor.checkpoint_file)
    assert bad == []
    statements = [json.loads(r.statement) for r in records]
    assert [s["number"] for s in statements] == list(range(1, len(records) + 1))
    assert statements[0]["reason"] == "start"
    assert statements[-1]["reason"] == "shutdown" or statements[-1]["reason"] == "interval"
    for before, after in zip(records, statements[1:], strict=False):
        assert after["prev"] == hashlib.sha256(before.statement.encode()).hexdigest()
    report = floor.verify(strict=True)
    assert (report.problems, report.pending) == ([], [])


def test_a_checkpoint_is_taken_every_n_events(backend: Backend, tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    generate_key_pair(keys, "checkpoint.key", "checkpoint.pub")
    table = TableConfig(
        "A1", HybridRules(countdown_seconds=1), automated=False, require_procedures=False
    )
    settings = CheckpointSettings(keys / "checkpoint.key", keys / "cp.jsonl", 3600.0, 1)
    with TestClient(
        create_app(backend.server_url, tables=[table], setup=setup_floor, checkpoints=settings)
    ) as client:
        time.sleep(0.3)  # the checkpointer has started
        for command in ("open-round", "close-wagering"):
            client.post("/api/tables/A1/dealer", json={"command": command}, headers=auth("dealer"))
        deadline = time.monotonic() + 10
        reasons: list[str] = []
        while time.monotonic() < deadline and "events" not in reasons:
            listed = client.get("/api/checkpoints", headers=auth("super")).json()
            reasons = [c["reason"] for c in listed["checkpoints"]]
            time.sleep(0.05)
    assert "events" in reasons


class Clock:
    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


def test_a_checkpoint_closes_every_gaming_day(backend: Backend, tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    generate_key_pair(keys, "checkpoint.key", "checkpoint.pub")
    clock = Clock()
    table = TableConfig(
        "A1", HybridRules(countdown_seconds=1), automated=False, require_procedures=False
    )
    settings = CheckpointSettings(keys / "checkpoint.key", keys / "cp.jsonl", 0.1)
    with TestClient(
        create_app(
            backend.server_url, tables=[table], setup=setup_floor, checkpoints=settings, clock=clock
        )
    ) as client:
        time.sleep(0.3)  # the checkpointer has started on this gaming day
        clock.offset = 86400.0  # the next gaming day
        deadline = time.monotonic() + 10
        reasons: list[str] = []
        while time.monotonic() < deadline and "gaming_day_close" not in reasons:
            time.sleep(0.1)
            listed = client.get("/api/checkpoints", headers=auth("super")).json()
            reasons = [c["reason"] for c in listed["checkpoints"]]
    assert "gaming_day_close" in reasons


def test_rotating_the_signing_key_keeps_one_chain_verified_with_both_public_keys(
    backend: Backend, tmp_path: Path
) -> None:
    """Rotation (docs/security.md): a new key pair, the server restarted with it; its first
    checkpoint is a ``key_rotation`` that chains to the last one of the old key. Verifiers need
    both public keys; with only the new one, the old checkpoints do not verify."""
    old, new = tmp_path / "old", tmp_path / "new"
    for folder in (old, new):
        generate_key_pair(folder, "checkpoint.key", "checkpoint.pub")
    file = tmp_path / "checkpoints.jsonl"
    table = TableConfig(
        "A1", HybridRules(countdown_seconds=1), automated=False, require_procedures=False
    )
    for folder in (old, new):
        settings = CheckpointSettings(folder / "checkpoint.key", file, 3600.0)
        with TestClient(
            create_app(backend.server_url, tables=[table], setup=setup_floor, checkpoints=settings)
        ) as client:
            client.post(
                "/api/tables/A1/dealer", json={"command": "open-round"}, headers=auth("dealer")
            )

    async def check(store: Store, keys: list[Path]) -> Any:
        return await verify(
            store,
            public_keys=[load_public_key(k / "checkpoint.pub") for k in keys],
            checkpoint_file=file,
            strict=True,
        )

    async def both(store: Store) -> Any:
        return await check(store, [old, new])

    async def only_new(store: Store) -> Any:
        return await check(store, [new])

    assert backend.run(both).problems == []
    assert any("not a key given" in p for p in backend.run(only_new).problems)
    reasons = [json.loads(r.statement)["reason"] for r in read_checkpoint_file(file)[0]]
    assert "key_rotation" in reasons


def test_serve_refuses_to_start_without_a_key_and_keygen_never_overwrites_one(
    tmp_path: Path,
) -> None:
    from typer.testing import CliRunner

    from tablejack.cli import app

    runner = CliRunner()
    refused = runner.invoke(app, ["serve", "--db", str(tmp_path / "x.sqlite")])
    assert refused.exit_code == 2
    assert "no checkpoint key" in refused.output
    made = runner.invoke(app, ["keygen", "--out", str(tmp_path / "keys")])
    assert made.exit_code == 0, made.output
    assert (tmp_path / "keys" / "checkpoint.key").stat().st_mode & 0o777 == 0o600
    again = runner.invoke(app, ["keygen", "--out", str(tmp_path / "keys")])
    assert again.exit_code == 2 and "never overwritten" in again.output
    with pytest.raises(SignatureError):
        load_public_key(tmp_path / "keys" / "checkpoint.key")
