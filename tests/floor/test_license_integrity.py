"""The licence count (PA 605a.9(b): five EWTs are one table) and software authentication
(PA 605a.4(c): the release manifest and ``tablejack verify-install``)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import typer
from typer.testing import CliRunner

from tablejack.server.commands.integrity import register
from tablejack.server.support import integrity


def license_view(client: Any, kit: Any, who: str = "super") -> dict[str, Any]:
    return dict(client.get("/api/floor/license", headers=kit.auth(who)).json())


def test_605a9b_five_ewts_count_as_one_table(make_client: Any, kit: Any) -> None:
    client = make_client([kit.stacked_table("A1"), kit.stacked_table("A2")])
    secrets: dict[str, str] = {}
    for n in range(1, 7):
        registered = kit.post(
            client,
            "/api/floor/terminals",
            "operator",
            terminal=f"EWT-{n}",
            table="A1" if n <= 4 else "A2",
        )
        assert registered.status_code == 200
        answer = registered.json()
        assert (answer["terminal"]["id"], answer["terminal"]["status"]) == (f"EWT-{n}", "active")
        assert answer["credential"] and answer["credential_id"]  # a new EWT's device secret
        secrets[f"EWT-{n}"] = answer["credential"]
    view = license_view(client, kit)
    assert (view["rule"], view["active_terminals"], view["counted_tables"]) == (
        "PA 605a.9(b)",
        6,
        2,
    )
    assert view["terminals_per_table"] == {"A1": 4, "A2": 2}
    assert license_view(client, kit, "operator") == view
    retired = kit.post(
        client,
        "/api/floor/terminals",
        "operator",
        terminal="EWT-6",
        table="A2",
        status="retired",
    ).json()
    assert (retired["terminal"]["status"], retired["credential"]) == ("retired", None)
    view = license_view(client, kit)
    assert (view["active_terminals"], view["counted_tables"]) == (5, 1)
    back = kit.post(
        client,
        "/api/floor/terminals",
        "operator",
        terminal="EWT-6",
        table="A2",
        credential=True,
    ).json()
    assert back["credential"] not in (None, secrets["EWT-6"])  # retiring revoked the old one
    for key, status in ((secrets["EWT-6"], 403), (back["credential"], 200)):
        signed_in = client.post(
            "/api/session",
            json={"token": kit.tokens["ann"], "terminal": "EWT-6", "terminal_key": key},
        )
        client.cookies.clear()
        assert signed_in.status_code == status
    assert license_view(client, kit)["counted_tables"] == 2
    # the rounding is the operator's floor setting; a supervisor may not change it
    rounding = {"key": "license_rounding", "value": "down"}
    by_super = client.put("/api/floor/settings", json=rounding, headers=kit.auth("super"))
    assert (by_super.status_code, by_super.json()["detail"]["rule"]) == (403, "role: operator")
    assert license_view(client, kit)["counted_tables"] == 2
    client.put("/api/floor/settings", json=rounding, headers=kit.auth("operator"))
    assert license_view(client, kit)["counted_tables"] == 1
    for who in ("ann", "dealer", "cashier"):
        assert client.get("/api/floor/license", headers=kit.auth(who)).status_code == 403
    # registering a terminal is the operator's: neither a dealer nor a supervisor may
    for who, subject in (("dealer", "dana"), ("super", "sam")):
        refused = kit.post(client, "/api/floor/terminals", who, terminal="EWT-7", table="A1")
        assert (refused.status_code, refused.json()["detail"]["rule"]) == (403, "role: operator")
        entry = client.get("/api/audit", headers=kit.auth("super")).json()[0]
        assert (entry["kind"], entry["actor"]) == ("role", subject)
    assert (
        kit.post(
            client, "/api/floor/terminals", "operator", terminal="EWT-7", table="Z9"
        ).status_code
        == 404
    )
    view = license_view(client, kit)
    assert (view["active_terminals"], [t["id"] for t in view["terminals"]]) == (
        6,
        [f"EWT-{n}" for n in range(1, 7)],
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
