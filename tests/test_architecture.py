"""The import contracts of docs/architecture.md bite: a wrong-way import fails ``lint-imports``.

Each case copies the package and ``pyproject.toml`` to a temporary folder, adds one import that
goes the wrong way, and runs import-linter there: the contract that forbids it must break."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the package (sources only) and its import contracts."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(
        ROOT / "src" / "tablejack",
        tmp_path / "src" / "tablejack",
        ignore=shutil.ignore_patterns("__pycache__", "static", "*.png"),
    )
    return tmp_path


def _add_import(tree: Path, module: str, statement: str) -> None:
    path = tree / "src" / Path(*module.split(".")).with_suffix(".py")
    path.write_text(path.read_text(encoding="utf-8") + f"\n{statement}\n", encoding="utf-8")


@pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter is not installed")
@pytest.mark.parametrize(
    ("module", "statement", "contract"),
    [
        ("tablejack.games.classic", "import tablejack.store  # noqa", "The layers"),
        ("tablejack.core.cards", "import tablejack.games  # noqa", "The layers"),
        (
            "tablejack.server.table.table",
            "import tablejack.server.app  # noqa",
            "The server's rooms",
        ),
        (  # the floor's duties sit under the routers
            "tablejack.server.duties.tilts",
            "import tablejack.server.http.tilts  # noqa",
            "The server's rooms",
        ),
        (  # socket and links are peers: neither imports the other
            "tablejack.server.links.interface",
            "import tablejack.server.socket.gate  # noqa",
            "The server's rooms",
        ),
        (  # the routers are peers: one concern never imports another's routes
            "tablejack.server.http.tips",
            "import tablejack.server.http.cash  # noqa",
            "The http routers never import each other",
        ),
        (  # what the routers share imports none of them
            "tablejack.server.http.access",
            "import tablejack.server.http.limits  # noqa",
            "The http routers never import each other",
        ),
        ("tablejack.store.policy", "import tablejack.store.db  # noqa", "money-movement policy"),
        (  # nor the write path the store's facade is made of
            "tablejack.store.policy",
            "import tablejack.store.write  # noqa",
            "money-movement policy",
        ),
        (  # the store is the only place that runs SQL
            "tablejack.server.duties.terminal_recall",
            "import sqlalchemy  # noqa",
            "The server never runs SQL",
        ),
        (
            "tablejack.server.http.health",
            "from sqlalchemy import text  # noqa",
            "The server never runs SQL",
        ),
        (  # a query of a store table, in a function, as a route once made one
            "tablejack.server.http.trust",
            "def _newest() -> object:\n    from tablejack.store.models import CHECKPOINTS\n\n"
            "    return CHECKPOINTS",
            "The server never runs SQL",
        ),
        (
            "tablejack.server.table.table",
            "from tablejack.store.models import LEDGER  # noqa",
            "The server never runs SQL",
        ),
        (
            "tablejack.lab.paytable.search",
            "import tablejack.lab.paytable.report  # noqa",
            "Paytable design",
        ),
    ],
)
def test_a_wrong_way_import_breaks_its_contract(
    tree: Path, module: str, statement: str, contract: str
) -> None:
    assert _lint(tree).returncode == 0, "the copied package keeps its contracts"
    _add_import(tree, module, statement)
    result = _lint(tree)
    assert result.returncode != 0
    # import-linter wraps long contract names: read its report as one line
    report = " ".join(result.stdout.split())
    verdict = re.search(re.escape(contract) + r".*?\b(KEPT|BROKEN)\b", report)
    assert verdict is not None, result.stdout
    assert verdict.group(1) == "BROKEN", result.stdout
