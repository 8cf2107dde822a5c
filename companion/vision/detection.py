"""Our own detection type: what the detector saw, in pixels, with no ultralytics types.

The detector converts the model's raw output into `Detection` values once, at its boundary
(after supervision's `Detections`); everything downstream (mapper, tracker, annotators, the
page) sees only these. Values are validated on construction, so a malformed one fails where
it is made, not three stages later.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from companion.pieces import Colour, Pose, Size
from companion.vision.classes import PYRAMID, TOKENS

Point = tuple[float, float]
KINDS = (PYRAMID, *TOKENS)
# The highest face of each kind of die whose top the companion reads.
_DIE_FACES = {"d6": 6, "d8": 8}
# The detector takes a keypoint as seen when the model scores its visibility above this, and as
# surely seen (its place trusted for a direction) from KEYPOINT_SURE.
KEYPOINT_SEEN = 0.3
KEYPOINT_SURE = 0.5
# The visibility score of a keypoint placed by `with_cut_end_estimated`, not seen by the model.
ESTIMATED_END = 0.0


@dataclass(frozen=True, slots=True)
class Detection:
    """One object found in one frame.

    Attributes:
        kind: "pyramid", "pawn", "bead", "d6" or "d8".
        box: (x1, y1, x2, y2) in pixels, x1 <= x2 and y1 <= y2.
        confidence: the detector's score in [0, 1].
        class_name: the class the model predicted (e.g. "red-L-lying").
        colour, size, pose: the pyramid's attributes when the class says them, else None.
        apex: the tip of a pyramid in pixels, or None when unseen.
        contact: where the pyramid meets what it rests on: the base centre of an upright one,
            the middle of the base edge on the table for a lying one; None when unseen.
        keypoint_confidence: (apex, contact) visibility scores in [0, 1].
        colour_confidence: the colour classifier's score when it, not the detector's class, chose the colour.
        value: a die's top face when it was read (a d6's pips counted, a d8's number matched;
            companion/vision/dice.py), else None.
        size_confidence: the size classifier's score for `size` when its reading at the board's
            scale was sure enough to stand (companion/vision/size_reader.py), else None.
    """

    kind: str
    box: tuple[float, float, float, float]
    confidence: float
    class_name: str
    colour: Colour | None = None
    size: Size | None = None
    pose: Pose | None = None
    apex: Point | None = None
    contact: Point | None = None
    keypoint_confidence: tuple[float, float] = (0.0, 0.0)
    colour_confidence: float | None = None
    value: int | None = None
    size_confidence: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown detection kind {self.kind!r} (expected one of {', '.join(KINDS)})")
        if len(self.box) != 4 or not all(math.isfinite(v) for v in self.box):
            raise ValueError(f"box must be four finite numbers, got {self.box!r}")
        x1, y1, x2, y2 = self.box
        if x1 > x2 or y1 > y2:
            raise ValueError(f"box corners out of order: {self.box!r}")
        if not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"confidence {self.confidence} outside [0, 1]")
        for name in ("apex", "contact"):
            point = getattr(self, name)
            if point is not None and (len(point) != 2 or not all(math.isfinite(v) for v in point)):
                raise ValueError(f"{name} must be an (x, y) pair of finite numbers, got {point!r}")
        if self.kind != PYRAMID and (self.colour or self.size or self.pose):
            raise ValueError(f"a {self.kind} has no colour, size or pose")
        if self.size_confidence is not None and (self.size is None or not 0.0 <= self.size_confidence <= 1.0):
            raise ValueError(f"size_confidence {self.size_confidence} needs a size and must lie in [0, 1]")
        if self.value is not None and not 1 <= self.value <= _DIE_FACES.get(self.kind, 0):
            raise ValueError(f"only a die shows a value (a d6 1-6, a d8 1-8), not a {self.kind} showing {self.value}")

    @property
    def centre(self) -> Point:
        x1, y1, x2, y2 = self.box
        return ((x1 + x2) / 2, (y1 + y2) / 2)

    @property
    def ground_point(self) -> Point:
        """Where the object touches the table: the contact keypoint, else the box's bottom middle."""
        if self.contact is not None:
            return self.contact
        x1, _, x2, y2 = self.box
        return ((x1 + x2) / 2, y2)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "class": self.class_name, "confidence": round(self.confidence, 4),
            "box": [round(v, 1) for v in self.box],
            "colour": self.colour.value if self.colour else None,
            "size": int(self.size) if self.size else None,
            "pose": self.pose.value if self.pose else None,
            "apex": None if self.apex is None else [round(v, 1) for v in self.apex],
            "contact": None if self.contact is None else [round(v, 1) for v in self.contact],
            "keypoint_confidence": [round(v, 3) for v in self.keypoint_confidence],
            "colour_confidence": None if self.colour_confidence is None else round(self.colour_confidence, 3),
            "value": self.value,
            "size_confidence": None if self.size_confidence is None else round(self.size_confidence, 3),
        }


def box_area(box: Sequence[float]) -> float:
    return (box[2] - box[0]) * (box[3] - box[1])


def box_intersection(a: Sequence[float], b: Sequence[float]) -> float:
    """The area two (x1, y1, x2, y2) boxes share."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    return ix * iy


def box_iou(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection over union of two (x1, y1, x2, y2) boxes."""
    inter = box_intersection(a, b)
    union = box_area(a) + box_area(b) - inter
    return inter / union if union > 0 else 0.0


def with_cut_end_estimated(detection: Detection, width: int, height: int, edge_px: float = 5.0,
                           doubted_below: float = KEYPOINT_SURE) -> Detection:
    """A lying pyramid whose box meets the picture's edge and that shows one keypoint surely but
    not the other, given the other where its box leaves the picture (the middle of the box's side
    on the edge, or its corner when two sides are), so that it still has a direction.

    The end beyond the edge is out of sight, not covered: the model is never taught where unseen
    ends are, so its guess there is noise (even scored up to `doubted_below`), while a piece cut
    by the edge still points from its seen end towards the edge. The estimated end's visibility
    score is set to 0 (`ESTIMATED_END`), by which the mapper marks the direction unsure. Anything
    else is returned as is.
    """
    if detection.kind != PYRAMID or detection.pose != Pose.LYING:
        return detection
    apex_sure, contact_sure = (detection.apex is not None and detection.keypoint_confidence[0] >= doubted_below,
                               detection.contact is not None and detection.keypoint_confidence[1] >= doubted_below)
    if apex_sure == contact_sure:
        return detection
    seen = detection.apex if apex_sure else detection.contact
    x1, y1, x2, y2 = detection.box
    # (touches, how far the seen end is from that side as a share of the box across it)
    sides = {"left": (x1 <= edge_px, (seen[0] - x1) / max(x2 - x1, 1e-6)),
             "right": (x2 >= width - edge_px, (x2 - seen[0]) / max(x2 - x1, 1e-6)),
             "top": (y1 <= edge_px, (seen[1] - y1) / max(y2 - y1, 1e-6)),
             "bottom": (y2 >= height - edge_px, (y2 - seen[1]) / max(y2 - y1, 1e-6))}
    touched = {side: share for side, (touches, share) in sides.items() if touches}
    # The seen end must lie well away from the edge: one next to it is more likely covered than cut.
    if not touched or max(touched.values()) < 0.4:
        return detection
    x = x1 if "left" in touched else x2 if "right" in touched else (x1 + x2) / 2
    y = y1 if "top" in touched else y2 if "bottom" in touched else (y1 + y2) / 2
    if apex_sure:
        return replace(detection, contact=(float(x), float(y)),
                       keypoint_confidence=(detection.keypoint_confidence[0], ESTIMATED_END))
    return replace(detection, apex=(float(x), float(y)),
                   keypoint_confidence=(ESTIMATED_END, detection.keypoint_confidence[1]))


def without_duplicates(detections: Sequence[Detection], iou_above: float) -> list[Detection]:
    """Keeps one detection per object: a detection whose box overlaps a more confident one's by more
    than `iou_above` is dropped, whatever its class.

    The model's own suppression works class by class, so one pyramid can come out twice, as a large
    and as a medium (or as a small pyramid and a pawn); to the referee that is a piece too many.
    Pieces stacked in a tower or nested overlap far less than the same piece seen twice.
    """
    kept: list[Detection] = []
    for d in sorted(detections, key=lambda d: -d.confidence):
        if all(box_iou(d.box, k.box) <= iou_above for k in kept):
            kept.append(d)
    return kept
