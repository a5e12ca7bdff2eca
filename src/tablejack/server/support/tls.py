"""TLS for the table server (PA Chapter 605a: critical data encrypted in transit).

``tablejack serve --tls-cert PATH --tls-key PATH`` serves the pages, the REST API and the
terminals' WebSocket over HTTPS/WSS, and the card reader port (``--reader-port``) over TLS with
the same certificate. :func:`tls_context` checks the configuration before anything listens: both
files are needed, both must be readable, the certificate must be a PEM X.509 certificate and the
key its PEM private key; anything else is a :class:`TLSConfigError` whose message names the file
and what is wrong with it.

>>> tls_context("cert.pem", None)
Traceback (most recent call last):
...
tablejack.server.support.tls.TLSConfigError: TLS needs both --tls-cert and --tls-key; only --tls-cert was given.
"""

from __future__ import annotations

import ssl
from pathlib import Path

from cryptography import x509

__all__ = ["TLSConfigError", "tls_context"]


class TLSConfigError(ValueError):
    """The TLS configuration is invalid (a file missing, unreadable, or not what it should be)."""


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise TLSConfigError(
            f"The TLS {what} {str(path)!r} cannot be read: {error.strerror or error}."
        ) from None


def tls_context(cert: str | Path | None, key: str | Path | None) -> ssl.SSLContext | None:
    """The server-side SSL context for ``cert`` and ``key`` (PEM files), or ``None`` when
    neither is given (plain HTTP); raise :class:`TLSConfigError` on any other combination or a
    file that is not usable."""
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        given = "--tls-cert" if cert is not None else "--tls-key"
        raise TLSConfigError(f"TLS needs both --tls-cert and --tls-key; only {given} was given.")
    cert_path, key_path = Path(cert), Path(key)
    cert_bytes = _read(cert_path, "certificate")
    _read(key_path, "key")
    try:
        x509.load_pem_x509_certificates(cert_bytes)
    except ValueError:
        raise TLSConfigError(
            f"The TLS certificate {str(cert_path)!r} is not a PEM X.509 certificate "
            "(-----BEGIN CERTIFICATE-----)."
        ) from None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert_path, key_path, password=lambda: b"")  # never prompt
    except ssl.SSLError as error:
        raise TLSConfigError(
            f"The TLS key {str(key_path)!r} is not the unencrypted PEM private key of the "
            f"certificate {str(cert_path)!r} ({error.reason or error})."
        ) from None
    return context
