"""The solver's commands: ``solve`` and its JSON contract, ``study`` with its numbers files,
outputs and merges.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from client.cli import main
from client.commands.study import draw_numbers
from protocol.game import Board, move_from_json
from tests.protocol.solver.positions import BURIED_KING


def test_the_solve_command_prints_the_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "--variant", "scorpion", "--number", "5", "--json", "--budget-seconds", "30"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"verdict", "moves", "nodes", "seconds"}
    assert data["verdict"] == "winnable"
    assert isinstance(data["nodes"], int) and isinstance(data["seconds"], float)
    board = Board.new("scorpion", 5, "any-time")
    for entry in data["moves"]:
        assert set(entry) in ({"card", "from", "to"}, {"deal"})
        if "card" in entry:
            assert 1 <= entry["from"] <= 7 and 1 <= entry["to"] <= 7
        board.play(move_from_json(entry))
    assert board.is_won()


def test_the_solve_command_accepts_a_position(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "--position", BURIED_KING, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verdict"] == "unwinnable"
    assert data["moves"] == []
    assert main(["solve", "--number", "8", "--json", "--budget-nodes", "3"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "unknown"


def test_the_study_command_refuses_a_bad_numbers_file_or_output_before_solving(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = {
        "words.txt": ("123456789\n\n12x 5\n", "words.txt line 3: not a deal number: '12x'"),
        "zero.txt": ("40000 0\n", "zero.txt line 1: game number 0 is out of range"),
        "huge.txt": (f"{10**20}\n", "huge.txt line 1: game number 100000000000000000000 is out of range"),
        "empty.txt": ("\n  \n", "empty.txt lists no deal numbers"),
    }
    for name, (text, message) in cases.items():
        (tmp_path / name).write_text(text)
        assert main(["study", "--numbers-file", str(tmp_path / name)]) == 2
        captured = capsys.readouterr()
        assert message in captured.err, name
        assert captured.out == ""
    (tmp_path / "binary.txt").write_bytes(b"\xff\xfe\x00\x01")
    assert main(["study", "--numbers-file", str(tmp_path / "binary.txt")]) == 2
    assert "is not a text file of deal numbers" in capsys.readouterr().err
    assert main(["study", "--numbers-file", str(tmp_path / "missing.txt")]) == 2
    assert "cannot read" in capsys.readouterr().err
    # A file of good numbers is solved, blank lines and several numbers a line allowed.
    (tmp_path / "good.txt").write_text("5\n\n8 13\n")
    assert main(["study", "--numbers-file", str(tmp_path / "good.txt"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["numbers"] == [5, 8, 13]
    # An output that cannot be written is refused at once, not after the study.
    out = tmp_path / "no such folder" / "study.json"
    assert main(["study", "--deals", "1", "--seed", "1", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert f"cannot write {out}" in captured.err
    assert "1/1" not in captured.err  # no deal was solved
    # One that fails when the study is done (a full disk) still gets its summary and numbers.
    assert main(["study", "--deals", "2", "--seed", "1", "--out", "/dev/full", "--json"]) == 2
    captured = capsys.readouterr()
    assert "cannot write /dev/full: No space left on device" in captured.err
    summary = json.loads(captured.out)
    assert summary["numbers"] == draw_numbers(2, 1)
    assert sum(summary[name]["count"] for name in ("winnable", "unwinnable", "unknown")) == 2


def test_the_study_command_reports_counts_and_lists_its_deals(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["study", "--deals", "6", "--seed", "4", "--budget-seconds", "5", "--reserve", "when-stuck"]
    args.append("--json")
    assert main(args) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    counts = [data[name]["count"] for name in ("winnable", "unwinnable", "unknown")]
    assert sum(counts) == 6
    assert len(data["numbers"]) == 6
    assert all(32001 <= number < 10**20 for number in data["numbers"])
    assert "6/6" in captured.err
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["numbers"] == data["numbers"]


def test_study_files_merge_without_counting_a_deal_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    common = ["study", "--budget-seconds", "5", "--reserve", "when-stuck", "--cpu-clock"]
    assert main([*common, "--deals", "4", "--seed", "4", "--out", str(first)]) == 0
    assert main([*common, "--deals", "6", "--seed", "4", "--out", str(second)]) == 0
    capsys.readouterr()
    stored = json.loads(second.read_text())
    assert stored["summary"]["clock"] == "cpu"
    assert main(["study", "--merge", str(first), str(second), "--json"]) == 0
    merged = json.loads(capsys.readouterr().out)
    assert merged["deals"] == 6  # the first file's four deals are the second's first four
    expected = {name: stored["summary"][name]["count"] for name in ("winnable", "unwinnable", "unknown")}
    assert {name: merged[name]["count"] for name in expected} == expected
    # A proof in any file beats "unknown" in another (a re-run of the unknown deals with a
    # stronger solver or budget), whichever comes first; proofs that differ are refused.
    data = json.loads(first.read_text())
    assert {item["verdict"] for item in data["deals"]} <= {"winnable", "unwinnable"}
    undecided = tmp_path / "undecided.json"
    undecided.write_text(
        json.dumps({**data, "deals": [{**item, "verdict": "unknown"} for item in data["deals"]]})
    )
    for files in ((undecided, first), (first, undecided)):
        assert main(["study", "--merge", *map(str, files), "--json"]) == 0
        both = json.loads(capsys.readouterr().out)
        assert both["deals"] == 4 and both["unknown"]["count"] == 0
        assert both["winnable"]["count"] == data["summary"]["winnable"]["count"]
    flipped = tmp_path / "flipped.json"
    wrong = {"winnable": "unwinnable", "unwinnable": "winnable"}
    changed = [{**data["deals"][0], "verdict": wrong[data["deals"][0]["verdict"]]}, *data["deals"][1:]]
    flipped.write_text(json.dumps({**data, "deals": changed}))
    assert main(["study", "--merge", str(first), str(flipped)]) == 2
    assert f"deal {data['deals'][0]['number']} is" in capsys.readouterr().err
    for text in (
        "not json",
        json.dumps({"deals": []}),
        json.dumps({**data, "deals": [{"number": 1}]}),
        json.dumps({**data, "remaining": 5}),
    ):
        broken = tmp_path / "broken.json"
        broken.write_text(text)
        assert main(["study", "--merge", str(first), str(broken)]) == 2
        assert "is not a study file" in capsys.readouterr().err
    assert main(["study", "--merge", str(tmp_path / "missing.json")]) == 2
    assert "is not a study file" in capsys.readouterr().err
    other = tmp_path / "c.json"
    anytime = ["study", "--budget-seconds", "5", "--reserve", "any-time", "--deals", "1", "--seed", "9"]
    assert main([*anytime, "--out", str(other)]) == 0
    assert main(["study", "--merge", str(first), str(other)]) == 2
    assert "different studies" in capsys.readouterr().err
    nothing = tmp_path / "nothing.json"
    nothing.write_text(json.dumps({**data, "deals": []}))
    assert main(["study", "--merge", str(nothing), "--json"]) == 2
    captured = capsys.readouterr()
    assert "the files list no deals" in captured.err
    assert captured.out == ""  # no summary of nothing (its times would not be numbers)
