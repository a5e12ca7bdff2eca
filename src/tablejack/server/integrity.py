"""Software authentication (PA 605a.4(c)): a release manifest of the installed package and
its verification.

The manifest lists the SHA-256 of every file of the installed ``tablejack`` package (its
Python sources, the static pages, the migrations — every file but compiled bytecode caches and
the manifest itself), sorted by path; the **manifest hash** is the SHA-256 of the manifest's
canonical JSON, so one hash names one exact release. ``tablejack verify-install`` recomputes
the files' hashes and reports every file changed, missing or added (exit 1 on any difference);
the supervisor page shows the manifest hash of the running software.

A release manifest is written with ``tablejack verify-install --write-manifest PATH``; the
package looks for ``RELEASE-MANIFEST.json`` beside its ``__init__.py`` (a built release puts it
there) unless ``--manifest PATH`` names another.

>>> manifest = build_manifest()
>>> manifest["package"], len(manifest_hash(manifest))
('tablejack', 64)
>>> compare(manifest, manifest)
[]
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from importlib import metadata, resources
from pathlib import Path
from typing import Any

__all__ = [
    "MANIFEST_NAME",
    "build_manifest",
    "compare",
    "installed_manifest",
    "manifest_hash",
    "package_root",
    "running_status",
]

MANIFEST_NAME = "RELEASE-MANIFEST.json"
SKIP_DIRS = {"__pycache__"}
SKIP_SUFFIXES = (".pyc", ".pyo")


def package_root() -> Path:
    """The directory of the installed ``tablejack`` package."""
    return Path(str(resources.files("tablejack")))


def _files(root: Path) -> list[Path]:
    out = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.name == MANIFEST_NAME:
            continue
        relative = path.relative_to(root)
        if SKIP_DIRS & set(relative.parts) or path.suffix in SKIP_SUFFIXES:
            continue
        out.append(path)
    return out


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def build_manifest(root: Path | None = None) -> dict[str, Any]:
    """The manifest of the package at ``root`` (default: the installed package)."""
    base = root or package_root()
    try:
        version = metadata.version("tablejack")
    except metadata.PackageNotFoundError:  # pragma: no cover - run from a bare source tree
        version = "unknown"
    return {
        "package": "tablejack",
        "version": version,
        "algorithm": "sha256",
        "files": {path.relative_to(base).as_posix(): _sha256(path) for path in _files(base)},
    }


def manifest_hash(manifest: Mapping[str, Any]) -> str:
    """SHA-256 of the manifest's canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def compare(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> list[str]:
    """One line per difference between a release manifest and the files found."""
    want: Mapping[str, str] = expected.get("files", {})
    have: Mapping[str, str] = actual.get("files", {})
    problems = [f"changed: {p}" for p in sorted(want) if p in have and have[p] != want[p]]
    problems += [f"missing: {p}" for p in sorted(want) if p not in have]
    problems += [f"added: {p}" for p in sorted(have) if p not in want]
    return problems


def installed_manifest(path: Path | None = None) -> dict[str, Any] | None:
    """The release manifest (``path``, or ``RELEASE-MANIFEST.json`` in the package)."""
    file = path or package_root() / MANIFEST_NAME
    if not file.is_file():
        return None
    data: dict[str, Any] = json.loads(file.read_text(encoding="utf-8"))
    return data


def running_status(path: Path | None = None) -> dict[str, Any]:
    """What the supervisor page shows: the hash of the software running now, the release
    manifest's hash (if one is installed) and whether they agree."""
    actual = build_manifest()
    release = installed_manifest(path)
    problems = None if release is None else compare(release, actual)
    return {
        "running_hash": manifest_hash(actual),
        "files": len(actual["files"]),
        "version": actual["version"],
        "release_manifest": None if release is None else manifest_hash(release),
        "verified": None if release is None else not problems,
        "problems": problems,
        "root": str(package_root()),
    }
