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


def _recognized_table():
    """What `companion recognize --json` prints for a synthetic IceTowers table (no rendering)."""
    from companion.synth.labels import sidecar
    from companion.synth.scenes import sample_scene
    from companion.vision.mapper import map_truth

    return map_truth("icetowers", sidecar(sample_scene("icetowers", 3, 640, 480), None)).to_json()


def test_score_reads_the_full_observation_that_recognize_prints(tmp_path, capsys):
    full = _recognized_table()
    assert {"pieces", "board", "position", "image", "version"} <= set(full)
    assert main(["score", write(tmp_path, full), "--json"]) in (0, 1)
    from_full = json.loads(capsys.readouterr().out)
    main(["score", write(tmp_path, full["position"], "position.json"), "--json"])
    from_position = json.loads(capsys.readouterr().out)
    doubts = [n for n in from_full["notes"] if n.startswith("camera unsure")]
    assert len(doubts) == sum(bool(p["unsure"]) for p in full["pieces"])
    from_full["notes"] = from_full["notes"][len(doubts):]
    assert from_full == from_position and from_full["colour_scores"]
    # Without the derived position the pieces themselves are read, to the same scores.
    del full["position"]
    main(["score", write(tmp_path, full, "pieces.json"), "--json"])
    assert json.loads(capsys.readouterr().out)["colour_scores"] == from_position["colour_scores"]


def test_score_notes_what_the_camera_was_unsure_of(tmp_path, capsys):
    full = _recognized_table()
    full["pieces"][0]["unsure"] = ["near the border of the table"]
    full["players"] = [{"name": "Ann", "colours": ["red"]}]
    main(["score", write(tmp_path, full), "--json"])
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert notes[0].startswith("camera unsure, confirm: pieces[1]") and "near the border" in notes[0]


def test_several_observations_are_scored_one_at_a_time(tmp_path, capsys):
    full = _recognized_table()
    assert main(["score", write(tmp_path, [full, full])]) == 2
    assert "score one table at a time" in capsys.readouterr().err
