"""The real client address: the PROXY protocol (v1, v2) and X-Forwarded-For, believed only
from a trusted proxy."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import struct
from collections.abc import Callable
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidMessage

from protocol.wire.codec import decode_dict, encode
from protocol.wire.message import Hello
from server.config import load_config
from server.runtime.proxy import (
    ProxyHeaderError,
    TrustedProxies,
    forwarded_client,
    read_proxy_header,
)

SUBPROTOCOL = "scorpion.v1.msgpack"
V2 = b"\r\n\r\n\x00\r\nQUIT\n"


def v2_header(source: str, command: int = 1, extra: bytes = b"") -> bytes:
    address = ipaddress.ip_address(source)
    if address.version == 4:
        family, body = 0x11, address.packed + bytes(4) + struct.pack("!HH", 50000, 8765)
    else:
        family, body = 0x21, address.packed + bytes(16) + struct.pack("!HH", 50000, 8765)
    body += extra
    return V2 + struct.pack("!BBH", 0x20 | command, family, len(body)) + body


# -- the parser ---------------------------------------------------------------------------


def test_proxy_v1_headers_name_the_client() -> None:
    header = b"PROXY TCP4 203.0.113.7 10.0.0.2 50000 8765\r\n"
    assert read_proxy_header(header + b"GET / HTTP/1.1\r\n") == ("203.0.113.7", len(header))
    six = b"PROXY TCP6 2001:db8::7 2001:db8::1 50000 8765\r\n"
    assert read_proxy_header(six) == ("2001:db8::7", len(six))
    assert read_proxy_header(b"PROXY UNKNOWN\r\n") == (None, 15)
    assert read_proxy_header(b"PROXY TCP4 203.0.113.7 10.0") is None  # wait for the rest
    assert read_proxy_header(b"PRO") is None


@pytest.mark.parametrize(
    "header",
    [
        b"PROXY TCP4 203.0.113.7 10.0.0.2 50000\r\n",
        b"PROXY TCP4 203.0.113.999 10.0.0.2 50000 8765\r\n",
        b"PROXY TCP4 2001:db8::7 10.0.0.2 50000 8765\r\n",
        b"PROXY TCP4 203.0.113.7 10.0.0.2 50000 65536\r\n",
        b"PROXY TCP4 203.0.113.7 10.0.0.2 050000 8765\r\n",
        b"PROXY UDP4 203.0.113.7 10.0.0.2 50000 8765\r\n",
        b"PROXY TCP4 203.0.113.7  10.0.0.2 50000 8765\r\n",
        b"PROXY " + b"x" * 120,
    ],
)
def test_malformed_proxy_v1_headers_are_refused(header: bytes) -> None:
    with pytest.raises(ProxyHeaderError):
        read_proxy_header(header)


def test_proxy_v2_headers_name_the_client() -> None:
    four = v2_header("198.51.100.4")
    assert read_proxy_header(four + b"GET /") == ("198.51.100.4", len(four))
    with_tlv = v2_header("198.51.100.4", extra=b"\x04\x00\x01x")  # a TLV after the addresses
    assert read_proxy_header(with_tlv) == ("198.51.100.4", len(with_tlv))
    six = v2_header("2001:db8::9")
    assert read_proxy_header(six) == ("2001:db8::9", len(six))
    local = v2_header("198.51.100.4", command=0)  # a health check: the proxy's own
    assert read_proxy_header(local) == (None, len(local))
    assert read_proxy_header(four[:20]) is None
    assert read_proxy_header(V2[:5]) is None


def test_malformed_proxy_v2_headers_are_refused() -> None:
    good = v2_header("198.51.100.4")
    with pytest.raises(ProxyHeaderError):
        read_proxy_header(good[:12] + b"\x11" + good[13:])  # version 1 in a v2 signature
    with pytest.raises(ProxyHeaderError):
        read_proxy_header(good[:12] + b"\x22" + good[13:])  # command 2
    with pytest.raises(ProxyHeaderError):
        read_proxy_header(V2 + struct.pack("!BBH", 0x21, 0x11, 4) + bytes(4))  # too short for IPv4


def test_no_header_is_no_address() -> None:
    assert read_proxy_header(b"GET / HTTP/1.1\r\n") == (None, 0)


def test_x_forwarded_for_is_believed_only_from_a_trusted_proxy() -> None:
    trusted = TrustedProxies.parse("10.0.0.0/8, 2001:db8:1::/48")
    # the rightmost hop that is not a trusted proxy; what the client wrote on the left is not believed
    assert forwarded_client("10.0.0.2", ["6.6.6.6, 203.0.113.7"], trusted) == "203.0.113.7"
    assert forwarded_client("10.0.0.2", ["6.6.6.6", "203.0.113.7, 10.1.1.1"], trusted) == "203.0.113.7"
    assert forwarded_client("2001:db8:1::5", ["::ffff:203.0.113.7"], trusted) == "203.0.113.7"
    assert forwarded_client("10.0.0.2", [], trusted) == "10.0.0.2"
    assert forwarded_client("10.0.0.2", ["garbage"], trusted) == "10.0.0.2"
    # a spoofed header from a peer that is not a trusted proxy
    assert forwarded_client("192.0.2.1", ["203.0.113.7"], trusted) == "192.0.2.1"
    assert forwarded_client("192.0.2.1", ["203.0.113.7"], TrustedProxies()) == "192.0.2.1"


def test_trusted_proxies_is_a_setting_checked_at_start() -> None:
    assert load_config([], {}).trusted_proxies == ""
    assert load_config(["--trusted-proxies", "10.0.0.0/8,127.0.0.1"], {}).trusted_proxies
    with pytest.raises(SystemExit, match="trusted-proxies"):
        load_config(["--trusted-proxies", "10.0.0.0/33"], {})


# -- a node -------------------------------------------------------------------------------


async def address_of(server: Any, first: bytes = b"", headers: dict[str, str] | None = None) -> str:
    """Connect (sending ``first`` before the handshake), say hello, return the address the
    node gave the session."""
    sock = socket.create_connection(("127.0.0.1", server.port))
    sock.setblocking(False)
    if first:
        sock.sendall(first)
    url = f"ws://127.0.0.1:{server.port}/"
    async with connect(url, sock=sock, subprotocols=[SUBPROTOCOL], additional_headers=headers) as ws:  # type: ignore[list-item]
        await ws.send(encode(Hello(name="Ann")))
        welcome = decode_dict(await ws.recv())
        player = welcome["player"]
        (session,) = [s for s in server.node.sessions if s.player == player]
        return str(session.address)


async def test_a_trusted_proxy_names_the_client(local_node: Callable[..., Any]) -> None:
    node = await local_node(trusted_proxies="127.0.0.0/8")
    server = node.server
    assert await address_of(server) == "127.0.0.1"
    assert await address_of(server, b"PROXY TCP4 203.0.113.7 127.0.0.1 50000 8765\r\n") == "203.0.113.7"
    assert await address_of(server, v2_header("2001:db8::9")) == "2001:db8::9"
    assert await address_of(server, v2_header("127.0.0.1", command=0)) == "127.0.0.1"
    xff = {"X-Forwarded-For": "6.6.6.6, 198.51.100.4"}
    assert await address_of(server, headers=xff) == "198.51.100.4"
    # a balancer behind another one: the PROXY header names a trusted hop, which forwarded for the client
    hop = b"PROXY TCP4 127.0.0.9 127.0.0.1 50000 8765\r\n"
    assert await address_of(server, hop, headers=xff) == "198.51.100.4"


async def test_a_bad_header_from_a_trusted_proxy_closes_the_connection(
    local_node: Callable[..., Any],
) -> None:
    node = await local_node(trusted_proxies="127.0.0.1/32")
    with pytest.raises((InvalidMessage, OSError, EOFError)):
        await address_of(node.server, b"PROXY TCP4 203.0.113.7 nowhere 1 2\r\n")
    assert await address_of(node.server) == "127.0.0.1"  # the node goes on


async def test_an_untrusted_peer_cannot_say_who_it_is(local_node: Callable[..., Any]) -> None:
    node = await local_node()  # no trusted proxies: the default
    server = node.server
    spoofed = {"X-Forwarded-For": "203.0.113.7"}
    assert await address_of(server, headers=spoofed) == "127.0.0.1"
    with pytest.raises((InvalidMessage, OSError, EOFError)):  # not read as a header: a bad request
        await address_of(server, b"PROXY TCP4 203.0.113.7 127.0.0.1 50000 8765\r\n")
    other = await local_node(trusted_proxies="10.0.0.0/8")  # trusts others, not this peer
    assert await address_of(other.server, headers=spoofed) == "127.0.0.1"
    await asyncio.sleep(0)
