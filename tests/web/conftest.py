"""Fixtures for the web tests: an app on a temporary data folder, and helpers to post JSON."""

from __future__ import annotations

import pytest

from companion.records import RecordHeader
from companion.server import create_app
from companion.session import SessionHub

FOUR = ("Ann", "Bob", "Cy", "Dee")


@pytest.fixture
def hub(tmp_path):
    hub = SessionHub(tmp_path / "games")
    yield hub
    hub.close()


@pytest.fixture
def app(hub, tmp_path):
    hub.new_game(RecordHeader("icebomb-arena", FOUR, seed=3))
    app = create_app({"TESTING": True, "HUB": hub, "DATA_DIR": str(tmp_path / "games"),
                      "SSE_MAX_SECONDS": 0.3, "SSE_HEARTBEAT": 0.1})
    yield app
    app.extensions["companion_stop_feed"]()


@pytest.fixture
def client(app):
    return app.test_client()


def csrf(client) -> str:
    return client.get("/api/csrf").get_json()["csrf"]


def post(client, url, body=None, **kwargs):
    """POSTs JSON with the client's CSRF token, as the page does."""
    headers = {"X-CSRF-Token": csrf(client), **kwargs.pop("headers", {})}
    return client.post(url, json={} if body is None else body, headers=headers, **kwargs)
