"""The terminal's language catalogs (PA 605a, the terminal's features,
:mod:`tablejack.server.duties.terminal_features`): ``GET /static/i18n/{lang}.json`` and the list
of languages.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse

from tablejack.server.duties.terminal_features import I18N, LANGUAGES

__all__ = ["router"]

router = APIRouter()


@router.get("/static/i18n/{name}", include_in_schema=False)
async def catalog(name: str) -> FileResponse:
    if name.removesuffix(".json") not in LANGUAGES or not name.endswith(".json"):
        raise HTTPException(404, "No such language.")
    return FileResponse(str(I18N.joinpath(name)), media_type="application/json")


@router.get("/api/languages")
async def languages() -> dict[str, Any]:
    """The languages of the terminal's catalog (``/static/i18n/<lang>.json``)."""
    return {"languages": list(LANGUAGES), "default": LANGUAGES[0]}
