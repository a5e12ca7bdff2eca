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

**Signature.** A release may also be signed: ``--write-manifest PATH --sign-key KEY`` writes
beside the manifest a detached signature ``PATH.sig``, a small JSON file holding the Ed25519
signature (base64) of the manifest's canonical JSON (the bytes whose SHA-256 is the manifest
hash), the manifest hash and the signing key's id (the SHA-256 of its raw public key). With
``--public-key PUB`` the signature is checked before any file is compared: a manifest edited
after signing, or signed by another key, is reported as ``signature invalid`` and nothing is
trusted from it. ``--generate-key DIR`` makes a key pair for a release (the private key stays
with whoever signs releases; the public key goes to the floor and to the regulator).

>>> import tempfile
>>> directory = Path(tempfile.mkdtemp())
>>> private, public = generate_key_pair(directory)
>>> manifest = {"package": "tablejack", "files": {"a.py": "0" * 64}}
>>> signed = sign_manifest(manifest, load_private_key(private))
>>> signature_problem(manifest, signed, load_public_key(public)) is None
True
>>> manifest["files"]["a.py"] = "1" * 64
>>> signature_problem(manifest, signed, load_public_key(public))
'signature invalid: the manifest was changed after it was signed'

>>> manifest = build_manifest()
>>> manifest["package"], len(manifest_hash(manifest))
('tablejack', 64)
>>> compare(manifest, manifest)
[]
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping
from importlib import metadata, resources
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from tablejack.store import keys
from tablejack.store.keys import SignatureError, key_id, load_public_key

__all__ = [
    "MANIFEST_NAME",
    "PRIVATE_KEY_NAME",
    "PUBLIC_KEY_NAME",
    "SIGNATURE_SUFFIX",
    "SignatureError",
    "build_manifest",
    "canonical_json",
    "compare",
    "generate_key_pair",
    "installed_manifest",
    "key_id",
    "load_private_key",
    "load_public_key",
    "manifest_hash",
    "package_root",
    "running_status",
    "sign_manifest",
    "signature_path",
    "signature_problem",
    "verify_release",
    "write_manifest",
]

MANIFEST_NAME = "RELEASE-MANIFEST.json"
SIGNATURE_SUFFIX = ".sig"
PRIVATE_KEY_NAME = "release-signing-key.pem"
PUBLIC_KEY_NAME = "release-signing-key.pub.pem"
SKIP_NAMES = {MANIFEST_NAME, MANIFEST_NAME + SIGNATURE_SUFFIX}
SKIP_DIRS = {"__pycache__"}
SKIP_SUFFIXES = (".pyc", ".pyo")


def package_root() -> Path:
    """The directory of the installed ``tablejack`` package."""
    return Path(str(resources.files("tablejack")))


def _files(root: Path) -> list[Path]:
    out = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.name in SKIP_NAMES:
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


def canonical_json(manifest: Mapping[str, Any]) -> bytes:
    """The manifest's canonical JSON (sorted keys, no spaces, UTF-8): what is hashed and signed."""
    text = json.dumps(manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode()


def manifest_hash(manifest: Mapping[str, Any]) -> str:
    """SHA-256 of the manifest's canonical JSON (sorted keys, no spaces)."""
    return hashlib.sha256(canonical_json(manifest)).hexdigest()


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


# -- signatures (Ed25519) --------------------------------------------------------------------


def signature_path(manifest_path: Path) -> Path:
    """Where the detached signature of ``manifest_path`` lives: the same name plus ``.sig``."""
    return manifest_path.with_name(manifest_path.name + SIGNATURE_SUFFIX)


def load_private_key(path: Path) -> Ed25519PrivateKey:
    """The release signing key of a PEM file (PKCS #8, unencrypted)."""
    return keys.load_private_key(path, "tablejack verify-install --generate-key DIR")


def generate_key_pair(directory: Path) -> tuple[Path, Path]:
    """Make a release signing key pair in ``directory`` (private key mode 0600, both PEM);
    never overwrite an existing key."""
    return keys.generate_key_pair(directory, PRIVATE_KEY_NAME, PUBLIC_KEY_NAME)


def sign_manifest(manifest: Mapping[str, Any], private_key: Ed25519PrivateKey) -> dict[str, str]:
    """The detached signature document of ``manifest``: the Ed25519 signature (base64) of its
    canonical JSON, its hash and the signing key's id."""
    return {
        "algorithm": "ed25519",
        "manifest_hash": manifest_hash(manifest),
        "key_id": key_id(private_key.public_key()),
        "signature": base64.b64encode(private_key.sign(canonical_json(manifest))).decode(),
    }


def signature_problem(
    manifest: Mapping[str, Any],
    signature: Mapping[str, Any] | None,
    public_key: Ed25519PublicKey,
) -> str | None:
    """``None`` when ``signature`` is a valid signature of ``manifest`` by ``public_key``; else
    why not, as one line starting ``signature missing`` or ``signature invalid``."""
    if signature is None:
        return "signature missing: the release manifest has no signature file"
    text = signature.get("signature")
    try:
        raw = base64.b64decode(text, validate=True) if isinstance(text, str) else b""
    except (binascii.Error, ValueError):
        raw = b""
    if signature.get("algorithm") != "ed25519" or len(raw) != 64:
        return "signature invalid: the signature file holds no Ed25519 signature"
    try:
        public_key.verify(raw, canonical_json(manifest))
    except InvalidSignature:
        expected = key_id(public_key)
        if signature.get("key_id") != expected:
            return (
                f"signature invalid: signed by another key ({str(signature.get('key_id'))[:16]}…, "
                f"not {expected[:16]}…)"
            )
        return "signature invalid: the manifest was changed after it was signed"
    return None


def write_manifest(
    path: Path, manifest: Mapping[str, Any], private_key: Ed25519PrivateKey | None = None
) -> Path | None:
    """Write ``manifest`` to ``path`` and, with ``private_key``, its signature to ``path.sig``
    (returned); without a key an older signature beside ``path`` is removed."""
    path.write_text(json.dumps(manifest, sort_keys=True, indent=1) + "\n", encoding="utf-8")
    sig = signature_path(path)
    if private_key is None:
        sig.unlink(missing_ok=True)
        return None
    document = sign_manifest(manifest, private_key)
    sig.write_text(json.dumps(document, sort_keys=True, indent=1) + "\n", encoding="utf-8")
    return sig


def _json_file(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def verify_release(
    manifest_path: Path | None = None,
    *,
    public_key: Path | None = None,
    root: Path | None = None,
) -> dict[str, Any]:
    """Verify the package at ``root`` (default: the installed one) against the release manifest
    (default: ``RELEASE-MANIFEST.json`` in that package) — with ``public_key``, its signature
    first (PA 605a.4(c)). ``ok`` is true only when the signature (if asked for) verified and
    every file agrees; ``problems`` lists what is wrong, one line each; ``signature`` is
    ``None`` (not checked), ``"verified"``, ``"missing"`` or ``"invalid"``."""
    base = root or package_root()
    file = manifest_path or base / MANIFEST_NAME
    actual = build_manifest(base)
    report: dict[str, Any] = {
        "ok": False,
        "manifest": str(file),
        "manifest_hash": None,
        "running_hash": manifest_hash(actual),
        "version": actual["version"],
        "files": len(actual["files"]),
        "signature": None,
        "key_id": None,
        "problems": [],
    }
    if not file.is_file():
        report["problems"] = [f"no release manifest at {file}"]
        return report
    try:
        release = _json_file(file)
        if not isinstance(release, dict) or not isinstance(release.get("files"), dict):
            raise ValueError("no files")
    except (OSError, ValueError):
        report["problems"] = [f"the release manifest at {file} is not a manifest (JSON)"]
        return report
    report["manifest_hash"] = manifest_hash(release)
    if public_key is not None:
        try:
            key = load_public_key(public_key)
        except SignatureError as error:
            report["signature"] = "invalid"
            report["problems"] = [f"signature not checked: {error}"]
            return report
        report["key_id"] = key_id(key)
        sig = signature_path(file)
        try:
            document = _json_file(sig) if sig.is_file() else None
        except (OSError, ValueError):
            document = {}
        if not isinstance(document, dict | None):
            document = {}
        problem = signature_problem(release, document, key)
        if problem is not None:
            report["signature"] = "missing" if document is None else "invalid"
            report["problems"] = [problem + (f" ({sig})" if document is None else "")]
            return report
        report["signature"] = "verified"
    report["problems"] = compare(release, actual)
    report["ok"] = not report["problems"]
    return report


def running_status(path: Path | None = None, *, public_key: Path | None = None) -> dict[str, Any]:
    """What the supervisor page shows: the hash of the software running now, the release
    manifest's hash (if one is installed) and whether they agree — with ``public_key`` (the
    ``--manifest-public-key`` of ``tablejack serve``) only when the manifest's signature
    verified with it too; ``signature`` says how the signature fared (``None``: no key
    configured)."""
    report = verify_release(path, public_key=public_key)
    found = Path(report["manifest"]).is_file()
    return {
        "running_hash": report["running_hash"],
        "files": report["files"],
        "version": report["version"],
        "release_manifest": report["manifest_hash"],
        "verified": report["ok"] if found else None,
        "problems": report["problems"] if found else None,
        "signature": report["signature"],
        "public_key_id": report["key_id"],
        "root": str(package_root()),
    }
