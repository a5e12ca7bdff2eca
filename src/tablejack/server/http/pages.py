"""The pages the server serves: the terminal, the dealer console, the supervisor page, the
cage's page and the landing page (static HTML, CSS and JavaScript modules, no build step), and ``/docs`` — the
OpenAPI document in Swagger UI with every file served from here, so a floor's closed network
needs nothing else."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources

from fastapi import APIRouter, HTTPException, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, RedirectResponse, Response

__all__ = ["STATIC", "SWAGGER_FILES", "router"]

STATIC = resources.files("tablejack.server") / "static"
SWAGGER_FILES = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "favicon-32x32.png": "image/png",
}
"""The files of Swagger UI that ``/docs`` uses, served under ``/docs/assets/`` from the
``swagger-ui-py`` package's copy (``swagger_ui/static``): ``/docs`` needs no network."""

router = APIRouter()


@router.get("/", include_in_schema=False)
async def index() -> RedirectResponse:
    return RedirectResponse("/static/index.html")


@router.get("/static/{name}", include_in_schema=False)
async def static(name: str) -> FileResponse:
    if "/" in name or name.startswith(".") or not STATIC.joinpath(name).is_file():
        raise HTTPException(404, "No such page.")
    media = {
        "js": "text/javascript",
        "css": "text/css",
        "html": "text/html",
        "svg": "image/svg+xml",
    }.get(name.rsplit(".", 1)[-1], "application/octet-stream")
    return FileResponse(str(STATIC.joinpath(name)), media_type=media)


def redirect_to(page: str) -> Callable[[], RedirectResponse]:
    def go() -> RedirectResponse:
        return RedirectResponse(f"/static/{page}.html")

    return go


for page in ("terminal", "dealer", "supervisor", "cage"):
    router.add_api_route(f"/{page}", redirect_to(page), include_in_schema=False)


@router.get("/favicon.ico", include_in_schema=False)
async def favicon() -> FileResponse:
    """The pages' icon (browsers ask for it on every page)."""
    return FileResponse(str(STATIC.joinpath("favicon.svg")), media_type="image/svg+xml")


@router.get("/docs", include_in_schema=False)
async def docs(request: Request) -> Response:
    """The OpenAPI document in Swagger UI, every file from this server (a floor's network
    may reach nothing else)."""
    return get_swagger_ui_html(
        openapi_url=request.app.openapi_url or "/openapi.json",
        title=f"{request.app.title} — API",
        swagger_js_url="/docs/assets/swagger-ui-bundle.js",
        swagger_css_url="/docs/assets/swagger-ui.css",
        swagger_favicon_url="/docs/assets/favicon-32x32.png",
    )


@router.get("/docs/assets/{name}", include_in_schema=False)
async def docs_asset(name: str) -> FileResponse:
    media = SWAGGER_FILES.get(name)
    if media is None:
        raise HTTPException(404, "No such file.")
    found = resources.files("swagger_ui") / "static" / name
    return FileResponse(str(found), media_type=media)
