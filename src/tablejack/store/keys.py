"""Ed25519 keys: make a key pair, load a private or public key (PEM), and a key's id.

The release manifest's signature (:mod:`tablejack.server.support.integrity`) and the signed checkpoints
of the event log (:mod:`tablejack.store.checkpoints`) use these. A private key is written with
mode 0600 and never overwritten.

>>> import tempfile
>>> from pathlib import Path
>>> with tempfile.TemporaryDirectory() as folder:
...     private, public = generate_key_pair(Path(folder), "checkpoint.key", "checkpoint.pub")
...     key_id(load_public_key(public)) == key_id(load_private_key(private).public_key())
True
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

__all__ = [
    "SignatureError",
    "generate_key_pair",
    "key_id",
    "load_private_key",
    "load_public_key",
]


class SignatureError(ValueError):
    """A key or signature file cannot be used: unreadable, or not what it should be."""


def key_id(public_key: Ed25519PublicKey) -> str:
    """A key's id: the SHA-256 (hex) of its 32 raw public bytes."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def _pem(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise SignatureError(
            f"The {what} {str(path)!r} cannot be read: {error.strerror or error}."
        ) from None


def load_private_key(path: Path, hint: str = "tablejack keygen") -> Ed25519PrivateKey:
    """The Ed25519 private key of a PEM file (PKCS #8, unencrypted); ``hint``: the command that
    makes one."""
    try:
        key = serialization.load_pem_private_key(_pem(path, "signing key"), password=None)
    except (ValueError, TypeError):
        key = None
    if not isinstance(key, Ed25519PrivateKey):
        raise SignatureError(
            f"The signing key {str(path)!r} is not an unencrypted Ed25519 private key (PEM); "
            f"make one with `{hint}`."
        )
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    """The Ed25519 public key of a PEM file (SubjectPublicKeyInfo)."""
    try:
        key = serialization.load_pem_public_key(_pem(path, "public key"))
    except (ValueError, TypeError):
        key = None
    if not isinstance(key, Ed25519PublicKey):
        raise SignatureError(f"The public key {str(path)!r} is not an Ed25519 public key (PEM).")
    return key


def generate_key_pair(directory: Path, private_name: str, public_name: str) -> tuple[Path, Path]:
    """Make an Ed25519 key pair in ``directory``: the private key (mode 0600) and the public
    key, both PEM; never overwrite an existing key."""
    directory.mkdir(parents=True, exist_ok=True)
    private_path, public_path = directory / private_name, directory / public_name
    for path in (private_path, public_path):
        if path.exists():
            raise SignatureError(f"{str(path)!r} exists; a key is never overwritten.")
    key = Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    descriptor = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(private_pem)
    public_path.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return private_path, public_path
