"""TLS (PA Chapter 605a: critical data encrypted in transit): ``tablejack serve --tls-cert
--tls-key`` serves HTTPS, WSS and a TLS card reader port with one certificate, and refuses to
start on a bad configuration."""

from __future__ import annotations

import datetime as dt
import http.client
import ipaddress
import json
import os
import socket
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from typer.testing import CliRunner
from websockets.sync.client import connect

from tablejack.cli import app
from tablejack.server.support import integrity
from tests.support.serve import free_port, wait_listening

runner = CliRunner()


def self_signed(directory: Path, name: str = "floor") -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost, and its key (PEM files)."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"tablejack {name}")])
    now = dt.datetime.now(dt.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / f"{name}.crt", directory / f"{name}.key"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


class Server:
    def __init__(self, process: subprocess.Popen[str], port: int, reader_port: int, cert: Path):
        self.process = process
        self.port = port
        self.reader_port = reader_port
        self.trust = ssl.create_default_context(cafile=str(cert))
        self.banner: list[str] = []


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The real server process on TLS, with the demo floor and a TLS reader port."""
    directory = tmp_path_factory.mktemp("tls")
    cert, key = self_signed(directory)
    port, reader_port = free_port(), free_port()
    private, public = integrity.generate_key_pair(directory / "keys")
    manifest = directory / "release.json"
    integrity.write_manifest(
        manifest, integrity.build_manifest(), integrity.load_private_key(private)
    )
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from tablejack.cli import main; main()",
            "serve",
            "--unsigned",
            "--demo",
            "--db",
            str(directory / "demo.sqlite"),
            "--port",
            str(port),
            "--reader-port",
            str(reader_port),
            "--tls-cert",
            str(cert),
            "--tls-key",
            str(key),
            "--release-manifest",
            str(manifest),
            "--manifest-public-key",
            str(public),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    running = Server(process, port, reader_port, cert)
    try:
        wait_listening(process, port)
        assert process.stdout is not None
        for _ in range(4):
            running.banner.append(process.stdout.readline().rstrip("\n"))
        yield running
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


def test_605a_tls_https_serves_the_api_and_prints_https_urls(server: Server) -> None:
    assert server.banner[0].startswith(f"tablejack table server on https://127.0.0.1:{server.port}")
    assert server.banner[1] == f"  terminals connect to wss://127.0.0.1:{server.port}/ws"
    assert server.banner[2] == f"  card readers on TCP port {server.reader_port} over TLS"
    assert server.banner[3].startswith("  release manifest signatures checked with key ")
    connection = http.client.HTTPSConnection(
        "127.0.0.1", server.port, context=server.trust, timeout=5
    )
    try:
        connection.request("GET", "/api/protocol")
        response = connection.getresponse()
        assert response.status == 200
        assert json.loads(response.read()) == {"version": 2, "websocket": "/ws"}
        connection.request("GET", "/static/terminal.html")
        page = connection.getresponse()
        assert page.status == 200
        page.read()
        connection.request("GET", "/static/common.js")
        script = connection.getresponse().read().decode()
        # the pages build the socket's URL from the page's scheme: wss under https
        assert 'location.protocol === "https:" ? "wss" : "ws"' in script
    finally:
        connection.close()


def test_605a_tls_a_terminal_says_hello_over_wss(server: Server) -> None:
    with connect(f"wss://127.0.0.1:{server.port}/ws", ssl=server.trust, open_timeout=5) as ws:
        ws.send(
            json.dumps(
                {
                    "type": "hello",
                    "protocol": 2,
                    "token": "demo-ann",
                    "terminal": "A1-EWT1",
                    "terminal_key": "demo-key-A1-EWT1",
                }
            )
        )
        welcome = json.loads(ws.recv(timeout=5))
    assert (welcome["type"], welcome["role"], welcome["subject"], welcome["terminal"]) == (
        "welcome",
        "player",
        "ann",
        "A1-EWT1",
    )


def test_605a_tls_plain_http_to_the_tls_port_gets_nothing(server: Server) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        with pytest.raises((http.client.HTTPException, OSError)):
            connection.request("GET", "/api/protocol")
            connection.getresponse()
    finally:
        connection.close()
    untrusting = ssl.create_default_context()  # the system's CAs do not know this certificate
    connection = http.client.HTTPSConnection(
        "127.0.0.1", server.port, context=untrusting, timeout=5
    )
    try:
        with pytest.raises(ssl.SSLCertVerificationError):
            connection.request("GET", "/api/protocol")
    finally:
        connection.close()


def test_605a_tls_the_card_reader_port_speaks_tls(server: Server) -> None:
    raw = socket.create_connection(("127.0.0.1", server.reader_port), timeout=5)
    with server.trust.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        file = tls.makefile("rwb")
        file.write(b"AUTH demo-dealer A1\n")
        file.flush()
        assert file.readline() == b"OK A1\n"
        file.write(b"QUIT\n")
        file.flush()
        assert file.readline() == b"BYE\n"
        file.close()
    with socket.create_connection(("127.0.0.1", server.reader_port), timeout=5) as plain:
        plain.sendall(b"AUTH demo-dealer A1\n")
        try:
            answer = plain.recv(100)
        except OSError:
            answer = b""
        assert not answer.startswith(b"OK")


def test_605a_tls_the_pages_work_under_https(server: Server) -> None:
    """Signed in from the demo's landing page over HTTPS (no token in any URL), a terminal page
    opens its socket with wss and plays; the supervisor page shows the release manifest's
    signature checked with the key given to ``serve``."""
    chromium = os.environ.get("TABLEJACK_CHROMIUM", "/usr/bin/chromium")
    reason = None if Path(chromium).exists() else f"Chromium not found at {chromium}"
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError as error:  # pragma: no cover
        reason = f"playwright is not installed: {error}"
    if reason is not None:  # pragma: no cover
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI requires the browser tests: {reason}")
        pytest.skip(reason)

    base = f"https://127.0.0.1:{server.port}"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        try:
            urls: list[str] = []
            sockets: list[str] = []

            def browser_of_one_person() -> Any:  # a cookie jar: one identity
                context = browser.new_context(ignore_https_errors=True)  # self-signed certificate
                context.on("request", lambda request: urls.append(request.url))
                page = context.new_page()
                page.on("framenavigated", lambda frame: urls.append(frame.url))
                page.on("websocket", lambda ws: sockets.append(ws.url))
                page.goto(f"{base}/")
                return page

            page = browser_of_one_person()
            page.get_by_test_id("terminal-A1-EWT2").get_by_role("button", name="cat").click()
            expect(page.get_by_test_id("balance")).to_have_text("$1,000.00")
            expect(page.get_by_test_id("who")).to_have_text("cat · A1-EWT2")
            assert sockets == [f"wss://127.0.0.1:{server.port}/ws"]
            session = next(c for c in page.context.cookies() if c["name"] == "tj_session")
            assert session["httpOnly"] and session["sameSite"] == "Strict"
            supervisor = browser_of_one_person()
            supervisor.get_by_test_id("staff-supervisor").click()
            expect(supervisor.locator("#software-state")).to_contain_text(
                "its signature verified (key "
            )
        finally:
            browser.close()
    assert f"{base}/static/index.html" in urls
    for url in urls + sockets:
        assert "token" not in url and "demo-" not in url, url


def test_605a4c_serve_checks_the_manifest_signature_with_its_key(server: Server) -> None:
    connection = http.client.HTTPSConnection(
        "127.0.0.1", server.port, context=server.trust, timeout=5
    )
    try:
        connection.request(
            "GET", "/api/floor/integrity", headers={"Authorization": "Bearer demo-supervisor"}
        )
        shown = json.loads(connection.getresponse().read())
    finally:
        connection.close()
    assert shown["signature"] == "verified"
    assert (
        server.banner[3]
        == f"  release manifest signatures checked with key {shown['public_key_id']}"
    )


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    cert, key = self_signed(tmp_path)
    _, other_key = self_signed(tmp_path, "other")
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    encrypted = tmp_path / "encrypted.key"
    private = serialization.load_pem_private_key(key.read_bytes(), password=None)
    encrypted.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"secret"),
        )
    )
    return {
        "cert": cert,
        "key": key,
        "other_key": other_key,
        "garbage": garbage,
        "encrypted": encrypted,
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tls-cert", "{cert}"], "TLS needs both --tls-cert and --tls-key; only --tls-cert"),
        (["--tls-key", "{key}"], "TLS needs both --tls-cert and --tls-key; only --tls-key"),
        (["--tls-cert", "{missing}", "--tls-key", "{key}"], "cannot be read: No such file"),
        (["--tls-cert", "{cert}", "--tls-key", "{missing}"], "cannot be read: No such file"),
        (["--tls-cert", "{key}", "--tls-key", "{key}"], "is not a PEM X.509 certificate"),
        (["--tls-cert", "{garbage}", "--tls-key", "{key}"], "is not a PEM X.509 certificate"),
        (["--tls-cert", "{cert}", "--tls-key", "{other_key}"], "is not the unencrypted PEM"),
        (["--tls-cert", "{cert}", "--tls-key", "{garbage}"], "is not the unencrypted PEM"),
        (["--tls-cert", "{cert}", "--tls-key", "{encrypted}"], "is not the unencrypted PEM"),
    ],
)
def test_605a_tls_a_bad_configuration_refuses_to_start(
    files: dict[str, Path], tmp_path: Path, args: list[str], message: str
) -> None:
    names = {**{k: str(v) for k, v in files.items()}, "missing": str(tmp_path / "none.pem")}
    result = runner.invoke(
        app,
        ["serve", "--unsigned", "--db", str(tmp_path / "x.sqlite")]
        + [a.format(**names) for a in args],
    )
    assert result.exit_code == 2
    assert message in result.output
    assert "The server did not start." in result.output


def test_605a_tls_the_real_process_exits_non_zero_on_half_a_configuration(
    files: dict[str, Path],
) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from tablejack.cli import main; main()",
            "serve",
            "--unsigned",
            "--port",
            str(free_port()),
            "--tls-cert",
            str(files["cert"]),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "TLS needs both --tls-cert and --tls-key; only --tls-cert was given." in done.stderr


def test_605a_tls_the_tables_file_server_section_configures_tls(
    files: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tablejack.server.http import health

    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(
        health, "run_server", lambda application, drain, **options: calls.append(options)
    )
    tables = tmp_path / "tables.toml"
    tables.write_text(
        f'[server]\ntls_cert = "{files["cert"].name}"\ntls_key = "{files["key"].name}"\n'
    )
    result = runner.invoke(
        app,
        [
            "serve",
            "--unsigned",
            "--db",
            str(tmp_path / "x.sqlite"),
            "--tables",
            str(tables),
            "--port",
            "8443",
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[:2] == [
        f"tablejack table server on https://127.0.0.1:8443 (database {tmp_path / 'x.sqlite'})",
        "  terminals connect to wss://127.0.0.1:8443/ws",
    ]
    assert (calls[0]["ssl_certfile"], calls[0]["ssl_keyfile"]) == (files["cert"], files["key"])
    tables.write_text(f'[server]\ntls_key = "{files["key"].name}"\n')
    half = runner.invoke(app, ["serve", "--unsigned", "--tables", str(tables)])
    assert half.exit_code == 2
    assert "only --tls-key was given" in half.output
    tables.write_text('[server]\ntls_certificate = "x.pem"\n')
    unknown = runner.invoke(app, ["serve", "--unsigned", "--tables", str(tables)])
    assert unknown.exit_code == 2
    assert "unknown [server] key(s) tls_certificate" in unknown.output


def test_605a_tls_plain_http_on_a_network_address_is_warned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tablejack.server.http import health

    monkeypatch.setattr(health, "run_server", lambda application, drain, **options: None)
    result = runner.invoke(
        app, ["serve", "--unsigned", "--db", str(tmp_path / "x.sqlite"), "--host", "0.0.0.0"]
    )
    assert result.exit_code == 0, result.output
    assert "WARNING: plain HTTP on a network address" in result.output
    local = runner.invoke(app, ["serve", "--unsigned", "--db", str(tmp_path / "x.sqlite")])
    assert "plain HTTP" not in local.output
