"""Fuzzing: random JSON bodies and record texts never crash the server or corrupt the game."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.records import RecordError, parse_record
from tests.web.conftest import csrf

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12)
BODIES = st.one_of(
    JSON,
    st.fixed_dictionaries({"action": st.text(max_size=40)}),
    st.fixed_dictionaries({"action": st.sampled_from(["P1 bid -", "P2 bid SS", "P3 bomb d4", "roll 1"])}),
    st.fixed_dictionaries({"seq": st.integers(), "action": st.text(max_size=20)}),
    st.fixed_dictionaries({"game": st.text(max_size=20), "players": JSON}),
    st.fixed_dictionaries({"fix": st.text(max_size=20)}),
)
ROUTES = ["/api/action", "/api/undo", "/api/correct", "/api/roll", "/api/verdicts/1", "/api/setup",
          "/api/import", "/api/resume"]
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(route=st.sampled_from(ROUTES), body=BODIES)
def test_json_api_answers_every_body_with_a_status_not_a_crash(client, app, route, body):
    token = csrf(client)
    session = app.extensions["companion_hub"].session
    r = client.post(route, data=json.dumps(body), content_type="application/json", headers={"X-CSRF-Token": token})
    assert r.status_code < 500, r.get_data(as_text=True)
    if r.status_code >= 400:
        data = r.get_json()
        assert data["error"] and "field" in data
    live = app.extensions["companion_hub"].session
    assert live.snapshot().state.invariant_violations() == []
    if live is session:
        # the journal replays to the same game the server holds
        from companion.session import GameSession
        copy = GameSession.resume(app.config["DATA_DIR"], live.game_id)
        assert copy.snapshot().secret_text == live.snapshot().secret_text
        copy.close()


@FUZZ
@given(raw=st.binary(max_size=200))
def test_raw_bytes_bodies_are_refused_cleanly(client, raw):
    token = csrf(client)
    r = client.post("/api/action", data=raw, content_type="application/json", headers={"X-CSRF-Token": token})
    assert 200 <= r.status_code < 500


@FUZZ
@given(path=st.text(alphabet=st.characters(codec="ascii", exclude_categories=["Cc"]), max_size=30))
def test_odd_paths_never_crash(client, path):
    r = client.get("/" + path.lstrip("/"))
    assert r.status_code < 500


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.one_of(
    st.text(max_size=40),
    JSON.map(json.dumps),
    st.fixed_dictionaries({"action": st.text(max_size=15)}).map(json.dumps),
    st.just('{"game": "icebomb-arena", "players": ["a", "b"]}'),
), max_size=6))
def test_record_parser_reads_or_names_the_bad_line(lines):
    try:
        header, events = parse_record(lines)
    except RecordError as exc:
        assert 1 <= exc.line <= max(1, len(lines))
        return
    assert header.players and all(e.action for e in events)
