"""Accounts from the client library and the terminal client: register, log in (the password
from SCORPION_PASSWORD), list and revoke sessions, change the password, log out."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from client.api import ScorpionClient
from client.errors import ServerError
from client.identity import TokenStore
from protocol.wire.message import Ok, SessionGranted, SessionsList

from .conftest import PASSWORD, ClientFactory, NodeFactory
from .test_cli import run_cli

pytestmark = pytest.mark.asyncio


async def until(check: Any, timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "the condition never held"
        await asyncio.sleep(0.05)


async def test_the_library_registers_logs_in_lists_revokes_changes_the_password_and_logs_out(
    local_node: Any, make_client: ClientFactory
) -> None:
    node = await local_node()
    ann: ScorpionClient = await make_client(node, "Ann", store=TokenStore())
    with pytest.raises(ServerError) as guest:
        await ann.queue_join("scorpion")
    assert guest.value.code == "account_required"
    granted = await ann.register("Ann", PASSWORD)
    assert isinstance(granted, SessionGranted) and granted.username == "ann"
    stored = TokenStore().load(node.url)
    assert stored is not None and stored.token == granted.token == ann.token
    laptop: ScorpionClient = await make_client(node, "Ann", connect=False)
    laptop.credentials = ("ANN", PASSWORD)
    welcome = await laptop.connect()
    assert welcome.username == "ann" and welcome.player == ann.player and laptop.credentials is None
    listed = await ann.sessions()
    assert isinstance(listed, SessionsList) and len(listed.sessions) == 2
    assert [s.current for s in listed.sessions if s.session == granted.session] == [True]
    assert isinstance(await ann.session_revoke(welcome.session), Ok)
    await until(lambda: laptop.closed is not None)
    assert laptop.closed is not None and laptop.closed.code == 1008
    changed = await ann.password_change(PASSWORD, "another password")
    assert changed.token == ann.token != granted.token
    stored = TokenStore().load(node.url)
    assert stored is not None and stored.token == changed.token
    assert isinstance(await ann.logout(), Ok)
    assert TokenStore().load(node.url) is None and ann.token is None
    await until(lambda: ann.closed is not None)
    assert ann.closed is not None and ann.closed.code == 1000


async def test_the_terminal_client_registers_logs_out_logs_in_and_lists_sessions(
    start_node: NodeFactory, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    node = start_node()
    url = node.url
    monkeypatch.setenv("SCORPION_PASSWORD", PASSWORD)
    code, out, err = await run_cli(capsys, "register", "Ann", "--server", url)
    assert code == 0, err
    assert out.startswith("you are ann now")
    code, out, err = await run_cli(capsys, "sessions", "--server", url)
    assert code == 0 and len(out.splitlines()) == 1 and out.startswith("* s"), (out, err)
    code, out, _ = await run_cli(capsys, "logout", "--server", url)
    assert code == 0 and out.startswith("logged out")
    assert TokenStore().load(url) is None
    code, out, _ = await run_cli(capsys, "logout", "--server", url)  # a guest now
    assert code == 1
    code, out, err = await run_cli(capsys, "login", "ann", "--server", url)
    assert code == 0 and out.strip() == "logged in as ann", err
    stored = TokenStore().load(url)
    assert stored is not None
    code, out, _ = await run_cli(capsys, "sessions", "--server", url)
    assert code == 0 and out.count("\n") == 1  # the guest session of the logout check is another player
    monkeypatch.setenv("SCORPION_PASSWORD", "not the password")
    code, _, err = await run_cli(capsys, "login", "ann", "--server", url)
    assert code == 1 and "bad_login" in err
    code, _, err = await run_cli(capsys, "sessions", "--server", url, "--all")
    assert code == 0, err
