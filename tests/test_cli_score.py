"""`companion score`: the IceTowers auto-scorer on the command line."""

from __future__ import annotations

import json

from companion.cli import main

TABLE = {
    "players": [{"name": "Ann", "colours": ["red"]}, {"name": "Bob", "colours": ["yellow"]}],
    "towers": [["yellow-L", "red-M", "red-S"], ["red-L", "yellow-M", "red-M", "yellow-S"]],
    "free": ["yellow-S", "red-M"],
}


def write(tmp_path, data, name="table.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def test_score_prints_controllers_scores_and_notes(tmp_path, capsys):
    assert main(["score", write(tmp_path, TABLE)]) == 0
    out = capsys.readouterr().out
    assert "yellow-L/red-M/red-S" in out and "red (Ann)" in out
    assert "players: Ann 8, Bob 9" in out and "leading: Bob" in out
    assert "violations: none" in out and "split opportunity: yellow-L/red-M|red-S" in out


def test_score_json(tmp_path, capsys):
    assert main(["score", write(tmp_path, TABLE), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["player_scores"] == {"Ann": 8, "Bob": 9} and data["colour_scores"] == {"red": 8, "yellow": 9}
    assert data["towers"][1] == {"tower": "red-L/yellow-M/red-M/yellow-S", "controller": "yellow",
                                 "owner": "Bob", "points": 8}
    assert data["winners"] == ["Bob"] and data["violations"] == []


def test_a_visible_violation_exits_1(tmp_path, capsys):
    assert main(["score", write(tmp_path, {"towers": [["red-S", "yellow-L"]]}), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["violations"] == [
        "yellow-L rests on the smaller red-S (level 2 of red-S/yellow-L)"]


def test_malformed_observation_is_a_one_line_error_and_exit_2(tmp_path, capsys):
    path = write(tmp_path, {"towers": [["red-Q"]]})
    assert main(["score", path]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "towers[1] piece 1: unknown size 'Q'" in captured.err
    assert main(["score", write(tmp_path, "{not json", "broken.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not valid JSON" in err


def test_missing_file_exits_2(tmp_path, capsys):
    assert main(["score", str(tmp_path / "absent.json")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
