"""What the page shows, built once per change from a hub snapshot and shared by all viewers.

Only public facts reach the public view: each game's `summary()` (which hides
secrets by design) and the log with sealed commits. A player's private view adds
that player's own sealed choices and legal actions, and nothing of anyone else's.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from flask import render_template

from companion.games import GameError, get_game
from companion.games.base import CHANCE, SIMULTANEOUS, TERMINAL, State, seat_name
from companion.server import diagrams
from companion.session import SessionHub, Snapshot, VerdictItem

#: Most legal actions offered as buttons; beyond it the page offers a filtered list.
MAX_CHOICES = 400
#: Open verdicts (newest first) drawn as expected-vs-seen diagrams; older ones are text only.
MAX_COMPARED = 6


# ---- per-game panels ---------------------------------------------------------------------------

def _stash(stash: Mapping[str, int]) -> str:
    return f"L{stash.get('large', 0)} M{stash.get('medium', 0)} S{stash.get('small', 0)}"


def panels(game: str, summary: Mapping[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """Cards (one per seat or unit) and headline facts for the game's panel."""
    def name(seat: str) -> str:
        i = int(seat[1:]) - 1
        return f"{seat} {names[i]}" if 0 <= i < len(names) else seat

    cards: list[dict[str, Any]] = []
    facts: list[tuple[str, Any]] = []
    if game == "icebomb-arena":
        facts = [("Round", summary.get("round")), ("Phase", summary.get("phase")),
                 ("The Edge", summary.get("edge") or "-"), ("Bombs", len(summary.get("bombs", [])))]
        for p in summary.get("players", []):
            cards.append({"title": name(p["seat"]), "fill": diagrams.seat_fill(p["seat"]),
                          "big": ("Life", p["life"]), "dead": not p.get("alive", True),
                          "badges": ["The Edge"] if p.get("edge") else [],
                          "rows": [("Square", p.get("square") or "-"), ("Stash", _stash(p.get("stash", {}))),
                                   ("Committed", "yes" if p.get("committed") else "no"),
                                   ("Hand", " ".join(p["hand"]) if p.get("hand") else "-")]})
    elif game == "space-arena":
        facts = [("Round", summary.get("round")), ("Phase", summary.get("phase")), ("Step", summary.get("step"))]
        for s in summary.get("ships", []):
            vx, vy, vz = (s.get("speed") or [0, 0, 0])[:3]
            cards.append({"title": name(s["seat"]), "fill": diagrams.seat_fill(s["seat"]),
                          "big": ("Hull", s.get("hull")), "dead": s.get("status") == "destroyed",
                          "badges": [s.get("status", "")],
                          "rows": [("Fuel", s.get("fuel")), ("At", s.get("at") or "-"),
                                   ("Speed x/y/z", f"{vx:+d} {vy:+d} {vz:+d}"), ("Total speed", s.get("total_speed")),
                                   ("Aim / damage", f"{s.get('aim_now')} / {s.get('damage')}"),
                                   ("Committed", {True: "yes", False: "no"}.get(s.get("committed"), "-"))]})
    elif game == "zamboni-wars":
        facts = [("Phase", summary.get("phase")), ("Turn", summary.get("turn")),
                 ("Turns taken", summary.get("turns_taken")), ("Roll", summary.get("roll") or "-")]
        for z in summary.get("zambonis", []):
            cards.append({"title": name(z["seat"]), "fill": diagrams.COLOUR_FILL.get(z.get("colour"), "#888"),
                          "big": ("Armour", len(z.get("pieces", []))), "dead": z.get("eliminated", False),
                          "badges": [z.get("colour", "")],
                          "rows": [("Square", z.get("square") or "-"), ("Facing", z.get("facing") or "-"),
                                   ("Pieces", " ".join(z.get("pieces", [])))]})
    elif game == "ice-arena":
        facts = [("Round", summary.get("round")), ("Stage", summary.get("stage"))]
        for b in summary.get("bots", []):
            cards.append({"title": f"bot {b['id']} ({name(b['player'])})", "fill": diagrams.seat_fill(b["player"]),
                          "big": ("Life", b.get("life")), "dead": (b.get("life") or 0) <= 0,
                          "badges": [f"specials {b.get('specials', 0)}"],
                          "rows": [("Hex", b.get("hex") or "-"),
                                   ("A / D / M / Ab", f"{b.get('attack')} / {b.get('defend_now')} / "
                                                      f"{b.get('move_now')} / {b.get('ability_on_hex')}"),
                                   ("Weapons", ", ".join(b.get("weapons", []))),
                                   ("Damage pending", b.get("pending_hits", 0)), ("Stack", b.get("stack", ""))]})
    elif game == "icetowers":
        facts = [("Plays", summary.get("plays")), ("Tower war", "claimable" if summary.get("tower_war_claimable") else "-")]
        for s in summary.get("seats", []):
            cards.append({"title": name(s["seat"]), "fill": diagrams.COLOUR_FILL.get((s.get("colours") or [""])[0], "#888"),
                          "big": ("Score", s.get("score")), "dead": False,
                          "badges": ["done"] if s.get("done") else [],
                          "rows": [("Colours", ", ".join(s.get("colours", []))), ("Holding", s.get("holding") or "-")]})
    return {"cards": cards, "facts": facts}


def chart_points(game: str, summary: Mapping[str, Any]) -> tuple[Any, dict[str, dict[str, float]]]:
    """The x value (round) and, per chart, each line's value, for one position."""
    if game == "icebomb-arena":
        return summary.get("round"), {"Life by round": {p["seat"]: p["life"] for p in summary.get("players", [])}}
    if game == "space-arena":
        ships = summary.get("ships", [])
        return summary.get("round"), {"Fuel by round": {s["seat"]: s.get("fuel") for s in ships},
                                      "Hull by round": {s["seat"]: s.get("hull") for s in ships}}
    if game == "zamboni-wars":
        return summary.get("turns_taken"), {"Armour by turn": {z["seat"]: len(z.get("pieces", []))
                                                               for z in summary.get("zambonis", [])}}
    if game == "ice-arena":
        return summary.get("round"), {"Bot life by round": {b["id"]: b.get("life") for b in summary.get("bots", [])}}
    if game == "icetowers":
        return summary.get("plays"), {"Score by play": {s["seat"]: s.get("score") for s in summary.get("seats", [])}}
    return None, {}


def charts_svg(game: str, summaries: list[Mapping[str, Any]]) -> list[str]:
    by_x: dict[Any, dict[str, dict[str, float]]] = {}
    for summary in summaries:
        x, charts = chart_points(game, summary)
        by_x[x] = charts  # the last position of each round stands for the round
    xs = list(by_x)
    out = []
    titles = list(next(iter(by_x.values()), {}).keys())
    for title in titles:
        names: list[str] = []
        for charts in by_x.values():
            for n in charts.get(title, {}):
                if n not in names:
                    names.append(n)
        series = {n: [by_x[x].get(title, {}).get(n) for x in xs] for n in names}
        out.append(diagrams.line_chart(title, [x if x is not None else "" for x in xs], series))
    return out


# ---- the views ------------------------------------------------------------------------------------

def _kind(current: int) -> str:
    return {CHANCE: "chance", SIMULTANEOUS: "simultaneous", TERMINAL: "terminal"}.get(current, "seat")


def controls(snapshot: Snapshot) -> dict[str, Any]:
    """The manual-mode choices: the engine's legal actions for whoever may act now."""
    state = snapshot.state
    current = state.current_player()
    kind = _kind(current)
    out: dict[str, Any] = {"kind": kind, "actions": [], "per_seat": {}, "truncated": False}
    if kind == "chance":
        out["actions"] = [str(a) for a, _ in state.chance_outcomes()][:MAX_CHOICES]
    elif kind == "seat":
        actions = [str(a) for a in state.legal_actions(current)]
        out["truncated"] = len(actions) > MAX_CHOICES
        out["actions"] = actions[:MAX_CHOICES]
    elif kind == "simultaneous":
        for seat in state.players_to_act():
            actions = [str(a) for a in state.legal_actions(seat)]
            out["per_seat"][seat_name(seat)] = actions[:MAX_CHOICES]
    return out


def order_lines(summary: Mapping[str, Any]) -> list[str]:
    for key in ("resolution_order", "order"):
        if summary.get(key):
            return [str(x) for x in summary[key]]
    return []


def predicted_next(snapshot: Snapshot) -> dict[str, Any] | None:
    """The effect of the action about to resolve, where only one can come next."""
    state = snapshot.state
    if state.current_player() < 0:
        return None
    actions = state.legal_actions(state.current_player())
    if len(actions) != 1:
        return None
    return {"action": str(actions[0]), "effects": state.preview(actions[0])}


# ---- expected vs seen ------------------------------------------------------------------------------

def _split_zones(cells: dict[str, list[str]]) -> dict[str, Any]:
    """An item grouping as a position: seat zones ('P1') apart from board cells."""
    zones = {k: v for k, v in cells.items() if k[:1] == "P" and k[1:].isdigit()}
    return {"cells": {k: v for k, v in cells.items() if k not in zones}, "zones": zones}


def _differing(a: Mapping[str, Any], b: Mapping[str, Any]) -> set[str]:
    out = set()
    for part in ("cells", "zones"):
        left, right = a.get(part) or {}, b.get(part) or {}
        for key in set(left) | set(right):
            if sorted(left.get(key, [])) != sorted(right.get(key, [])):
                out.add(str(key))
    return out


def _after(state: State, text: str) -> State | None:
    try:
        return state.apply(text)
    except GameError:
        return None


def compare(snapshot: Snapshot, verdict: VerdictItem) -> dict[str, str] | None:
    """Two small diagrams for a verdict: the engine's expected position beside the seen one.

    With a camera observation, the seen side is what the camera saw (in its own vocabulary:
    pawns, beads, pyramids by colour and size); the expected side is the referee's expected
    items when the observation carries them (then differing cells are outlined on both), else
    the engine's diagram of the position when the verdict was given. Without one, when the seen
    action is legal there, the two sides are the engine's positions after the seen action and
    after the first fix. None when there is nothing to draw.
    """
    game = snapshot.header.game
    states = snapshot.states
    base = states[verdict.at] if verdict.at is not None and 0 <= verdict.at < len(states) else snapshot.state
    radius = int(getattr(base, "radius", 4) or 4)
    seen = diagrams.observed_position(verdict.observation)
    if seen is not None:
        summary = base.summary()
        obs = verdict.observation
        expected_items = obs.get("expected") if isinstance(obs, Mapping) else None
        if isinstance(expected_items, Mapping) and "cells" in expected_items:
            expected = dict(expected_items)
        elif isinstance(expected_items, list) and "cells" in seen:
            expected = _split_zones(diagrams.cells_of_items([str(x) for x in expected_items]))
        else:
            return {"expected": diagrams.board_svg(game, summary, base), "expected_label": "expected (the engine)",
                    "seen": diagrams.position_svg(game, seen, summary, label="seen by the camera", radius=radius),
                    "seen_label": "seen by the camera"}
        differing = _differing(expected, seen)
        return {"expected": diagrams.position_svg(game, expected, summary, differing, "expected", radius),
                "expected_label": "expected (the engine)",
                "seen": diagrams.position_svg(game, seen, summary, differing, "seen by the camera", radius),
                "seen_label": "seen by the camera"}
    seen_state = _after(base, verdict.seen)
    if seen_state is None:
        return None
    expected_state = next((s for s in (_after(base, f) for f in verdict.fixes if f != verdict.seen)
                           if s is not None), base)
    return {"expected": diagrams.board_svg(game, expected_state.summary(), expected_state),
            "expected_label": "expected (the engine)",
            "seen": diagrams.board_svg(game, seen_state.summary(), seen_state),
            "seen_label": f"as seen: {verdict.seen}"}


class ViewCache:
    """Builds the public view once per hub version, whoever asks first."""

    def __init__(self, hub: SessionHub):
        self.hub = hub
        self._lock = threading.Lock()
        self._key: Any = None
        self._view: dict[str, Any] | None = None
        self._summaries: dict[tuple[str, int], Mapping[str, Any]] = {}
        self._compared: dict[tuple[str, int, int], dict[str, str] | None] = {}

    def public(self) -> dict[str, Any]:
        with self._lock:
            session = self.hub.session
            snapshot = session.snapshot() if session is not None else None
            key = (self.hub.version, None if snapshot is None else (snapshot.game_id, snapshot.version))
            if key != self._key or self._view is None:
                self._view = self._build(snapshot)
                self._key = key
            return self._view

    def _summary_list(self, snapshot: Snapshot) -> list[Mapping[str, Any]]:
        # A state's summary never changes: keep them by (game, position in the log's entry ids).
        ids = [0] + [item.seq for item in snapshot.log]
        out = []
        for i, state in enumerate(snapshot.states):
            key = (snapshot.game_id, i, ids[i])
            if key not in self._summaries:
                self._summaries[key] = state.summary()
            out.append(self._summaries[key])
        if len(self._summaries) > 20000:
            self._summaries.clear()
        return out

    def _comparisons(self, snapshot: Snapshot) -> dict[int, dict[str, str]]:
        # Keyed by the game's version, so camera frames (which bump only the hub) reuse them.
        out = {}
        for verdict in list(reversed(snapshot.verdicts))[:MAX_COMPARED]:
            key = (snapshot.game_id, snapshot.version, verdict.id)
            if key not in self._compared:
                self._compared[key] = compare(snapshot, verdict)
            if self._compared[key] is not None:
                out[verdict.id] = self._compared[key]
        if len(self._compared) > 200:
            self._compared = {k: v for k, v in self._compared.items() if k[1] == snapshot.version}
        return out

    def _build(self, snapshot: Snapshot | None) -> dict[str, Any]:
        hub = self.hub
        base = {"version": hub.version, "faults": hub.faults(), "source": hub.source_description,
                "has_frame": hub.frame()[0] is not None}
        if snapshot is None:
            return {**base, "game": None, "html": {"faults": render_template("partials/faults.html", faults=base["faults"])}}
        state = snapshot.state
        game = get_game(snapshot.header.game)
        summaries = self._summary_list(snapshot)
        summary = summaries[-1]
        names = snapshot.header.players
        panel = panels(game.name, summary, names)
        outcome = state.outcome()
        view = {
            **base,
            "game_id": snapshot.game_id, "game": game.name, "title": game.title,
            "variant": snapshot.header.variant,
            "players": [{"seat": seat_name(i), "name": n} for i, n in enumerate(names)],
            "turn": state.turn_text(), "kind": _kind(state.current_player()),
            "to_act": [seat_name(s) for s in state.players_to_act()],
            "order": order_lines(summary), "outcome": None if outcome is None else outcome.to_json(),
            "next": predicted_next(snapshot), "controls": controls(snapshot),
            "summary": summary, "error": snapshot.last_error,
            "log_count": len(snapshot.log),
            "last_seq": snapshot.log[-1].seq if snapshot.log else None,
            "verdict_ids": [v.id for v in snapshot.verdicts],
            "a1_corner": snapshot.extra.get("a1_corner", "near-left"),
        }
        view["html"] = {
            "board": diagrams.board_svg(game.name, summary, state),
            "panels": render_template("partials/panels.html", panel=panel, view=view),
            "log": render_template("partials/log.html", log=list(reversed(snapshot.log[-300:]))),
            "verdicts": render_template("partials/verdicts.html", verdicts=snapshot.verdicts,
                                        compared=self._comparisons(snapshot)),
            "charts": "".join(charts_svg(game.name, summaries)),
            "faults": render_template("partials/faults.html", faults=base["faults"], error=snapshot.last_error),
            "status": render_template("partials/status.html", view=view),
        }
        return view


def player_view(snapshot: Snapshot, seat: int) -> dict[str, Any]:
    """What seat `seat` may see on its private page: public facts plus its own secrets."""
    state = snapshot.state
    own = [{"index": item.index, "text": snapshot.secret_text[item.index - 1], "sealed": item.sealed}
           for item in snapshot.log if item.seat == seat]
    to_act = seat in state.players_to_act()
    return {
        "game_id": snapshot.game_id, "game": snapshot.header.game, "seat": seat_name(seat),
        "name": snapshot.header.players[seat], "turn": state.turn_text(), "to_act": to_act,
        "actions": [str(a) for a in state.legal_actions(seat)][:MAX_CHOICES] if to_act else [],
        "mine": own[-12:],
        "waiting_for": [seat_name(s) for s in state.players_to_act()],
        "summary": state.summary(),
    }
