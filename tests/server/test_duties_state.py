"""The floor's duties keep their state in objects the composition root builds for each floor
(docs/architecture.md, "A new floor duty"), never in module-level tables keyed by floor or
table: two floors in one process share nothing, and a lock changed on one floor reaches that
floor's duties through :meth:`Floor.locks_changed` alone."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

from tablejack.server.compose import compose
from tablejack.store import Store
from tablejack.store import protections as store_protections

SERVER = Path(__file__).resolve().parents[2] / "src" / "tablejack" / "server"
REGISTRY = "# registry:"
"""The comment that allows a module-level weak table: a registry of what is attached to a
floor, not a duty's state."""


def _module_level_weak_tables(path: Path, root: Path) -> list[str]:
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    found = []
    for node in ast.parse(source).body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if not isinstance(value, ast.Call):
            continue
        called = ast.unparse(value.func)
        if not called.endswith(("WeakKeyDictionary", "WeakValueDictionary")):
            continue
        if lines[node.lineno - 2].strip().startswith(REGISTRY):
            continue
        found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_no_module_level_weak_table_keeps_a_duty_state_in_the_server() -> None:
    modules = sorted(SERVER.rglob("*.py"))
    assert len(modules) > 50  # the walk finds the server's rooms
    found = [hit for path in modules for hit in _module_level_weak_tables(path, SERVER)]
    assert found == []


def test_the_walk_finds_a_module_level_weak_table(tmp_path: Path) -> None:
    """The check above can fail: a duty keeping its state the old way is found."""
    (tmp_path / "duty.py").write_text(
        "import weakref\n_STATE: weakref.WeakKeyDictionary[object, int] = "
        "weakref.WeakKeyDictionary()\n",
        encoding="utf-8",
    )
    (tmp_path / "links.py").write_text(
        "import weakref\n# registry: what is attached to a floor\n"
        "_LINKS = weakref.WeakKeyDictionary()\n",
        encoding="utf-8",
    )
    assert _module_level_weak_tables(tmp_path / "duty.py", tmp_path) == ["duty.py:2"]
    assert _module_level_weak_tables(tmp_path / "links.py", tmp_path) == []


def test_605a_each_floor_has_its_own_duties_and_hears_its_own_locks(tmp_path: Path) -> None:
    """A terminal locked on one floor reloads that floor's guard at the next wager (the lock
    applies at once) and leaves another floor's guard as it was."""

    async def body() -> None:
        store = await Store.open(str(tmp_path / "duties.db"))
        try:
            one, two = compose(store), compose(store)
            assert one.duties is not two.duties
            assert one.duties.protections is not two.duties.protections
            assert one.floor.lock_listeners == [one.duties.locks_changed]
            first_one = await one.duties.protections.cache()
            first_two = await two.duties.protections.cache()
            assert await one.duties.protections.cache() is first_one  # cached
            assert first_one.locked == {}
            await store_protections.lock_terminal(
                store, "EWT-9", "door_open", "the door of the cabinet", by="sam", at_us=1
            )
            await one.floor.locks_changed()
            again = await one.duties.protections.cache()
            assert again is not first_one
            assert [t["code"] for t in again.locked["EWT-9"]] == ["door_open"]
            assert await two.duties.protections.cache() is first_two  # the other floor's
        finally:
            await store.close()

    asyncio.run(body())
