"""The floor's records over REST: meters, the rounds of a table or a terminal, game recall, an
account's ledger, the audit log and the verification of the store (hash chains, ledger,
invariants and signed checkpoints). Each route checks its operation in the permission table
first; a player may read only his own account and recall only the rounds he played."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request

from tablejack.server.duties.recall import recall
from tablejack.server.http.access import Who, floor_of, need, refuse
from tablejack.server.support.contract import Count, Limit
from tablejack.server.visibility import Viewer

__all__ = ["router"]

router = APIRouter()


@router.get("/api/meters")
async def meters(request: Request, who: Who, table: str | None = None) -> list[dict[str, Any]]:
    """Drop, win and hold per table and wager kind (supervisor)."""
    await need(request, who, "read_meters")
    return await floor_of(request).store.meters(table)


@router.get("/api/tables/{table_id}/rounds")
async def table_rounds(
    request: Request, table_id: str, who: Who, limit: Limit = 20
) -> list[dict[str, Any]]:
    """The table's last rounds, newest first (supervisor)."""
    await need(request, who, "read_rounds")
    return await floor_of(request).store.rounds(table_id=table_id, limit=min(limit, 500))


@router.get("/api/rounds/{round_id}")
async def recall_round(request: Request, round_id: str, who: Who) -> dict[str, Any]:
    """Game recall: transcript, cards with read time, decisions with terminal,
    settlements with clause. A player may recall only rounds he played."""
    await need(request, who, "recall_round")
    document = await recall(floor_of(request).store, round_id, Viewer.of(who))
    if document is None:
        raise HTTPException(
            404, {"code": "unknown_round", "rule": "", "message": f"No such round: {round_id}."}
        )
    if who[0] == "player" and not any(d["actor"] == who[1] for d in document["decisions"]):
        raise HTTPException(403, "A player may recall only the rounds he played.")
    return document


@router.get("/api/accounts/{account_id}/ledger")
async def account_ledger(
    request: Request, account_id: str, who: Who, limit: Limit = 100
) -> dict[str, Any]:
    """An account's balance and ledger entries (supervisor, cashier, or the player himself)."""
    if not who.may("read_account") and not (who.role == "player" and who.subject == account_id):
        raise await refuse(
            request,
            who,
            "role",
            "Only the account's player, a cashier or a supervisor may read an account.",
            "PA 605a.4(d)",
        )
    store = floor_of(request).store
    balance = await store.balance(account_id)
    if balance is None:
        raise HTTPException(404, f"No account {account_id!r}.")
    return {
        "account": account_id,
        "balance": balance,
        "entries": await store.ledger_of(account_id, min(limit, 1000)),
    }


@router.get("/api/terminals/{terminal}/rounds")
async def terminal_rounds(request: Request, terminal: str, who: Who, n: Count = 10) -> list[str]:
    """The last ``n`` rounds in which a terminal acted (supervisor)."""
    await need(request, who, "read_rounds")
    return await floor_of(request).store.rounds_of_terminal(terminal, min(n, 100))


@router.get("/api/verify-log")
async def verify_log(request: Request, who: Who) -> dict[str, Any]:
    """Verify the store: every hash chain, the ledger against the events, the invariants,
    and the signed checkpoints with the server's own key (supervisor, operator). Events no
    checkpoint covers yet are listed as ``pending``, not as problems."""
    from tablejack.store.verify import verify

    await need(request, who, "verify_log")
    checkpointer = request.app.state.checkpointer
    keys = [] if checkpointer is None else [checkpointer.private_key.public_key()]
    if checkpointer is not None:  # the file holds the floor's checkpoints signed until now
        await checkpointer.sync_file()
    report = await verify(
        floor_of(request).store,
        public_keys=keys,
        checkpoint_file=None if checkpointer is None else checkpointer.file,
    )
    return report.to_json()


@router.get("/api/audit")
async def audit(
    request: Request, who: Who, table: str | None = None, limit: Limit = 100
) -> list[dict[str, Any]]:
    """RefusedError requests and irregularities, newest first (supervisor)."""
    await need(request, who, "read_audit")
    return await floor_of(request).store.audit_entries(table_id=table, limit=min(limit, 1000))
