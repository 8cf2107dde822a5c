"""The JSON API: reads of the public view, and validated changes to the game.

Every change is a POST of a JSON object; a bad body gets a 4xx with
``{"error": ..., "field": ...}`` naming the offending field. Views call the
session and the records module; they hold no rules.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request, url_for

from companion.games import GameError, IllegalActionError, InvalidActionError, game_names, get_game
from companion.journal import JournalError, JournalFullError, list_games
from companion.records import RecordError, RecordHeader
from companion.server.access import ApiError, csrf_token, host_only
from companion.server.views import player_view
from companion.session import A1_CORNERS, NoGameError, SeatError, SessionError, SessionHub

bp = Blueprint("api", __name__, url_prefix="/api")

MAX_TEXT = 300
MAX_PLAYERS = 10


def hub() -> SessionHub:
    return current_app.extensions["companion_hub"]


def public_view() -> dict[str, Any]:
    return current_app.extensions["companion_views"].public()


def body(fields: dict[str, type | tuple[type, ...]], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """The request's JSON object, checked against `fields` (name -> type)."""
    if not request.is_json:
        raise ApiError(415, "send a JSON object with Content-Type: application/json", "Content-Type")
    data = request.get_json(silent=True)
    if data is None:
        raise ApiError(400, "the body is not valid JSON", "body")
    if not isinstance(data, dict):
        raise ApiError(400, f"the body must be a JSON object, not {type(data).__name__}", "body")
    for name in data:
        if name not in fields:
            raise ApiError(400, f"unknown field {str(name)[:40]!r} (expected: {', '.join(fields) or 'none'})",
                           str(name)[:40])
    for name in required:
        if name not in data:
            raise ApiError(400, f"missing field {name!r}", name)
    for name, value in data.items():
        want = fields[name]
        if isinstance(value, bool) and bool not in (want if isinstance(want, tuple) else (want,)):
            raise ApiError(400, f"field {name!r} must be {_type_words(want)}, not a boolean", name)
        if not isinstance(value, want):
            raise ApiError(400, f"field {name!r} must be {_type_words(want)}", name)
        if isinstance(value, str) and len(value) > MAX_TEXT and name != "record":
            raise ApiError(400, f"field {name!r} is longer than {MAX_TEXT} characters", name)
    return data


def _type_words(want: type | tuple[type, ...]) -> str:
    names = {str: "a string", int: "an integer", bool: "true or false", list: "a list", dict: "an object"}
    kinds = want if isinstance(want, tuple) else (want,)
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _text(data: dict[str, Any], name: str) -> str:
    value = data[name].strip()
    if not value:
        raise ApiError(400, f"field {name!r} is empty", name)
    return value


def _session():
    try:
        return hub().require_session()
    except NoGameError as exc:
        raise ApiError(409, str(exc), None) from None


def _changed(extra: dict[str, Any] | None = None):
    out = {"ok": True, **(extra or {})}
    out["view"] = public_view()
    return jsonify(out)


def game_errors(field: str):
    """Maps the package's errors onto HTTP statuses, naming `field`."""
    def wrap(view):
        def inner(*args, **kwargs):
            try:
                return view(*args, **kwargs)
            except InvalidActionError as exc:
                raise ApiError(400, str(exc), field) from None
            except IllegalActionError as exc:
                raise ApiError(409, str(exc), field) from None
            except SeatError as exc:
                raise ApiError(403, str(exc), field) from None
            except JournalFullError as exc:
                raise ApiError(507, f"{exc}. Free some disk space and try again.", None) from None
            except JournalError as exc:
                raise ApiError(503, str(exc), None) from None
            except RecordError as exc:
                raise ApiError(400, f"record {exc}", field) from None
            except (SessionError, GameError) as exc:
                raise ApiError(409, str(exc), field) from None
        inner.__name__ = view.__name__
        return inner
    return wrap


# ---- reading -----------------------------------------------------------------------------------

@bp.get("/health")
def health():
    return jsonify({"ok": True, "version": hub().version})


@bp.get("/csrf")
def csrf():
    return jsonify({"csrf": csrf_token()})


@bp.get("/games")
def games():
    out = []
    for name in game_names():
        g = get_game(name)
        out.append({"name": name, "title": g.title, "min_players": g.min_players, "max_players": g.max_players,
                    "variants": dict(g.variants)})
    return jsonify({"games": out})


@bp.get("/state")
def state():
    return jsonify(public_view())


@bp.get("/preview")
@game_errors("action")
def preview():
    text = request.args.get("action", "")
    if not text.strip() or len(text) > MAX_TEXT:
        raise ApiError(400, "query parameter 'action' must be an action's text", "action")
    snapshot = _session().snapshot()
    return jsonify({"action": text, "effects": snapshot.state.preview(text.strip())})


@bp.get("/export")
@game_errors("game")
def export():
    session = _session()
    text = "\n".join(session.record_lines()) + "\n"
    return Response(text, mimetype="application/x-ndjson", headers={
        "Content-Disposition": f'attachment; filename="{session.game_id}.jsonl"'})


# ---- the game -------------------------------------------------------------------------------------

@bp.post("/action")
@game_errors("action")
def action():
    data = body({"action": str}, ("action",))
    effects = _session().apply(_text(data, "action"), source="manual")
    return _changed({"effects": list(effects)})


@bp.post("/roll")
@game_errors("roll")
def roll():
    body({})
    effects = _session().roll()
    return _changed({"effects": list(effects)})


@bp.post("/undo")
@game_errors("undo")
def undo():
    body({})
    return _changed({"undone": _session().undo()})


@bp.post("/correct")
@game_errors("action")
def correct():
    data = body({"seq": int, "action": str}, ("seq", "action"))
    try:
        dropped = _session().correct(data["seq"], _text(data, "action"))
    except SessionError as exc:
        if "seq" in str(exc).split()[0:1] or "not an action in play" in str(exc):
            raise ApiError(404, str(exc), "seq") from None
        raise
    return _changed({"dropped": dropped})


@bp.post("/verdicts/<int:verdict_id>")
@game_errors("fix")
def resolve(verdict_id: int):
    data = body({"fix": str, "dismiss": bool})
    if ("fix" in data) == bool(data.get("dismiss")):
        raise ApiError(400, "give either 'fix' (an action's text) or 'dismiss': true", "fix")
    session = _session()
    if all(v.id != verdict_id for v in session.snapshot().verdicts):
        raise ApiError(404, f"no open verdict {verdict_id}", "verdict")
    session.resolve_verdict(verdict_id, _text(data, "fix") if "fix" in data else None)
    return _changed()


# ---- set-up (host only) -----------------------------------------------------------------------------

@bp.post("/setup")
@host_only
@game_errors("game")
def setup():
    data = body({"game": str, "variant": str, "players": list, "seed": int, "options": dict,
                 "a1_corner": str}, ("game", "players"))
    try:
        game = get_game(data["game"])
    except GameError as exc:
        raise ApiError(400, str(exc), "game") from None
    players = data["players"]
    if not players or len(players) > MAX_PLAYERS or not all(isinstance(p, str) and p.strip() for p in players):
        raise ApiError(400, f"'players' must list 1-{MAX_PLAYERS} non-empty names in seat order", "players")
    if any(len(p) > 40 for p in players):
        raise ApiError(400, "a player's name is longer than 40 characters", "players")
    variant = data.get("variant", "standard")
    try:
        game.check_variant(variant)
        game.check_player_count(len(players))
    except GameError as exc:
        raise ApiError(400, str(exc), "variant" if "variant" in str(exc) else "players") from None
    corner = data.get("a1_corner", "near-left")
    if corner not in A1_CORNERS:
        raise ApiError(400, f"'a1_corner' must be one of {', '.join(A1_CORNERS)}", "a1_corner")
    header = RecordHeader(game.name, tuple(p.strip() for p in players), variant, data.get("seed", 0),
                          data.get("options", {}))
    try:
        header.initial_state()
    except (GameError, ValueError, TypeError) as exc:
        raise ApiError(400, f"bad set-up: {exc}", "options") from None
    current_app.extensions["companion_stop_feed"]()
    hub().new_game(header, {"a1_corner": corner})
    return _changed({"game_id": hub().require_session().game_id})


@bp.post("/import")
@host_only
@game_errors("record")
def import_record():
    data = body({"record": str}, ("record",))
    if len(data["record"]) > 2_000_000:
        raise ApiError(413, "the record is too long (2 MB at most)", "record")
    current_app.extensions["companion_stop_feed"]()
    session = hub().import_record(data["record"].splitlines())
    return _changed({"game_id": session.game_id})


@bp.get("/calibration")
@host_only
def calibration():
    """What the set-up's calibration step shows: the camera picture's state and the a1 corner."""
    frame, when = hub().frame()
    session = hub().session
    corner = None if session is None else session.snapshot().extra.get("a1_corner", "near-left")
    return jsonify({"has_frame": frame is not None, "frame_time": when if frame is not None else None,
                    "source": hub().source_description, "a1_corner": corner, "corners": list(A1_CORNERS)})


@bp.post("/calibration")
@host_only
@game_errors("a1_corner")
def set_calibration():
    data = body({"a1_corner": str}, ("a1_corner",))
    if data["a1_corner"] not in A1_CORNERS:
        raise ApiError(400, f"'a1_corner' must be one of {', '.join(A1_CORNERS)}", "a1_corner")
    _session().set_a1_corner(data["a1_corner"])
    return _changed({"a1_corner": data["a1_corner"]})


@bp.get("/saved")
@host_only
def saved():
    return jsonify({"games": list_games(hub().data_dir)})


@bp.post("/resume")
@host_only
@game_errors("game_id")
def resume():
    data = body({"game_id": str})
    current_app.extensions["companion_stop_feed"]()
    game_id = data.get("game_id")
    if game_id is not None and game_id not in list_games(hub().data_dir):
        raise ApiError(404, f"no saved game {game_id[:60]!r}", "game_id")
    session = hub().resume(game_id)
    return _changed({"game_id": session.game_id})


@bp.get("/links")
@host_only
def links():
    session = hub().session
    players = []
    if session is not None:
        for seat, name in enumerate(session.header.players):
            players.append({"seat": f"P{seat + 1}", "name": name,
                            "url": url_for("pages.player", token=session.token_of(seat), _external=True)})
    join = url_for("pages.join", token=hub().join_token, _external=True) if current_app.config["REQUIRE_JOIN"] else None
    return jsonify({"players": players, "join": join})


# ---- a player's secrets (their own token) --------------------------------------------------------------

def _seat_for(token: str) -> int:
    session = hub().session
    seat = None if session is None else session.seat_for_token(token)
    if seat is None:
        raise ApiError(404, "no such player page (the link may belong to an earlier game)", "token")
    return seat


@bp.get("/secret/<token>")
def secret_view(token: str):
    seat = _seat_for(token)
    return jsonify(player_view(_session().snapshot(), seat))


@bp.post("/secret/<token>")
@game_errors("action")
def secret_commit(token: str):
    seat = _seat_for(token)
    data = body({"action": str}, ("action",))
    session = _session()
    session.apply(_text(data, "action"), source=f"page of P{seat + 1}", seat=seat)
    return jsonify({"ok": True, "view": player_view(session.snapshot(), seat)})
