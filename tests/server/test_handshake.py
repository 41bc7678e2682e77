"""The websocket handshake: which browser origins may connect."""

from __future__ import annotations

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from protocol.wire.codec import decode_dict, encode
from protocol.wire.message import Hello

from .conftest import NodeFactory

pytestmark = pytest.mark.asyncio

SUBPROTOCOL = "scorpion.v1.msgpack"


async def says_hello(url: str, origin: str | None) -> bool:
    """Connect from ``origin`` (``None``: as a program, without an Origin header) and say hello."""
    async with connect(url, subprotocols=[SUBPROTOCOL], origin=origin) as ws:  # type: ignore[arg-type]
        await ws.send(encode(Hello(name="Ann")))
        return decode_dict(await ws.recv())["type"] == "welcome"


async def refused(url: str, origin: str) -> tuple[int, bytes]:
    with pytest.raises(InvalidStatus) as caught:
        await says_hello(url, origin)
    response = caught.value.response
    return response.status_code, response.body or b""


async def test_a_page_from_another_origin_is_refused_and_the_server_s_own_pages_and_programs_are_not(
    start_node: NodeFactory,
) -> None:
    node = start_node()
    own = f"http://127.0.0.1:{node.port}"
    assert await says_hello(node.url, own)
    assert await says_hello(node.url, None)
    status, body = await refused(node.url, "https://elsewhere.example")
    assert status == 403
    assert b"https://elsewhere.example may not open a websocket here" in body
    # the same host on another port, or over another scheme's port, is another origin
    status, _ = await refused(node.url, f"http://127.0.0.1:{node.port + 1}")
    assert status == 403


async def test_the_operator_allows_listed_origins_or_any(start_node: NodeFactory) -> None:
    listed = start_node(allowed_origins="https://play.example, https://other.example/")
    assert await says_hello(listed.url, "https://play.example")
    assert await says_hello(listed.url, "https://OTHER.example")
    status, _ = await refused(listed.url, "https://third.example")
    assert status == 403
    anyone = start_node(allowed_origins="*")
    assert await says_hello(anyone.url, "https://third.example")
