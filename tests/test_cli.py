"""The `companion` command, called in-process through its main()."""

from __future__ import annotations

import json

from companion.cli import main, sample_record_path


def test_replay_prints_verdicts_and_final_state(capsys):
    assert main(["replay", str(sample_record_path())]) == 0
    out = capsys.readouterr().out
    assert "line 2: legal    P1 bid -" in out
    assert "0 illegal" in out and "Game over (last gladiator standing)" in out
    assert "The Edge" in out and "life" in out


def test_replay_json_has_verdicts_and_final_summary(capsys):
    assert main(["replay", "--json", str(sample_record_path())]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["illegal"] == 0 and data["game"] == "icebomb-arena"
    assert data["final"]["outcome"]["termination"] == "last gladiator standing"
    assert len(data["final"]["players"]) == 4


def test_replay_with_an_illegal_move_exits_1_and_says_why(tmp_path, capsys):
    record = tmp_path / "r.jsonl"
    record.write_text('{"game": "icebomb-arena", "players": ["a", "b"]}\n{"action": "P1 bomb a1"}\n')
    assert main(["replay", str(record)]) == 1
    assert "ILLEGAL  P1 bomb a1  (the bid phase needs a bid action" in capsys.readouterr().out


def test_malformed_record_gives_one_line_error_and_exit_2(tmp_path, capsys):
    record = tmp_path / "r.jsonl"
    record.write_text('{"game": "icebomb-arena", "players": ["a", "b"]}\n{"action": \n')
    assert main(["replay", str(record)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("companion replay: line 2: not valid JSON")


def test_missing_record_file_is_a_clear_error(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "nope.jsonl")]) == 2
    assert "No such file" in capsys.readouterr().err


def test_games_lists_icebomb_arena(capsys):
    assert main(["games"]) == 0
    assert "icebomb-arena" in capsys.readouterr().out


def test_demo_uses_the_webcam_when_one_is_attached_and_the_bundled_demo_otherwise(monkeypatch, tmp_path):
    from companion.server import commands

    chosen = []
    monkeypatch.setattr(commands, "cmd_serve", lambda args: chosen.append(args.source) or 0)
    monkeypatch.setattr(commands, "camera_attached", lambda: False)
    assert main(["demo", "--duration", "0"]) == 0
    monkeypatch.setattr(commands, "camera_attached", lambda: True)
    assert main(["demo", "--duration", "0"]) == 0
    assert chosen == ["demo", "webcam:0"]


def test_eval_with_an_impossible_confidence_is_a_clear_error(tmp_path, capsys):
    assert main(["eval", str(tmp_path), "--confidence", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("companion eval:") and "confidence" in err
