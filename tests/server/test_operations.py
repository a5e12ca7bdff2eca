"""Operations: ``/metrics`` (scraped with prometheus-client's own parser), ``/healthz`` and
``/readyz`` for load balancers, and the JSON logs with their ids and without secrets."""

from __future__ import annotations

import contextlib
import io
import ipaddress
import json
import logging
import re
import signal
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from tablejack.server.support import logs
from tests.support import serve
from tests.support.floor import ORDER
from tests.support.store import Backend


def scrape(client: Any, headers: dict[str, str]) -> dict[tuple[str, tuple[Any, ...]], float]:
    """Every sample of ``/metrics``, by name and labels, through prometheus-client's parser."""
    response = client.get("/metrics", headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    samples: dict[tuple[str, tuple[Any, ...]], float] = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def dealer(client: Any, command: str) -> Any:
    return client.post(
        "/api/tables/A1/dealer",
        json={"command": command},
        headers={"Authorization": "Bearer tok-dealer"},
    )


def play_round(client: Any, kit: Any) -> None:
    """ann and bob wager $10 each; ann hits, bob's clock stands for him, ann stands."""
    assert dealer(client, "open-round").status_code == 200
    with (
        kit.connect(client, "ann", "EWT-1", "A1") as ann,
        kit.connect(client, "bob", "EWT-2", "A1") as bob,
    ):
        assert ann.request({"type": "position", "position": 1})["type"] == "ack"
        assert bob.request({"type": "position", "position": 2})["type"] == "ack"
        assert ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert bob.request({"type": "wager", "kind": "blackjack", "amount": 1000})["ok"]
        assert dealer(client, "close-wagering").status_code == 200
        ann.state(lambda m: kit.phase(m) == "playing")
        assert ann.request({"type": "action", "verb": "hit"})["ok"]
        ann.state(lambda m: m["view"]["community_cards"] == ["4S"])
        assert ann.request({"type": "action", "verb": "stand"})["ok"]
        bob.state(lambda m: kit.phase(m) == "complete")


def test_metrics_count_a_round_in_the_prometheus_text_format(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client([kit.hybrid_table(cards=ORDER)], backend=backend)
    before = scrape(client, kit.auth("super"))
    game = "hybrid"
    assert before.get(("tablejack_rounds_total", (("game", game), ("status", "complete")))) in (
        None,
        0.0,
    )
    assert before[("tablejack_tables", (("status", "open"),))] == 1
    play_round(client, kit)
    after = scrape(client, kit.auth("operator"))
    assert after[("tablejack_rounds_total", (("game", game), ("status", "complete")))] == 1
    assert after[("tablejack_wagers_total", (("game", game), ("kind", "blackjack")))] == 2
    assert after[("tablejack_wagered_cents_total", (("game", game), ("kind", "blackjack")))] == 2000
    assert after[("tablejack_steps_total", (("game", game),))] >= 4  # open, wager, hit, stand
    assert after[("tablejack_decision_seconds_count", (("type", "action"),))] == 2
    assert after[("tablejack_decision_seconds_count", (("type", "wager"),))] == 2
    assert (
        after[("tablejack_commit_seconds_count", ())]
        > before[("tablejack_commit_seconds_count", ())]
    )
    assert after[("tablejack_leases_held", ())] == 0  # one process alone: no leases
    assert after[("tablejack_tilts_open", ())] == 0
    assert after[("tablejack_draining", ())] == 0
    with kit.connect(client, "cat", "EWT-3", "A1"):
        during = scrape(client, kit.auth("super"))
        assert during[("tablejack_sockets", (("role", "player"),))] == 1
    # prometheus-client's collectors: the process's memory and the garbage collector
    assert during[("process_resident_memory_bytes", ())] > 10_000_000
    assert during[("python_gc_collections_total", (("generation", "2"),))] >= 0
    client.app.state.metrics.link_state("sas-1", up=False)
    assert scrape(client, kit.auth("super"))[("tablejack_sas_link_up", (("link", "sas-1"),))] == 0


def test_metrics_count_sign_ins_and_why_each_socket_ended(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    """``tablejack_sign_ins_total`` and ``tablejack_socket_ends_total{reason}``: a terminal
    that closes its socket ends it as ``peer``; a socket whose credential is revoked is ended by
    the server, ``credential ended`` — an operator tells a storm of reconnections from its cause."""
    client = make_client([kit.hybrid_table()], backend=backend)
    ends = "tablejack_socket_ends_total"
    with kit.connect(client, "ann", "EWT-1", "A1"):
        pass
    with kit.connect(client, "cat", "EWT-3", "A1") as cat:
        listed = client.get("/api/tokens?role=player&subject=cat", headers=kit.auth("super"))
        credential = next(c["id"] for c in listed.json() if c["parent"] is None)
        revoked = client.post(f"/api/tokens/{credential}/revoke", headers=kit.auth("super"))
        assert revoked.json()["closed_sockets"] == 1
        assert cat.until(lambda m: m["type"] == "error")["code"] == "credential"
    wanted = ((ends, (("reason", "peer"),)), (ends, (("reason", "credential ended"),)))
    samples = scrape(client, kit.auth("operator"))
    for _ in range(50):  # an end is counted as the socket's task finishes
        if all(samples.get(name) == 1 for name in wanted):
            break
        time.sleep(0.05)
        samples = scrape(client, kit.auth("operator"))
    assert samples[("tablejack_sign_ins_total", ())] == 2
    assert samples[(ends, (("reason", "peer"),))] == 1
    assert samples[(ends, (("reason", "credential ended"),))] == 1


def test_metrics_refused_without_a_staff_credential(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client([kit.hybrid_table()], backend=backend)
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers=kit.auth("ann")).status_code == 403  # a player
    assert client.get("/metrics", headers=kit.auth("dealer")).status_code == 403
    assert client.get("/metrics", headers={"Authorization": "Bearer nope"}).status_code == 401
    # an address --metrics-from names reads them without one; another does not
    metrics = client.app.state.metrics
    metrics.open_to = (ipaddress.ip_network("10.9.0.0/16"),)
    assert client.get("/metrics").status_code == 401  # the test client is "testclient"
    assert metrics.allowed_without_credential("10.9.3.4")
    assert not metrics.allowed_without_credential("10.8.3.4")
    assert not metrics.allowed_without_credential("not-an-address")


def test_healthz_and_readyz_answer_without_credential_and_leak_nothing(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    client = make_client([kit.hybrid_table()], backend=backend)
    alive = client.get("/healthz")
    assert (alive.status_code, alive.json()) == (200, {"status": "ok"})
    ready = client.get("/readyz")
    assert (ready.status_code, ready.json()) == (200, {"status": "ready"})
    client.app.state.draining = True
    refused = client.get("/readyz")
    assert (refused.status_code, refused.json()) == (503, {"status": "unavailable"})
    assert client.get("/healthz").status_code == 200  # alive while draining
    paths = client.get("/openapi.json").json()["paths"]
    readyz = paths["/readyz"]["get"]["responses"]
    assert {"200", "503"} <= set(readyz)  # with the errors every route may answer (contract)
    assert "Error" not in str(readyz["503"])  # its own answer: {"status": "unavailable"}
    assert "200" in paths["/healthz"]["get"]["responses"]
    assert {"200", "401", "403"} <= set(paths["/metrics"]["get"]["responses"])


def test_json_log_lines_carry_the_ids_and_no_secret() -> None:
    stream = io.StringIO()
    names = ("", "uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi")
    saved = [
        (logging.getLogger(n), logging.getLogger(n).handlers[:], logging.getLogger(n).level)
        for n in names
    ]
    saved_propagate = [logger.propagate for logger, _, _ in saved]
    logs.configure("json", "info", stream)
    try:
        logs.bind(table="A1", round="A1-000007", terminal="EWT-3", request_id="req-1")
        logging.getLogger("tablejack.server").warning("table %s: lease lost", "A1")
        access = logging.getLogger("uvicorn.access")
        access.info(
            '%s - "%s %s HTTP/%s" %d',
            "10.0.0.5:5555",
            "GET",
            "/api/tables?token=s3cr3t-tok&x=1&terminal_key=k3y",
            "1.1",
            400,
        )
    finally:  # the process's logging as it was (pytest's capture, uvicorn's loggers)
        for (logger, handlers, level), propagate in zip(saved, saved_propagate, strict=True):
            logger.handlers = handlers
            logger.setLevel(level)
            logger.propagate = propagate
        logs.bind(table=None, round=None, terminal=None, request_id=None)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    first, second = (json.loads(line) for line in lines)  # one object a line
    assert first["message"] == "table A1: lease lost"
    assert (first["table"], first["round"], first["terminal"], first["request_id"]) == (
        "A1",
        "A1-000007",
        "EWT-3",
        "req-1",
    )
    assert first["level"] == "WARNING"
    assert "s3cr3t-tok" not in stream.getvalue() and "k3y" not in stream.getvalue()
    assert "token=REDACTED" in second["message"] and "x=1" in second["message"]


def test_a_request_gets_an_id_in_its_response(make_client: Any, backend: Backend, kit: Any) -> None:
    client = make_client([kit.hybrid_table()], backend=backend)
    assert client.get("/healthz", headers={"X-Request-ID": "lb-42"}).headers["x-request-id"] == (
        "lb-42"
    )
    fresh = client.get("/healthz", headers={"X-Request-ID": "bad id\n"}).headers["x-request-id"]
    assert fresh != "bad id\n" and len(fresh) == 16


def test_serve_logs_json_lines_without_the_token_of_a_url_and_drains_on_sigterm(
    tmp_path: Path,
) -> None:
    """A real ``serve --log-format json --log-level info``: every line of its standard error
    is one JSON object; the access line of a request with ``?token=`` in its URL does not hold
    the token; its full collections on ``--gc-full-seconds`` show on ``/metrics`` (read as
    the Prometheus host ``--metrics-from`` names); SIGTERM drains it (an idle floor: at once)
    and it exits cleanly."""
    port = serve.free_port()
    log = tmp_path / "serve.log"
    process = serve.start_serve(
        [
            "--unsigned", "--demo", "--db", str(tmp_path / "floor.sqlite"), "--port", str(port),
            "--log-format", "json", "--log-level", "info",
            "--gc-full-seconds", "0.2", "--metrics-from", "127.0.0.1",
        ],
        log,
    )  # fmt: skip
    try:
        serve.wait_listening(process, port, log)
        full: dict[str, float] = {}
        deadline = time.monotonic() + 20
        while full.get("tablejack_gc_full_collections_total", 0) < 2:
            assert time.monotonic() < deadline, full
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as got:
                full = {
                    sample.name: sample.value
                    for family in text_string_to_metric_families(got.read().decode())
                    for sample in family.samples
                    if sample.name.startswith("tablejack_gc_full_")
                }
            time.sleep(0.2)
        assert full["tablejack_gc_full_collection_seconds_total"] > 0
        longest = full["tablejack_gc_full_collection_longest_seconds"]
        assert 0 < longest <= full["tablejack_gc_full_collection_seconds_total"]
        assert full["tablejack_gc_full_collection_freed_objects_total"] >= 0
        secret = "tok-s3cr3t-in-a-url"
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/tables?token={secret}",
            headers={"X-Request-ID": "probe-7", "Cookie": "tablejack_session=c00kie"},
        )
        with contextlib.suppress(urllib.error.HTTPError):
            urllib.request.urlopen(request, timeout=5).close()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as ready:
            assert ready.status == 200
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    text = log.read_text()
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]  # JSON, each
    access = [line for line in lines if line["logger"] == "uvicorn.access"]
    [tables] = [line for line in access if "/api/tables" in line["message"]]
    assert tables["request_id"] == "probe-7"
    assert "token=REDACTED" in tables["message"]
    assert secret not in text and "c00kie" not in text
    assert any("draining" in line["message"] for line in lines)


def test_the_grafana_dashboard_shows_only_metrics_the_server_exports(
    make_client: Any, backend: Backend, kit: Any
) -> None:
    dashboard = json.loads(
        (Path(__file__).parents[2] / "docs" / "grafana-dashboard.json").read_text()
    )
    named = {
        re.sub(r"_(bucket|total|count|sum)$", "", name)
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"\b(?:tablejack|process|python_gc)_\w+", target["expr"])
    }
    client = make_client([kit.hybrid_table()], backend=backend)
    response = client.get("/metrics", headers=kit.auth("super"))
    exported = {family.name for family in text_string_to_metric_families(response.text)}
    assert named and named <= exported, named - exported
    assert len(dashboard["panels"]) >= 10
