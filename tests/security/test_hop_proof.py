"""The hop between a floor's processes proves the request it forwards, not only its address:
the proof (:func:`tablejack.server.socket.proxy.hop_proof`) binds the method, the path, the
caller's host, the time, the body's SHA-256 and the credential, and the receiving process
checks it against the request as it arrived. A body altered in flight, a credential swapped,
a forged or stale proof: each is refused (403 ``hop``) before a route sees it, and counted for
the audit log. On SQLite and PostgreSQL (the receiving process is given the floor's hop key, as
a process of a floor of several is)."""

from __future__ import annotations

import json
import time
from typing import Any

from tablejack.server.socket.proxy import (
    CALLER_HOST,
    FORWARDED,
    HOP,
    HOP_RULE,
    hop_credential,
    hop_proof,
)
from tests.support.floor import TOKENS

from .conftest import Floorkit

KEY = b"h" * 32
PATH = "/api/tables/A1/tilt"
TILT = json.dumps({"code": "other", "reason": "spill"}).encode()


def forwarded(
    body: bytes, credential: str, *, key: bytes = KEY, sent_with: str | None = None
) -> dict[str, str]:
    """The headers a process of the floor forwards ``body`` with, by ``credential`` (a bearer
    token); ``sent_with``: the credential the request actually carries (a swap in flight)."""
    proof = hop_proof(
        key,
        "POST",
        PATH,
        "testserver",
        time.time_ns() // 1000,
        body,
        hop_credential({"authorization": f"Bearer {credential}"}),
    )
    return {
        "Authorization": f"Bearer {sent_with or credential}",
        "Content-Type": "application/json",
        FORWARDED: "1",
        CALLER_HOST: "testserver",
        HOP: proof,
    }


def tilts(floor: Floorkit) -> list[Any]:
    answer = floor.client.get(
        "/api/tables/A1/tilts", headers={"Authorization": f"Bearer {TOKENS['super']}"}
    )
    assert answer.status_code == 200, answer.text
    found = answer.json()
    return list(found["tilts"])


def test_a_forwarded_request_altered_in_flight_or_with_another_credential_is_refused(
    floor: Floorkit,
) -> None:
    floor.client.app.state.hop_key = KEY  # type: ignore[attr-defined]
    floor.client.cookies.clear()
    before = tilts(floor)
    attempts = {
        "the body altered in flight": (
            TILT.replace(b"spill", b"fixed"),
            forwarded(TILT, TOKENS["dealer"]),
        ),
        "the credential swapped in flight": (
            TILT,
            forwarded(TILT, TOKENS["dealer"], sent_with=TOKENS["super"]),
        ),
        "a proof of another key": (TILT, forwarded(TILT, TOKENS["dealer"], key=b"x" * 32)),
        "the body dropped": (b"", forwarded(TILT, TOKENS["dealer"])),
    }
    for what, (body, headers) in attempts.items():
        answer = floor.client.post(PATH, content=body, headers=headers)
        assert answer.status_code == 403, (what, answer.text)
        assert answer.json()["detail"]["code"] == "hop", what
        assert answer.json()["detail"]["rule"] == HOP_RULE, what
    assert tilts(floor) == before  # nothing was locked by them
    # the request as the floor's process forwarded it is taken
    taken = floor.client.post(PATH, content=TILT, headers=forwarded(TILT, TOKENS["dealer"]))
    assert taken.status_code == 200, taken.text
    assert len(tilts(floor)) == len(before) + 1
    floor.stop()  # the counted refusals are written

    async def refusals(store: Any) -> list[dict[str, Any]]:
        return [row for row in await store.audit_entries(limit=500) if row["kind"] == "hop"]

    [row] = floor.run(refusals)
    assert row["rule"] == HOP_RULE
    assert "4 refused requests before authentication" in row["message"], row["message"]
