"""``/docs`` works on a floor's closed network: Swagger UI's page names only this server's own
URLs, and the server serves its script, style sheet and icon (from the ``swagger-ui-py``
package), so nothing is fetched from a CDN."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any


class _References(HTMLParser):
    """Every ``src`` and ``href`` of a page, and the URLs its inline scripts name."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.urls += [value for name, value in attrs if name in ("src", "href") and value]
        self.script = tag == "script"

    def handle_data(self, data: str) -> None:
        if self.script:
            self.urls += re.findall(r"url:\s*'([^']+)'", data)
            self.urls += re.findall(r"https?://[^\s'\"]+", data)


def test_docs_page_names_only_this_servers_urls_and_they_are_served(
    make_client: Any, kit: Any
) -> None:
    client = make_client([kit.hybrid_table()])
    page = client.get("/docs")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    found = _References()
    found.feed(page.text)
    assert found.urls, page.text
    for url in found.urls:
        assert url.startswith("/") and not url.startswith("//"), url
    assert set(found.urls) == {
        "/docs/assets/swagger-ui.css",
        "/docs/assets/favicon-32x32.png",
        "/docs/assets/swagger-ui-bundle.js",
        "/openapi.json",
    }
    for url, media in (
        ("/docs/assets/swagger-ui-bundle.js", "text/javascript"),
        ("/docs/assets/swagger-ui.css", "text/css"),
        ("/docs/assets/favicon-32x32.png", "image/png"),
    ):
        served = client.get(url)
        assert served.status_code == 200, url
        assert served.headers["content-type"].startswith(media), url
        assert len(served.content) > 100, url
    assert "SwaggerUIBundle" in client.get("/docs/assets/swagger-ui-bundle.js").text
    assert client.get("/openapi.json").json()["info"]["title"] == "tablejack table server"
    for other in ("index.html", "..%2Fapp.py", "swagger-initializer.js", "LICENSE"):
        assert client.get(f"/docs/assets/{other}").status_code == 404, other
    assert client.get("/redoc").status_code == 404  # (ReDoc would load from a CDN)
