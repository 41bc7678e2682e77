"""Server settings: every bad value is refused at start with one line naming the setting."""

from __future__ import annotations

import re
from dataclasses import fields
from importlib import metadata
from pathlib import Path

import pytest

from server.config import Config, load_config


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--port", "99999"], "port is 0 to 65535 (0: any free port), not 99999"),
        (["--port=-1"], "port is 0 to 65535 (0: any free port), not -1"),
        (["--port", "http"], "port cannot be 'http'"),
        (["--redis-url", "localhost:6379"], "redis-url must start with redis://, rediss://, unix://"),
        (["--log-level", "loud"], "log-level is one of debug, info, warning, error, not 'loud'"),
        (["--log-format", "xml"], "log-format is json or text, not 'xml'"),
        (["--grace-period", "nan"], "grace-period must be a finite number, not nan"),
        (["--race-time-limit", "inf"], "race-time-limit must be a finite number, not inf"),
        (["--grace-period=-1"], "grace-period must be 0 or more, not -1"),
        (["--ping-interval", "0"], "ping-interval must be more than 0, not 0"),
        (["--max-frame", "0"], "max-frame must be more than 0, not 0"),
        (["--send-queue=-3"], "send-queue must be more than 0, not -3"),
        (["--quick-match-size", "1"], "quick-match-size is 2 to 8"),
        (["--event-loop", "trio"], "event-loop is one of auto, uvloop, asyncio, not 'trio'"),
    ],
)
def test_a_bad_setting_is_refused_with_a_line_naming_it(argv: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as refused:
        load_config(argv, environ={})
    assert str(refused.value).startswith(f"scorpion-server: {message}"), refused.value


def test_the_same_checks_apply_to_environment_variables() -> None:
    with pytest.raises(SystemExit, match="port is 0 to 65535"):
        load_config([], environ={"SCORPION_PORT": "70000"})


def test_good_settings_pass_including_the_ones_that_may_be_zero(tmp_path: Path) -> None:
    argv = ["--port", "0", "--countdown-seconds", "0", "--grace-period", "0", "--spectator-lag", "0"]
    argv += ["--log-level", "WARNING", "--redis-url", "unix:///tmp/x.sock", "--data-dir", str(tmp_path)]
    config = load_config(argv, environ={})
    assert (config.port, config.countdown_seconds, config.grace_period) == (0, 0.0, 0.0)
    assert config.redis_url == "unix:///tmp/x.sock" and config.data_dir == tmp_path
    assert load_config([], environ={}) == Config()


def test_version_prints_the_installed_packages_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        load_config(["--version"], environ={})
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"scorpion-server {metadata.version('scorpion-race')}"


def test_the_event_loop_is_uvloop_where_installed_unless_asked_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    import uvloop

    from server.main import event_loop_factory

    assert event_loop_factory("auto") is uvloop.new_event_loop
    assert event_loop_factory("uvloop") is uvloop.new_event_loop
    assert event_loop_factory("asyncio") is None
    monkeypatch.setitem(sys.modules, "uvloop", None)  # as if it were not installed
    assert event_loop_factory("auto") is None
    with pytest.raises(ImportError):
        event_loop_factory("uvloop")


def test_the_collector_is_tuned_for_a_long_running_server() -> None:
    """What exists at startup is frozen out of the collector's sight, and the youngest
    generation is collected far less often than Python's default (checked in a child, so
    that the test process keeps its own settings)."""
    import subprocess
    import sys

    from server.main import YOUNG_GC_THRESHOLD

    program = (
        "import gc; from server.main import tune_gc; before = gc.get_threshold(); tune_gc(); "
        "print(before[0], gc.get_threshold()[0], gc.get_threshold()[1:] == before[1:], gc.get_freeze_count())"
    )
    child = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    out = child.stdout.split()
    assert int(out[0]) == 700  # Python's default, which the server changes
    assert int(out[1]) == YOUNG_GC_THRESHOLD > 700
    assert out[2] == "True"  # the older generations keep theirs
    assert int(out[3]) > 1000  # the modules and tables loaded so far


def test_every_setting_is_in_the_operations_guide_s_table() -> None:
    table = [
        line
        for line in (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text().splitlines()
        if line.startswith("| `")
    ]
    named = {name for line in table for name in re.findall(r"`([a-z0-9-]+)`", line.split("|")[1])}
    missing = [f.name for f in fields(Config) if f.name.replace("_", "-") not in named]
    assert not missing, f"settings missing from docs/operations.md's Configuration table: {missing}"
