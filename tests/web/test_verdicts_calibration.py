"""Secrets sealed by `State.is_secret`, expected-vs-seen diagrams, the a1 corner, where files live."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from companion.records import RecordHeader
from companion.server import web_folder
from companion.server.commands import default_data_dir
from companion.server.views import compare
from companion.session import DemoReplaySource, GameSession, SessionError, SessionHub, SourceRunner
from tests.web.conftest import post

SAMPLE = Path(__file__).resolve().parents[2] / "companion" / "data" / "samples" / "icebomb-arena-4p.jsonl"
FOUR = ("Ann", "Bob", "Cy", "Dee")


@pytest.fixture
def session(tmp_path):
    s = GameSession.create(tmp_path, RecordHeader("icebomb-arena", FOUR, seed=3))
    yield s
    s.close()


# ---- sealing secrets ---------------------------------------------------------------------------

def test_a_pick_for_one_of_two_bots_is_sealed_though_its_owner_still_acts(tmp_path):
    s = GameSession.create(tmp_path, RecordHeader("ice-arena", ("Ann", "Bob")))
    s.apply("P1 1A pick d4")  # P1 still has bot 1B to pick for
    assert [i.sealed for i in s.snapshot().log] == [True]
    assert s.snapshot().log[0].text == "P1 committed a secret choice"
    s.apply("P1 1B pick -")
    s.apply("P2 2A pick -")
    assert all(i.sealed for i in s.snapshot().log)
    s.apply("P2 2B pick -")  # the last pick: all are shown
    assert [i.text for i in s.snapshot().log] == ["P1 1A pick d4", "P1 1B pick -", "P2 2A pick -", "P2 2B pick -"]
    s.close()


def test_arena_plans_are_revealed_when_the_orders_begin_and_orders_when_all_are_in(tmp_path):
    s = GameSession.create(tmp_path, RecordHeader("space-arena", ("Ann", "Bob")))
    for text in ("P1 ship A8 D4 H4 S4", "P2 ship A8 D4 H4 S4"):
        s.apply(text)
    assert [i.sealed for i in s.snapshot().log] == [False, False]
    s.apply("P1 start a1h1")
    s.apply("P2 start h8h8")
    s.apply("P1 plan +1 0 0")
    assert s.snapshot().log[-1].sealed
    s.apply("P2 plan 0 0 0")
    assert not any(i.sealed for i in s.snapshot().log)  # the orders phase began: plans are shown
    s.apply("P1 hold")
    assert s.snapshot().log[-1].sealed and s.snapshot().log[-1].text == "P1 committed a secret choice"
    s.close()


def test_icetowers_done_is_public_now_that_games_say_what_is_secret(tmp_path):
    s = GameSession.create(tmp_path, RecordHeader("icetowers", ("Ann", "Bob")))
    s.apply("P1 done")
    assert s.snapshot().log[0].text == "P1 done" and not s.snapshot().log[0].sealed
    s.close()


def test_the_demo_never_misreads_a_secret_choice():
    from companion.games import get_game
    state = get_game("icebomb-arena").new_initial_state(4)
    assert DemoReplaySource._misread_of(state, "P1 bid LM") is None
    header, texts = DemoReplaySource(SAMPLE).sequence()
    assert [t.split()[1] for t in texts[30:33]] == ["plan", "plan", "move"]


def test_the_demo_misread_lands_on_a_public_move(tmp_path):
    hub = SessionHub(tmp_path)
    runner = SourceRunner(hub, DemoReplaySource(SAMPLE, interval=0.002, loop=False, misread_at=30)).start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "ended" not in hub.faults().get("source", ""):
        time.sleep(0.02)
    runner.stop()
    verdicts = [e for e in hub.session._journal.entries() if e.kind == "verdict"]
    assert len(verdicts) == 1 and verdicts[0].action.startswith("P3 ")  # event 33, not a plan
    assert verdicts[0].detail["at"] == 32 and verdicts[0].detail["fixes"][0] == "P3 move ME"
    hub.close()


# ---- verdicts carry what was seen ----------------------------------------------------------------

OBSERVATION = {"game": "icebomb-arena", "pieces": [],
               "position": {"game": "icebomb-arena", "cells": {"b2": ["pawn"], "c3": ["bead"], "d4": ["red-M U"]},
                            "zones": {"P1": ["red-L N"]}, "table": []}}


def test_a_verdict_keeps_its_observation_and_position_across_resume(session, tmp_path):
    session.apply("P1 bid -")
    vid = session.add_verdict("illegal", "P2 bid LLLLLL", "too many", observation=OBSERVATION)
    item = session.snapshot().verdicts[0]
    assert item.id == vid and item.observation == OBSERVATION and item.at == 1
    again = GameSession.resume(tmp_path)
    assert again.snapshot().verdicts[0].observation == OBSERVATION and again.snapshot().verdicts[0].at == 1
    again.close()


def test_compare_draws_the_referees_expected_items_beside_the_camera_and_outlines_the_difference(session):
    observation = {"observation": OBSERVATION,
                   "expected": ["pawn @b2", "bead @c3", "red-L N @P1", "pawn @e5"]}
    session.add_verdict("illegal", "something", "illegal or misread: expected pawn @e5, seen red-M U @d4",
                        observation=observation)
    snap = session.snapshot()
    c = compare(snap, snap.verdicts[0])
    assert c["seen_label"] == "seen by the camera" and c["expected_label"].startswith("expected")
    for side in ("expected", "seen"):
        assert c[side].startswith("<svg") and "differs at d4" in c[side] and "differs at e5" in c[side]
        assert "differs at b2" not in c[side]
    assert 'class="pawn"' in c["expected"] and "red-M U" in c["seen"] and "red-M U" not in c["expected"]


def test_compare_without_expected_items_uses_the_engines_diagram(session):
    session.add_verdict("misread", "x", "unsure", observation=OBSERVATION)
    session.add_verdict("misread", "y", "unsure", observation={"camera": OBSERVATION})  # as the pipeline keeps it
    snap = session.snapshot()
    for verdict in snap.verdicts:
        c = compare(snap, verdict)
        assert "Icebomb Arena board" in c["expected"] and "seen by the camera" in c["seen"] and "bead" in c["seen"]


def test_compare_without_a_camera_shows_the_seen_move_beside_the_fix(session):
    for text in ("P1 bid -", "P2 bid -", "P3 bid -", "P4 bid S"):
        session.apply(text)
    state = session.snapshot().state
    bombs = [str(a) for a in state.legal_actions(state.current_player())][:2]
    session.add_verdict("misread", bombs[1], "the next frames disagree", (bombs[0], bombs[1]))
    snap = session.snapshot()
    c = compare(snap, snap.verdicts[0])
    seen_square, fix_square = bombs[1].split()[-1], bombs[0].split()[-1]
    assert c["seen_label"] == f"as seen: {bombs[1]}"
    assert f"bomb on {seen_square}" in c["seen"] and f"bomb on {seen_square}" not in c["expected"]
    assert f"bomb on {fix_square}" in c["expected"]


def test_compare_has_nothing_to_draw_for_an_illegal_text_without_an_observation(session):
    session.add_verdict("illegal", "P3 bomb d4", "bids come first")
    snap = session.snapshot()
    assert compare(snap, snap.verdicts[0]) is None


def test_the_page_shows_expected_beside_seen(client, app):
    session = app.extensions["companion_hub"].session
    session.add_verdict("illegal", "?", "illegal or misread", observation=OBSERVATION)
    html = client.get("/").get_data(as_text=True)
    assert 'class="compare"' in html and "seen by the camera" in html and "expected (the engine)" in html


def test_compare_on_the_hex_board_and_the_towers(tmp_path):
    s = GameSession.create(tmp_path / "a", RecordHeader("ice-arena", ("Ann", "Bob")))
    obs = {"position": {"cells": {"0,0": ["red-L NE", "blue-M U"]}, "zones": {}, "table": []},
           "expected": ["red-L NE @0,0", "blue-M U @0,0#1", "green-S U @1,-1"]}
    s.add_verdict("illegal", "?", "r", observation=obs)
    c = compare(s.snapshot(), s.snapshot().verdicts[0])
    assert c["seen"].count('class="hex diff"') == 1 and "green-S U" in c["expected"]
    s.close()
    t = GameSession.create(tmp_path / "b", RecordHeader("icetowers", ("Ann", "Bob")))
    t.add_verdict("illegal", "?", "r", observation={"position": {"game": "icetowers",
                                                                "towers": [[["red", "L"], ["blue", "S"]]], "free": []}})
    c = compare(t.snapshot(), t.snapshot().verdicts[0])
    assert "blue-S" in c["seen"] and "IceTowers table" in c["expected"]
    t.close()


# ---- calibration: the a1 corner -------------------------------------------------------------------

def test_the_a1_corner_is_set_for_the_game_in_play_and_survives_resume(session, tmp_path):
    session.set_a1_corner("far-right")
    assert session.snapshot().extra["a1_corner"] == "far-right"
    with pytest.raises(SessionError, match="middle"):
        session.set_a1_corner("middle")
    again = GameSession.resume(tmp_path)
    assert again.snapshot().extra["a1_corner"] == "far-right"
    again.close()


def test_calibration_api(client, app):
    hub = app.extensions["companion_hub"]
    c = client.get("/api/calibration").get_json()
    assert c["has_frame"] is False and c["a1_corner"] == "near-left" and "far-right" in c["corners"]
    r = post(client, "/api/calibration", {"a1_corner": "far-left"})
    assert r.status_code == 200 and r.get_json()["view"]["a1_corner"] == "far-left"
    assert hub.session.snapshot().extra["a1_corner"] == "far-left"
    bad = post(client, "/api/calibration", {"a1_corner": "middle"})
    assert bad.status_code == 400 and bad.get_json()["field"] == "a1_corner"
    assert post(client, "/api/calibration", {}).status_code == 400
    hub.push_frame(b"\xff\xd8frame\xff\xd9")
    assert client.get("/api/calibration").get_json()["has_frame"] is True


def test_calibration_api_without_a_game(tmp_path):
    from companion.server import create_app
    client = create_app({"TESTING": True, "DATA_DIR": str(tmp_path)}).test_client()
    assert client.get("/api/calibration").get_json()["a1_corner"] is None
    r = post(client, "/api/calibration", {"a1_corner": "far-left"})
    assert r.status_code == 409


def test_setup_shows_the_camera_picture_or_says_manual_mode(client, app):
    html = client.get("/setup").get_data(as_text=True)
    assert "No camera: manual mode" in html and 'id="calibration-img"' in html and " hidden>" in html
    assert html.count('class="corner secondary') == 4 and 'data-corner="near-left"' in html
    assert 'id="save-corner"' in html  # a game is in play: its corner can be changed
    app.extensions["companion_hub"].push_frame(b"\xff\xd8frame\xff\xd9")
    html = client.get("/setup").get_data(as_text=True)
    assert 'src="/video.jpg"' in html and 'class="calibration"' in html


# ---- where files live ----------------------------------------------------------------------------

def test_journals_go_under_the_project_cache_when_the_scripts_set_it(monkeypatch, tmp_path):
    monkeypatch.delenv("COMPANION_DATA", raising=False)
    monkeypatch.setenv("COMPANION_CACHE", str(tmp_path / ".cache"))
    assert default_data_dir() == tmp_path / ".cache" / "games"
    monkeypatch.setenv("COMPANION_DATA", str(tmp_path / "mine"))
    assert default_data_dir() == tmp_path / "mine"
    monkeypatch.delenv("COMPANION_DATA")
    monkeypatch.delenv("COMPANION_CACHE")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_data_dir() == tmp_path / "xdg" / "icehouse-companion" / "games"


def test_web_folder_is_found_where_a_wheel_installs_it(monkeypatch, tmp_path):
    monkeypatch.delenv("COMPANION_WEB", raising=False)
    prefix = tmp_path / "prefix"
    module = prefix / "lib" / "python3.11" / "site-packages" / "companion" / "server" / "__init__.py"
    web = prefix / "share" / "icehouse-companion" / "web"
    (web / "templates").mkdir(parents=True)
    (web / "templates" / "index.html").write_text("x")
    assert web_folder(module, tmp_path / "elsewhere") == web
    assert web_folder(tmp_path / "a" / "b" / "c.py", prefix) == web  # found through sys.prefix
    with pytest.raises(RuntimeError, match="COMPANION_WEB"):
        web_folder(tmp_path / "a" / "b" / "c.py", tmp_path / "elsewhere")
    monkeypatch.setenv("COMPANION_WEB", str(web))
    assert web_folder(tmp_path / "a" / "b" / "c.py", tmp_path / "elsewhere") == web
    assert (web_folder() / "templates" / "index.html").is_file()
