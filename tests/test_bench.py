"""The benchmarks still run: a tiny pass of each, checking their output, not their figures."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_bench(*args: str, cwd: Path = ROOT) -> str:
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / args[0]), *args[1:]],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=cwd,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_race_benchmark_plays_moves_through_both_kinds_of_client() -> None:
    for client in ("light", "websockets"):
        settings = ["--racers", "4", "--seconds", "0.5", "--rounds", "1", "--idle", "20"]
        out = run_bench("race.py", *settings, "--client", client)
        floor = re.search(r"floor .*?(\d+) msg/s", out)
        server = re.search(r"server .*?(\d+) moves/s.*errors (\d+)", out)
        assert floor and int(floor.group(1)) > 0, out
        assert server and int(server.group(1)) > 0, out
        assert server.group(2) == "0", out  # every move the racers made was accepted
        assert re.search(r"idle memory: [\d.]+ KiB per connected client with 20 connections", out), out


# A floor command for the test below: it notes its arguments and working directory in the
# file named by its first argument, then becomes the Python floor, given a path relative
# to the repository's root, with the Redis URL it was given last.
FLOOR_WRAPPER = """
import json, os, sys
marker, redis_url = sys.argv[1], sys.argv[-1]
with open(marker, "w") as out:
    json.dump({"argv": sys.argv[1:], "cwd": os.getcwd()}, out)
os.execv(sys.executable, [sys.executable, "bench/floor.py", redis_url])
"""


def test_race_benchmark_runs_the_floor_given_as_a_command(tmp_path: Path) -> None:
    # Run from elsewhere: the floor command must still start in the repository's root.
    wrapper, marker = tmp_path / "floor wrapper.py", tmp_path / "ran.json"
    wrapper.write_text(FLOOR_WRAPPER)
    command = shlex.join([sys.executable, str(wrapper), str(marker)])
    settings = ["--racers", "4", "--seconds", "0.5", "--rounds", "1", "--idle", "0"]
    out = run_bench("race.py", *settings, "--floor-command", command, cwd=tmp_path)
    assert re.search(rf"^floor: {re.escape(command)} \(pid \d+\) at ws://127\.0\.0\.1:\d+/$", out, re.M), out
    ran = json.loads(marker.read_text())
    assert ran["cwd"] == str(ROOT), ran
    assert ran["argv"][0] == str(marker) and ran["argv"][-1].startswith("unix://"), ran  # the Redis URL last
    floor = re.search(r"floor .*?(\d+) msg/s", out)
    server = re.search(r"server .*?(\d+) moves/s.*errors (\d+)", out)
    assert floor and int(floor.group(1)) > 0, out
    assert server and int(server.group(1)) > 0 and server.group(2) == "0", out


def test_race_benchmark_runs_the_picows_floor_as_a_command() -> None:
    command = shlex.join([sys.executable, "bench/floor_picows.py"])
    settings = ["--racers", "4", "--seconds", "0.5", "--rounds", "1", "--idle", "0"]
    out = run_bench("race.py", *settings, "--floor-command", command)
    assert re.search(rf"^floor: {re.escape(command)} \(pid \d+\) at ws://127\.0\.0\.1:\d+/$", out, re.M), out
    floor = re.search(r"floor .*?(\d+) msg/s", out)
    server = re.search(r"server .*?(\d+) moves/s.*errors (\d+)", out)
    assert floor and int(floor.group(1)) > 0, out  # the picows floor answered the racers' moves
    assert server and int(server.group(1)) > 0 and server.group(2) == "0", out


def test_race_benchmark_stops_when_the_floor_command_prints_no_url() -> None:
    command = shlex.join([sys.executable, "-c", "print('ready')"])
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "race.py"), "--rounds", "1", "--floor-command", command],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert result.returncode != 0, result.stdout
    assert "printed 'ready' where its ws:// URL was expected" in result.stderr, result.stderr


def test_race_benchmark_compares_one_worker_with_several() -> None:
    settings = ["--racers", "4", "--seconds", "0.5", "--rounds", "1", "--idle", "20", "--workers", "2"]
    out = run_bench("race.py", *settings)
    for name in ("1 worker", "2 workers"):
        line = rf"^  server on \S+, {name} .*?(\d+) moves/s.*server +(\d+) us.*errors (\d+)$"
        found = re.search(line, out, re.M)
        assert found and int(found.group(1)) > 0 and int(found.group(2)) > 0 and found.group(3) == "0", out
    summary = r"^workers \(\S+\): 2 workers \d+ moves/s, server CPU per move \d+ us; 1 worker"
    assert re.search(summary, out, re.M), out


def test_spectator_benchmark_sees_every_delivery() -> None:
    out = run_bench("spectators.py", "--spectators", "10", "--moves", "5", "--pace", "0.02")
    seen = re.search(r"(\d+) of (\d+) deliveries seen", out)
    assert seen and seen.group(1) == seen.group(2) == "50", out


def test_solver_benchmark_prints_a_row_per_variant_and_rule() -> None:
    settings = ["--deals", "20", "--budget-seconds", "0.5", "--cpu-clock", "--variants", "scorpion", "wasp"]
    out = run_bench("solver.py", *settings)
    built = "plain Python" if os.environ.get("SCORPION_PURE_PYTHON") else "C"
    assert re.search(rf"^search: {built}", out, re.M), out  # what users run
    rows = re.findall(r"^(\S+) +(\S+) +20 deals .* won (\d+) lost (\d+) unknown (\d+)", out, re.M)
    assert [(variant, rule) for variant, rule, *_ in rows] == [
        ("scorpion", "any-time"),
        ("scorpion", "when-stuck"),
        ("wasp", "any-time"),
        ("wasp", "when-stuck"),
    ], out
    assert all(int(won) + int(lost) + int(unknown) == 20 for _, _, won, lost, unknown in rows), out


def test_fairplay_benchmark_prints_a_row_per_kind_of_player() -> None:
    out = run_bench(
        "fairplay.py", "--honest", "6", "--cheaters", "2", "--games", "3", "--deals", "4", "--earlier", "3"
    )
    rows = re.findall(r"^(\S+) +(\d+) +([\d.]+)% +([\d.]+)% +([\d.]+)%", out, re.M)
    kinds = [
        "honest",
        "solver-0.1",
        "solver-0.3",
        "solver-0.5",
        "solver-1.0",
        "scout-0.3",
        "scout-1.0",
        "replay-1.0",
        "digger",
        "bot",
    ]
    assert [kind for kind, *_ in rows] == kinds, out
    assert [int(players) for _, players, *_ in rows] == [6] + [2] * 9, out
    assert re.search(r"4 known deals, 3 earlier games on each", out), out
    assert re.search(r"honest prior-play scores: [\d.]+% of games above 0", out), out
    assert "load before:" in out and "goal:" in out, out


def test_matchmaking_benchmark_matches_the_burst_and_the_flow_and_rates_races() -> None:
    out = run_bench("matchmaking.py", "--queued", "200", "--rate", "50", "--seconds", "1", "--races", "3")
    first = re.search(r"first round with (\d+) waiting: (\d+) pairs", out)
    assert first and int(first.group(1)) == 200 and int(first.group(2)) > 0, out
    assert re.search(r"all \d+ pairs in [\d.]+ s .*; [0-2] left waiting", out), out
    flow = re.search(r"steady flow: (\d+) players joined", out)
    assert flow and int(flow.group(1)) > 0, out
    assert re.search(r"flow: wait-to-match p50 [\d.]+ s", out), out
    for size in (2, 8):
        assert re.search(rf"rating a race of {size}: wall p50 [\d.]+ ms", out), out


def test_race_benchmark_races_on_one_redis_and_on_the_cluster_taking_turns() -> None:
    settings = ["--cluster", "--racers", "4", "--seconds", "0.5", "--rounds", "1"]
    out = run_bench("race.py", *settings)
    for name in ("one Redis", "cluster", "cluster, wait 1"):
        found = re.search(rf"^  {re.escape(name)} +.*?(\d+) moves/s.*errors (\d+)$", out, re.M)
        assert found and int(found.group(1)) > 0 and found.group(2) == "0", out
    assert re.search(r"each added primary can take about [\d,]+ moves/s more", out), out


def test_cluster_client_benchmark_commits_actions_through_each_installed_client() -> None:
    out = run_bench("cluster_client.py", "--racers", "4", "--seconds", "0.5", "--rounds", "1")
    rows = re.findall(r"^  (store|redis-py|valkey-glide) +([\d,]+) actions/s .* failures (\d+)$", out, re.M)
    seen = [(client, failures) for client, _, failures in rows]
    assert ("store", "0") in seen and ("redis-py", "0") in seen, out
    assert all(int(rate.replace(",", "")) > 0 and failures == "0" for _, rate, failures in rows), out


def test_act_script_benchmark_prints_redis_cpu_per_action_of_each_variant() -> None:
    out = run_bench("act_script.py", "--racers", "2", "--seconds", "0.3", "--rounds", "1")
    names = ("act", "act, 60-byte event", "act, no summary", "one hash", "one hash, no move list")
    for name in (*names, "act, 10 a call", "least", "floor"):
        line = rf"^  median {re.escape(name)} +Redis +[\d.]+ us an action, +([\d.]+) inside the script call$"
        inside = re.findall(line, out, re.M)
        assert len(inside) == 2 and all(float(us) > 0 for us in inside), out


def test_challenge_benchmark_times_the_ghosts_and_compares_their_cost_with_live_rivals() -> None:
    out = run_bench("challenges.py", "--takers", "4", "--actions", "3", "--gap", "0.2")
    assert re.search(
        r"^ghosts: 4 takers on 2 nodes, starting within 0 s, 16 ghost events; "
        r"lateness at the takers' sockets p50 -?[\d.]+ ms p99 -?[\d.]+ ms",
        out,
        re.M,
    ), out
    assert re.search(r"^  as this one client process got to them .*: p50 -?[\d.]+ ms", out, re.M), out
    assert re.search(r"^live rivals: 2 races on 2 nodes, \d+ progress events", out, re.M), out
    assert re.search(
        r"^summary: lateness p99 at the takers' sockets -?[\d.]+ ms.*"
        r"CPU per ghost event / live progress event [\d.]+x",
        out,
        re.M,
    ), out


def test_memory_benchmark_prints_the_figures_operations_quotes() -> None:
    out = run_bench("memory.py")
    for label in (
        "a guest who said hello and left",
        "a guest after one finished solo game",
        "a finished solo game's own keys",
        "a finished two-player race's own keys",
        "an account with a passkey and 3 sessions (no game played)",
    ):
        found = re.search(rf"^{re.escape(label)}: (\d+) B in (\d+) keys$", out, re.M)
        assert found and int(found.group(1)) > 0, out
