"""The game session and its journal: changes, secrets, undo, corrections, verdicts, resume, faults."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from companion.games import IllegalActionError, InvalidActionError
from companion.journal import Journal, JournalError, JournalFullError, check_game_id, list_games
from companion.records import RecordError, RecordHeader, read_record
from companion.session import GameSession, SeatError, SessionError

SAMPLES = Path(__file__).resolve().parents[2] / "companion" / "data" / "samples"
FOUR = ("Ann", "Bob", "Cy", "Dee")


@pytest.fixture
def session(tmp_path):
    s = GameSession.create(tmp_path, RecordHeader("icebomb-arena", FOUR, seed=3))
    yield s
    s.close()


def test_apply_changes_state_and_journals_first(session, tmp_path):
    effects = session.apply("P1 bid -")
    assert isinstance(effects, tuple)
    snap = session.snapshot()
    assert snap.secret_text == ("P1 bid -",)
    again = GameSession.resume(tmp_path)
    assert again.snapshot().secret_text == ("P1 bid -",)
    assert again.snapshot().state.to_json() == snap.state.to_json()
    again.close()


def test_illegal_and_unreadable_actions_leave_the_game_unchanged(session):
    with pytest.raises(IllegalActionError, match="P3 bomb d4"):
        session.apply("P3 bomb d4")  # bids come first
    with pytest.raises(InvalidActionError):
        session.apply("P1 jump")
    assert session.snapshot().actions == ()
    assert len(session._journal.entries()) == 0


def test_bids_are_sealed_until_everyone_has_bid(session):
    for text in ("P1 bid -", "P2 bid SS", "P3 bid MS"):
        session.apply(text)
    log = session.snapshot().log
    assert [item.sealed for item in log] == [True, True, True]
    assert all("bid" not in item.text for item in log)
    assert log[1].text == "P2 committed a secret choice"
    session.apply("P4 bid SS")
    log = session.snapshot().log
    assert [item.text for item in log] == ["P1 bid -", "P2 bid SS", "P3 bid MS", "P4 bid SS"]
    assert not any(item.sealed for item in log)


def test_seat_may_only_commit_its_own_action(session):
    with pytest.raises(SeatError, match="P2"):
        session.apply("P2 bid SS", seat=0)
    session.apply("P2 bid SS", seat=1)
    assert session.snapshot().secret_text == ("P2 bid SS",)


def test_undo_takes_back_the_last_action_and_survives_resume(session, tmp_path):
    session.apply("P1 bid -")
    session.apply("P2 bid SS")
    assert session.undo() == "P2 bid SS"
    assert session.snapshot().secret_text == ("P1 bid -",)
    kinds = [e.kind for e in session._journal.entries()]
    assert kinds == ["action", "action", "undo"]  # nothing deleted: the undo is appended
    again = GameSession.resume(tmp_path)
    assert again.snapshot().secret_text == ("P1 bid -",)
    again.close()


def test_undo_with_nothing_to_undo_is_refused(session):
    with pytest.raises(SessionError, match="nothing to undo"):
        session.undo()


def test_correction_replaces_an_action_and_drops_what_became_illegal(session, tmp_path):
    header, events = read_record(SAMPLES / "icebomb-arena-4p.jsonl")
    for e in events[:8]:  # bids and the first four bombs
        session.apply(e.action)
    snap = session.snapshot()
    bomb_seq = snap.log[4].seq  # "P3 bomb d4"
    assert snap.secret_text[4] == "P3 bomb d4"
    dropped = session.correct(bomb_seq, "P3 bomb c1")  # P1 later bombs c1: now taken
    # P1's bomb is now illegal; P2's comes out of turn once P1 has not bombed.
    assert dropped == ["P1 bomb c1", "P2 bomb a6"]
    texts = session.snapshot().secret_text
    assert texts[4] == "P3 bomb c1" and texts[5] == "P4 bomb h5" and len(texts) == 6
    # The log says what the correction replaced; the actions kept after it were not corrected.
    assert [item.corrected_from for item in session.snapshot().log[4:]] == ["P3 bomb d4", None]
    again = GameSession.resume(tmp_path)
    assert again.snapshot().secret_text == texts
    assert [item.corrected_from for item in again.snapshot().log[4:]] == ["P3 bomb d4", None]
    assert again.snapshot().state.to_json() == session.snapshot().state.to_json()
    again.close()


def test_a_camera_move_resting_on_a_doubt_says_so_in_the_log_also_after_a_restart(session, tmp_path):
    for text in ("P1 bid -", "P2 bid SS", "P3 bid MS", "P4 bid SS"):
        session.apply(text)
    session.apply("P3 bomb d4", source="camera", observation={"doubts": ["bead @d4: found with low confidence (0.42)"]})
    session.apply("P4 bomb h5", source="camera", observation={"camera": {}})
    assert [item.doubts for item in session.snapshot().log[4:]] == [("bead @d4: found with low confidence (0.42)",), ()]
    again = GameSession.resume(tmp_path)
    assert [item.doubts for item in again.snapshot().log[4:]] == [("bead @d4: found with low confidence (0.42)",), ()]
    again.close()


def test_correction_must_be_legal_and_of_the_same_player(session):
    session.apply("P1 bid -")
    seq = session.snapshot().log[0].seq
    with pytest.raises(SessionError, match="same player"):
        session.correct(seq, "P2 bid SS")
    with pytest.raises(SessionError, match="not an action in play"):
        session.correct(999, "P1 bid S")


def test_verdicts_open_fix_and_dismiss(session, tmp_path):
    vid = session.add_verdict("misread", "P1 bid L", "seen a large, but it was lying flat", ("P1 bid -",),
                              observation={"frame": 12})
    assert [v.id for v in session.snapshot().verdicts] == [vid]
    session.resolve_verdict(vid, "P1 bid -")
    assert session.snapshot().verdicts == ()
    assert session.snapshot().secret_text == ("P1 bid -",)
    other = session.add_verdict("illegal", "P2 bid LLL", "too many pyramids")
    again = GameSession.resume(tmp_path)
    assert [v.id for v in again.snapshot().verdicts] == [other]
    assert again._journal.entries()[0].observation == {"frame": 12}
    again.close()
    session.resolve_verdict(other)
    assert session.snapshot().verdicts == ()
    with pytest.raises(SessionError, match="no open verdict"):
        session.resolve_verdict(other)


def test_a_fix_of_several_actions_made_at_once_is_applied_whole_or_not_at_all(session):
    for text in ("P1 bid -", "P2 bid SS", "P3 bid MS"):
        session.apply(text)
    vid = session.add_verdict("misread", "the bids", "ambiguous", ("P4 bid SS; P3 bomb d4",))
    # Its second step is illegal (P4's bomb comes after P3's): nothing is applied, the verdict stays open.
    with pytest.raises(IllegalActionError):
        session.resolve_verdict(vid, "P4 bid SS; P1 bomb d4")
    assert len(session.snapshot().actions) == 3 and [v.id for v in session.snapshot().verdicts] == [vid]
    session.resolve_verdict(vid, "P4 bid SS; P3 bomb d4")
    assert session.snapshot().secret_text[-2:] == ("P4 bid SS", "P3 bomb d4")
    assert session.snapshot().verdicts == ()


def test_a_verdicts_fix_is_published_whole_never_the_move_with_the_verdict_still_open(tmp_path):
    published = []
    session = GameSession.create(tmp_path, RecordHeader("icebomb-arena", FOUR, seed=3),
                                 on_change=lambda: published.append(session.snapshot()))
    vid = session.add_verdict("misread", "P1 bid L", "looked large", ("P1 bid -",))
    published.clear()
    session.resolve_verdict(vid, "P1 bid -")
    assert [(s.secret_text, s.verdicts) for s in published] == [(("P1 bid -",), ())]
    session.close()


def test_a_cameras_new_verdict_about_the_same_position_replaces_its_open_ones(session, tmp_path):
    manual = session.add_verdict("illegal", "P1 bid LLL", "too many pyramids", source="manual")
    first = session.add_verdict("misread", "+[pawn @e4]", "expected nothing", supersede=True)
    second = session.add_verdict("misread", "+[pawn @e4, pawn @e8]", "expected nothing", supersede=True)
    assert [v.id for v in session.snapshot().verdicts] == [manual, second]
    session.apply("P1 bid -")  # the game moves on: a verdict about the new position is a new problem
    third = session.add_verdict("misread", "+[bead @d4]", "expected P2's bid", supersede=True)
    assert [v.id for v in session.snapshot().verdicts] == [manual, second, third]
    again = GameSession.resume(tmp_path)
    assert [v.id for v in again.snapshot().verdicts] == [manual, second, third]
    closed = [e for e in again._journal.entries() if e.kind == "resolve"]
    assert [(e.target, e.detail) for e in closed] == [(first, {"superseded_by": second})]
    again.close()


def test_roll_draws_from_the_seed_only_at_chance_nodes(tmp_path):
    s = GameSession.create(tmp_path, RecordHeader("zamboni-wars", ("Ann", "Bob"), seed=1))
    assert s.snapshot().state.current_player() >= 0 or s.snapshot().state.is_chance_node()
    if not s.snapshot().state.is_chance_node():
        with pytest.raises(SessionError, match="nothing to roll"):
            s.roll()
    s.close()


@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLES.glob("*.jsonl")))
def test_every_sample_imports_exports_and_resumes_identically(tmp_path, sample):
    lines = (SAMPLES / sample).read_text().splitlines()
    s = GameSession.import_record(tmp_path, lines)
    exported = s.record_lines()
    final = s.snapshot().state.to_json()
    s.close()
    again = GameSession.resume(tmp_path)
    assert again.snapshot().state.to_json() == final
    again.close()
    round_trip = GameSession.import_record(tmp_path / "b", exported)
    assert round_trip.snapshot().state.to_json() == final
    def actions(lines):
        return [json.loads(line)["action"] for line in lines[1:]]
    assert actions(round_trip.record_lines()) == actions(exported)
    assert json.loads(exported[0])["game"] == json.loads(lines[0])["game"]
    round_trip.close()


def test_import_refuses_an_illegal_record_naming_the_line(tmp_path):
    lines = ['{"game": "icebomb-arena", "players": ["A", "B"]}', '{"action": "P1 bid -"}',
             '{"action": "P1 bid S"}']
    with pytest.raises(RecordError, match="line 3"):
        GameSession.import_record(tmp_path, lines)
    assert list_games(tmp_path) == []


def test_journal_is_append_only(session):
    session.apply("P1 bid -")
    db = session._journal._db
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("UPDATE entries SET action = 'P1 bid L'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("DELETE FROM entries")


def test_journal_uses_wal(session):
    assert session._journal._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_full_disk_refuses_the_change_and_keeps_the_game(session, tmp_path):
    session.apply("P1 bid -")
    db = session._journal._db
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count = {pages}")  # the database cannot grow: as a full disk
    with pytest.raises(JournalFullError, match="nothing was changed"):
        for _ in range(2000):  # fill the last free page with the smallest entries, then fail
            session._journal.append("note", source="")
    before = session.snapshot().secret_text
    with pytest.raises(JournalFullError):
        session.apply("P2 bid SS")
    assert session.snapshot().secret_text == before
    assert "full" in session.snapshot().last_error
    db.execute("PRAGMA max_page_count = 1073741823")
    session.apply("P2 bid SS")
    assert session.snapshot().last_error is None
    again = GameSession.resume(tmp_path)
    assert again.snapshot().secret_text == ("P1 bid -", "P2 bid SS")
    again.close()


def test_corrupt_or_missing_journal_is_a_clear_error(tmp_path):
    with pytest.raises(JournalError, match="no saved game"):
        GameSession.resume(tmp_path)
    bad = tmp_path / "20250101-120000-icebomb-arena-abcd.sqlite"
    bad.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(JournalError, match="not a (game journal|database)"):
        GameSession.resume(tmp_path)


def test_game_ids_are_checked_before_touching_files(tmp_path):
    for bad in ("../etc/passwd", "x", "20250101-120000-a-/../b-abcd", "", "20250101-120000-icebomb-arena-ABCD"):
        with pytest.raises(JournalError, match="bad game id"):
            check_game_id(bad)
        with pytest.raises(JournalError):
            Journal.open(tmp_path, bad)
