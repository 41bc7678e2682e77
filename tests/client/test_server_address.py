"""Where the commands find the server (--server, SCORPION_SERVER, the config file), and the
help saying that one is needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from client.cli import main
from client.identity import TokenStore

from .conftest import NodeFactory
from .test_cli import run_cli

pytestmark = pytest.mark.asyncio


async def test_plain_scorpion_and_its_help_say_a_server_is_needed_and_how_to_start_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([]) == 0
    plain = capsys.readouterr().out
    assert plain.startswith("usage: scorpion") and "play" in plain and "race" in plain
    with pytest.raises(SystemExit):
        main(["--help"])
    helped = capsys.readouterr().out
    for text in (plain, helped):
        assert "needs a Scorpion Race server" in text and "`scorpion-server`" in text
        assert "SCORPION_SERVER" in text and "config.json" in text


async def test_the_server_comes_from_scorpion_server_then_the_config_file(
    start_node: NodeFactory,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    config_dir: Path,
) -> None:
    node = start_node()
    monkeypatch.setenv("SCORPION_SERVER", node.url)
    code, out, err = await run_cli(capsys, "stats", "--name", "Ann")
    assert code == 0, err
    assert TokenStore().load(node.url) is not None, "the identity is the one of SCORPION_SERVER's server"
    monkeypatch.delenv("SCORPION_SERVER")
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "config.json").write_text(json.dumps({"server": node.url}), encoding="utf-8")
    code, out, err = await run_cli(capsys, "play", "--list")
    assert (code, out) == (0, "no saved game\n"), err
    monkeypatch.setenv("SCORPION_SERVER", "http://nowhere/")
    code, out, err = await run_cli(capsys, "stats")
    assert code == 2, err
    assert err.startswith("scorpion stats: SCORPION_SERVER: 'http://nowhere/' is not a server URL"), err
    monkeypatch.setenv("SCORPION_SERVER", "ws://127.0.0.1:9/")
    code, out, err = await run_cli(capsys, "stats")
    assert code == 1 and "start one with `scorpion-server`" in err, err
