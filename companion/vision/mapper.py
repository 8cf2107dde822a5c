"""From detections in pixels to an Observation on the board.

Each detection's ground point goes through the board homography (image -> board-plane mm) to a
cell, or stays as table millimetres off the playing area, where the nearest seat's zone claims it.
A lying pyramid's cell is the one under the midpoint of its contact point and its apex (players
centre a lying piece's body on the square), and its direction is the bearing from contact to apex
on the board plane, snapped to the board's directions (4 or 8 on squares, 6 on hexes).

Upright pyramids resting on others are grouped into stacks from the image alone: a piece rests on
another when its contact point lies on the lower piece's axis (contact to apex) at the height where,
by the two sizes, its rim meets the lower piece's faces (or would, over pieces the detector missed
in between: `rest_heights`). Stacks are ordered bottom to top by size
(a larger piece cannot rest on a smaller one); among equal sizes, which rise only about 5 mm on each
other, a piece whose apex keypoint is scored as covered goes below one whose apex shows, then by
height along the axis, measured over the keypoints and the box's top and bottom together. A piece
whose apex is not seen (cut by the frame's edge, or covered by the piece on it) is tested along the
camera's vertical at its contact point, from the board's homography.
Lying pieces whose bodies overlap are one nest, the largest outside.

Whatever the mapper doubts (a point near a cell border, a direction between two, a missing
keypoint, an unread colour, a pyramid the detector found with little confidence) is listed in the
piece's `unsure`, never guessed silently.
Vision code: no game rules here.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import cv2
import numpy as np

from companion.boards.hexgrid import round_axial
from companion.geometry import stack_rise
from companion.pieces import BASE_MM, HEIGHT_MM, Colour, Pose, Size
from companion.vision.detection import ESTIMATED_END, Detection, box_area, box_intersection, box_iou
from companion.vision.locate import BoardLocation, BoardSpec
from companion.vision.sizing import PlaneCamera, check_sizes
from companion.vision.observation import PYRAMID, Observation, SeenBoard, SeenPiece

SQUARE_HEADINGS = {"N": 0.0, "NE": 45.0, "E": 90.0, "SE": 135.0, "S": 180.0, "SW": 225.0, "W": 270.0, "NW": 315.0}
CARDINAL_HEADINGS = {k: v for k, v in SQUARE_HEADINGS.items() if len(k) == 1}
# Pointy-top hexes (companion/boards/hexgrid.py names): compass heading of each neighbour direction.
HEX_HEADINGS = {"NE": 30.0, "E": 90.0, "SE": 150.0, "SW": 210.0, "W": 270.0, "NW": 330.0}


@dataclass(frozen=True)
class MapperConfig:
    """Thresholds of the mapper; one place to tune them.

    Attributes:
        directions: 4 or 8 on square boards (8 for Zamboni facing); hex boards always use 6.
        seats: number of seats round the board for seat zones (0: no zones), clockwise from the
            south (a1 side) as seen from above; `seat_bearings` overrides the even spacing.
        min_confidence: detections below this are dropped.
        unsure_below: a pyramid found with less confidence than this is marked unsure.
        border_fraction: a ground point within this fraction of a cell of its border is unsure.
        direction_tolerance_deg: a lying direction further than this from the snapped one is unsure.
        rest_tolerance: how far (in lower-piece heights) a contact point may sit from where a piece
            resting on that lower piece would have it, along the axis.
        axis_tolerance: how far across the axis, in lower-piece base widths.
        nest_overlap: lying pieces closer than this (in the larger one's heights) are one nest.
        hidden_apex: an apex keypoint scored below this is taken as covered (by a piece on it).
        pixel_slack: keypoint noise (pixels) the stack tests allow on top of their tolerances:
            far or steeply seen pieces are only a few pixels tall.
        check_sizes: check each pyramid's size against the board's geometry first
            (companion/vision/sizing.py).
        pieces_overlap: whether the game's pyramids stack or nest. When they do not (Icebomb
            Arena), two pyramids whose boxes overlap by more than `same_piece_iou` are one piece
            seen twice (a lying large also read as a medium), and a pyramid mostly inside a
            surer pawn's box is that pawn's head: the less sure detection is dropped.
        same_piece_iou: see `pieces_overlap`.
        plane_in_pixels: the plane is the picture itself (no board or table sheet found): its
            distances are pixels, so a nest's reach is its host's own length in the picture.
    """

    directions: int = 4
    seats: int = 0
    seat_bearings: tuple[float, ...] = ()
    min_confidence: float = 0.25
    # Session 10's detector with two looks, validation split (throwaway count over cached detections):
    # of the pyramids found below 0.55, 45 % had colour or size wrong or were no piece at all (above
    # it 8 %); they are a tenth of all found and hold two fifths of the wrong ones.
    unsure_below: float = 0.55
    border_fraction: float = 0.08
    direction_tolerance_deg: float = 15.0
    rest_tolerance: float = 0.25
    axis_tolerance: float = 0.45
    nest_overlap: float = 0.5
    hidden_apex: float = 0.5
    pixel_slack: float = 2.0
    check_sizes: bool = True
    pieces_overlap: bool = True
    same_piece_iou: float = 0.45
    plane_in_pixels: bool = False


# A stack's pieces the detector may miss between two it finds (an Ice Arena bot's second medium, the
# smalls under its cap): the upper found piece then rests that much higher on the lower one.
MAX_HIDDEN_BETWEEN = 3


@functools.lru_cache(maxsize=None)
def rest_heights(lower: Size, upper: Size) -> tuple[float, ...]:
    """Heights (mm) above `lower`'s base at which `upper`'s base may rest when it is stacked on
    `lower`: directly, or over up to `MAX_HIDDEN_BETWEEN` pieces in between, each no larger than the
    one under it and no smaller than `upper` (a piece rises about 5 mm on one of its own size, so two
    hidden smalls put a top small a third of a medium higher than it could rest directly)."""
    heights: set[float] = set()

    def climb(below: Size, height: float, left: int) -> None:
        heights.add(round(height + stack_rise(below, upper), 3))
        if left:
            for between in Size:
                if upper <= between <= below:
                    climb(between, height + stack_rise(below, between), left - 1)

    climb(lower, 0.0, MAX_HIDDEN_BETWEEN)
    return tuple(sorted(heights))


def bearing(dx: float, dy: float) -> float:
    """Compass bearing (degrees clockwise from +y, north) of a board-plane vector."""
    return math.degrees(math.atan2(dx, dy)) % 360


def _angle_gap(a: float, b: float) -> float:
    return abs((a - b + 180) % 360 - 180)


def snap_direction(heading: float, names: dict[str, float]) -> tuple[str, float]:
    """(the nearest direction's name, how many degrees off it the heading is)."""
    best = min(names, key=lambda n: _angle_gap(heading, names[n]))
    return best, _angle_gap(heading, names[best])


def seat_bearings(seats: int) -> tuple[float, ...]:
    """Bearings from the board centre of `seats` evenly spaced seats, clockwise from the south."""
    return tuple((180 + 360 * k / seats) % 360 for k in range(seats))


def hex_cell_name(q: int, r: int) -> str:
    """The game's name (companion/boards/hexgrid.py) of a hex whose internal r grows north."""
    return f"{q + r},{-r}"


class Mapper:
    """Maps one frame's detections onto a located board; `map` returns an Observation."""

    def __init__(self, game: str, config: MapperConfig = MapperConfig()):
        self.game = game
        self.config = config

    # --- the board plane -------------------------------------------------------------------

    def _to_board(self, location: BoardLocation, points: np.ndarray) -> np.ndarray:
        return location.image_to_board(np.asarray(points, float).reshape(-1, 2))

    def cell_of(self, spec: BoardSpec, point_mm: tuple[float, float]) -> tuple[str | None, float]:
        """(cell name, distance to its border in cell sizes) of a board-plane point; (None, 0) off the area."""
        x, y = point_mm
        if spec.kind == "hex":
            h = spec.hex_mm
            fr = y / (1.5 * h)
            fq = x / (math.sqrt(3) * h) - fr / 2
            q, r = round_axial(fq, fr)
            n = spec.hex_radius
            if max(abs(q), abs(r), abs(q + r)) > n:
                return None, 0.0
            cx, cy = h * math.sqrt(3) * (q + r / 2), h * 1.5 * r
            # Distance to the nearest side of a pointy-top hex, as a fraction of its width.
            inner = h * math.sqrt(3) / 2
            dx, dy = x - cx, y - cy
            worst = max(abs(dx * math.cos(math.radians(a)) + dy * math.sin(math.radians(a))) for a in (0, 60, 120))
            return hex_cell_name(q, r), max(0.0, (inner - worst) / (2 * inner))
        if spec.kind == "table":
            return None, 0.0
        for name, poly in _cells(spec):
            d = cv2.pointPolygonTest(poly, (float(x), float(y)), True)
            if d >= 0:
                return name, d / spec.cell_mm
        return None, 0.0

    def zone_of(self, location: BoardLocation, point_mm: tuple[float, float]) -> str | None:
        """The seat zone ('P1', ...) of a point off the playing area: the seat nearest in bearing."""
        cfg = self.config
        bearings = cfg.seat_bearings or (seat_bearings(cfg.seats) if cfg.seats else ())
        if not bearings:
            return None
        corners = location.spec.playing_corners if location.spec.kind != "table" else np.zeros((1, 2))
        cx, cy = corners.mean(axis=0)
        b = bearing(point_mm[0] - cx, point_mm[1] - cy)
        seat = min(range(len(bearings)), key=lambda k: _angle_gap(b, bearings[k]))
        return f"P{seat + 1}"

    def direction_names(self, spec: BoardSpec) -> dict[str, float]:
        if spec.kind == "hex":
            return HEX_HEADINGS
        return SQUARE_HEADINGS if self.config.directions == 8 else CARDINAL_HEADINGS

    # --- the whole frame -------------------------------------------------------------------

    def map(self, detections: Sequence[Detection], location: BoardLocation, image: str | None = None) -> Observation:
        """The observation of one frame.

        Args:
            detections: the frame's detections (any order).
            location: where the board (or the table plane) is in this frame.
            image: a name for the frame, carried into the observation.
        """
        cfg = self.config
        kept = [d for d in detections if d.confidence >= cfg.min_confidence]
        if not cfg.pieces_overlap:
            kept = _one_detection_per_piece(kept, cfg.same_piece_iou)
        if cfg.check_sizes:
            kept = check_sizes(kept, location.H, location.image_size)
        spec = location.spec
        pieces: list[SeenPiece] = []
        upright: list[int] = []
        lying: list[int] = []
        covered: set[int] = set()
        for d in kept:
            pieces.append(self._piece(d, location))
            if d.kind == PYRAMID:
                (lying if d.pose == Pose.LYING else upright).append(len(pieces) - 1)
                if d.apex is not None and d.keypoint_confidence[0] < cfg.hidden_apex:
                    covered.add(len(pieces) - 1)
        stack_ids = _Counter()
        # A piece may show its contact but not its apex (cut by the frame's edge, or covered by the
        # piece on it); its axis, which the stack tests measure along, is then where the camera puts
        # it. Only the tests use it.
        estimated = _apexes_from_camera(pieces, upright, location, cfg.plane_in_pixels)
        stacked = self._stack(estimated, upright, location, stack_ids, covered)
        pieces = [replace(s, apex=p.apex) for s, p in zip(stacked, pieces)]
        pieces = self._nest(pieces, lying, stack_ids)
        corners = tuple((float(x), float(y)) for x, y in location.corners)
        board = SeenBoard(spec.kind, corners, float(location.confidence))
        return Observation(self.game, tuple(pieces), board, image)

    def _place(self, piece: SeenPiece, location: BoardLocation, ground: tuple[float, float],
               unsure: list[str]) -> SeenPiece:
        spec = location.spec
        cell, margin = self.cell_of(spec, ground)
        zone = None
        if cell is None:
            # Seat zones hold what a seat shows of its plan, which is pyramids; a die or a spare
            # pawn beside the board is on the table, nobody's.
            zone = self.zone_of(location, ground) if piece.is_pyramid else None
        elif margin < self.config.border_fraction:
            unsure.append(f"near the border of {cell}")
        return replace(piece, cell=cell, zone=zone, table_mm=(float(ground[0]), float(ground[1])))

    def _piece(self, d: Detection, location: BoardLocation) -> SeenPiece:
        unsure: list[str] = []
        confidence = d.confidence
        piece = SeenPiece(kind=d.kind, colour=d.colour, size=d.size, pose=d.pose, box=d.box, apex=d.apex,
                          contact=d.contact, value=d.value)
        if d.kind == PYRAMID:
            for name in ("colour", "size", "pose"):
                if getattr(d, name) is None:
                    unsure.append(f"{name} not read")
            if d.confidence < self.config.unsure_below:
                unsure.append(f"found with low confidence ({d.confidence:.2f})")
            if d.colour_confidence is not None:
                confidence = min(confidence, d.colour_confidence)
                if d.colour_confidence < 0.5:
                    unsure.append(f"colour {d.colour.value if d.colour else '?'} uncertain")
            # Only pyramids have keypoints; a token stands where its box's bottom middle is.
            if d.contact is None:
                unsure.append("contact point not seen")
        if d.pose == Pose.LYING:
            if d.apex is None or d.contact is None:
                unsure.append("direction not seen")
                ground = self._to_board(location, [d.ground_point])[0]
            else:
                if ESTIMATED_END in d.keypoint_confidence:
                    # One end lies beyond the picture's edge (detection.with_cut_end_estimated).
                    unsure.append("one end beyond the picture's edge: direction estimated")
                contact, apex = self._to_board(location, [d.contact, d.apex])
                ground = (contact + apex) / 2
                heading = bearing(*(apex - contact))
                name, off = snap_direction(heading, self.direction_names(location.spec))
                if off > self.config.direction_tolerance_deg:
                    unsure.append(f"direction between {name} and a neighbour ({off:.0f} deg off)")
                piece = replace(piece, direction=name)
        else:
            ground = self._to_board(location, [d.ground_point])[0]
        piece = self._place(piece, location, (float(ground[0]), float(ground[1])), unsure)
        return replace(piece, confidence=float(confidence), unsure=tuple(unsure))

    # --- stacks --------------------------------------------------------------------------

    def _fit(self, upper: SeenPiece, lower: SeenPiece, loose: bool = False) -> float | None:
        """How badly `upper`'s contact misses where it would be if it rested on `lower`; None: it cannot.

        `loose` asks only whether the contact lies on `lower`'s axis, between its base and its apex.
        Seen from straight above, an axis is too short to measure a height along: then being on the
        axis is all that can be checked.
        """
        if upper.contact is None or lower.contact is None or lower.apex is None or upper.size is None \
                or lower.size is None or upper.size > lower.size:
            return None
        c0, a0, p = np.array(lower.contact), np.array(lower.apex), np.array(upper.contact)
        axis = a0 - c0
        length = float(np.linalg.norm(axis))
        x1, y1, x2, y2 = lower.box
        width_px = max(length * BASE_MM[lower.size] / HEIGHT_MM[lower.size], ((x2 - x1) + (y2 - y1)) / 3.2, 2.0)
        if length < 0.4 * width_px:
            across = float(np.linalg.norm(p - c0))
            return across / width_px if across <= self.config.axis_tolerance * width_px else None
        unit = axis / length
        t = float((p - c0) @ unit) / length
        across = abs(float((p - c0) @ np.array([-unit[1], unit[0]])))
        if across > self.config.axis_tolerance * width_px:
            return None
        slack = self.config.pixel_slack / length
        if loose:
            return 0.0 if -0.1 - slack <= t <= 1.0 + slack else None
        miss = min(abs(t - h / HEIGHT_MM[lower.size]) for h in rest_heights(lower.size, upper.size))
        if miss > self.config.rest_tolerance + slack:
            return None
        # The upper piece's apex must stand above the lower's apex along the axis.
        if upper.apex is not None and float((np.array(upper.apex) - c0) @ unit) / length < 0.9 - slack:
            return None
        return miss + across / width_px * 0.5

    def _stack(self, pieces: list[SeenPiece], upright: list[int], location: BoardLocation,
               ids: _Counter, covered: set[int] = frozenset()) -> list[SeenPiece]:
        # Group pieces sharing an axis, order each group (sizes first: a larger piece cannot rest on a
        # smaller one), then keep only links where each piece sits where its size says it would rest:
        # a tower standing behind another can line up with it in the picture, but not at that height.
        parent = {k: k for k in upright}

        def find(k: int) -> int:
            while parent[k] != k:
                parent[k] = parent[parent[k]]
                k = parent[k]
            return k

        for u in upright:
            for lo in upright:
                if u != lo and self._fit(pieces[u], pieces[lo], loose=True) is not None:
                    parent[find(u)] = find(lo)
        groups: dict[int, list[int]] = {}
        for k in upright:
            groups.setdefault(find(k), []).append(k)
        out = list(pieces)
        for group in groups.values():
            if len(group) < 2:
                continue
            # Bottom up, each piece joins the chain whose top it rests on best, else starts one:
            # two stacks lined up in the picture interleave in this order.
            chains: list[list[int]] = []
            order = self._order(group, pieces, covered)
            for k in order:
                misses = [(self._chain_fit(pieces, k, c), i) for i, c in enumerate(chains)]
                misses = [(m, i) for m, i in misses if m is not None]
                if misses:
                    chains[min(misses)[1]].append(k)
                else:
                    chains.append([k])
            for chain in chains:
                if len(chain) > 1:
                    chain.sort(key=order.index)
                    self._mark_stack(out, chain, ids.next())
        return out

    @staticmethod
    def _mark_stack(out: list[SeenPiece], chain: list[int], stack_id: int) -> None:
        base = out[chain[0]]
        for level, k in enumerate(chain):
            unsure = list(out[k].unsure)
            if level:
                # An elevated contact projects off its true place: the stack stands where its base does.
                unsure = [u for u in unsure if not u.startswith("near the border")]
                unsure += [u for u in base.unsure if u.startswith("near the border")]
            out[k] = replace(out[k], stack=stack_id, level=level, cell=base.cell, zone=base.zone,
                             table_mm=base.table_mm, unsure=tuple(unsure))

    def _chain_fit(self, pieces: list[SeenPiece], k: int, chain: list[int]) -> float | None:
        """How well piece k continues `chain`: resting on its top, or, when it is the top's size,
        just under the top (equal sizes rise about 5 mm each, less than keypoint noise can order)."""
        fit = self._fit(pieces[k], pieces[chain[-1]])
        if fit is None and pieces[k].size is not None and pieces[k].size == pieces[chain[-1]].size:
            if len(chain) == 1:
                fit = self._fit(pieces[chain[-1]], pieces[k])
            else:
                fit = self._fit(pieces[k], pieces[chain[-2]])
        return fit

    @staticmethod
    def _height(piece: SeenPiece, unit: np.ndarray) -> float:
        """Where a piece stands along a stack's axis (pixels): the mean over every point that rises
        with it, its keypoints and the top and bottom of its box (each has its own noise; among
        pieces of one size the offsets between them are alike, so they cancel in comparisons)."""
        x1, y1, x2, y2 = piece.box
        points = [p for p in (piece.contact, piece.apex) if p is not None]
        if x2 > x1 and y2 > y1:
            points += [((x1 + x2) / 2, y1), ((x1 + x2) / 2, y2)]
        if not points:
            return 0.0
        return float(np.mean([np.array(p) @ unit for p in points]))

    def _order(self, group: list[int], pieces: list[SeenPiece], covered: set[int] = frozenset()) -> list[int]:
        """Bottom to top: larger pieces below (a larger piece cannot rest on a smaller one); among
        equal sizes a piece whose apex is covered is below one whose apex shows (only the top of a
        run of equal pieces shows its apex), then by height along the stack's axis."""
        axes = [np.array(pieces[k].apex) - np.array(pieces[k].contact) for k in group
                if pieces[k].apex is not None and pieces[k].contact is not None]
        axis = np.mean(axes, axis=0) if axes else np.array([0.0, -1.0])
        unit = axis / max(float(np.linalg.norm(axis)), 1e-9)
        return sorted(group, key=lambda k: (-(pieces[k].size or 0), k not in covered,
                                            self._height(pieces[k], unit)))

    def _inside_body(self, piece: SeenPiece, host: SeenPiece) -> bool:
        """Whether a lying piece lies within a larger lying one's body: on the plane, closer than
        `nest_overlap` of the host's length; on a plane in pixels (whose scale is unknown) also when
        its box lies four fifths or more inside the host's."""
        apart = math.dist(piece.table_mm, host.table_mm) if piece.table_mm and host.table_mm else math.inf
        if not self.config.plane_in_pixels:
            return apart < self.config.nest_overlap * HEIGHT_MM[host.size or Size.LARGE]
        if host.apex is not None and host.contact is not None \
                and apart < self.config.nest_overlap * math.dist(host.apex, host.contact):
            return True
        area = box_area(piece.box)
        return area > 0 and box_intersection(piece.box, host.box) / area > 0.8

    def _nest(self, pieces: list[SeenPiece], lying: list[int], ids: _Counter) -> list[SeenPiece]:
        out = list(pieces)
        groups: list[list[int]] = []
        for k in sorted(lying, key=lambda k: -(pieces[k].size or 0)):
            p = pieces[k]
            for group in groups:
                host = pieces[group[0]]
                if (p.size or 0) < (host.size or 4) and self._inside_body(p, host):
                    group.append(k)
                    break
            else:
                groups.append([k])
        for group in groups:
            if len(group) < 2:
                continue
            stack_id = ids.next()
            host = out[group[0]]
            for level, k in enumerate(group):
                unsure = list(out[k].unsure)
                if out[k].direction != host.direction:
                    unsure.append(f"nested piece points {out[k].direction}, its host {host.direction}")
                out[k] = replace(out[k], stack=stack_id, level=level, cell=host.cell, zone=host.zone,
                                 table_mm=host.table_mm, unsure=tuple(unsure))
        return out


def _apexes_from_camera(pieces: list[SeenPiece], upright: list[int], location: BoardLocation,
                        plane_in_pixels: bool = False) -> list[SeenPiece]:
    """The pieces, with each upright pyramid that has a contact point but no apex given the apex it
    would have standing on the plane there (the camera from the board's homography); on a plane in
    pixels, which gives no camera, straight up the picture to its box's top (a camera from the side)."""
    missing = [k for k in upright if pieces[k].apex is None and pieces[k].contact is not None
               and pieces[k].size is not None]
    if not missing:
        return pieces
    if plane_in_pixels:
        return [replace(p, apex=(p.contact[0], p.box[1])) if k in missing else p for k, p in enumerate(pieces)]
    camera = PlaneCamera.from_homography(np.asarray(location.H, float), location.image_size)
    if camera is None:
        return pieces
    out = list(pieces)
    ground = location.image_to_board(np.array([pieces[k].contact for k in missing], float).reshape(-1, 2))
    for k, (x, y) in zip(missing, ground):
        base, tip = camera.project(np.array([[x, y, 0.0], [x, y, HEIGHT_MM[pieces[k].size]]]))
        contact = np.array(pieces[k].contact)
        apex = contact + (tip - base)
        out[k] = replace(pieces[k], apex=(float(apex[0]), float(apex[1])))
    return out


class _Counter:
    def __init__(self) -> None:
        self.value = -1

    def next(self) -> int:
        self.value += 1
        return self.value


def _reaches(above: dict[int, int], start: int, target: int) -> bool:
    """True when following `above` from `start` reaches `target` (linking would close a loop)."""
    k = start
    while k in above:
        k = above[k]
        if k == target:
            return True
    return False


_CELL_CACHE: dict[BoardSpec, list[tuple[str, np.ndarray]]] = {}


def _one_detection_per_piece(detections: Sequence[Detection], same_piece_iou: float) -> list[Detection]:
    """For games whose pyramids never stack or nest: see `MapperConfig.pieces_overlap`."""
    kept: list[Detection] = []
    for d in sorted(detections, key=lambda d: -d.confidence):
        if d.kind == PYRAMID and any(
                (k.kind == PYRAMID and box_iou(d.box, k.box) > same_piece_iou)
                or (k.kind == "pawn" and _inside(d.box, k.box) > 0.8) for k in kept):
            continue
        kept.append(d)
    return kept


def _inside(box: tuple[float, ...], outer: tuple[float, ...]) -> float:
    """The share of `box`'s area that lies within `outer`."""
    area = box_area(box)
    return box_intersection(box, outer) / area if area > 0 else 0.0


def _cells(spec: BoardSpec) -> list[tuple[str, np.ndarray]]:
    if spec not in _CELL_CACHE:
        _CELL_CACHE[spec] = [(name, poly.astype(np.float32)) for name, poly in spec.cells()]
    return _CELL_CACHE[spec]


# --- truth from the scene generator's sidecars (tests and evaluation) ---------------------------

def board_spec_from_truth(truth: dict) -> BoardSpec:
    """The BoardSpec of a rendered scene's board, from its sidecar (a bare table: the "table" kind)."""
    board = truth.get("board")
    if board is None:
        return BoardSpec(kind="table")
    if board["kind"] == "hex":
        return BoardSpec(kind="hex", hex_radius=int(board["radius"]), hex_mm=float(board["hex_mm"]))
    if board["kind"] == "coasters":
        colours = (truth.get("state") or {}).get("coaster_colours")
        return BoardSpec(kind="coasters", cell_mm=float(board["cell_mm"]), coaster_gap_mm=0.0,
                         **({"coaster_colours": tuple(colours)} if colours else {}))
    area = board["area"]
    return BoardSpec(kind="chess", area=f"{area['files']}x{area['ranks']}",
                     area_origin=(area["first_file"], area["first_rank"]), cell_mm=float(board["cell_mm"]))


def location_from_truth(truth: dict) -> BoardLocation:
    """The exact BoardLocation of a rendered scene, from its sidecar (docs/synth.md)."""
    board = truth.get("board")
    size = (int(truth["image"]["width"]), int(truth["image"]["height"]))
    if board is None:
        cam = truth["camera"]
        k = np.array([[cam["fx"], 0, cam["cx"]], [0, cam["fy"], cam["cy"]], [0, 0, 1.0]])
        r, t = np.array(cam["R"], float), np.array(cam["t"], float)
        h = k @ np.column_stack([r[:, 0], r[:, 1], t])
        return BoardLocation(BoardSpec(kind="table"), _rows(h / h[2, 2]), size, 1.0, "truth")
    spec = board_spec_from_truth(truth)
    return BoardLocation(spec, _rows(np.array(board["homography_mm_to_px"], float)), size, 1.0, "truth")


def _rows(m: np.ndarray) -> tuple[tuple[float, float, float], ...]:
    return tuple(tuple(float(v) for v in row) for row in m)


def truth_detections(truth: dict, noise_px: float = 0.0, rng: np.random.Generator | None = None,
                     min_visible: float = 0.15) -> list[Detection]:
    """The detections a perfect detector would make on a rendered scene, with optional pixel noise
    (on keypoints and box edges alike); a keypoint covered in the render is scored 0.2, a shown one 0.9.

    Objects the labels leave out (distractors, less than `min_visible` visible) are left out here too.
    """
    rng = rng or np.random.default_rng(0)
    out = []
    for obj in truth["objects"]:
        if obj["kind"] not in ("pyramid", "pawn", "bead", "d6", "d8"):
            continue
        if obj.get("box_px") is None or obj.get("visible_fraction", 0) < min_visible:
            continue

        def point(name: str):
            if not obj.get(f"{name}_visibility"):
                return None
            x, y = obj[f"{name}_px"]
            return (float(x + rng.normal(0, noise_px)), float(y + rng.normal(0, noise_px))) if noise_px else (x, y)

        pyramid = obj["kind"] == "pyramid"
        box = [float(v) for v in obj["box_px"]]
        if noise_px:
            x1, y1, x2, y2 = (v + float(rng.normal(0, noise_px)) for v in box)
            box = [min(x1, x2), min(y1, y2), max(x1, x2, min(x1, x2) + 0.1), max(y1, y2, min(y1, y2) + 0.1)]
        # A pose model scores a covered keypoint low; the sidecar says which are covered (1) or shown (2).
        seen_score = tuple(0.9 if obj.get(f"{k}_visibility") == 2 else 0.2 for k in ("apex", "contact"))
        out.append(Detection(
            kind=obj["kind"], box=tuple(box), confidence=0.95,
            class_name=obj["kind"], colour=Colour(obj["colour"]) if pyramid else None,
            size=Size.parse(obj["size"]) if pyramid else None, pose=Pose(obj["pose"]) if pyramid else None,
            apex=point("apex"), contact=point("contact"), keypoint_confidence=seen_score))
    return out


def truth_objects(truth: dict, min_visible: float = 0.15) -> list[dict]:
    """The sidecar objects `truth_detections` keeps, in the same order."""
    return [o for o in truth["objects"] if o["kind"] in ("pyramid", "pawn", "bead", "d6", "d8")
            and o.get("box_px") is not None and o.get("visible_fraction", 0) >= min_visible]


def map_truth(game: str, truth: dict, config: MapperConfig | None = None, noise_px: float = 0.0,
              rng: np.random.Generator | None = None) -> Observation:
    """Maps a sidecar's perfect detections: the mapper alone, without a detector (`config_for(game)` by default)."""
    return Mapper(game, config or config_for(game)).map(truth_detections(truth, noise_px, rng),
                                                        location_from_truth(truth))


def config_for(game: str, seats: int = 0) -> MapperConfig:
    """The mapper settings a game needs: 8 directions for Zamboni and ARENA facing, seat zones when given,
    and no overlapping pyramids in Icebomb Arena (its pieces never stack or nest).

    IceTowers is played on a bare table where a lying piece's direction means nothing, so it is
    never a reason for doubt there.
    """
    if game == "icetowers":
        return MapperConfig(directions=4, seats=seats, direction_tolerance_deg=45.0)
    return MapperConfig(directions=8 if game in ("zamboni-wars", "space-arena") else 4, seats=seats,
                        pieces_overlap=game != "icebomb-arena")


def iter_pyramids(observation: Observation) -> Iterable[SeenPiece]:
    return (p for p in observation.pieces if p.kind == PYRAMID)
