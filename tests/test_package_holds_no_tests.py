"""The package ships nothing test-only (docs/architecture.md, "The tests' kit"): no module of
``tablejack`` imports pytest, Hypothesis, a test client or the tests' kit, and none is named as
a test helper is. What only a test runs lives in ``tests/support/``."""

from __future__ import annotations

import ast
from pathlib import Path

import tablejack

PACKAGE = Path(tablejack.__file__).resolve().parent
TEST_ONLY = (
    "pytest",
    "_pytest",
    "hypothesis",
    "starlette.testclient",
    "fastapi.testclient",
    "tests",
)
"""The modules only a test has a reason to import (each with its submodules)."""
HELPER_NAMES = {"testing.py", "conftest.py", "fixtures.py"}


def _test_only(module: str) -> bool:
    return any(module == name or module.startswith(f"{name}.") for name in TEST_ONLY)


def test_no_module_of_the_package_imports_a_test_library_or_the_kit() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            found += [(str(path.relative_to(PACKAGE)), m) for m in modules if _test_only(m)]
    assert found == []


def test_no_module_of_the_package_is_named_as_a_test_helper() -> None:
    helpers = [p.relative_to(PACKAGE) for p in PACKAGE.rglob("*.py") if p.name in HELPER_NAMES]
    assert helpers == []


def test_the_checks_see_a_test_import_and_a_helper_name() -> None:
    """The two walks above would see what they look for: a test import is caught, a module of
    the package is not."""
    assert _test_only("pytest") and _test_only("tests.support.floor")
    assert _test_only("starlette.testclient") and not _test_only("starlette.websockets")
    assert not _test_only("testsuite") and not _test_only("tablejack.store")
