"""The card reader line protocol over a raw TCP socket: the same validation as the HTTP path."""

from __future__ import annotations

import socket
from typing import Any


class Line:
    """A blocking line client of the reader port."""

    def __init__(self, port: int) -> None:
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.file = self.socket.makefile("rwb")

    def ask(self, text: str) -> str:
        self.file.write(text.encode() + b"\n")
        self.file.flush()
        return self.file.readline().decode().rstrip("\n")

    def close(self) -> None:
        self.file.close()
        self.socket.close()


def dealer(client: Any, kit: Any, command: str) -> Any:
    return client.post(
        "/api/tables/A1/dealer", json={"command": command}, headers=kit.auth("dealer")
    )


def test_633c5_j_reader_lines_over_tcp_deal_what_the_engine_asks_and_halt_on_others(
    make_client: Any, kit: Any
) -> None:
    client = make_client([kit.hybrid_table(source="reader", countdown=30)], reader_port=0)
    port = client.app.state.reader_port
    refused = Line(port)
    assert refused.ask("AUTH tok-ann A1").startswith("ERR role: dealer ")  # a player token
    refused.close()
    dealer(client, kit, "open-round")
    with kit.connect(client, "ann", "EWT-1", "A1") as ann:
        ann.request({"type": "position", "position": 2})
        ann.request({"type": "wager", "kind": "blackjack", "amount": 1000})
    dealer(client, kit, "close-wagering")
    reader = Line(port)
    try:
        assert reader.ask("AUTH tok-dealer A1") == "OK A1"
        assert reader.ask("10S") == "OK A1-000001 4"
        assert reader.ask("# a comment gets no answer\n6D") == "OK A1-000001 5"
        assert reader.ask("ZZ").startswith("ERR PA 633c.5(j) ")  # not a card: nothing changes
        state = client.get("/api/tables/A1/state", headers=kit.auth("dealer")).json()
        assert state["status"] == "open"
        assert state["next"] == "Deal a card to position 2."
        assert reader.ask("7C") == "OK A1-000001 6"
        assert reader.ask("AS") == "OK A1-000001 7"  # the hole card
        # ann decides now: a card nobody asked for stops the round as an irregularity
        assert reader.ask("KD").startswith("ERR ")
        assert client.get("/api/tables", headers=kit.auth("super")).json()[0]["status"] == (
            "halted"
        )
        assert reader.ask("QUIT") == "BYE"
    finally:
        reader.close()
    audit = client.get("/api/audit?table=A1", headers=kit.auth("super")).json()
    assert any(entry["terminal"] == "reader-tcp" for entry in audit)
