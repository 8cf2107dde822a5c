"""The `recognize` use case: images in, observations out (board, pieces, cells, stacks, confidence).

`Recognizer` joins board localisation (`companion.vision.locate`), a detector (any callable from a
BGR frame to `Detection`s, so tests and tools can inject one without a model) and the mapper.
A frame where no board is found still yields an observation: the pieces in pixels, stacks and
nests grouped in the picture, no cells, marked unsure, with the reason in `notes`. On a bare table
(IceTowers) without its marker sheet the towers are grouped the same way: a score needs which pieces
stand on which, not where.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np

from companion.vision.calibrate import CameraIntrinsics
from companion.vision.detection import Detection
from companion.vision.dice import dice_read_on_board
from companion.models import COLOUR_WEIGHTS, DICE_WEIGHTS, SIZE_WEIGHTS, TIP_WEIGHTS, detector_for_inference
from companion.vision.locate import BoardLocation, BoardNotFound, BoardSpec, Locator, board_outline
from companion.vision.region import detect_near_board
from companion.vision.size_reader import sizes_read_on_board
from companion.vision.mapper import Mapper, MapperConfig, config_for
from companion.vision.observation import Observation

DetectFn = Callable[[np.ndarray], list[Detection]]
DEFAULT_MODEL = detector_for_inference()
DEFAULT_COLOUR_MODEL = COLOUR_WEIGHTS
DEFAULT_SIZE_MODEL = SIZE_WEIGHTS
DEFAULT_DICE_MODEL = DICE_WEIGHTS
DEFAULT_TIP_MODEL = TIP_WEIGHTS
BOARDS = {"icebomb-arena": "chess", "space-arena": "chess", "zamboni-wars": "coasters", "ice-arena": "hex",
          "icetowers": "table"}


# On a bare table without its marker sheet the picture itself stands in for the table's plane.
PICTURE_PLANE = "picture"
PICTURE_PLANE_NOTE = "the table's plane is unknown: towers grouped in the picture, no positions"


def picture_plane(shape: Sequence[int]) -> BoardLocation:
    """A bare table's plane taken as the picture's own (identity homography: pixels for millimetres,
    `shape` the frame's), for when its marker sheet is not in view."""
    h, w = shape[:2]
    return BoardLocation(BoardSpec(kind="table"), ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)),
                         (w, h), 0.0, PICTURE_PLANE)


def is_picture_plane(location: BoardLocation) -> bool:
    return location.method == PICTURE_PLANE


def towers_in_the_picture(mapper: Mapper, detections: Sequence[Detection], location: BoardLocation,
                          name: str | None, notes: tuple[str, ...] = (PICTURE_PLANE_NOTE,)) -> Observation:
    """`mapper`'s observation on a `picture_plane`: stacking is judged from pixels (contact points on
    axes), so towers come out right without the table's plane, while sizes are not checked against a
    geometry (there is none), no piece gets table coordinates, and no seat zone is claimed (zones are
    bearings on the table's plane)."""
    in_pixels = Mapper(mapper.game, replace(mapper.config, check_sizes=False, seats=0, seat_bearings=(),
                                            plane_in_pixels=True))
    seen = in_pixels.map(detections, location, name)
    pieces = tuple(replace(p, table_mm=None) for p in seen.pieces)
    return Observation(mapper.game, pieces, None, name, notes)


def pieces_in_the_picture(mapper: Mapper, detections: Sequence[Detection], location: BoardLocation,
                          name: str | None, notes: tuple[str, ...]) -> Observation:
    """A board game's observation when its board is not found: stacks and nests still grouped in
    the picture (`towers_in_the_picture`), but no cell, zone or direction (those need the board), and
    every piece unsure."""
    seen = towers_in_the_picture(mapper, detections, location, name, notes)
    # Bearings on the picture's plane are not the board's directions: doubts about them go too.
    pieces = tuple(replace(p, direction=None, cell=None, zone=None,
                           unsure=("board not found",) + tuple(u for u in p.unsure if not u.startswith(
                               ("direction between", "nested piece points"))))
                   for p in seen.pieces)
    return Observation(mapper.game, pieces, None, name, notes)


def board_spec_for(game: str, **options) -> BoardSpec:
    """The board a game is played on, with any BoardSpec field overridden by `options`."""
    if game not in BOARDS:
        raise ValueError(f"unknown game {game!r} (expected one of: {', '.join(BOARDS)})")
    return BoardSpec(kind=BOARDS[game], **{k: v for k, v in options.items() if v is not None})


@dataclass
class Recognizer:
    """Turns frames into observations of one game's table."""

    game: str
    detect: DetectFn
    spec: BoardSpec
    intrinsics: CameraIntrinsics | None = None
    mapper_config: MapperConfig | None = None
    # Look within the board's region (companion/vision/region.py); off for detections that are
    # already in whole-frame pixels whatever image they are given (saved ones).
    look_closer: bool = True
    # (frame, kind) -> BoardGuess | None: the board model (companion/vision/board_finder.py), or None.
    board_model: Callable | None = None
    _locator: Locator | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._locator = Locator(self.spec, self.intrinsics, board_model=self.board_model)
        self._mapper = Mapper(self.game, self.mapper_config or config_for(self.game))

    def observe(self, frame: np.ndarray, name: str | None = None) -> Observation:
        """The observation of one BGR frame (undistorted first when intrinsics are known)."""
        prepared = self._locator.prepare(frame)
        try:
            location = self._locator.locate(prepared, prepared=True)
        except BoardNotFound as exc:
            detections = detect_near_board(self.detect, prepared, None) if self.look_closer else self.detect(prepared)
            if self.spec.kind == "table":
                return towers_in_the_picture(self._mapper, detections, picture_plane(prepared.shape), name,
                                             (str(exc), PICTURE_PLANE_NOTE))
            return pieces_in_the_picture(self._mapper, detections, picture_plane(prepared.shape), name, (str(exc),))
        detections = (detect_near_board(self.detect, prepared, board_outline(location),
                                        seat_zones=self._mapper.config.seats > 0) if self.look_closer
                      else self.detect(prepared))
        detections = sizes_read_on_board(self.detect, prepared, detections, location.H)
        return self._mapper.map(dice_read_on_board(self.detect, prepared, detections, location.H), location, name)


def detections_from_json(path: str | Path) -> DetectFn:
    """A stand-in detector that returns the detections saved in a JSON file (a list of `Detection.to_json`)."""
    from companion.pieces import Colour, Pose, Size

    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of detections")
    out = []
    for i, d in enumerate(data, start=1):
        try:
            out.append(Detection(
                kind=d["kind"], box=tuple(d["box"]), confidence=float(d.get("confidence", 1.0)),
                class_name=d.get("class", d["kind"]), colour=Colour.parse(d["colour"]) if d.get("colour") else None,
                size=Size.parse(str(d["size"])) if d.get("size") else None, pose=Pose(d["pose"]) if d.get("pose") else None,
                apex=tuple(d["apex"]) if d.get("apex") else None, contact=tuple(d["contact"]) if d.get("contact") else None,
                keypoint_confidence=tuple(d.get("keypoint_confidence", (1.0, 1.0))),
                size_confidence=d.get("size_confidence")))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path}: detection {i}: {exc}") from None
    return lambda frame: list(out)


def model_detector(weights: Path = DEFAULT_MODEL, colours: Path | None = DEFAULT_COLOUR_MODEL,
                   sizes: Path | None = DEFAULT_SIZE_MODEL, dice: Path | None = DEFAULT_DICE_MODEL,
                   tips: Path | None = DEFAULT_TIP_MODEL) -> DetectFn:
    """The trained detector (and the colour, size, dice face and tip classifiers, when their weights exist)."""
    from companion.vision.detect import Detector, DetectorConfig

    colour_of = size_of = None
    if colours is not None and Path(colours).exists():
        from companion.vision.colour import ColourClassifier

        colour_of = ColourClassifier(Path(colours))
    if sizes is not None and Path(sizes).exists():
        from companion.vision.size_reader import SizeClassifier

        size_of = SizeClassifier(Path(sizes))
    faces_of = None
    if dice is not None and Path(dice).exists():
        from companion.vision.dice import DiceFaceClassifier

        faces_of = DiceFaceClassifier(Path(dice))
    tips_of = None
    if tips is not None and Path(tips).exists():
        from companion.vision.tips import TipClassifier

        tips_of = TipClassifier(Path(tips))
    return Detector(DetectorConfig(weights=Path(weights)), colour_of, size_of, faces_of, tips_of)


def annotate(frame: np.ndarray, observation: Observation) -> np.ndarray:
    """A copy of the frame with the board outline and each piece's box, cell and direction drawn."""
    out = frame.copy()
    if observation.board is not None:
        pts = np.round(np.array(observation.board.corners)).astype(np.int32)
        cv2.polylines(out, [pts], True, (0, 255, 255), 2)
    for p in observation.pieces:
        x1, y1, x2, y2 = (int(round(v)) for v in p.box)
        colour = (0, 0, 255) if p.unsure else (0, 200, 0)
        cv2.rectangle(out, (x1, y1), (x2, y2), colour, 1)
        label = p.piece_text + (f" {p.direction}" if p.direction else "") + f" {p.where}"
        if p.level:
            label += f"#{p.level}"
        cv2.putText(out, label, (x1, max(10, y1 - 3)), cv2.FONT_HERSHEY_SIMPLEX, 0.35, colour, 1, cv2.LINE_AA)
        if p.apex is not None and p.contact is not None:
            cv2.arrowedLine(out, tuple(int(v) for v in p.contact), tuple(int(v) for v in p.apex), (255, 0, 0), 1)
    return out


@dataclass(frozen=True)
class Unreadable:
    """An image file that could not be read, and why: it takes its place among the observations,
    so that one bad file in a batch loses none of the others."""

    image: str
    reason: str

    def to_json(self) -> dict:
        return {"image": self.image, "error": self.reason}


def recognize_files(recognizer: Recognizer, images: Sequence[Path],
                    annotate_to: Path | None = None) -> list[Observation | Unreadable]:
    """Observations of image files, one each, in order (an `Unreadable` for a file that cannot be
    read); annotated copies written under `annotate_to` when given."""
    from companion.sources import read_image_file

    out: list[Observation | Unreadable] = []
    for path in images:
        frame, problem = read_image_file(path)
        if frame is None:
            out.append(Unreadable(str(path), problem or "not a readable image"))
            continue
        observation = recognizer.observe(frame, str(path))
        out.append(observation)
        if annotate_to is not None:
            target = annotate_to
            if len(images) > 1 or annotate_to.is_dir():
                annotate_to.mkdir(parents=True, exist_ok=True)
                target = annotate_to / (Path(path).stem + "-annotated.png")
            cv2.imwrite(str(target), annotate(frame, observation))
    return out


# --- the `companion recognize` sub-command ---------------------------------------------------

def add_recognize_command(sub) -> None:
    """Adds `recognize IMAGE... --game G [--calibration FILE] [--json] [--annotate OUT]`."""
    p = sub.add_parser("recognize", help="print the observation (board, pieces, cells, stacks) of table images")
    p.add_argument("images", nargs="+", type=Path, help="image files")
    p.add_argument("--game", required=True, choices=sorted(BOARDS), help="the game on the table")
    p.add_argument("--calibration", type=Path, help="camera intrinsics (from `companion calibrate camera`)")
    p.add_argument("--json", action="store_true", help="print JSON (a list, one observation per image, when several)")
    p.add_argument("--position", action="store_true",
                   help="print only the game's position (for IceTowers: what `companion score` reads)")
    p.add_argument("--annotate", type=Path, metavar="OUT", help="write annotated images (a file, or a folder)")
    p.add_argument("--model", type=Path, default=DEFAULT_MODEL, help="detector weights (default %(default)s)")
    p.add_argument("--detections", type=Path, help="read detections from a JSON file instead of running a model")
    p.add_argument("--seats", type=int, default=0, help="seats round the board, for seat zones (Icebomb Arena)")
    p.add_argument("--area", help="chess playing area, e.g. 8x8, 6x6, 8x4")
    p.add_argument("--cell-mm", type=float, help="cell size in millimetres")
    p.add_argument("--a1", dest="a1_hint", help="image corner nearest a1: bottom-left, bottom-right, top-right, top-left")
    p.set_defaults(func=cmd_recognize)


def cmd_recognize(args) -> int:
    """Prints one observation per image; exit 1 when any is unsure, 2 when an input cannot be read
    (its entry then names the image and the error, and the other images are recognised all the same)."""
    import sys

    from companion.vision.calibrate import load_intrinsics
    from companion.vision.detect import ModelError

    try:
        spec = board_spec_for(args.game, area=args.area, cell_mm=args.cell_mm, a1_hint=args.a1_hint)
        intrinsics = load_intrinsics(args.calibration) if args.calibration else None
        detect = detections_from_json(args.detections) if args.detections else model_detector(args.model)
    except (ValueError, ModelError) as exc:
        print(f"companion recognize: {exc}", file=sys.stderr)
        return 2
    base = config_for(args.game, args.seats)
    board_model = None
    if not args.detections:
        from companion.vision.board_finder import PLACED_KINDS, shipped_board_finder

        board_model = shipped_board_finder() if spec.kind in PLACED_KINDS else None
    recognizer = Recognizer(args.game, detect, spec, intrinsics, base, look_closer=not args.detections,
                            board_model=board_model)
    results = recognize_files(recognizer, args.images, args.annotate)
    unreadable = [r for r in results if isinstance(r, Unreadable)]
    for r in unreadable:
        print(f"companion recognize: {r.image}: {r.reason}", file=sys.stderr)
    if args.json or args.position:
        data = [r.to_json() if isinstance(r, Unreadable) or not args.position else r.to_json()["position"]
                for r in results]
        json.dump(data[0] if len(data) == 1 else data, sys.stdout, indent=2)
        print()
    else:
        for o in results:
            if isinstance(o, Unreadable):
                print(f"{o.image}: {o.reason}")
                continue
            print(f"{o.image}: board {o.board.kind + f' (confidence {o.board.confidence:.2f})' if o.board else 'not found'}"
                  + ("" if not o.notes else " - " + "; ".join(o.notes)))
            for p in o.pieces:
                where = p.where + (f" level {p.level}" if p.stack is not None else "")
                extra = f" {p.pose.value}" if p.pose else ""
                extra += f" {p.direction}" if p.direction else ""
                doubt = f"  UNSURE: {'; '.join(p.unsure)}" if p.unsure else ""
                print(f"  {p.piece_text:10}{extra:12} {where:12} {p.confidence:.2f}{doubt}")
    if unreadable:
        return 2
    return 1 if any(o.unsure for o in results) else 0
