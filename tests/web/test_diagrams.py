"""The page's top-down diagrams, drawn from a game state's public summary."""

from __future__ import annotations

import re

from companion.records import RecordHeader
from companion.server.diagrams import TOWERS_PER_ROW, board_svg, seat_fill
from companion.session import GameSession


def _state(tmp_path, game, players):
    session = GameSession.create(tmp_path, RecordHeader(game, players))
    state = session.snapshot().state
    session.close()
    return state


def test_ice_arena_bots_are_ringed_in_their_owner_s_seat_colour_whatever_their_base_piece(tmp_path):
    state = _state(tmp_path, "ice-arena", ("Ann", "Bob"))
    bots = state.summary()["bots"]
    svg = board_svg("ice-arena", state.summary(), state)
    rings = re.findall(r'class="seat-ring"[^>]*stroke="([^"]+)"', svg)
    assert sorted(rings) == sorted(seat_fill(b["player"]) for b in bots)
    # The standard set-up gives one of P1's bots a yellow base: it is still ringed in P1's colour.
    assert any(b["player"] == "P1" and b["stack"].startswith("yellow") for b in bots)
    assert rings.count(seat_fill("P1")) == sum(b["player"] == "P1" for b in bots)


def test_the_icetowers_table_wraps_its_towers_into_rows_and_draws_every_piece(tmp_path):
    state = _state(tmp_path, "icetowers", ("Ann", "Bob", "Cy"))
    towers = state.summary()["towers"]
    assert len(towers) > TOWERS_PER_ROW  # every piece starts as a tower of its own
    svg = board_svg("icetowers", state.summary(), state)
    assert len(re.findall(r'<polygon class="pyr"', svg)) == sum(t["tower"].count("-") for t in towers)
    width, height = (float(v) for v in re.search(r'viewBox="0 0 (\S+) (\S+)"', svg).groups())
    # Each polygon is "left,base right,base middle,apex": one middle per column, one base line per row.
    triangles = re.findall(r'<polygon class="pyr"[^>]*points="[\d.]+,([\d.]+) \S+ ([\d.]+),', svg)
    columns, bases = {float(x) for _, x in triangles}, {float(y) for y, _ in triangles}
    assert len(columns) == TOWERS_PER_ROW and all(0 < x < width for x in columns)
    assert len(bases) == -(-len(towers) // TOWERS_PER_ROW) and all(0 < y < height for y in bases)
