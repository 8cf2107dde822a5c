"""What the tip classifier (companion/vision/tips.py) trains on, from a rendered scene's truth.

'piece': every upright pyramid enough in view whose box sits on another's as a stacked piece's
does (`tips.candidates` over the scene's true boxes: stacked pieces, and pieces standing behind
others in the picture). 'tip': for each upright pyramid at the top of its stack (or alone) and each
smaller size, the part of it above the height where it is as wide as that size's base, which is
what a detector takes for a piece of that size stacked on it; its box is that part projected
through the scene's camera (scripts/make_tip_crops.py cuts the crops).

A detector's own candidates are labelled too (`detected_labels`): as the true box or tip box they
overlap most, so that the classifier also learns from the boxes it will be shown.
"""

from __future__ import annotations

import numpy as np

from companion.geometry import apply, half_base
from companion.pieces import HEIGHT_MM, Size
from companion.synth.camera import Camera
from companion.vision.detection import box_iou
from companion.vision.tips import PIECE, TIP, candidates

Box = tuple[float, float, float, float]


def tip_box(piece: dict, smaller: Size, camera: Camera) -> Box | None:
    """The picture's box of the part of upright `piece` (a sidecar object) that has the outline of
    a `smaller` piece: above where its half-width is that size's; None where it is behind the camera."""
    size = Size.parse(piece["size"])
    height = HEIGHT_MM[size]
    a = half_base(smaller)
    z = height * (1 - a / half_base(size))
    local = np.array([[-a, -a, z], [a, -a, z], [a, a, z], [-a, a, z], [0, 0, height]])
    px = camera.project(apply(np.asarray(piece["matrix"], float).reshape(4, 4), local))
    if not np.isfinite(px).all():
        return None
    return (float(px[:, 0].min()), float(px[:, 1].min()), float(px[:, 0].max()), float(px[:, 1].max()))


def stack_tops(objects: list[dict]) -> list[dict]:
    """The upright pyramids with nothing stacked on them."""
    top_level: dict[int, int] = {}
    for obj in objects:
        if "stack" in obj:
            top_level[obj["stack"]] = max(top_level.get(obj["stack"], -1), obj.get("level", 0))
    return [obj for obj in objects if "stack" not in obj or obj.get("level", 0) == top_level[obj["stack"]]]


def _upright(truth: dict) -> list[dict]:
    return [obj for obj in truth["objects"] if obj.get("kind") == "pyramid" and obj.get("pose") == "upright"
            and obj.get("box_px") and obj.get("matrix")]


def labelled_boxes(truth: dict, min_visible: float) -> list[tuple[str, Box]]:
    """(class, box) of every crop the scene gives (see the module's text)."""
    upright = _upright(truth)
    real = [tuple(obj["box_px"]) for obj in upright]
    out = [(PIECE, real[k]) for k in candidates(real) if upright[k].get("visible_fraction", 0) >= min_visible]
    return out + _tips(truth, upright, min_visible)


def _tips(truth: dict, upright: list[dict], min_visible: float) -> list[tuple[str, Box]]:
    camera = Camera.from_json(truth["camera"])
    out = []
    for top in stack_tops(upright):
        if top.get("visible_fraction", 0) < min_visible:
            continue
        for smaller in (s for s in Size if s < Size.parse(top["size"])):
            box = tip_box(top, smaller, camera)
            # Kept where the candidate test finds it sitting on its piece, as at run time.
            if box is not None and candidates([tuple(top["box_px"]), box]) == [1]:
                out.append((TIP, box))
    return out


def detected_labels(truth: dict, boxes: list[Box], min_iou: float = 0.5) -> list[str | None]:
    """Each detected box's class: that of the true piece's box or the tip box (of a piece at least
    a little in view) it overlaps most, when by at least `min_iou`; else None (neither: not taught)."""
    upright = _upright(truth)
    known = [(PIECE, tuple(obj["box_px"])) for obj in upright] + _tips(truth, upright, 0.05)
    out: list[str | None] = []
    for box in boxes:
        overlaps = [(box_iou(box, b), label) for label, b in known]
        best = max(overlaps, default=(0.0, None))
        out.append(best[1] if best[0] >= min_iou else None)
    return out
