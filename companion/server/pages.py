"""The HTML pages: the table's page, set-up, a player's private page, joining, the QR code."""

from __future__ import annotations

import segno
from flask import Blueprint, Response, current_app, redirect, render_template, request, session, url_for

from companion.games import game_names, get_game
from companion.server.access import ApiError, check_join_token, csrf_token, host_only, is_host
from companion.session import A1_CORNERS

bp = Blueprint("pages", __name__)

#: The a1 corner choices as the set-up page words them, seen from the camera.
CORNER_NAMES = tuple(zip(A1_CORNERS, ("near left (default)", "near right", "far left", "far right")))


def _hub():
    return current_app.extensions["companion_hub"]


@bp.get("/")
def index():
    if _hub().session is None:
        return redirect(url_for("pages.setup"))
    view = current_app.extensions["companion_views"].public()
    return render_template("index.html", view=view, csrf=csrf_token(), host=is_host(),
                           require_join=current_app.config["REQUIRE_JOIN"])


@bp.get("/setup")
@host_only
def setup():
    games = [get_game(n) for n in game_names()]
    hub = _hub()
    session = hub.session
    corner = "near-left" if session is None else session.snapshot().extra.get("a1_corner", "near-left")
    return render_template("setup.html", games=games, csrf=csrf_token(), host=True,
                           has_frame=hub.frame()[0] is not None, source=hub.source_description,
                           corners=CORNER_NAMES, corner=corner, in_play=session is not None)


@bp.get("/p/<token>")
def player(token: str):
    hub = _hub()
    seat = None if hub.session is None else hub.session.seat_for_token(token)
    if seat is None:
        raise ApiError(404, "no such player page (the link may belong to an earlier game)")
    # Holding a player's link is as good as the join token: it came from the host.
    session["joined"] = True
    return render_template("player.html", token=token, seat=f"P{seat + 1}",
                           name=hub.session.header.players[seat], csrf=csrf_token())


@bp.get("/join")
def join():
    token = request.args.get("token", "")
    if not check_join_token(token):
        raise ApiError(403, "wrong or missing join token: scan the QR code on the host's page", "token")
    session["joined"] = True
    csrf_token()
    return redirect(url_for("pages.index"))


@bp.get("/qr.svg")
@host_only
def qr():
    url = url_for("pages.join", token=_hub().join_token, _external=True)
    svg = segno.make(url, error="m").svg_inline(scale=4, dark="#111", light="#fff")
    return Response(svg, mimetype="image/svg+xml", headers={"Cache-Control": "no-store"})
