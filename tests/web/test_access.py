"""Access: joining on the network, the host, CSRF and cross-site writes, players' isolation."""

from __future__ import annotations

import json

import pytest

from companion.records import RecordHeader
from companion.server import create_app
from tests.web.conftest import FOUR, csrf, post

REMOTE = {"REMOTE_ADDR": "192.168.1.50"}


@pytest.fixture
def net_app(hub, tmp_path):
    hub.new_game(RecordHeader("icebomb-arena", FOUR, seed=3))
    app = create_app({"TESTING": True, "HUB": hub, "HOST": "0.0.0.0", "DATA_DIR": str(tmp_path),
                      "SSE_MAX_SECONDS": 0.2})
    return app


def tokens(app):
    session = app.extensions["companion_hub"].session
    return [session.token_of(s) for s in range(4)]


def test_loopback_binding_needs_no_join(client):
    assert client.get("/").status_code == 200


def test_network_binding_requires_the_join_token(net_app):
    remote = net_app.test_client()
    remote.environ_base.update(REMOTE)
    for url in ("/", "/api/state", "/events", "/api/export", "/video.jpg"):
        r = remote.get(url)
        assert r.status_code == 403, url
    assert remote.get("/join", query_string={"token": "wrong"}).status_code == 403
    assert remote.get("/join").status_code == 403
    join = net_app.extensions["companion_hub"].join_token
    assert remote.get("/join", query_string={"token": join}).status_code == 302
    assert remote.get("/").status_code == 200
    assert remote.get("/api/state").get_json()["game"] == "icebomb-arena"


def test_the_host_page_shows_the_join_qr_code(net_app):
    host = net_app.test_client()
    html = host.get("/").get_data(as_text=True)
    assert "/qr.svg" in html
    r = host.get("/qr.svg")
    assert r.status_code == 200 and r.mimetype == "image/svg+xml" and b"<svg" in r.data
    links = host.get("/api/links").get_json()
    assert net_app.extensions["companion_hub"].join_token in links["join"]


def test_joined_viewers_are_not_the_host(net_app):
    remote = net_app.test_client()
    remote.environ_base.update(REMOTE)
    remote.get("/join", query_string={"token": net_app.extensions["companion_hub"].join_token})
    for url in ("/qr.svg", "/api/links", "/setup", "/api/saved"):
        assert remote.get(url).status_code == 403, url
    r = post(remote, "/api/setup", {"game": "icetowers", "players": ["a", "b"]})
    assert r.status_code == 403
    html = remote.get("/").get_data(as_text=True)
    for t in tokens(net_app):
        assert t not in html  # players' links are shown to the host only


def test_writes_need_the_csrf_token(client, app):
    r = client.post("/api/action", json={"action": "P1 bid -"})
    assert r.status_code == 403 and r.get_json()["field"] == "X-CSRF-Token"
    r = client.post("/api/action", json={"action": "P1 bid -"}, headers={"X-CSRF-Token": "guess"})
    assert r.status_code == 403
    assert app.extensions["companion_hub"].session.snapshot().actions == ()


def test_cross_site_writes_are_refused(client, app):
    r = client.post("/api/action", json={"action": "P1 bid -"},
                    headers={"X-CSRF-Token": csrf(client), "Origin": "http://evil.example"})
    assert r.status_code == 403 and r.get_json()["field"] == "Origin"
    r = client.post("/api/action", json={"action": "P1 bid -"},
                    headers={"X-CSRF-Token": csrf(client), "Origin": "http://localhost"})
    assert r.status_code == 200


def test_csrf_token_of_one_browser_does_not_work_in_another(app):
    a, b = app.test_client(), app.test_client()
    token_a = csrf(a)
    csrf(b)
    r = b.post("/api/action", json={"action": "P1 bid -"}, headers={"X-CSRF-Token": token_a})
    assert r.status_code == 403


def test_session_cookie_is_strict_and_http_only(client):
    client.get("/api/csrf")
    cookie = client.get_cookie("session")
    assert cookie is not None and cookie.http_only and cookie.same_site == "Strict"


def test_a_player_sees_only_their_own_secret(client, app):
    t = tokens(app)
    assert post(client, f"/api/secret/{t[0]}", {"action": "P1 bid LM"}).status_code == 200
    assert post(client, f"/api/secret/{t[1]}", {"action": "P2 bid SS"}).status_code == 200
    mine = client.get(f"/api/secret/{t[0]}").get_json()
    theirs = client.get(f"/api/secret/{t[1]}").get_json()
    assert [m["text"] for m in mine["mine"]] == ["P1 bid LM"]
    assert [m["text"] for m in theirs["mine"]] == ["P2 bid SS"]
    assert "LM" not in json.dumps(theirs) and "P1 bid" not in json.dumps(theirs)
    assert "P2 bid" not in json.dumps(mine)
    public = client.get("/api/state").get_json()
    assert "P1 bid" not in json.dumps(public["html"]) and "P2 bid" not in json.dumps(public["html"])


def test_a_player_cannot_commit_for_another(client, app):
    t = tokens(app)
    r = post(client, f"/api/secret/{t[0]}", {"action": "P2 bid SS"})
    assert r.status_code == 403 and "P1" in r.get_json()["error"]
    assert app.extensions["companion_hub"].session.snapshot().actions == ()


def test_unknown_or_stale_player_tokens_get_nothing(client, app):
    for bad in ("x", "A" * 32, tokens(app)[0][:-1]):
        assert client.get(f"/p/{bad}").status_code == 404
        assert client.get(f"/api/secret/{bad}").status_code == 404
        assert post(client, f"/api/secret/{bad}", {"action": "P1 bid -"}).status_code == 404
    old = tokens(app)[0]
    post(client, "/api/setup", {"game": "icetowers", "players": ["a", "b"]})
    assert client.get(f"/api/secret/{old}").status_code == 404  # a new game has new links


def test_player_tokens_are_long_and_distinct(app):
    t = tokens(app)
    assert len(set(t)) == 4 and all(len(x) >= 32 for x in t)


def test_a_player_link_lets_a_remote_phone_in_but_only_to_its_page(net_app):
    phone = net_app.test_client()
    phone.environ_base.update(REMOTE)
    t = tokens(net_app)
    assert phone.get(f"/p/{t[2]}").status_code == 200
    assert phone.get("/api/links").status_code == 403
    r = post(phone, f"/api/secret/{t[2]}", {"action": "P3 bid MS"})
    assert r.status_code == 200
    assert post(phone, f"/api/secret/{t[2]}", {"action": "P4 bid SS"}).status_code == 403


def test_no_request_reaches_the_file_system(client, tmp_path):
    for url in ("/static/../../companion/journal.py", "/static/%2e%2e/%2e%2e/pyproject.toml",
                "/p/..%2f..%2fetc%2fpasswd"):
        r = client.get(url)
        assert r.status_code == 404, url
    r = post(client, "/api/resume", {"game_id": "../../../../etc/passwd"})
    assert r.status_code == 404


def test_security_headers(client):
    r = client.get("/")
    assert r.headers["X-Frame-Options"] == "DENY"
    assert "default-src 'self'" in r.headers["Content-Security-Policy"]
