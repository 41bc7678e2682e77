"""Plain HTTP on the websocket port: health, metrics and the browser client's files."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Iterable
from http import HTTPStatus
from pathlib import Path

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from protocol.wire.codec import SUBPROTOCOLS

from .metrics import CONTENT_TYPE

__all__ = ["WEBSOCKET_PATH", "HttpSite", "browser_address", "find_web_dir", "offered_subprotocols"]

WEBSOCKET_PATH = "/"
"""The one path where the websocket is served (docs/protocol.md, section 1)."""


def browser_address(host: str, port: int) -> str:
    """Return the address to open in a browser for a server listening on ``host``:``port``.

    A server listening on every interface (``0.0.0.0``, ``::`` or none named) is opened on
    this machine as ``localhost``; an IPv6 address is written in brackets.
    """
    if host in ("", "0.0.0.0", "::"):
        host = "localhost"
    elif ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}/"


_CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".json": "application/json",
    ".webmanifest": "application/manifest+json",
}

_PAGE_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    # The browser client is this server's own files and its websocket, nothing else: no
    # inline script, no other origin, and no page of another site may frame it (a framed
    # game could be tricked into a click on Resign).
    "Content-Security-Policy": (
        "default-src 'self'; connect-src 'self'; img-src 'self' data:; object-src 'none'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "Referrer-Policy": "no-referrer",
}
"""Headers on every file of the browser client."""


class HttpSite:
    """Answer the HTTP requests that are not websocket handshakes."""

    def __init__(
        self,
        web_dir: Path | None,
        healthy: Callable[[], Awaitable[bool]],
        metrics: Callable[[], bytes],
        origins: Iterable[str] = (),
    ) -> None:
        self.web_dir = web_dir
        self.healthy = healthy
        self.metrics = metrics
        self.origins = frozenset(origin.strip().rstrip("/").lower() for origin in origins if origin.strip())
        """Origins other than the page's own that a browser may open a websocket from."""

    async def http(self, connection: ServerConnection, request: Request) -> Response | None:
        """Answer plain HTTP requests on the websocket port: health, metrics, the browser client.

        Only GET and HEAD are served (a websocket handshake is a GET); a HEAD gets the
        GET's headers without its body.
        """
        if request.method not in ("GET", "HEAD"):
            text = f"{request.method} is not served here: use GET\n".encode()
            refused = _response(HTTPStatus.METHOD_NOT_ALLOWED, text, "text/plain; charset=utf-8")
            refused.headers["Allow"] = "GET, HEAD"
            return refused
        response = await self._get(request)
        if response is not None and request.method == "HEAD":
            response = dataclasses.replace(response, body=b"")
        return response

    async def _get(self, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path == "/healthz":
            status = HTTPStatus.OK if await self.healthy() else HTTPStatus.SERVICE_UNAVAILABLE
            body = b"ok\n" if status is HTTPStatus.OK else b"unavailable\n"
            return _response(status, body, "text/plain; charset=utf-8")
        if path == "/metrics":
            return _response(HTTPStatus.OK, self.metrics(), CONTENT_TYPE)
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return self._handshake(path, request)
        return self.static(path)

    def _handshake(self, path: str, request: Request) -> Response | None:
        """Refuse a websocket handshake on another path, or offering none of our subprotocols."""
        if path != WEBSOCKET_PATH:
            text = f"no websocket is served at {path}: connect to {WEBSOCKET_PATH}\n"
            return _response(HTTPStatus.NOT_FOUND, text.encode(), "text/plain; charset=utf-8")
        origin = request.headers.get("Origin")
        if origin is not None and not self.origin_allowed(origin, request.headers.get("Host", "")):
            text = (
                f"a page from {origin} may not open a websocket here: only this server's own pages"
                " and the origins of --allowed-origins may\n"
            )
            return _response(HTTPStatus.FORBIDDEN, text.encode(), "text/plain; charset=utf-8")
        if not set(offered_subprotocols(request)) & set(SUBPROTOCOLS):
            text = (
                "offer one of the subprotocols " + " or ".join(SUBPROTOCOLS) + " in Sec-WebSocket-Protocol"
                " (docs/protocol.md, section 1)\n"
            )
            return _response(HTTPStatus.BAD_REQUEST, text.encode(), "text/plain; charset=utf-8")
        return None

    def origin_allowed(self, origin: str, host: str) -> bool:
        """Tell whether a browser page from ``origin`` may open a websocket to ``host``.

        A page this server served has the server's own origin (its scheme, and the host and
        port the browser asked for); other origins need ``--allowed-origins`` (``*``: any).
        Clients that are not browsers send no Origin and are not asked.
        """
        origin = origin.strip().rstrip("/").lower()
        if "*" in self.origins or origin in self.origins:
            return True
        return bool(host) and origin in (f"http://{host.lower()}", f"https://{host.lower()}")

    def static(self, path: str) -> Response:
        """Serve a file of the browser client (``/`` is its ``index.html``)."""
        root = self.web_dir
        if root is None:
            return _response(HTTPStatus.NOT_FOUND, b"the browser client is not installed\n", "text/plain")
        relative = "index.html" if path in ("", "/") else path.lstrip("/")
        target = (root / relative).resolve()
        if not target.is_relative_to(root) or not target.is_file():
            return _response(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain; charset=utf-8")
        kind = _CONTENT_TYPES.get(target.suffix, "application/octet-stream")
        response = _response(HTTPStatus.OK, target.read_bytes(), kind)
        response.headers["Cache-Control"] = "no-cache"
        for name, value in _PAGE_HEADERS.items():
            response.headers[name] = value
        return response


def offered_subprotocols(request: Request) -> list[str]:
    """Return the subprotocols a handshake offers, in the client's order of preference."""
    return [
        name.strip()
        for header in request.headers.get_all("Sec-WebSocket-Protocol")
        for name in header.split(",")
        if name.strip()
    ]


def find_web_dir(configured: Path | None) -> Path | None:
    """Locate the browser client's files: configured, or installed beside this package.

    The server reads them as files; it never imports the client package.
    """
    candidate = configured or Path(__file__).resolve().parents[2] / "client" / "web"
    return candidate.resolve() if candidate.is_dir() else None


def _response(status: HTTPStatus, body: bytes, content_type: str) -> Response:
    headers = Headers([("Content-Type", content_type), ("Content-Length", str(len(body)))])
    return Response(status.value, status.phrase, headers, body)
