"""The real client address of a connection, behind a balancer or not.

A node sees its socket's peer. Behind a balancer that peer is the balancer, which says who
the client is in a PROXY protocol header (v1 text or v2 binary, sent before anything else
on the connection) or in ``X-Forwarded-For`` on the HTTP upgrade request. Both are believed
only from the trusted proxies (``--trusted-proxies``, none by default): from anyone else a
PROXY header is not read (the handshake then fails) and ``X-Forwarded-For`` is ignored.

The PROXY parser is a small strict one (the specification is short, and the parsing has to
happen inside websockets' protocol object, before its HTTP parser sees the bytes).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import struct
from collections.abc import Iterable
from typing import Any

from websockets.asyncio.server import ServerConnection

__all__ = [
    "PROXY_V1_MAX",
    "ProxyHeaderError",
    "TrustedProxies",
    "client_address",
    "proxied_connection",
    "read_proxy_header",
]

log = logging.getLogger("scorpion.proxy")

V1_PREFIX = b"PROXY "
V2_SIGNATURE = b"\r\n\r\n\x00\r\nQUIT\n"
PROXY_V1_MAX = 107
"""The longest v1 header, its CRLF included (the specification's bound)."""

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class ProxyHeaderError(ValueError):
    """A PROXY protocol header that breaks the specification."""


def _address(text: str) -> IPAddress:
    try:
        parsed = ipaddress.ip_address(text)
    except ValueError:
        raise ProxyHeaderError(f"not an IP address: {text[:60]!r}") from None
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        return parsed.ipv4_mapped
    return parsed


def normal_address(text: str) -> str:
    """Return an address as text in one spelling (an IPv4-mapped IPv6 address as IPv4);
    what is not an IP address is returned as it is."""
    try:
        return str(_address(text))
    except ProxyHeaderError:
        return text


def _v1(data: bytes) -> tuple[str | None, int] | None:
    end = data.find(b"\r\n", 0, PROXY_V1_MAX)
    if end < 0:
        if len(data) >= PROXY_V1_MAX:
            raise ProxyHeaderError("a PROXY v1 header is at most 107 bytes")
        return None
    try:
        line = data[:end].decode("ascii")
    except UnicodeDecodeError:
        raise ProxyHeaderError("a PROXY v1 header is ASCII") from None
    parts = line.split(" ")
    if parts[1:2] == ["UNKNOWN"]:
        return None, end + 2
    if len(parts) != 6 or parts[1] not in ("TCP4", "TCP6"):
        raise ProxyHeaderError(f"malformed PROXY v1 header: {line[:60]!r}")
    source = _address(parts[2])
    _address(parts[3])
    wanted = 4 if parts[1] == "TCP4" else 6
    if ipaddress.ip_address(parts[2]).version != wanted or ipaddress.ip_address(parts[3]).version != wanted:
        raise ProxyHeaderError(f"{parts[1]} with addresses of another family")
    for port in parts[4:]:
        if not port.isdigit() or (len(port) > 1 and port[0] == "0") or int(port) > 65535:
            raise ProxyHeaderError(f"bad port in PROXY v1 header: {port[:10]!r}")
    return str(source), end + 2


def _v2(data: bytes) -> tuple[str | None, int] | None:
    if len(data) < 16:
        return None
    version_command, family, length = struct.unpack("!BBH", data[12:16])
    if version_command >> 4 != 2:
        raise ProxyHeaderError(f"PROXY v2 header of version {version_command >> 4}")
    command = version_command & 0x0F
    if command not in (0, 1):
        raise ProxyHeaderError(f"PROXY v2 command {command} is neither LOCAL nor PROXY")
    total = 16 + length
    if len(data) < total:
        return None
    if command == 0:  # LOCAL: the proxy's own connection (a health check)
        return None, total
    body = data[16:total]
    transport = family >> 4
    if transport == 1:  # AF_INET: source, destination, source port, destination port
        if length < 12:
            raise ProxyHeaderError("PROXY v2 IPv4 addresses need 12 bytes")
        return str(_address(str(ipaddress.IPv4Address(body[:4])))), total
    if transport == 2:  # AF_INET6
        if length < 36:
            raise ProxyHeaderError("PROXY v2 IPv6 addresses need 36 bytes")
        return str(_address(str(ipaddress.IPv6Address(body[:16])))), total
    if transport in (0, 3):  # unspecified, or a Unix socket: no client address to take
        return None, total
    raise ProxyHeaderError(f"PROXY v2 address family {transport} is unknown")


def read_proxy_header(data: bytes) -> tuple[str | None, int] | None:
    """Read a PROXY protocol header at the start of ``data``.

    Returns ``None`` while more bytes are needed to tell; else the client address it names
    (``None`` for a header naming none: v1 ``UNKNOWN``, v2 ``LOCAL``, or no header at all)
    and how many bytes the header takes (0 when ``data`` starts with no header). Raises
    :class:`ProxyHeaderError` for a header that breaks the specification.
    """
    for prefix, read in ((V1_PREFIX, _v1), (V2_SIGNATURE, _v2)):
        if data.startswith(prefix):
            return read(data)
        if prefix.startswith(data):
            return None  # too short to tell yet
    return None, 0


class TrustedProxies:
    """The networks whose connections may say who the client is (none by default)."""

    def __init__(self, networks: Iterable[str] = ()) -> None:
        self.networks = [ipaddress.ip_network(n.strip(), strict=False) for n in networks if n.strip()]

    @classmethod
    def parse(cls, text: str) -> TrustedProxies:
        """Build from a comma-separated CIDR list; raises ``ValueError`` for a bad one."""
        return cls(text.split(","))

    def __bool__(self) -> bool:
        return bool(self.networks)

    def trusts(self, address: str) -> bool:
        """Tell whether ``address`` is one of the trusted proxies."""
        try:
            parsed = _address(address)
        except ProxyHeaderError:
            return False
        return any(parsed.version == net.version and parsed in net for net in self.networks)


def forwarded_client(peer: str, forwarded_for: Iterable[str], trusted: TrustedProxies) -> str:
    """Return the client a trusted ``peer`` forwarded for: the rightmost address of the
    ``X-Forwarded-For`` values that is not a trusted proxy (the leftmost ones are what the
    client itself may have written); ``peer`` if it is not trusted or names nobody."""
    address = peer
    if not trusted.trusts(peer):
        return address
    hops = [hop.strip() for value in forwarded_for for hop in value.split(",")]
    for hop in reversed(hops):
        try:
            address = str(_address(hop))
        except ProxyHeaderError:
            return address  # garbage: keep the last hop we could believe
        if not trusted.trusts(address):
            return address
    return address


def client_address(ws: ServerConnection, trusted: TrustedProxies) -> str:
    """Return the real client address of an open connection (see the module's docstring)."""
    remote: Any = ws.remote_address
    peer = normal_address(str(remote[0])) if isinstance(remote, tuple) and remote else "unix"
    peer = getattr(ws, "proxied_address", None) or peer
    headers = ws.request.headers.get_all("X-Forwarded-For") if ws.request is not None else []
    return forwarded_client(peer, headers, trusted)


def proxied_connection(trusted: TrustedProxies) -> type[ServerConnection]:
    """Return a websockets connection class that reads a PROXY header sent by a trusted
    proxy before the HTTP request (optional: a proxy's health check may send none)."""

    class ProxiedConnection(ServerConnection):
        proxied_address: str | None = None
        _pending: bytes | None = None
        """Bytes read while the PROXY header is incomplete; ``None`` once it is settled."""

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            peer = transport.get_extra_info("peername")
            if isinstance(peer, tuple) and peer and trusted.trusts(str(peer[0])):
                self._pending = b""
            super().connection_made(transport)

        def data_received(self, data: bytes) -> None:
            if self._pending is None:
                super().data_received(data)
                return
            buffered = self._pending + data
            try:
                found = read_proxy_header(buffered)
            except ProxyHeaderError as exc:
                log.warning("refused a bad PROXY header: %s", exc)
                self._pending = None
                self.transport.abort()
                return
            if found is None:
                self._pending = buffered
                return
            self._pending = None
            self.proxied_address, used = found
            if buffered[used:]:
                super().data_received(buffered[used:])

    return ProxiedConnection
