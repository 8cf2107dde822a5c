"""The Flask app: the table's page, players' private pages, the JSON API and pushed updates.

`create_app(test_config)` builds it (after the Flask tutorial). The app holds a
`SessionHub` (the game in play) and optionally runs a feed (the demo replay or
the camera pipeline) that pushes recognised play into the hub. Templates and
static files live in the repository's `web/` folder (see `web_folder`).
"""

from __future__ import annotations

import ipaddress
import logging
import os
import secrets
import sys
import tempfile
from pathlib import Path
from typing import Any

from flask import Flask
from werkzeug.exceptions import HTTPException

from companion.server import access, diagrams
from companion.session import SessionHub, SourceRunner

log = logging.getLogger(__name__)

#: Where an installed wheel puts web/ (pyproject's data-files), relative to the install prefix.
WEB_DATA = Path("share") / "icehouse-companion" / "web"


def web_folder(module_file: str | Path | None = None, prefix: str | Path | None = None) -> Path:
    """The folder with the page's templates/ and static/.

    $COMPANION_WEB when set; else the checkout's web/ (running from the repository or an
    editable install); else <prefix>/share/icehouse-companion/web, where a wheel installs
    it, found from this package's own place (site-packages sits in <prefix>/lib/pythonX.Y/)
    or from sys.prefix. `module_file` and `prefix` stand in for this file and sys.prefix.
    """
    here = Path(module_file or __file__).resolve()
    candidates = [Path(os.environ["COMPANION_WEB"])] if os.environ.get("COMPANION_WEB") else []
    candidates.append(here.parents[2] / "web")
    if len(here.parents) > 5:
        candidates.append(here.parents[5] / WEB_DATA)
    candidates.append(Path(prefix or sys.prefix) / WEB_DATA)
    for folder in candidates:
        if (folder / "templates" / "index.html").is_file():
            return folder
    tried = ", ".join(str(c) for c in candidates)
    raise RuntimeError(f"the page's web/ folder is missing (looked in {tried}); set COMPANION_WEB")


def is_loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def create_app(test_config: dict[str, Any] | None = None) -> Flask:
    """Builds the app.

    Config keys: DATA_DIR (journals; default a fresh temporary folder), HOST (the
    address served on; anything but loopback requires joining), HUB (a ready
    SessionHub), SOURCE (a feed to run), RESUME (game id, or True for the newest),
    SSE_HEARTBEAT and SSE_MAX_SECONDS (seconds).
    """
    web = web_folder()
    app = Flask(__name__, template_folder=str(web / "templates"), static_folder=str(web / "static"),
                static_url_path="/static")
    app.config.from_mapping(
        SECRET_KEY=secrets.token_hex(32),
        HOST="127.0.0.1",
        DATA_DIR=None,
        SSE_HEARTBEAT=10.0,
        SSE_MAX_SECONDS=120.0,
        MAX_CONTENT_LENGTH=4 * 1024 * 1024,
        SESSION_COOKIE_SAMESITE="Strict",
        SESSION_COOKIE_HTTPONLY=True,
        JSON_SORT_KEYS=False,
    )
    if test_config:
        app.config.update(test_config)
    app.config["REQUIRE_JOIN"] = not is_loopback_host(str(app.config["HOST"]))
    if app.config["DATA_DIR"] is None:
        app.config["DATA_DIR"] = tempfile.mkdtemp(prefix="companion-")
    hub = app.config.get("HUB") or SessionHub(app.config["DATA_DIR"])
    if app.config.get("RESUME"):
        resume = app.config["RESUME"]
        hub.resume(None if resume is True else str(resume))

    from companion.server.views import ViewCache
    app.extensions["companion_hub"] = hub
    app.extensions["companion_views"] = ViewCache(hub)
    runner: dict[str, SourceRunner | None] = {"feed": None}

    def stop_feed() -> None:
        """A set-up, import or resume on the page takes over from the feed."""
        if runner["feed"] is not None:
            runner["feed"].stop()
            runner["feed"] = None
            hub.source_description = "manual"
            hub.clear_fault("source")

    app.extensions["companion_stop_feed"] = stop_feed
    if app.config.get("SOURCE") is not None:
        runner["feed"] = SourceRunner(hub, app.config["SOURCE"]).start()
    app.extensions["companion_runner"] = runner

    from companion.server import api, pages, stream
    app.register_blueprint(pages.bp)
    app.register_blueprint(api.bp)
    app.register_blueprint(stream.bp)
    app.before_request(access.before_request)

    @app.errorhandler(access.ApiError)
    def api_error(exc: access.ApiError):
        return exc.response()

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        return access.ApiError(exc.code or 500, exc.description or exc.name).response()

    @app.errorhandler(Exception)
    def unexpected(exc: Exception):
        log.exception("unexpected error")
        return access.ApiError(500, f"internal error ({type(exc).__name__}); the game is unchanged").response()

    @app.after_request
    def headers(response):
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        response.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; object-src 'none'")
        return response

    app.jinja_env.globals["seat_fill"] = diagrams.seat_fill
    return app
