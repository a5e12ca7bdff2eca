"""The licence count (PA 605a.9(b): five EWTs are one table) and software authentication
(PA 605a.4(c): the release manifest and ``tablejack verify-install``)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import typer
from typer.testing import CliRunner

from tablejack.server import integrity
from tablejack.server.integrity_commands import register


def post(client: Any, kit: Any, path: str, who: str, **body: Any) -> Any:
    return client.post(path, json=body, headers=kit.auth(who))


def test_605a9b_five_ewts_count_as_one_table(make_client: Any, kit: Any) -> None:
    client = make_client([kit.hybrid_table("A1"), kit.hybrid_table("A2")])
    for n in range(1, 7):
        post(
            client,
            kit,
            "/api/floor/terminals",
            "super",
            terminal=f"EWT-{n}",
            table="A1" if n <= 4 else "A2",
        )
    view = client.get("/api/floor/license", headers=kit.auth("super")).json()
    assert (view["rule"], view["active_terminals"], view["counted_tables"]) == (
        "PA 605a.9(b)",
        6,
        2,
    )
    assert view["terminals_per_table"] == {"A1": 4, "A2": 2}
    retired = post(
        client, kit, "/api/floor/terminals", "super", terminal="EWT-6", table="A2", status="retired"
    ).json()
    assert (retired["active_terminals"], retired["counted_tables"]) == (5, 1)
    post(client, kit, "/api/floor/terminals", "super", terminal="EWT-6", table="A2")
    client.put(
        "/api/floor/settings",
        json={"key": "license_rounding", "value": "down"},
        headers=kit.auth("super"),
    )
    assert client.get("/api/floor/license", headers=kit.auth("super")).json()["counted_tables"] == 1
    assert client.get("/api/floor/license", headers=kit.auth("ann")).status_code == 403
    assert (
        post(
            client, kit, "/api/floor/terminals", "dealer", terminal="EWT-7", table="A1"
        ).status_code
        == 403
    )
    assert (
        post(client, kit, "/api/floor/terminals", "super", terminal="EWT-7", table="Z9").status_code
        == 404
    )


def _package(root: Path) -> Path:
    (root / "pkg" / "static").mkdir(parents=True)
    (root / "pkg" / "__pycache__").mkdir()
    (root / "pkg" / "__init__.py").write_text("x = 1\n")
    (root / "pkg" / "static" / "page.html").write_text("<p>hi</p>\n")
    (root / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0")
    return root / "pkg"


def test_605a4c_the_manifest_names_every_file_and_any_difference(tmp_path: Path) -> None:
    root = _package(tmp_path)
    release = integrity.build_manifest(root)
    assert sorted(release["files"]) == ["__init__.py", "static/page.html"]
    assert release["files"]["__init__.py"] == hashlib.sha256(b"x = 1\n").hexdigest()
    (root / "__init__.py").write_text("x = 2\n")
    (root / "static" / "page.html").unlink()
    (root / "extra.py").write_text("")
    assert integrity.compare(release, integrity.build_manifest(root)) == [
        "changed: __init__.py",
        "missing: static/page.html",
        "added: extra.py",
    ]
    assert integrity.manifest_hash(release) != integrity.manifest_hash(
        integrity.build_manifest(root)
    )


def test_605a4c_verify_install_exits_1_on_any_difference(tmp_path: Path) -> None:
    app = typer.Typer()
    register(app)

    @app.command()
    def other() -> None:  # a second command keeps typer from collapsing the group
        """Nothing."""

    runner = CliRunner()
    manifest = tmp_path / "release.json"
    written = runner.invoke(app, ["verify-install", "--write-manifest", str(manifest)])
    assert written.exit_code == 0, written.output
    good = runner.invoke(app, ["verify-install", "--manifest", str(manifest)])
    assert good.exit_code == 0, good.output
    release = json.loads(manifest.read_text())
    assert good.output.strip().endswith(
        f"OK: manifest {integrity.manifest_hash(release)}, {len(release['files'])} files"
    )
    first = sorted(release["files"])[0]
    release["files"][first] = "0" * 64
    release["files"]["forged.py"] = "1" * 64
    manifest.write_text(json.dumps(release))
    bad = runner.invoke(app, ["verify-install", "--manifest", str(manifest), "--json"])
    assert bad.exit_code == 1
    report = json.loads(bad.output)
    assert report["ok"] is False
    assert report["problems"] == [f"changed: {first}", "missing: forged.py"]
    absent = runner.invoke(app, ["verify-install", "--manifest", str(tmp_path / "none.json")])
    assert absent.exit_code == 1
    assert "no release manifest" in absent.output


def test_605a4c_the_supervisor_sees_the_running_software_hash(make_client: Any, kit: Any) -> None:
    client = make_client()
    shown = client.get("/api/floor/integrity", headers=kit.auth("super")).json()
    assert shown["running_hash"] == integrity.manifest_hash(integrity.build_manifest())
    assert shown["files"] == len(integrity.build_manifest()["files"])
    assert client.get("/api/floor/integrity", headers=kit.auth("dealer")).status_code == 403
