"""Who may do what: the join token, the host, CSRF checks and JSON errors.

* Bound to a loopback address (the default) only this machine can connect: no
  join is needed.
* Served on the network, every page and API call from another machine needs the
  join token once (``/join?token=...``, shown as a QR code on the host's page);
  it marks the browser's signed session cookie as joined.
* The host is whoever connects from this machine: only the host sets up games,
  imports records and sees the players' private links.
* Every state-changing request (POST) must carry the session's CSRF token in the
  ``X-CSRF-Token`` header, send JSON, and, where the browser names an Origin,
  come from this server's own origin. The cookie is SameSite=Strict as well.
* A player's private page is opened by that player's own unguessable token and
  shows and accepts that player's secrets only.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from functools import wraps
from typing import Any
from urllib.parse import urlsplit

from flask import current_app, jsonify, render_template, request, session


class ApiError(Exception):
    """A request refused with an HTTP status; `field` names the offending input."""

    def __init__(self, status: int, message: str, field: str | None = None):
        super().__init__(message)
        self.status, self.message, self.field = status, message, field

    def response(self):
        if request.path.startswith("/api/") or request.accept_mimetypes.best == "application/json":
            return jsonify({"error": self.message, "field": self.field, "status": self.status}), self.status
        return render_template("error.html", status=self.status, message=self.message), self.status


def is_local() -> bool:
    try:
        return ipaddress.ip_address(request.remote_addr or "").is_loopback
    except ValueError:
        return False


def is_host() -> bool:
    return is_local()


def csrf_token() -> str:
    token = session.get("csrf")
    if not isinstance(token, str):
        token = session["csrf"] = secrets.token_urlsafe(24)
    return token


def has_joined() -> bool:
    return not current_app.config["REQUIRE_JOIN"] or is_local() or session.get("joined") is True


def check_join_token(token: Any) -> bool:
    hub = current_app.extensions["companion_hub"]
    return isinstance(token, str) and hmac.compare_digest(token.encode(), hub.join_token.encode())


#: Endpoints reachable without joining: they carry their own token, or are the join itself.
OPEN_ENDPOINTS = {"static", "pages.join", "pages.player", "api.secret_view", "api.secret_commit", "api.health"}


def before_request() -> Any:
    """Refuses requests from machines that have not joined, and unsafe cross-site writes."""
    endpoint = request.endpoint or ""
    if endpoint not in OPEN_ENDPOINTS and not has_joined():
        raise ApiError(403, "this companion is shared on the network: join with the link or QR code "
                            "shown on the host's page", "token")
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        check_write()
    return None


def check_write() -> None:
    origin = request.headers.get("Origin")
    if origin is not None:
        own = urlsplit(request.host_url)
        theirs = urlsplit(origin)
        if (theirs.scheme, theirs.netloc) != (own.scheme, own.netloc):
            raise ApiError(403, f"cross-site request from {origin!r} refused", "Origin")
    sent = request.headers.get("X-CSRF-Token", "")
    expected = session.get("csrf")
    if not isinstance(expected, str) or not hmac.compare_digest(sent.encode(), expected.encode()):
        raise ApiError(403, "missing or wrong CSRF token: reload the page (header X-CSRF-Token)", "X-CSRF-Token")


def host_only(view):
    """Only the host (this machine) may call `view`."""
    @wraps(view)
    def wrapper(*args, **kwargs):
        if not is_host():
            raise ApiError(403, "only the host (the machine running the companion) may do this")
        return view(*args, **kwargs)
    return wrapper
