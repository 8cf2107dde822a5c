"""Looking closer: run the detector on the part of the frame where the pieces are.

A webcam a metre above the table sees a small pyramid as a dozen pixels; shrunk to the
detector's input size the whole frame leaves it a handful. Cropping to the located board (with a
margin for pieces standing up and for the revealed plans beside it) gives the detector two to
three times the pixels per piece at the same cost. Without a board (IceTowers' bare table) a
first pass on the whole frame finds where the pieces are, and a second pass looks there.

The detector is trained on such crops (`companion/synth/crops.py` makes them from full renders
with the same `board_region`), so what it sees at run time matches what it learnt.

A detector may also offer `detect.closely(frame)`: the same model with a larger input, which
finds small pieces far better (a whole board in view, a table seen from a metre away) but big
ones worse (a close-up). It is used on a board's region, and on the second look at a bare table
when the first look found small pieces. A plain function has none, and is used throughout.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from companion.vision.detection import Detection, box_iou

DetectFn = Callable[[np.ndarray], list[Detection]]

# How far beyond the board's outline to look, as a share of the outline's larger side: pieces
# standing near the edge rise above it in the picture, and Icebomb Arena's revealed plans lie
# in front of each seat. On the validation renders 0.2 found more pieces than 0.25 or 0.3 (a wider
# crop shrinks every piece), Icebomb Arena's included.
BOARD_MARGIN = 0.2
# For games whose seat zones matter (Icebomb Arena's revealed plans lie in front of each seat,
# often further out than BOARD_MARGIN reaches), a second look this far round the board; of it, only
# what lies outside the board's region is kept.
SEAT_ZONE_MARGIN = 0.6
# An outer-look detection overlapping a board-region one by more than this is the same piece (cut by
# the board region's edge): the board region's is kept.
SAME_PIECE_IOU = 0.3
# Around what a first pass found, as a share of the found area's larger side (at least MIN_PAD px).
FOUND_MARGIN = 0.25
MIN_PAD = 24
# A second pass pays only when the crop is clearly smaller than the frame.
ZOOM_WORTH_IT = 0.6
# Pieces whose median larger side is under this share of the larger side of the region around
# them are small: the detector's close look (when it has one) sees them better. On the test
# renders, close-ups have a median of 0.12 (a quarter under 0.09) and IceTowers tables about 0.06
# (a quarter over 0.08).
SMALL_PIECE_SHARE = 0.08


@dataclass(frozen=True)
class Region:
    """An axis-aligned rectangle of whole pixels inside a frame: [x0, x1) x [y0, y1)."""

    x0: int
    y0: int
    x1: int
    y1: int

    def __post_init__(self) -> None:
        if not (self.x1 > self.x0 and self.y1 > self.y0):
            raise ValueError(f"empty region {self!r}")

    @property
    def width(self) -> int:
        return self.x1 - self.x0

    @property
    def height(self) -> int:
        return self.y1 - self.y0

    def area_share(self, frame_shape: Sequence[int]) -> float:
        return self.width * self.height / float(frame_shape[0] * frame_shape[1])

    def contains(self, point: tuple[float, float]) -> bool:
        return self.x0 <= point[0] < self.x1 and self.y0 <= point[1] < self.y1

    def crop(self, frame: np.ndarray) -> np.ndarray:
        return frame[self.y0:self.y1, self.x0:self.x1]


def region_around(points: np.ndarray, frame_shape: Sequence[int], margin: float, min_pad: int = 0) -> Region | None:
    """The rectangle around `points` (N x 2 pixels) grown by `margin` of its larger side, clipped
    to the frame; None when it misses the frame."""
    pts = np.asarray(points, float).reshape(-1, 2)
    pts = pts[np.isfinite(pts).all(axis=1)]
    if len(pts) == 0:
        return None
    (x0, y0), (x1, y1) = pts.min(axis=0), pts.max(axis=0)
    pad = max(margin * max(x1 - x0, y1 - y0), float(min_pad))
    h, w = int(frame_shape[0]), int(frame_shape[1])
    rx0, ry0 = max(0, int(np.floor(x0 - pad))), max(0, int(np.floor(y0 - pad)))
    rx1, ry1 = min(w, int(np.ceil(x1 + pad))), min(h, int(np.ceil(y1 + pad)))
    if rx1 - rx0 < 2 or ry1 - ry0 < 2:
        return None
    return Region(rx0, ry0, rx1, ry1)


def board_region(outline_px: np.ndarray, frame_shape: Sequence[int], margin: float = BOARD_MARGIN) -> Region | None:
    """Where to look for pieces on a located board: its image outline plus `margin`."""
    return region_around(outline_px, frame_shape, margin)


def shifted(detection: Detection, dx: float, dy: float) -> Detection:
    """The same detection in a frame whose origin is (-dx, -dy) from the crop's."""
    x0, y0, x1, y1 = detection.box
    move = (lambda p: None if p is None else (p[0] + dx, p[1] + dy))
    return replace(detection, box=(x0 + dx, y0 + dy, x1 + dx, y1 + dy), apex=move(detection.apex),
                   contact=move(detection.contact))


def detect_in_region(detect: DetectFn, frame: np.ndarray, region: Region | None) -> list[Detection]:
    """`detect` on the region's pixels, with the detections in whole-frame pixels."""
    if region is None:
        return detect(frame)
    crop = np.ascontiguousarray(region.crop(frame))
    return [shifted(d, region.x0, region.y0) for d in detect(crop)]


def _closely(detect: DetectFn) -> DetectFn:
    return getattr(detect, "closely", None) or detect


def pieces_are_small(detections: Sequence[Detection], region: Region) -> bool:
    """Whether the median piece's larger side is under SMALL_PIECE_SHARE of the region's."""
    sides = [max(d.box[2] - d.box[0], d.box[3] - d.box[1]) for d in detections]
    return bool(sides) and float(np.median(sides)) < SMALL_PIECE_SHARE * max(region.width, region.height)


def detect_zoomed(detect: DetectFn, frame: np.ndarray) -> list[Detection]:
    """For a table without a board: find the pieces on the whole frame, then look again where
    they are (when that is clearly smaller than the frame, or the pieces are small), closely
    when they are small."""
    first = detect(frame)
    if not first:
        return first
    corners = np.array([[d.box[0], d.box[1]] for d in first] + [[d.box[2], d.box[3]] for d in first])
    region = region_around(corners, frame.shape, FOUND_MARGIN, MIN_PAD)
    if region is None:
        return first
    small = pieces_are_small(first, region)
    if region.area_share(frame.shape) > ZOOM_WORTH_IT and not (small and hasattr(detect, "closely")):
        return first
    return detect_in_region(_closely(detect) if small else detect, frame, region)


def detect_near_board(detect: DetectFn, frame: np.ndarray, outline_px: np.ndarray | None,
                      seat_zones: bool = False) -> list[Detection]:
    """Within the board's region when there is a board (its image outline), closely when the
    detector can; else zoomed in on where the pieces are (a bare table, or a board not found).

    `seat_zones`: also look further round the board (SEAT_ZONE_MARGIN) and add what lies beyond
    the board's region: the pieces in front of the seats.
    """
    if outline_px is None:
        return detect_zoomed(detect, frame)
    inner = board_region(outline_px, frame.shape)
    found = detect_in_region(_closely(detect), frame, inner)
    if not seat_zones or inner is None:
        return found
    outer = board_region(outline_px, frame.shape, SEAT_ZONE_MARGIN)
    if outer is None or outer == inner:
        return found
    beyond = [d for d in detect_in_region(_closely(detect), frame, outer)
              if not inner.contains(d.centre) and all(box_iou(d.box, k.box) <= SAME_PIECE_IOU for k in found)]
    return found + beyond
