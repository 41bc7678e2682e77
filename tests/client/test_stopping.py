"""Long commands stopped part way: a study keeps its work and ``scorpion study --resume``
finishes it; a solve given up with Ctrl-C ends without a traceback.

The stops are real signals sent to real ``scorpion`` processes (for Ctrl-C with workers,
to the whole process group, as a terminal's would be).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from client.cli import main
from tests.conftest import child_pids, is_running

# Wasp any-time deals decided in milliseconds, and one that takes over a minute to prove
# lost (docs/solver.md): the study is stopped while it works on that one.
FAST = [84719271504320904446, 74995770417313166846, 78571213365132138841, 82461806879938412679]
MORE = [96511926185954855238, 99426783232785363249]
HARD = 15925648616820334506


def _wait_for_deals(path: Path, count: int, process: subprocess.Popen[str]) -> dict[str, object]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, "the study ended before it was stopped"
        try:
            data: dict[str, object] = json.loads(path.read_text())
        except (OSError, ValueError):  # not written yet (the file is replaced whole, never torn)
            data = {}
        deals = data.get("deals")
        if isinstance(deals, list) and len(deals) >= count:
            return data
        time.sleep(0.02)
    raise AssertionError(f"{path} never listed {count} deals")


@contextlib.contextmanager
def _study(tmp_path: Path, workers: int) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """Run ``scorpion study`` on FAST, HARD and MORE, writing its file at every result;
    whatever is left of it is killed at the end."""
    listed = tmp_path / "numbers.txt"
    listed.write_text("\n".join(map(str, [*FAST, HARD, *MORE])) + "\n")
    out = tmp_path / "study.json"
    command = [sys.executable, "-m", "client.cli", "study", "--variant", "wasp"]
    command += ["--numbers-file", str(listed), "--budget-seconds", "600", "--budget-nodes", "1000000000"]
    command += ["--cpu-clock", "--workers", str(workers), "--checkpoint", "0.001", "--out", str(out)]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        yield process, out
    finally:
        with contextlib.suppress(ProcessLookupError):  # its group: the study and its workers
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@pytest.mark.parametrize(
    ("stop", "workers", "group"),
    [
        (signal.SIGINT, 2, True),  # Ctrl-C: the terminal signals the whole process group
        (signal.SIGTERM, 2, True),  # a kill of the group (timeout, a service manager)
        (signal.SIGTERM, 1, False),  # kill PID
    ],
)
def test_a_stopped_study_keeps_its_work_and_resume_finishes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], stop: signal.Signals, workers: int, group: bool
) -> None:
    numbers = [*FAST, HARD, *MORE]
    done, left = ([*FAST, *MORE], [HARD]) if workers > 1 else (FAST, [HARD, *MORE])
    with _study(tmp_path, workers) as (process, out):
        # The file is written as the study goes: the fast deals are there while the hard
        # one is still being solved (with two workers, the deals after it too).
        checkpoint = _wait_for_deals(out, len(done), process)
        assert checkpoint["remaining"] == left
        if group:
            os.killpg(process.pid, stop)
        else:
            process.send_signal(stop)
        output, errors = process.communicate(timeout=60)
        with pytest.raises(ProcessLookupError):  # no worker left behind
            os.killpg(process.pid, 0)
    assert process.returncode == 128 + stop, errors
    assert f"stopped: {len(done)} of {len(numbers)} deals solved, {len(left)} not" in errors
    assert f"finish it with: scorpion study --resume {out}" in errors
    assert "Traceback" not in errors
    assert f"wasp any-time: {len(done)} deals" in output
    stopped = json.loads(out.read_text())
    assert [item["number"] for item in stopped["deals"]] == done
    assert stopped["remaining"] == left
    assert stopped["summary"]["deals"] == len(done) and stopped["summary"]["remaining"] == len(left)
    assert not out.with_name(out.name + ".part").exists()

    # A merge counts the deals solved, and says the file is unfinished.
    assert main(["study", "--merge", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["deals"] == len(done)
    assert f"{out} is a study stopped before its end: {len(left)} of its deals are not solved" in captured.err

    # The rest is solved with the file's settings (here a node budget made small in the
    # file, so that the hard deal gives up at once) and the whole study written back.
    stopped["summary"]["budget_nodes"] = 20_000
    out.write_text(json.dumps(stopped))
    assert main(["study", "--resume", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["deals"] == len(numbers) and summary["remaining"] == 0
    assert summary["budget_nodes"] == 20_000 and summary["clock"] == "cpu"
    finished = json.loads(out.read_text())
    assert "remaining" not in finished
    assert [item["number"] for item in finished["deals"]] == [*done, *left]
    assert finished["deals"][: len(done)] == stopped["deals"]  # kept, not solved again
    hard = finished["deals"][len(done)]
    assert hard["verdict"] == "unknown" and 20_000 <= hard["nodes"] <= 20_001
    assert all(item["verdict"] != "unknown" for item in finished["deals"] if item["number"] != HARD)
    assert finished["summary"]["wall_seconds"] >= stopped["summary"]["wall_seconds"]

    # Resuming a finished study solves nothing and says so.
    assert main(["study", "--resume", str(out)]) == 0
    captured = capsys.readouterr()
    assert "the study is complete, no deal is left to solve" in captured.err
    assert f"wasp any-time: {len(numbers)} deals" in captured.out
    assert json.loads(out.read_text())["deals"] == finished["deals"]


def test_resume_refuses_other_settings_and_files_that_are_not_studies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "study.json"
    common = ["study", "--variant", "wasp", "--budget-seconds", "5", "--cpu-clock"]
    assert main([*common, "--deals", "2", "--seed", "3", "--out", str(out)]) == 0
    capsys.readouterr()
    for extra, named in (
        (["--variant", "wasp"], "--variant"),
        (["--budget-seconds", "60"], "--budget-seconds"),
        (["--cpu-clock", "--deals", "5"], "--deals, --cpu-clock"),
        (["--out", str(tmp_path / "other.json")], "--out"),
    ):
        assert main(["study", "--resume", str(out), *extra]) == 2
        assert f"leave out {named}" in capsys.readouterr().err
    data = json.loads(out.read_text())
    for name, text in (
        ("not-json.json", "not json"),
        ("no-summary.json", json.dumps({"deals": []})),
        ("bad-number.json", json.dumps({**data, "remaining": ["soon"]})),
        ("bad-budget.json", json.dumps({**data, "summary": {**data["summary"], "budget_nodes": 0}})),
        ("bad-variant.json", json.dumps({**data, "summary": {**data["summary"], "variant": "klondike"}})),
        ("bad-verdict.json", json.dumps({**data, "deals": [{"number": FAST[0], "verdict": "maybe"}]})),
    ):
        broken = tmp_path / name
        broken.write_text(text)
        assert main(["study", "--resume", str(broken)]) == 2
        assert f"{broken} is not a study file written by --out" in capsys.readouterr().err
    assert main(["study", "--resume", str(tmp_path / "missing.json")]) == 2
    assert "is not a study file" in capsys.readouterr().err
    boolean = tmp_path / "bool-memory.json"
    boolean.write_text(json.dumps({**data, "summary": {**data["summary"], "budget_memory": True}}))
    assert main(["study", "--resume", str(boolean)]) == 2
    assert "its budgets are not positive" in capsys.readouterr().err


def test_a_study_file_behind_a_link_is_written_through_it(tmp_path: Path) -> None:
    (tmp_path / "results").mkdir()
    target = tmp_path / "results" / "study.json"
    link = tmp_path / "latest.json"
    link.symlink_to(target)
    assert main(["study", "--deals", "2", "--seed", "1", "--budget-seconds", "5", "--out", str(link)]) == 0
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert len(json.loads(target.read_text())["deals"]) == 2
    assert list((tmp_path / "results").iterdir()) == [target]  # no .part left behind


def test_a_worker_killed_stops_the_study_with_its_work_kept(tmp_path: Path) -> None:
    # As the kernel's out-of-memory killer would: the worker solving the hard deal dies.
    with _study(tmp_path, 2) as (process, out):
        _wait_for_deals(out, len(FAST) + len(MORE), process)
        workers = child_pids(process.pid)
        assert len(workers) == 2
        for worker in workers:
            os.kill(worker, signal.SIGKILL)
        output, errors = process.communicate(timeout=60)
    assert process.returncode == 1, errors
    assert f"error: a worker process ended while solving deal {HARD} (exit code -9)" in errors
    assert f"finish it with: scorpion study --resume {out}" in errors
    assert "Traceback" not in errors
    stopped = json.loads(out.read_text())
    assert [item["number"] for item in stopped["deals"]] == [*FAST, *MORE]
    assert stopped["remaining"] == [HARD]
    assert f"wasp any-time: {len(FAST) + len(MORE)} deals" in output


def test_a_study_killed_outright_keeps_its_last_checkpoint_and_its_workers_end(tmp_path: Path) -> None:
    with _study(tmp_path, 2) as (process, out):
        _wait_for_deals(out, len(FAST) + len(MORE), process)
        workers = child_pids(process.pid)
        assert len(workers) == 2
        process.kill()  # kill -9: nothing is written at the end
        process.communicate(timeout=60)
        deadline = time.monotonic() + 30
        while any(map(is_running, workers)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(map(is_running, workers)), "the workers outlived the study"
    kept = json.loads(out.read_text())
    assert [item["number"] for item in kept["deals"]] == [*FAST, *MORE]
    assert kept["remaining"] == [HARD]


def test_ctrl_c_ends_a_long_solve_without_a_traceback() -> None:
    # HARD's proof takes over a minute: given up after a moment.
    command = [sys.executable, "-m", "client.cli", "solve", "--variant", "wasp"]
    command += ["--number", str(HARD), "--budget-seconds", "600"]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_ctrl_c_as_in_a_terminal,
    )
    try:
        # Well into the search: a CPU second (starting and dealing take a fraction of it).
        deadline = time.monotonic() + 60
        while _cpu_seconds(process.pid) < 1 and time.monotonic() < deadline:
            assert process.poll() is None
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        output, errors = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130
    assert "scorpion solve: interrupted" in errors
    assert "Traceback" not in errors and output == ""


def _ctrl_c_as_in_a_terminal() -> None:
    """Give the command Ctrl-C's default action, as a terminal's shell does: a suite started
    in the background by a shell without job control runs with SIGINT ignored, which its
    children inherit, and Python then never raises KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
