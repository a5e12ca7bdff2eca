"""Software authentication with a signed release manifest (PA 605a.4(c)): an Ed25519 signature
of the manifest, checked before any file is compared, by ``tablejack verify-install`` and on the
supervisor's page (``GET /api/floor/integrity``)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner, Result

from tablejack.server.commands.integrity import register
from tablejack.server.support import integrity

runner = CliRunner()


def _cli() -> typer.Typer:
    app = typer.Typer()
    register(app)

    @app.command()
    def other() -> None:  # a second command keeps typer from collapsing the group
        """Nothing."""

    return app


def verify_install(*args: str | Path) -> Result:
    return runner.invoke(_cli(), ["verify-install", *map(str, args)])


def _package(root: Path) -> Path:
    (root / "pkg" / "static").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("x = 1\n")
    (root / "pkg" / "static" / "page.html").write_text("<p>hi</p>\n")
    return root / "pkg"


def _keys(directory: Path) -> tuple[Path, Path]:
    made = verify_install("--generate-key", directory)
    assert made.exit_code == 0, made.output
    return directory / integrity.PRIVATE_KEY_NAME, directory / integrity.PUBLIC_KEY_NAME


@pytest.fixture
def release(tmp_path: Path) -> dict[str, Path]:
    """A package, a key pair and the package's manifest signed with it."""
    root = _package(tmp_path)
    private, public = _keys(tmp_path / "keys")
    manifest = tmp_path / "release" / "manifest.json"
    manifest.parent.mkdir()
    written = verify_install("--write-manifest", manifest, "--sign-key", private, "--root", root)
    assert written.exit_code == 0, written.output
    return {"root": root, "private": private, "public": public, "manifest": manifest}


def test_605a4c_a_signed_manifest_verifies(release: dict[str, Path]) -> None:
    public = integrity.load_public_key(release["public"])
    document = json.loads(integrity.signature_path(release["manifest"]).read_text())
    manifest = json.loads(release["manifest"].read_text())
    assert document["algorithm"] == "ed25519"
    assert document["manifest_hash"] == integrity.manifest_hash(manifest)
    assert document["key_id"] == integrity.key_id(public)
    public.verify(base64.b64decode(document["signature"]), integrity.canonical_json(manifest))
    result = verify_install(
        "--manifest",
        release["manifest"],
        "--public-key",
        release["public"],
        "--root",
        release["root"],
    )
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        f"signature verified: key {integrity.key_id(public)}",
        f"OK: manifest {integrity.manifest_hash(manifest)}, 2 files",
    ]


def test_605a4c_a_release_carries_its_signature_in_the_package(release: dict[str, Path]) -> None:
    root = release["root"]
    inside = root / integrity.MANIFEST_NAME
    written = verify_install(
        "--write-manifest", inside, "--sign-key", release["private"], "--root", root
    )
    assert written.exit_code == 0, written.output
    assert (root / "RELEASE-MANIFEST.json.sig").is_file()
    # the default manifest of the package; neither it nor its signature counts as a file
    result = verify_install("--public-key", release["public"], "--root", root, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert (report["signature"], report["files"], report["problems"]) == ("verified", 2, [])


def test_605a4c_a_manifest_edited_after_signing_is_signature_invalid(
    release: dict[str, Path],
) -> None:
    manifest = json.loads(release["manifest"].read_text())
    (release["root"] / "__init__.py").write_text("x = 2\n")  # the forger's change ...
    manifest["files"]["__init__.py"] = integrity.build_manifest(release["root"])["files"][
        "__init__.py"
    ]  # ... written into the manifest, whose signature no longer matches
    release["manifest"].write_text(json.dumps(manifest))
    args = ("--manifest", release["manifest"], "--public-key", release["public"])
    result = verify_install(*args, "--root", release["root"])
    assert result.exit_code == 1
    assert result.output.startswith(
        "FAIL signature invalid: the manifest was changed after it was signed;"
    )
    report = json.loads(verify_install(*args, "--root", release["root"], "--json").output)
    assert (report["ok"], report["signature"]) == (False, "invalid")
    assert report["problems"] == ["signature invalid: the manifest was changed after it was signed"]
    # without the public key the edited manifest matches the files: only the signature tells
    assert (
        verify_install("--manifest", release["manifest"], "--root", release["root"]).exit_code == 0
    )


def test_605a4c_a_manifest_signed_by_another_key_is_signature_invalid(
    release: dict[str, Path], tmp_path: Path
) -> None:
    other_private, other_public = _keys(tmp_path / "other")
    result = verify_install(
        "--manifest", release["manifest"], "--public-key", other_public, "--root", release["root"]
    )
    assert result.exit_code == 1
    assert "signature invalid: signed by another key" in result.output
    # a forger re-signing the manifest with his own key does not pass the floor's key either
    forged = verify_install(
        "--write-manifest",
        release["manifest"],
        "--sign-key",
        other_private,
        "--root",
        release["root"],
    )
    assert forged.exit_code == 0
    again = verify_install(
        "--manifest",
        release["manifest"],
        "--public-key",
        release["public"],
        "--root",
        release["root"],
    )
    assert again.exit_code == 1
    assert "signature invalid: signed by another key" in again.output


def test_605a4c_a_changed_file_under_a_valid_signature_is_reported(
    release: dict[str, Path],
) -> None:
    (release["root"] / "__init__.py").write_text("x = 2\n")
    (release["root"] / "static" / "page.html").unlink()
    result = verify_install(
        "--manifest",
        release["manifest"],
        "--public-key",
        release["public"],
        "--root",
        release["root"],
        "--json",
    )
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert report["signature"] == "verified"
    assert report["problems"] == ["changed: __init__.py", "missing: static/page.html"]


def test_605a4c_a_missing_signature_or_unusable_key_fails(release: dict[str, Path]) -> None:
    # writing an unsigned manifest drops the older signature instead of leaving a wrong one
    unsigned = verify_install("--write-manifest", release["manifest"], "--root", release["root"])
    assert unsigned.exit_code == 0
    assert not integrity.signature_path(release["manifest"]).exists()
    result = verify_install(
        "--manifest",
        release["manifest"],
        "--public-key",
        release["public"],
        "--root",
        release["root"],
    )
    assert result.exit_code == 1
    assert result.output.startswith("FAIL signature missing:")
    not_a_key = release["root"] / "static" / "page.html"
    result = verify_install(
        "--manifest", release["manifest"], "--public-key", not_a_key, "--root", release["root"]
    )
    assert result.exit_code == 1
    assert "is not an Ed25519 public key (PEM)" in result.output


def test_605a4c_key_and_signing_options_are_checked(release: dict[str, Path]) -> None:
    alone = verify_install("--sign-key", release["private"])
    assert alone.exit_code == 2
    assert "--sign-key signs the manifest written by --write-manifest" in alone.output
    again = verify_install("--generate-key", release["private"].parent)
    assert again.exit_code == 2
    assert "a key is never overwritten" in again.output
    assert release["private"].stat().st_mode & 0o077 == 0  # the private key is the owner's only
    wrong = verify_install("--write-manifest", release["manifest"], "--sign-key", release["public"])
    assert wrong.exit_code == 2
    assert "is not an unencrypted Ed25519 private key" in wrong.output


def test_605a4c_the_supervisor_sees_whether_the_signature_verified(
    make_client: Any, kit: Any, tmp_path: Path
) -> None:
    private, public = _keys(tmp_path / "keys")
    _, other_public = _keys(tmp_path / "other")
    manifest = tmp_path / "release.json"
    client = make_client(release_manifest=manifest, manifest_public_key=public)
    integrity.write_manifest(
        manifest, integrity.build_manifest(), integrity.load_private_key(private)
    )
    shown = client.get("/api/floor/integrity", headers=kit.auth("super")).json()
    assert shown["release_manifest"] == integrity.manifest_hash(json.loads(manifest.read_text()))
    assert (shown["signature"], shown["verified"], shown["problems"]) == ("verified", True, [])
    assert shown["public_key_id"] == integrity.key_id(integrity.load_public_key(public))
    edited = json.loads(manifest.read_text())
    edited["version"] = "9.9.9"
    manifest.write_text(json.dumps(edited))
    shown = client.get("/api/floor/integrity", headers=kit.auth("super")).json()
    assert (shown["signature"], shown["verified"]) == ("invalid", False)
    assert shown["problems"] == ["signature invalid: the manifest was changed after it was signed"]
    client.app.state.manifest_public_key = other_public
    shown = client.get("/api/floor/integrity", headers=kit.auth("super")).json()
    assert shown["signature"] == "invalid"
    assert shown["problems"][0].startswith("signature invalid: signed by another key")
    client.app.state.manifest_public_key = None  # no key configured: the hash alone, as before
    shown = client.get("/api/floor/integrity", headers=kit.auth("super")).json()
    assert (shown["signature"], shown["public_key_id"]) == (None, None)


def test_605a4c_serve_refuses_an_unusable_manifest_public_key(tmp_path: Path) -> None:
    from tablejack.cli import app

    not_a_key = tmp_path / "key.pem"
    not_a_key.write_text("hello\n")
    # --unsigned: this test is about the manifest key, not the checkpoint key
    result = runner.invoke(app, ["serve", "--unsigned", "--manifest-public-key", str(not_a_key)])
    assert result.exit_code == 2
    assert "is not an Ed25519 public key (PEM)" in result.output
    assert "The server did not start." in result.output
