"""Top-down SVG diagrams of a position and small line charts, drawn from public facts only.

Everything here reads a state's `summary()` (what the table may see) and returns
SVG text; nothing decides rules. One drawing per board kind: square arena
(Icebomb Arena), Martian Coasters (Zamboni Wars), hex board (Ice Arena), the
ARENA's tiles seen from above (Space Arena) and the bare table (IceTowers).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

CELL = 40
MARGIN = 22
#: Drawn heights of the three sizes in the IceTowers diagram.
PIECE_H = {"L": 30, "M": 24, "S": 18}

#: How the ten pyramid colours look on the page ("clear" is drawn light grey).
COLOUR_FILL = {
    "red": "#d7263d", "yellow": "#f4c20d", "green": "#1b998b", "blue": "#2e6fdb", "black": "#222",
    "purple": "#7b2cbf", "clear": "#d9d9d9", "orange": "#f77f00", "cyan": "#00b4d8", "white": "#fafafa",
}
#: Seat colours where a game does not say which colour a seat plays.
SEAT_FILL = ("#d7263d", "#f4c20d", "#1b998b", "#2e6fdb", "#7b2cbf", "#f77f00", "#00b4d8", "#222",
             "#9c6644", "#6c757d")

_DIRECTION_ANGLE = {"N": 0, "NE": 45, "E": 90, "SE": 135, "S": 180, "SW": 225, "W": 270, "NW": 315}


def seat_fill(seat: str | int) -> str:
    index = int(seat[1:]) - 1 if isinstance(seat, str) else seat
    return SEAT_FILL[index % len(SEAT_FILL)]


def _svg(width: float, height: float, body: Sequence[str], label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="diagram" viewBox="0 0 {width:.0f} {height:.0f}" '
            f'role="img" aria-label="{escape(label)}">' + "".join(body) + "</svg>")


def _text(x: float, y: float, text: Any, size: int = 12, cls: str = "", anchor: str = "middle") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
            f'dominant-baseline="central" class="{cls}">{escape(str(text))}</text>')


def _cell_xy(name: str, ranks: int) -> tuple[float, float]:
    """Top-left corner of square `name` ('c4'); rank 1 at the bottom, as seen from P1's side."""
    file = ord(name[0].lower()) - ord("a")
    rank = int("".join(ch for ch in name[1:] if ch.isdigit()))
    return MARGIN + file * CELL, MARGIN + (ranks - rank) * CELL


def _grid(files: int, ranks: int, thick_every: int | None = None) -> list[str]:
    out = []
    for f in range(files):
        for r in range(ranks):
            shade = "sq-dark" if (f + r) % 2 else "sq-light"
            out.append(f'<rect class="{shade}" x="{MARGIN + f * CELL}" y="{MARGIN + r * CELL}" '
                       f'width="{CELL}" height="{CELL}"/>')
    for f in range(files):
        out.append(_text(MARGIN + f * CELL + CELL / 2, MARGIN + ranks * CELL + 10, chr(97 + f), 10, "coord"))
    for r in range(ranks):
        out.append(_text(MARGIN - 10, MARGIN + r * CELL + CELL / 2, ranks - r, 10, "coord"))
    if thick_every:
        for k in range(0, max(files, ranks) + 1, thick_every):
            if k <= files:
                x = MARGIN + k * CELL
                out.append(f'<line class="thick" x1="{x}" y1="{MARGIN}" x2="{x}" y2="{MARGIN + ranks * CELL}"/>')
            if k <= ranks:
                y = MARGIN + k * CELL
                out.append(f'<line class="thick" x1="{MARGIN}" y1="{y}" x2="{MARGIN + files * CELL}" y2="{y}"/>')
    return out


def _pyramid(cx: float, cy: float, size: float, fill: str, facing: str | None = None,
             label: str = "", title: str = "") -> str:
    """A pyramid from above: upright as a triangle pointing up, or lying pointing `facing`."""
    angle = _DIRECTION_ANGLE.get(facing or "N", 0)
    h = size / 2
    points = f"{cx:.1f},{cy - h:.1f} {cx + h * 0.85:.1f},{cy + h * 0.7:.1f} {cx - h * 0.85:.1f},{cy + h * 0.7:.1f}"
    tip = f"<title>{escape(title)}</title>" if title else ""
    return (f'<g class="piece" transform="rotate({angle} {cx:.1f} {cy:.1f})">{tip}'
            f'<polygon points="{points}" fill="{fill}" class="pyr"/></g>'
            + (_text(cx, cy + 2, label, 11, "piece-label") if label else ""))


# ---- per game --------------------------------------------------------------------------------

def icebomb_arena(summary: Mapping[str, Any]) -> str:
    files, ranks = (int(x) for x in str(summary.get("arena", "8x8")).split("x"))
    body = _grid(files, ranks)
    for square in summary.get("bombs", []):
        x, y = _cell_xy(square, ranks)
        body.append(f'<circle class="bomb" cx="{x + CELL / 2}" cy="{y + CELL / 2}" r="{CELL * 0.3}">'
                    f'<title>bomb on {escape(square)}</title></circle>')
    for block in summary.get("blocks", []):
        x, y = _cell_xy(block["square"], ranks)
        inset = {"S": 12, "M": 8, "L": 4}.get(block["size"], 8)
        body.append(f'<rect class="block" x="{x + inset}" y="{y + inset}" width="{CELL - 2 * inset}" '
                    f'height="{CELL - 2 * inset}" fill="{seat_fill(block["owner"])}">'
                    f'<title>{escape(block["owner"])} block {escape(block["size"])} on {escape(block["square"])}</title></rect>')
        body.append(_text(x + CELL / 2, y + CELL / 2, block["size"], 10, "piece-label"))
    for p in summary.get("players", []):
        if p.get("square") and p.get("alive", True):
            x, y = _cell_xy(p["square"], ranks)
            body.append(_pyramid(x + CELL / 2, y + CELL / 2, CELL * 0.8, seat_fill(p["seat"]),
                                 label=p["seat"][1:], title=f'{p["seat"]} gladiator on {p["square"]}, life {p["life"]}'))
    return _svg(2 * MARGIN + files * CELL, 2 * MARGIN + ranks * CELL, body, "Icebomb Arena board")


def zamboni_wars(summary: Mapping[str, Any]) -> str:
    side = 6
    body = _grid(side, side, thick_every=3)
    for square in summary.get("warp_zones", []):
        x, y = _cell_xy(square, side)
        body.append(f'<circle class="warp" cx="{x + CELL / 2}" cy="{y + CELL / 2}" r="{CELL * 0.38}"/>')
    for square in summary.get("cover", []):
        x, y = _cell_xy(square, side)
        body.append(f'<rect class="cover" x="{x + 10}" y="{y + 10}" width="{CELL - 20}" height="{CELL - 20}" rx="3">'
                    f'<title>cover die on {escape(square)}</title></rect>')
    for z in summary.get("zambonis", []):
        if z.get("eliminated") or not z.get("square"):
            continue
        x, y = _cell_xy(z["square"], side)
        fill = COLOUR_FILL.get(z.get("colour", ""), seat_fill(z["seat"]))
        body.append(_pyramid(x + CELL / 2, y + CELL / 2, CELL * 0.85, fill, z.get("facing"),
                             title=f'{z["seat"]} Zamboni on {z["square"]} facing {z.get("facing")}, '
                                   f'{len(z.get("pieces", []))} pieces'))
        body.append(_text(x + 6, y + 7, z["seat"][1:], 9, "piece-label", "start"))
    return _svg(2 * MARGIN + side * CELL, 2 * MARGIN + side * CELL, body, "Martian Coasters board")


def ice_arena(summary: Mapping[str, Any], radius: int = 4) -> str:
    size = 20.0  # hex circumradius

    def centre(q: int, r: int) -> tuple[float, float]:
        return (size * math.sqrt(3) * (q + r / 2), size * 1.5 * r)

    extent_x = size * math.sqrt(3) * (radius + 0.5) + MARGIN
    extent_y = size * 1.5 * radius + size + MARGIN
    body = []
    for q in range(-radius, radius + 1):
        for r in range(max(-radius, -q - radius), min(radius, -q + radius) + 1):
            cx, cy = centre(q, r)
            cx, cy = cx + extent_x, cy + extent_y
            pts = " ".join(f"{cx + size * math.cos(math.radians(60 * k + 30)):.1f},"
                           f"{cy + size * math.sin(math.radians(60 * k + 30)):.1f}" for k in range(6))
            body.append(f'<polygon class="hex" points="{pts}"><title>{q},{r}</title></polygon>')

    def at(text: str) -> tuple[float, float]:
        q, r = (int(v) for v in text.split(",")[:2])
        cx, cy = centre(q, r)
        return cx + extent_x, cy + extent_y

    for small in summary.get("smalls", []):
        parts = small.split()
        if len(parts) >= 2:
            cx, cy = at(parts[1])
            facing = parts[2] if len(parts) > 2 and parts[2] != "up" else None
            body.append(_pyramid(cx + 6, cy + 6, 9, COLOUR_FILL.get(parts[0], "#888"), facing, title=small))
    for mine in summary.get("mines", []):
        text = mine if isinstance(mine, str) else str(mine.get("hex", ""))
        try:
            cx, cy = at(text.split()[-1] if " " in text else text)
        except ValueError:
            continue
        body.append(f'<circle class="bomb" cx="{cx - 7:.1f}" cy="{cy + 7:.1f}" r="4"/>')
    for bot in summary.get("bots", []):
        if not bot.get("hex") or bot.get("life", 1) <= 0:
            continue
        cx, cy = at(bot["hex"])
        base = bot.get("stack", "").split()[0].split("-")[0] if bot.get("stack") else ""
        # The pyramid shows the bot's base piece, which need not be its owner's colour: the ring
        # says whose bot it is, as the players' cards do.
        body.append(f'<circle class="seat-ring" cx="{cx:.1f}" cy="{cy:.1f}" r="19" '
                    f'stroke="{seat_fill(bot["player"])}"><title>{escape(str(bot["player"]))}</title></circle>')
        body.append(_pyramid(cx, cy - 2, 26, COLOUR_FILL.get(base, seat_fill(bot["player"])),
                             title=f'bot {bot["id"]} ({bot["player"]}) at {bot["hex"]}, life {bot.get("life")}'))
        body.append(_text(cx, cy + 12, bot["id"], 9, "piece-label"))
    return _svg(2 * extent_x, 2 * extent_y, body, "Ice Arena hex board")


def space_arena(summary: Mapping[str, Any]) -> str:
    dims = [int(x) for x in str(summary.get("arena", "8x8x8")).split("x")]
    files, ranks = dims[0], dims[1]
    body = _grid(files, ranks)
    for i, ship in enumerate(summary.get("ships", [])):
        at = ship.get("at")
        if not at or ship.get("status") == "destroyed":
            continue
        tile, _, height = at.rpartition("h")
        x, y = _cell_xy(tile, ranks)
        cx, cy = x + CELL / 2, y + CELL / 2
        vx, vy = ship.get("speed", [0, 0, 0])[:2]
        body.append(f'<circle cx="{cx}" cy="{cy}" r="{CELL * 0.32}" fill="{seat_fill(ship["seat"])}" class="ship">'
                    f'<title>{escape(ship["seat"])} at {escape(at)}, speed {ship.get("speed")}</title></circle>')
        body.append(_text(cx, cy, f'h{height}', 10, "piece-label"))
        if vx or vy:
            body.append(f'<line class="speed" x1="{cx}" y1="{cy}" x2="{cx + vx * CELL / 2}" '
                        f'y2="{cy - vy * CELL / 2}" stroke="{seat_fill(ship["seat"])}"/>')
    return _svg(2 * MARGIN + files * CELL, 2 * MARGIN + ranks * CELL, body, "ARENA seen from above")


#: Towers per row of the IceTowers diagram: a game starts with every piece a tower of its own
#: (45 for three players), which in one row would shrink to a strip nobody can read.
TOWERS_PER_ROW = 12


def _drawn_height(pieces: Sequence[str]) -> float:
    """How tall a tower of 'colour-size' pieces is drawn: each piece over the first adds 55 % of its height."""
    heights = [PIECE_H.get(p.partition("-")[2], 20) for p in pieces]
    return heights[0] + 0.55 * sum(heights[1:]) if heights else 0.0


def icetowers(summary: Mapping[str, Any]) -> str:
    towers = summary.get("towers", [])
    stacks = [[p for p in t.get("tower", "").replace("[", "").replace("]", "").split("/") if p] for t in towers]
    per_row = max(1, min(TOWERS_PER_ROW, len(towers)))
    width = per_row * 70 + 2 * MARGIN
    rows = [range(i, min(i + per_row, len(towers))) for i in range(0, len(towers), per_row)] or [range(0)]
    row_heights = [70 + max((_drawn_height(stacks[i]) for i in row), default=0) for row in rows]
    height = sum(row_heights) + 10
    body = [f'<rect class="table" x="0" y="0" width="{width}" height="{height}" rx="8"/>']
    top = 10.0
    for row, row_height in zip(rows, row_heights):
        base = top + row_height
        for k, i in enumerate(row):
            cx = MARGIN + 35 + k * 70
            y = base - 40
            for piece in stacks[i]:
                colour, _, size = piece.partition("-")
                w = {"L": 50, "M": 38, "S": 26}.get(size, 30)
                h = PIECE_H.get(size, 20)
                body.append(f'<polygon class="pyr" fill="{COLOUR_FILL.get(colour, "#888")}" points="{cx - w / 2},{y} '
                            f'{cx + w / 2},{y} {cx},{y - h}"><title>{escape(piece)}</title></polygon>')
                y -= h * 0.55
            body.append(_text(cx, base - 25, towers[i].get("controller") or "-", 10, "coord"))
            body.append(_text(cx, base - 12, f'{towers[i].get("points", 0)} pts', 10, "coord"))
        top = base
    return _svg(width, height, body, "IceTowers table")


def board_svg(game: str, summary: Mapping[str, Any], state: Any = None) -> str:
    """The top-down diagram for `game` from its public summary."""
    if game == "icebomb-arena":
        return icebomb_arena(summary)
    if game == "zamboni-wars":
        return zamboni_wars(summary)
    if game == "ice-arena":
        return ice_arena(summary, int(getattr(state, "radius", 4) or 4))
    if game == "space-arena":
        return space_arena(summary)
    if game == "icetowers":
        return icetowers(summary)
    return _svg(200, 60, [_text(100, 30, f"no diagram for {game}")], game)


# ---- a position as the camera saw it ----------------------------------------------------------

#: Compass angle of the six hex directions on the pointy-top hex drawing (E is +x).
_HEX_ANGLE = {"E": 90, "NE": 30, "NW": 330, "W": 270, "SW": 210, "SE": 150}


def observed_position(observation: Any) -> dict[str, Any] | None:
    """The seen position in a verdict's observation: `Observation.to_json()`'s "position",
    directly or under "observation" or "camera" (the pipeline's key); None when it holds none."""
    if not isinstance(observation, Mapping):
        return None
    for holder in (observation, observation.get("observation"), observation.get("camera")):
        if isinstance(holder, Mapping):
            position = holder.get("position")
            if isinstance(position, Mapping) and ("cells" in position or "towers" in position):
                return dict(position)
    return None


def cells_of_items(items: Sequence[str]) -> dict[str, list[str]]:
    """Item texts ('red-L N @d4', 'pawn @c3', 'blue-M U @e2#1') grouped by where they are."""
    cells: dict[str, list[tuple[int, str]]] = {}
    for item in items:
        what, _, where = str(item).rpartition(" @")
        if not what:
            continue
        where, _, level = where.partition("#")
        cells.setdefault(where, []).append((int(level) if level.isdigit() else 0, what))
    return {where: [w for _, w in sorted(found)] for where, found in sorted(cells.items())}


def _token(cx: float, cy: float, text: str, scale: float, hex_board: bool) -> str:
    """One seen object drawn from its text: a pyramid ('red-L N', 'blue-S U'), pawn, bead or die."""
    words = text.split()
    head = words[0] if words else "?"
    tip = f"<title>{escape(text)}</title>"
    if head == "pawn":
        return f'<circle class="pawn" cx="{cx:.1f}" cy="{cy:.1f}" r="{9 * scale:.1f}">{tip}</circle>'
    if head == "bead":
        return f'<circle class="bead" cx="{cx:.1f}" cy="{cy:.1f}" r="{6 * scale:.1f}">{tip}</circle>'
    if head.startswith("d") and head[1:2].isdigit():
        value = head.partition("=")[2] or "?"
        side = 14 * scale
        return (f'<g>{tip}<rect class="die" x="{cx - side / 2:.1f}" y="{cy - side / 2:.1f}" width="{side:.1f}" '
                f'height="{side:.1f}" rx="3"/></g>' + _text(cx, cy, value, int(9 * scale) or 8, "die-label"))
    colour, _, size = head.partition("-")
    pose = words[1] if len(words) > 1 else "U"
    span = {"S": 14, "M": 20, "L": 26}.get(size, 18) * scale
    facing = None if pose in ("U", "?") else pose
    if facing and hex_board:
        angle = _HEX_ANGLE.get(facing, 0)
        facing = next((d for d, a in _DIRECTION_ANGLE.items() if a == angle), None)
        if facing is None:  # 30-degree hex directions have no compass name: rotate by hand
            return (f'<g transform="rotate({angle} {cx:.1f} {cy:.1f})">'
                    + _pyramid(cx, cy, span, COLOUR_FILL.get(colour, "#888"), None, title=text) + "</g>")
    return _pyramid(cx, cy, span, COLOUR_FILL.get(colour, "#888"), facing, title=text)


def _offsets(n: int, spread: float) -> list[tuple[float, float]]:
    if n <= 1:
        return [(0.0, 0.0)] * n
    return [(spread * math.cos(2 * math.pi * k / n), spread * math.sin(2 * math.pi * k / n)) for k in range(n)]


def _square_dims(game: str, summary: Mapping[str, Any]) -> tuple[int, int]:
    if game == "zamboni-wars":
        return 6, 6
    text = str(summary.get("arena", "8x8"))
    try:
        dims = [int(x) for x in text.split("x")]
        return dims[0], dims[1]
    except (ValueError, IndexError):
        return 8, 8


def _square_cell(name: str, files: int, ranks: int) -> tuple[float, float] | None:
    name = name[:1] + name[1:].split("h")[0]  # ARENA tiles may carry a height ('d4h3')
    if len(name) < 2 or not name[0].isalpha() or not name[1:].isdigit():
        return None
    file, rank = ord(name[0].lower()) - ord("a"), int(name[1:])
    if not (0 <= file < files and 1 <= rank <= ranks):
        return None
    return _cell_xy(name[0] + name[1:], ranks)


def position_svg(game: str, position: Mapping[str, Any], summary: Mapping[str, Any],
                 differing: set[str] | frozenset[str] = frozenset(), label: str = "position",
                 radius: int = 4) -> str:
    """A position in the camera's vocabulary, on the game's board, with `differing` cells outlined.

    `position` is an observation's position: {"cells": {cell: [texts bottom to top]}, "zones":
    {seat: [texts]}, "table": [texts]}, or for IceTowers {"towers": [[[colour, size], ...]], "free": [...]}.
    """
    if game == "icetowers" or "towers" in position:
        return _towers_svg(position, label)
    cells: Mapping[str, Sequence[str]] = position.get("cells") or {}
    zones: Mapping[str, Sequence[str]] = position.get("zones") or {}
    body: list[str] = []
    if game == "ice-arena":
        size = 16.0
        extent_x = size * math.sqrt(3) * (radius + 0.5) + MARGIN
        extent_y = size * 1.5 * radius + size + MARGIN

        def centre(q: int, r: int) -> tuple[float, float]:
            return size * math.sqrt(3) * (q + r / 2) + extent_x, size * 1.5 * r + extent_y

        def hex_points(cx: float, cy: float) -> str:
            return " ".join(f"{cx + size * math.cos(math.radians(60 * k + 30)):.1f},"
                            f"{cy + size * math.sin(math.radians(60 * k + 30)):.1f}" for k in range(6))

        for q in range(-radius, radius + 1):
            for r in range(max(-radius, -q - radius), min(radius, -q + radius) + 1):
                cls = "hex diff" if f"{q},{r}" in differing else "hex"
                body.append(f'<polygon class="{cls}" points="{hex_points(*centre(q, r))}"/>')
        for cell, items in cells.items():
            try:
                q, r = (int(v) for v in str(cell).split(",")[:2])
            except ValueError:
                continue
            cx, cy = centre(q, r)
            for (dx, dy), item in zip(_offsets(len(items), 5), items):
                body.append(_token(cx + dx, cy + dy, item, 0.6, True))
        width, height = 2 * extent_x, 2 * extent_y
    else:
        files, ranks = _square_dims(game, summary)
        body = _grid(files, ranks, thick_every=3 if game == "zamboni-wars" else None)
        for cell in differing:
            xy = _square_cell(cell, files, ranks)
            if xy:
                body.append(f'<rect class="diff" x="{xy[0] + 1}" y="{xy[1] + 1}" width="{CELL - 2}" '
                            f'height="{CELL - 2}"><title>differs at {escape(cell)}</title></rect>')
        for cell, items in cells.items():
            xy = _square_cell(str(cell), files, ranks)
            if xy is None:
                continue
            for (dx, dy), item in zip(_offsets(len(items), 7), items):
                body.append(_token(xy[0] + CELL / 2 + dx, xy[1] + CELL / 2 + dy, item, 0.9, False))
        width, height = 2 * MARGIN + files * CELL, 2 * MARGIN + ranks * CELL
    if zones:
        y = height + 4
        for seat, items in sorted(zones.items()):
            cls = "zone diff" if seat in differing else "zone"
            body.append(f'<rect class="{cls}" x="{MARGIN - 4}" y="{y:.1f}" width="{width - 2 * MARGIN + 8:.1f}" '
                        f'height="28" rx="4"/>')
            body.append(_text(MARGIN + 4, y + 14, seat, 10, "coord", "start"))
            for k, item in enumerate(items):
                body.append(_token(MARGIN + 40 + k * 24, y + 14, item, 0.8, game == "ice-arena"))
            y += 32
        height = y
    return _svg(width, height, body, label)


def _towers_svg(position: Mapping[str, Any], label: str) -> str:
    towers = [t for t in position.get("towers", []) if isinstance(t, list)]
    free = [f for f in position.get("free", []) if isinstance(f, list)]
    stacks = towers + [[f] for f in free]
    width = max(1, len(stacks)) * 60 + 2 * MARGIN
    height = 150
    body = [f'<rect class="table" x="0" y="0" width="{width}" height="{height}" rx="8"/>']
    for i, stack in enumerate(stacks):
        cx, y = MARGIN + 30 + i * 60, height - 24.0
        for piece in stack:
            colour, size = (list(piece) + ["?", "?"])[:2]
            w = {"L": 44, "M": 34, "S": 24}.get(str(size), 28)
            h = {"L": 26, "M": 21, "S": 16}.get(str(size), 18)
            body.append(f'<polygon class="pyr" fill="{COLOUR_FILL.get(str(colour), "#888")}" points="{cx - w / 2},{y} '
                        f'{cx + w / 2},{y} {cx},{y - h}"><title>{escape(f"{colour}-{size}")}</title></polygon>')
            y -= h * 0.55
        body.append(_text(cx, height - 10, "tower" if i < len(towers) else "free", 9, "coord"))
    return _svg(width, height, body, label)


# ---- charts ------------------------------------------------------------------------------------

def line_chart(title: str, xs: Sequence[Any], series: Mapping[str, Sequence[float | None]],
               width: int = 320, height: int = 150) -> str:
    """A small line chart: one line per series over the x labels (rounds)."""
    left, right, top, bottom = 30, 70, 18, 22
    values = [v for line in series.values() for v in line if v is not None]
    body = [_text(left, 8, title, 11, "chart-title", "start")]
    if not xs or not values:
        body.append(_text(width / 2, height / 2, "no data yet", 11, "coord"))
        return _svg(width, height, body, title)
    lo, hi = min(0.0, min(values)), max(values)
    hi = hi if hi > lo else lo + 1
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(i: int) -> float:
        return left + (plot_w * i / (len(xs) - 1) if len(xs) > 1 else plot_w / 2)

    def py(v: float) -> float:
        return top + plot_h * (1 - (v - lo) / (hi - lo))

    body.append(f'<line class="axis" x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}"/>')
    body.append(f'<line class="axis" x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}"/>')
    body.append(_text(left - 4, py(hi), f"{hi:g}", 9, "coord", "end"))
    body.append(_text(left - 4, py(lo), f"{lo:g}", 9, "coord", "end"))
    step = max(1, len(xs) // 6)
    for i in range(0, len(xs), step):
        body.append(_text(px(i), top + plot_h + 10, xs[i], 9, "coord"))
    for k, (name, line) in enumerate(series.items()):
        colour = COLOUR_FILL.get(name.split()[-1], SEAT_FILL[k % len(SEAT_FILL)])
        pts = " ".join(f"{px(i):.1f},{py(v):.1f}" for i, v in enumerate(line) if v is not None)
        body.append(f'<polyline class="series" fill="none" stroke="{colour}" points="{pts}"/>')
        body.append(_text(width - right + 6, top + 10 + 13 * k, name, 10, "legend", "start"))
        body.append(f'<rect x="{width - right - 2}" y="{top + 6 + 13 * k}" width="6" height="6" fill="{colour}"/>')
    return _svg(width, height, body, title)
