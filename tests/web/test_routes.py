"""Every route of the app: status, content, effect on the game, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.web.conftest import csrf, post

SAMPLE = Path(__file__).resolve().parents[2] / "companion" / "data" / "samples" / "icebomb-arena-4p.jsonl"


def hub_of(app):
    return app.extensions["companion_hub"]


def test_index_shows_board_panels_and_log(client):
    r = client.get("/")
    assert r.status_code == 200
    html = r.get_data(as_text=True)
    assert "Icebomb Arena" in html and "<svg" in html and "Life" in html and 'name="csrf-token"' in html
    assert "Players&#39; private pages" in html or "private pages" in html


def test_index_without_a_game_goes_to_setup(tmp_path):
    from companion.server import create_app
    app = create_app({"TESTING": True, "DATA_DIR": str(tmp_path)})
    r = app.test_client().get("/")
    assert r.status_code == 302 and r.headers["Location"].endswith("/setup")
    assert app.test_client().get("/api/state").get_json()["game"] is None


def test_setup_page_lists_every_game(client):
    html = client.get("/setup").get_data(as_text=True)
    for name in ("icebomb-arena", "icetowers", "zamboni-wars", "space-arena", "ice-arena"):
        assert f'value="{name}"' in html


def test_state_is_public_only(client, app):
    post(client, "/api/action", {"action": "P1 bid LM"})
    view = client.get("/api/state").get_json()
    text = json.dumps({k: v for k, v in view.items() if k != "controls"})
    assert "P1 bid" not in text and "LM" not in text  # P1's bid stays sealed until everyone has bid
    assert "P1" not in view["controls"]["per_seat"]
    assert view["log_count"] == 1 and view["kind"] == "simultaneous"
    assert set(view["controls"]["per_seat"]) == {"P2", "P3", "P4"}


def test_action_applies_and_returns_the_new_view(client, app):
    r = post(client, "/api/action", {"action": "P1 bid -"})
    assert r.status_code == 200
    assert r.get_json()["view"]["log_count"] == 1
    assert hub_of(app).session.snapshot().secret_text == ("P1 bid -",)


@pytest.mark.parametrize("body, status, field", [
    ({"action": "P3 bomb d4"}, 409, "action"),        # illegal now
    ({"action": "P1 fly away"}, 400, "action"),        # unreadable
    ({"action": ""}, 400, "action"),
    ({"action": 5}, 400, "action"),
    ({"action": True}, 400, "action"),
    ({}, 400, "action"),
    ({"action": "P1 bid -", "extra": 1}, 400, "extra"),
    ({"action": "x" * 1000}, 400, "action"),
])
def test_action_bad_input_names_the_field(client, app, body, status, field):
    r = post(client, "/api/action", body)
    assert r.status_code == status
    assert r.get_json()["field"] == field
    assert hub_of(app).session.snapshot().actions == ()


def test_action_needs_a_json_object(client):
    token = csrf(client)
    r = client.post("/api/action", data="action=P1 bid -", headers={"X-CSRF-Token": token},
                    content_type="application/x-www-form-urlencoded")
    assert r.status_code == 415 and r.get_json()["field"] == "Content-Type"
    r = client.post("/api/action", data="[1, 2]", headers={"X-CSRF-Token": token}, content_type="application/json")
    assert r.status_code == 400 and r.get_json()["field"] == "body"
    r = client.post("/api/action", data="{not json", headers={"X-CSRF-Token": token}, content_type="application/json")
    assert r.status_code == 400


def test_undo(client, app):
    assert post(client, "/api/undo").status_code == 409
    post(client, "/api/action", {"action": "P1 bid -"})
    r = post(client, "/api/undo")
    assert r.status_code == 200 and r.get_json()["undone"] == "P1 bid -"
    assert hub_of(app).session.snapshot().actions == ()
    assert post(client, "/api/undo", {"x": 1}).status_code == 400


def test_correct(client, app):
    for a in ("P1 bid -", "P2 bid SS", "P3 bid MS", "P4 bid SS"):
        post(client, "/api/action", {"action": a})
    seq = hub_of(app).session.snapshot().log[0].seq
    r = post(client, "/api/correct", {"seq": seq, "action": "P1 bid S"})
    assert r.status_code == 200
    assert hub_of(app).session.snapshot().secret_text[0] == "P1 bid S"
    assert "corrected from P1 bid -" in client.get("/").get_data(as_text=True)
    hub_of(app).session.apply("P3 bomb d4", source="camera", observation={"doubts": ["bead @d4: found with low confidence"]})
    assert "unsure: bead @d4: found with low confidence" in client.get("/").get_data(as_text=True)
    assert post(client, "/api/correct", {"seq": 9999, "action": "P1 bid S"}).status_code == 404
    assert post(client, "/api/correct", {"seq": "1", "action": "P1 bid S"}).get_json()["field"] == "seq"
    assert post(client, "/api/correct", {"seq": seq, "action": "P1 bid LLLLL"}).status_code in (400, 409)


def test_verdict_fix_and_dismiss(client, app):
    session = hub_of(app).session
    vid = session.add_verdict("misread", "P1 bid L", "looked large", ("P1 bid -",))
    html = client.get("/").get_data(as_text=True)
    assert "MISREAD" in html and 'data-fix="P1 bid -"' in html
    assert post(client, f"/api/verdicts/{vid}", {}).status_code == 400
    assert post(client, f"/api/verdicts/{vid}", {"fix": "P1 bid -", "dismiss": True}).status_code == 400
    r = post(client, f"/api/verdicts/{vid}", {"fix": "P1 bid -"})
    assert r.status_code == 200 and session.snapshot().verdicts == ()
    assert session.snapshot().secret_text == ("P1 bid -",)
    assert post(client, f"/api/verdicts/{vid}", {"dismiss": True}).status_code == 404
    v2 = session.add_verdict("illegal", "P2 bid LLL", "too many")
    assert post(client, f"/api/verdicts/{v2}", {"dismiss": True}).status_code == 200
    assert session.snapshot().verdicts == ()


def test_roll_only_at_chance(client, app):
    r = post(client, "/api/roll")
    assert r.status_code == 409 and "nothing to roll" in r.get_json()["error"]


def test_roll_at_a_chance_node(client, app):
    post(client, "/api/setup", {"game": "zamboni-wars", "players": ["A", "B"], "seed": 4})
    session = hub_of(app).session
    for _ in range(50):
        state = session.snapshot().state
        if state.is_chance_node():
            break
        session.apply(str(state.legal_actions(state.current_player())[0]))
    assert session.snapshot().state.is_chance_node()
    r = post(client, "/api/roll")
    assert r.status_code == 200 and session.snapshot().log[-1].text.startswith("roll")


def test_preview(client):
    r = client.get("/api/preview", query_string={"action": "P1 bid -"})
    assert r.status_code == 200 and isinstance(r.get_json()["effects"], list)
    assert client.get("/api/preview").status_code == 400
    assert client.get("/api/preview", query_string={"action": "P3 bomb d4"}).status_code == 409


def test_games_health_csrf(client):
    games = client.get("/api/games").get_json()["games"]
    assert {g["name"] for g in games} >= {"icebomb-arena", "icetowers"}
    assert client.get("/api/health").get_json()["ok"] is True
    assert len(csrf(client)) >= 20


def test_export_and_import_round_trip(client, app):
    for a in ("P1 bid -", "P2 bid SS"):
        post(client, "/api/action", {"action": a})
    r = client.get("/api/export")
    assert r.status_code == 200 and "attachment" in r.headers["Content-Disposition"]
    lines = r.get_data(as_text=True).splitlines()
    assert json.loads(lines[0])["game"] == "icebomb-arena"
    assert [json.loads(x)["action"] for x in lines[1:]] == ["P1 bid -", "P2 bid SS"]
    r = post(client, "/api/import", {"record": SAMPLE.read_text()})
    assert r.status_code == 200
    assert hub_of(app).session.snapshot().state.is_terminal()
    bad = post(client, "/api/import", {"record": '{"game": "chess", "players": ["a"]}'})
    assert bad.status_code == 400 and bad.get_json()["field"] == "record" and "chess" in bad.get_json()["error"]


def test_setup_creates_a_new_game(client, app):
    r = post(client, "/api/setup", {"game": "icetowers", "players": ["Ann", "Bob"], "a1_corner": "far-left"})
    assert r.status_code == 200 and r.get_json()["view"]["game"] == "icetowers"
    assert hub_of(app).session.snapshot().extra["a1_corner"] == "far-left"


@pytest.mark.parametrize("body, field", [
    ({"game": "chess", "players": ["a", "b"]}, "game"),
    ({"game": "icetowers", "players": []}, "players"),
    ({"game": "icetowers", "players": ["a", ""]}, "players"),
    ({"game": "icetowers", "players": ["a"] * 11}, "players"),
    ({"game": "icebomb-arena", "players": ["a", "b"], "variant": "nope"}, "variant"),
    ({"game": "icetowers", "players": ["a", "b"], "a1_corner": "middle"}, "a1_corner"),
    ({"game": "icetowers", "players": "ab"}, "players"),
    ({"players": ["a", "b"]}, "game"),
])
def test_setup_bad_input(client, app, body, field):
    before = hub_of(app).session.game_id
    r = post(client, "/api/setup", body)
    assert r.status_code == 400 and r.get_json()["field"] == field
    assert hub_of(app).session.game_id == before


def test_saved_and_resume(client, app):
    post(client, "/api/action", {"action": "P1 bid -"})
    old = hub_of(app).session.game_id
    post(client, "/api/setup", {"game": "icetowers", "players": ["a", "b"]})
    saved = client.get("/api/saved").get_json()["games"]
    assert old in saved and len(saved) == 2
    r = post(client, "/api/resume", {"game_id": old})
    assert r.status_code == 200 and hub_of(app).session.snapshot().secret_text == ("P1 bid -",)
    assert post(client, "/api/resume", {"game_id": "../../etc/passwd"}).status_code == 404


def test_links_and_player_page(client, app):
    links = client.get("/api/links").get_json()
    assert [p["seat"] for p in links["players"]] == ["P1", "P2", "P3", "P4"] and links["join"] is None
    url = links["players"][1]["url"]
    r = client.get(url.replace("http://localhost", ""))
    assert r.status_code == 200 and "P2" in r.get_data(as_text=True) and "Bob" in r.get_data(as_text=True)


def test_events_stream_sends_the_view(client):
    r = client.get("/events")
    assert r.status_code == 200 and r.mimetype == "text/event-stream"
    text = r.get_data(as_text=True)
    data = [line[6:] for line in text.splitlines() if line.startswith("data: ")]
    assert data and json.loads(data[0])["game"] == "icebomb-arena"


def test_video_without_a_camera_says_so(client, app):
    r = client.get("/video.jpg")
    assert r.status_code == 404 and "no camera" in r.get_data(as_text=True)
    hub_of(app).push_frame(b"\xff\xd8fakejpeg\xff\xd9")
    r = client.get("/video.jpg")
    assert r.status_code == 200 and r.data.startswith(b"\xff\xd8") and r.mimetype == "image/jpeg"
    r = client.get("/video.mjpg")
    assert r.status_code == 200 and b"--frame" in r.data


def test_static_files_are_served_locally(client):
    for name in ("app.css", "app.js", "player.js", "setup.js", "favicon.svg"):
        assert client.get(f"/static/{name}").status_code == 200
    html = client.get("/").get_data(as_text=True)
    assert "http://" not in html.split("<main>")[0]  # no CDN in the head


def test_unknown_route_and_method(client):
    assert client.get("/nope").status_code == 404
    assert client.get("/api/action").status_code == 405


@pytest.mark.parametrize("game, players", [
    ("icebomb-arena", 2), ("icetowers", 2), ("zamboni-wars", 2), ("space-arena", 2), ("ice-arena", 2)])
def test_every_game_is_playable_in_manual_mode(client, app, game, players):
    """Plays 25 moves of each game through the page's API alone: choices, rolls, secrets."""
    post(client, "/api/setup", {"game": game, "players": [f"P{i}" for i in range(players)], "seed": 5})
    session = hub_of(app).session
    links = client.get("/api/links").get_json()["players"]
    tokens = [p["url"].rsplit("/", 1)[1] for p in links]
    for _ in range(25):
        view = client.get("/api/state").get_json()
        c = view["controls"]
        if c["kind"] == "terminal":
            break
        if c["kind"] == "chance":
            assert post(client, "/api/roll").status_code == 200
        elif c["kind"] == "seat":
            assert post(client, "/api/action", {"action": c["actions"][0]}).status_code == 200
        else:
            seat = sorted(c["per_seat"])[0]
            secret = client.get(f"/api/secret/{tokens[int(seat[1:]) - 1]}").get_json()
            r = post(client, f"/api/secret/{tokens[int(seat[1:]) - 1]}", {"action": secret["actions"][0]})
            assert r.status_code == 200
        html = client.get("/").get_data(as_text=True)
        assert "<svg" in html
    assert len(session.snapshot().actions) >= 10 or session.snapshot().state.is_terminal()


def test_an_unexpected_error_is_a_json_500_that_says_the_game_is_unchanged(client, app, caplog):
    def broken():
        raise RuntimeError("a bug")

    app.extensions["companion_views"].public = broken
    response = client.get("/api/state")
    assert response.status_code == 500
    assert "internal error (RuntimeError)" in response.get_json()["error"]
    assert "the game is unchanged" in response.get_json()["error"]
    assert any("unexpected error" in r.message for r in caplog.records)
