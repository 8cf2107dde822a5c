"""A die's top face read where the view allows: a d6's pips, a d8's number.

The detector finds a d6 but not its value (the die shows any face, and a class per face would
split a rare class six ways). Once the table's plane is known, its homography gives the camera
(companion/vision/sizing.py), and with it where the die's top face is: the middle of the detected
box is about the die's middle, half a die above the table; the top face's middle is half a die
higher, and its pips lie within a circle round it. Pips are the small blobs there that differ
from the face's own tone (dark on a light die, light on a dark one). Pips on the side faces lie
outside that circle. A die too small in the picture for its pips to be told apart, or a count
that is not 1-6, stays unread (None): the referee then goes without it.

An eight-sided die rests on a face, so its top is a triangle parallel to the table, a die's height
above it, with the number in its middle. That face is seen again as from straight above (the plane's
homography lifted to the face's height) and its ink matched, at every turn, against the numbers 1-8
drawn in two plain lettering styles; a die too small for its number to be read, or whose best match
is weak or hardly better than another number's, stays unread.

Where its weights are shipped, a small classifier reads both instead (`DiceFaceClassifier`, session 39):
the same top face seen from straight above (`top_face_patch`) to 'd6-1' ... 'd8-8'. It reads over
twice as many d8s right as matching does and half as many d6s again as counting, far fewer wrong; a reading it
is less sure of stands where counting or matching agrees with it (docs/pipeline.md, "Reading dice with
a classifier").

Vision code: this says what the die shows, never whether a roll was legal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

import cv2
import numpy as np

from companion.vision.crop_classifier import CropClassifier
from companion.vision.detection import Detection
from companion.vision.sizing import PlaneCamera


@dataclass(frozen=True)
class DiceConfig:
    """Attributes:
        die_mm: a d6's side (game dice are 12-16 mm).
        pip_mm: a pip's diameter.
        top_reach: pips lie within this share of the side from the top face's middle (the corner
            pips of a 5 or 6 are 0.38 of the side away; the rest is room for the camera's estimate
            of where the face is; side faces' pips begin at 0.5).
        close_reach: when more than six pips lie within `top_reach`, they are counted again within this.
        min_pip_px: a pip narrower than this in the picture is not counted.
        contrast: a pixel belongs to a pip when it differs from the face's tone by this much (0-255).

    Chosen together (session 19, `python scripts/eval_dice.py`, true boxes) on the referee, pieces-hd
    and mix-s18 renders, where a reach of 0.53 reads fewer dice and 0.56 takes in side faces' pips: on
    582 dice of renders never used to choose them (`scripts/eval_dice.py datasets/mix-s19
    datasets/stacks-s19`) 3 px, 0.5 and 0.46 read 71 % of the dice, 86.7 % of those right (61.7 % of all),
    against 42 % and 87.0 % (36.9 %) with session 8's 4 px and 0.46, and 60.8 % of all with 3 px and 0.48.
    """

    die_mm: float = 15.0
    pip_mm: float = 3.0
    top_reach: float = 0.5
    close_reach: float = 0.46
    min_pip_px: float = 3.0
    contrast: float = 45.0


def read_dice(frame: np.ndarray, detections: Sequence[Detection], plane_to_image: np.ndarray,
              focal: float | None = None, config: DiceConfig = DiceConfig(),
              faces: DiceFaceClassifier | None = None) -> list[Detection]:
    """The detections with each d6's and d8's `value` read where the view allows (others unchanged).

    Args:
        frame: the BGR frame the detections were made in.
        plane_to_image: homography from the table's plane (mm) to the frame's pixels.
        focal: the camera's focal length in pixels when its intrinsics are known.
        faces: the dice face classifier, which then reads every die (a reading it is less sure of
            stands where the pips counted or the number matched agree); without it pips are counted
            and numbers matched against drawn ones.
    """
    h, w = frame.shape[:2]
    camera = PlaneCamera.from_homography(plane_to_image, (w, h), focal)
    if camera is None or not any(d.kind in ("d6", "d8") for d in detections):
        return list(detections)
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    readers = {"d6": lambda box: read_d6(gray, box, camera, config), "d8": lambda box: read_d8(gray, box, camera)}
    if faces is None:
        return [replace(d, value=readers[d.kind](d.box)) if d.kind in readers else d for d in detections]
    colour = frame if frame.ndim == 3 else cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    out = list(detections)
    chosen = [k for k, d in enumerate(out) if d.kind in readers]
    for k, (best, probability) in zip(chosen, faces.read(colour, [(out[k].kind, out[k].box) for k in chosen], camera)):
        kind, value = out[k].kind, None
        if best is not None and probability >= MIN_FACE_PROBABILITY[kind]:
            value = best
        elif best is not None and probability >= MIN_AGREED_PROBABILITY and readers[kind](out[k].box) == best:
            value = best  # two readers that err differently agree
        out[k] = replace(out[k], value=value)
    return out


def dice_read_on_board(detect, frame: np.ndarray, detections: Sequence[Detection],
                       plane_to_image: np.ndarray) -> list[Detection]:
    """`read_dice` with the face classifier that `detect` (a detector function) carries
    (`Detector.faces_of`), else with the pips counted and numbers matched: stand-in detectors (saved
    detections, the tests' fakes) and a detector without the classifier's weights carry none."""
    return read_dice(frame, detections, plane_to_image, faces=getattr(detect, "faces_of", None))


def read_d6(gray: np.ndarray, box: Sequence[float], camera: PlaneCamera,
            config: DiceConfig = DiceConfig()) -> int | None:
    """The pips on top of the d6 whose box is `box` in `gray`, or None when they cannot be counted."""
    fitted = fitted_d6(box, camera, config)
    if fitted is None:
        return None
    middle, scale = fitted
    side = config.die_mm * scale
    top = np.array([middle[0], middle[1], side])
    centre, mm_px = _seen_at(camera, top)
    pip_mm = config.pip_mm * side / config.die_mm
    if pip_mm * mm_px < config.min_pip_px:
        return None
    reach = 0.6 * side * mm_px
    x0, y0 = int(max(0, centre[0] - reach - 2)), int(max(0, centre[1] - reach - 2))
    x1, y1 = int(min(gray.shape[1], centre[0] + reach + 3)), int(min(gray.shape[0], centre[1] + reach + 3))
    if x1 - x0 < 4 or y1 - y0 < 4:
        return None
    patch = gray[y0:y1, x0:x1].astype(np.float32)
    yy, xx = np.mgrid[y0:y1, x0:x1]
    # The circle round the top's middle, squashed as the camera sees the face.
    reach_mm = _reach_on_top(xx, yy, top, camera)
    face = reach_mm <= 0.35 * side
    if face.sum() < 10:
        return None
    tone = float(np.median(patch[face]))
    pips = ((np.abs(patch - tone) > config.contrast) & (reach_mm <= 0.6 * side)).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(pips, connectivity=8)
    pip_area = math.pi * (pip_mm * mm_px / 2) ** 2
    blobs = [(stats[k, cv2.CC_STAT_AREA], float(np.median(reach_mm[labels == k]))) for k in range(1, count)
             if stats[k, cv2.CC_STAT_AREA] >= 0.3 * pip_area]
    # A pip of the top face has its middle on it (side faces' pips map beyond its edge). Where the
    # face's estimate is off, a side pip can come within reach: more than six is read again closer in.
    for reach in (config.top_reach, config.close_reach):
        # Pips a pixel apart in a small picture run together: a blob counts as the pips its area holds.
        found = sum(max(1, round(area / pip_area)) for area, at in blobs if at <= reach * side)
        if found <= 6:
            break
    return found if 1 <= found <= 6 else None


@dataclass(frozen=True)
class D8Config:
    """Attributes:
        die_mm: a d8's size from vertex to opposite vertex (game d8s are 16-20 mm).
        number_mm: how tall its numbers are (about three quarters of the face's inscribed circle).
        min_number_px: a number shorter than this in the picture is not read.
        min_score: the best match's normalised correlation must reach this ...
        margin: ... and beat the best match of any other number by this much.
        face_reach: how far from the top face's estimated middle ink is looked for, as a share of
            the face's inscribed circle (the middle is estimated from the box and may be a millimetre off).
    """

    die_mm: float = 18.0
    number_mm: float = 5.4
    min_number_px: float = 10.0
    min_score: float = 0.45
    margin: float = 0.04
    face_reach: float = 0.95


# The top face is resampled at this many pixels per millimetre of a die of `D8Config.die_mm`, so
# that one set of templates serves dice of every size and distance.
_D8_PX_PER_MM = 5.0
_D8_TURNS = 24  # templates every 15 degrees: a number turned 7.5 degrees still matches well


def read_d8(gray: np.ndarray, box: Sequence[float], camera: PlaneCamera,
            config: D8Config = D8Config()) -> int | None:
    """The number on top of the d8 whose box is `box` in `gray`, or None when it cannot be read."""
    fitted = fitted_d8(box, camera, config)
    if fitted is None:
        return None
    middle, scale = fitted
    edge = config.die_mm / math.sqrt(2) * scale
    height = edge * math.sqrt(2 / 3)
    top = np.array([middle[0], middle[1], height])
    _, mm_px = _seen_at(camera, top)
    if config.number_mm * scale * mm_px < config.min_number_px:
        return None
    face = _top_face_seen_from_above(gray, camera, top, scale)
    inradius_px = config.die_mm / math.sqrt(2) / (2 * math.sqrt(3)) * _D8_PX_PER_MM  # the patch's scale is the die's
    n = face.shape[0]
    yy, xx = np.mgrid[:n, :n] - (n - 1) / 2
    inside = np.hypot(xx, yy) <= config.face_reach * inradius_px
    tone = float(np.median(face[inside]))
    off = face - tone
    if (np.abs(off[inside]) > 20).sum() < 8:
        return None  # no ink to be seen (a blank face, glare, or a face not where it was sought)
    values, bank, side = _d8_templates(config.number_mm)
    scores = np.full(len(values), -1.0)
    # Ink is dark on a light die and light on a dark one; which, the face's tone says poorly (a
    # side face within the circle, light from behind a translucent die), so both are tried: ink of
    # the wrong sign leaves only the strokes' rims, which match no number well.
    for sign in (1.0, -1.0):
        ink = np.where(inside, np.clip(sign * off, 0, None), 0).astype(np.float32)
        scores = np.maximum(scores, _best_correlations(ink, bank, side))
    best = {int(v): float(scores[values == v].max()) for v in np.unique(values)}
    ranked = sorted(best.items(), key=lambda kv: kv[1], reverse=True)
    (value, score), (_, runner_up) = ranked[0], ranked[1]
    if score < config.min_score or score - runner_up < config.margin:
        return None
    return value


def fitted_d6(box: Sequence[float], camera: PlaneCamera, config: DiceConfig = DiceConfig()
              ) -> tuple[np.ndarray, float] | None:
    """Where on the table (mm) the d6 whose box is `box` stands, and its size as a share of
    `config.die_mm`; None when the box cannot be one seen through `camera`."""
    side = config.die_mm
    return _fit_to_box(box, camera, lambda scale: side * scale / 2,
                       lambda middle, scale: _cube_box(camera, middle, side * scale))


def fitted_d8(box: Sequence[float], camera: PlaneCamera, config: D8Config = D8Config()
              ) -> tuple[np.ndarray, float] | None:
    """Where on the table (mm) the d8 whose box is `box` stands, and its size as a share of
    `config.die_mm`; None when the box cannot be one seen through `camera`."""
    standard_edge = config.die_mm / math.sqrt(2)
    return _fit_to_box(box, camera, lambda scale: standard_edge * scale * math.sqrt(2 / 3) / 2,
                       lambda middle, scale: _octahedron_boxes(camera, middle, standard_edge * scale))


def _top_face_seen_from_above(gray: np.ndarray, camera: PlaneCamera, top: np.ndarray,
                              scale: float) -> np.ndarray:
    """A square patch of the plane of the die's top face round its middle, as seen from straight above
    (north up, so numbers are not mirrored), `_D8_PX_PER_MM` pixels to a millimetre of a standard die."""
    half_mm = 5.0  # the number's reach (2.7 mm) and room for the middle's estimate to be off
    n = int(2 * half_mm * _D8_PX_PER_MM) + 1
    mm_per_px = scale / _D8_PX_PER_MM
    c = (n - 1) / 2
    patch_to_plane = np.array([[mm_per_px, 0, top[0] - c * mm_per_px],
                               [0, -mm_per_px, top[1] + c * mm_per_px],
                               [0, 0, 1]])
    to_image = _plane_at(camera, float(top[2])) @ patch_to_plane
    return cv2.warpPerspective(gray, to_image, (n, n), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                               borderMode=cv2.BORDER_REPLICATE).astype(np.float32)


FACE_PX = 64
"""Side of a die's top face as the face classifier sees it (`top_face_patch`)."""


def top_face_patch(image: np.ndarray, kind: str, box: Sequence[float], camera: PlaneCamera,
                   turn_deg: float = 0.0) -> np.ndarray | None:
    """The d6's or d8's top face as seen from straight above, FACE_PX square and north up (turned by
    `turn_deg` about its middle), the die's size fitted to `box`; None when the box cannot be such a
    die seen through `camera`. A d6's patch spans 1.4 of its side (a rim of the side faces shows
    round the top); a d8's a 10 mm square of a standard die round its number.

    The face classifier learns from these patches and reads them: the same cut in training and use.
    """
    face = _top_face(kind, box, camera)
    return None if face is None else _face_patch(image, camera, face, turn_deg)


def _face_patch(image: np.ndarray, camera: PlaneCamera, face: tuple[np.ndarray, float, float, float],
                turn_deg: float) -> np.ndarray:
    """`top_face_patch` of a die whose `_top_face` is `face`."""
    middle, height, half_mm, _ = face
    mm_per_px = 2 * half_mm / FACE_PX
    c = (FACE_PX - 1) / 2
    a = math.radians(turn_deg)
    cos, sin = math.cos(a) * mm_per_px, math.sin(a) * mm_per_px
    # Patch pixel (u, v) -> plane (x, y): turned by `a`, v running south (numbers are not mirrored).
    patch_to_plane = np.array([[cos, sin, middle[0] - c * (cos + sin)],
                               [sin, -cos, middle[1] - c * (sin - cos)],
                               [0, 0, 1]])
    to_image = _plane_at(camera, height) @ patch_to_plane
    return cv2.warpPerspective(image, to_image, (FACE_PX, FACE_PX), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                               borderMode=cv2.BORDER_REPLICATE)


def _top_face(kind: str, box: Sequence[float], camera: PlaneCamera) -> tuple[np.ndarray, float, float, float] | None:
    """(where on the table the die stands, its top face's height, the patch's half span in mm, that
    span in the picture's pixels) for a d6 or d8 fitted to `box`."""
    if kind not in ("d6", "d8"):
        raise ValueError(f"top_face_patch reads a d6 or a d8, not {kind!r}")
    fitted = fitted_d6(box, camera) if kind == "d6" else fitted_d8(box, camera)
    if fitted is None:
        return None
    middle, scale = fitted
    if kind == "d6":
        height, half_mm = DiceConfig.die_mm * scale, 0.7 * DiceConfig.die_mm * scale
    else:
        height, half_mm = D8Config.die_mm / math.sqrt(2) * scale * math.sqrt(2 / 3), 5.0 * scale
    _, mm_px = _seen_at(camera, np.array([middle[0], middle[1], height]))
    return middle, float(height), half_mm, 2 * half_mm * mm_px


MIN_FACE_PROBABILITY = {"d6": 0.8, "d8": 0.9}
"""A face the classifier reads less surely than this stays unread (`read_dice`)..."""
MIN_AGREED_PROBABILITY = 0.5
"""...or at least this sure and the pips counted or the number matched say the same (`read_dice`)."""
MIN_FACE_SPAN_PX = {"d6": 12.0, "d8": 8.0}
"""A die whose top-face patch spans fewer of the picture's pixels than this stays unread: so small,
the classifier can be sure of faces it cannot see.

Both chosen (session 39) on the validation and test splits of the renders the classifier's training
patches came from (`datasets/dice-s364`, `-s365`, `-s366`; docs/pipeline.md, "Reading dice with a
classifier"), on the first shipped run's readings (131 of 131 d6 readings and 605 of 607 d8 readings
right); the shipped run's: 137 of 138 and 640 of 642.
"""
FACE_TURNS = (0.0, 90.0, 180.0, 270.0)
"""Each die's patch is read at these turns and the answers averaged: a number reads the same turned."""


class DiceFaceClassifier(CropClassifier):
    """The dice face classifier: top-face patches (`top_face_patch`) to a d6's pips or a d8's number
    (classes named 'd6-1' ... 'd6-6', 'd8-1' ... 'd8-8'). Never mirrored: a mirrored number is no number."""

    def __init__(self, weights: Path, threads: int = 2):
        super().__init__(weights, FACE_PX, "dice face", threads, mirror=False)
        self._classes: dict[str, list[int]] = {}  # class indices by kind ...
        self._values: dict[int, int] = {}  # ... and the value each class names
        for i, name in self.names.items():
            kind, value = name.split("-")
            self._classes.setdefault(kind, []).append(i)
            self._values[i] = int(value)

    def read(self, image: np.ndarray, dice: Sequence[tuple[str, Sequence[float]]], camera: PlaneCamera
             ) -> list[tuple[int | None, float]]:
        """For each (kind, box), its likeliest top value and that value's probability among the
        kind's faces; (None, 0.0) for a die too small in the picture (MIN_FACE_SPAN_PX), a box that
        fits no die, or a kind the model has no classes for. Which readings to believe is
        `read_dice`'s choice."""
        out: list[tuple[int | None, float]] = [(None, 0.0)] * len(dice)
        seen, looks = [], [[] for _ in FACE_TURNS]
        for k, (kind, box) in enumerate(dice):
            face = _top_face(kind, box, camera)
            if face is None or face[3] < MIN_FACE_SPAN_PX[kind] or kind not in self._classes:
                continue
            seen.append(k)
            for look, turn in zip(looks, FACE_TURNS):
                look.append(_face_patch(image, camera, face, turn))
        if not seen:
            return out
        for k, p in zip(seen, self.probabilities(*looks)):
            own = self._classes[dice[k][0]]
            share = p[own] / max(float(p[own].sum()), 1e-9)
            best = int(np.argmax(share))
            out[k] = (self._values[own[best]], float(share[best]))
        return out
        looks = [[patches[k][t] for k in seen] for t in range(len(FACE_TURNS))]
        for k, p in zip(seen, self.probabilities(*looks)):
            kind = dice[k][0]
            own = [i for i, (face_kind, _) in self._faces.items() if face_kind == kind]
            if not own:
                continue
            share = p[own] / max(float(p[own].sum()), 1e-9)
            best = int(np.argmax(share))
            value, probability = self._faces[own[best]][1], float(share[best])
            least = MIN_FACE_PROBABILITY[kind] if min_probability is None else min_probability
            out[k] = (value if probability >= least else None, probability)
        return out


# The styles the templates are drawn in, with their strokes' width (mm): plain sans-serif lettering
# like that of most dice sold. (The renderer letters dice in these and in two serif styles, which the
# reader never sees in its templates, so renders measure it on lettering it does not know too.)
_TEMPLATE_STYLES = ((cv2.FONT_HERSHEY_SIMPLEX, 0.6), (cv2.FONT_HERSHEY_DUPLEX, 0.5))
_FINE_PX_PER_MM = 20.0  # templates are drawn this fine and shrunk, so strokes keep their weight


@cache
def _d8_templates(number_mm: float = D8Config.number_mm) -> tuple[np.ndarray, np.ndarray, int]:
    """1-8 in each style and turn, ink bright on black, at `_D8_PX_PER_MM`: (the value of each
    template, the templates as rows less their mean and of unit length, their side in pixels)."""
    side_mm = number_mm + 1.6
    fine_side = int(round(side_mm * _FINE_PX_PER_MM))
    side = int(round(side_mm * _D8_PX_PER_MM))
    values, rows = [], []
    for value in range(1, 9):
        for font, stroke_mm in _TEMPLATE_STYLES:
            text, thickness = str(value), max(1, round(stroke_mm * _FINE_PX_PER_MM))
            size = number_mm * _FINE_PX_PER_MM / cv2.getTextSize(text, font, 1.0, thickness)[0][1]
            (w, h), _ = cv2.getTextSize(text, font, size, thickness)
            upright = np.zeros((fine_side, fine_side), np.uint8)
            cv2.putText(upright, text, ((fine_side - w) // 2, (fine_side + h) // 2), font, size, 255,
                        thickness, cv2.LINE_AA)
            middle = ((fine_side - 1) / 2, (fine_side - 1) / 2)
            for k in range(_D8_TURNS):
                turned = cv2.warpAffine(upright, cv2.getRotationMatrix2D(middle, 360 * k / _D8_TURNS, 1.0),
                                        (fine_side, fine_side), flags=cv2.INTER_LINEAR)
                values.append(value)
                rows.append(cv2.resize(turned, (side, side), interpolation=cv2.INTER_AREA).astype(np.float32).ravel())
    bank = np.array(rows)
    bank -= bank.mean(axis=1, keepdims=True)
    bank /= np.linalg.norm(bank, axis=1, keepdims=True)
    return np.array(values), bank, side


def _best_correlations(ink: np.ndarray, bank: np.ndarray, side: int) -> np.ndarray:
    """For each template of `bank`, its best normalised correlation with `ink` over every place it
    fits (OpenCV's TM_CCOEFF_NORMED), all templates at once as one matrix product: hundreds of
    small matchTemplate calls cost half a second a die."""
    windows = np.lib.stride_tricks.sliding_window_view(ink, (side, side)).reshape(-1, side * side)
    windows = windows - windows.mean(axis=1, keepdims=True)
    norms = np.linalg.norm(windows, axis=1)
    seen = norms > 1e-6
    if not seen.any():
        return np.full(len(bank), -1.0)
    return ((windows[seen] @ bank.T) / norms[seen, None]).max(axis=0)


def _octahedron_boxes(camera: PlaneCamera, middle: np.ndarray, edge: float) -> np.ndarray:
    """(width, height) of the box a d8 of `edge` resting on a face at `middle` makes in the picture,
    at each of its turns about the vertical every 5 degrees (it repeats every 120: turned 60, its top
    triangle stands where its bottom one was): seen from the side, a turn that brings a top corner to
    the back and a bottom one to the front makes a box far taller than others, so no single turn
    stands for all."""
    circum, height = edge / math.sqrt(3), edge * math.sqrt(2 / 3)
    corners = []
    for turn in range(0, 120, 5):
        for k in range(3):
            for z, start in ((height, 30.0), (0.0, 90.0)):  # top and bottom triangles, 60 degrees apart
                a = math.radians(turn + start + 120 * k)
                corners.append((middle[0] + circum * math.cos(a), middle[1] + circum * math.sin(a), z))
    px = camera.project(np.array(corners)).reshape(-1, 6, 2)
    return px.max(axis=1) - px.min(axis=1)


def _fit_to_box(box: Sequence[float], camera: PlaneCamera, half_height: Callable[[float], float],
                boxes: Callable[[np.ndarray, float], np.ndarray]) -> tuple[np.ndarray, float] | None:
    """Where a die stands and how large it is (a scale of its standard size): dice differ in size, so
    the one that fills the box as seen, found in two rounds. `half_height(scale)` is its middle's
    height; `boxes(middle, scale)` the (width, height) of the box it makes in the picture at each turn
    tried, of which the one shaped most like the box seen is taken."""
    seen = np.array([box[2] - box[0], box[3] - box[1]], float)
    scale = 1.0
    for _ in range(2):
        middle = _die_middle(box, camera, half_height(scale))
        if middle is None:
            return None
        made = boxes(middle, scale)
        spans = np.linalg.norm(made, axis=1)
        if not (np.all(spans > 0) and np.linalg.norm(seen) > 0):
            return None
        stretch = np.linalg.norm(seen) / spans
        misfit = np.linalg.norm(seen - stretch[:, None] * made, axis=1)
        scale *= float(stretch[int(np.argmin(misfit))])
    return middle, scale


def _cube_box(camera: PlaneCamera, middle: np.ndarray, side: float) -> np.ndarray:
    """(width, height) of the box a cube of `side` standing at `middle` makes in the picture (its turn
    about the vertical taken as 22.5 degrees, between square-on and corner-on), as one row."""
    a, half = math.radians(22.5), side / 2
    turn = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    square = np.array([(-half, -half), (half, -half), (half, half), (-half, half)]) @ turn.T + middle[:2]
    corners = [(x, y, z) for x, y in square for z in (0.0, side)]
    px = camera.project(np.array(corners))
    return (px.max(axis=0) - px.min(axis=0))[None, :]


def _seen_at(camera: PlaneCamera, point: np.ndarray) -> tuple[np.ndarray, float]:
    """Where `point` (mm, above the table) is in the picture, and how many pixels a millimetre of the
    horizontal plane through it spans there (both ways, averaged)."""
    probe = camera.project(np.array([point, point + [1.0, 0, 0], point + [0, 1.0, 0]]))
    return probe[0], float(np.mean([np.hypot(*(probe[k] - probe[0])) for k in (1, 2)]))


def _die_middle(box: Sequence[float], camera: PlaneCamera, height_mm: float) -> np.ndarray | None:
    """Where on the table the die stands: the ray through its box's middle meets the plane of
    its own middle (half a die up) there."""
    seen = np.array([(box[0] + box[2]) / 2, (box[1] + box[3]) / 2, 1.0])
    to_image = _plane_at(camera, height_mm)
    if abs(np.linalg.det(to_image)) < 1e-9:
        return None
    x, y, w = np.linalg.solve(to_image, seen)
    return np.array([x / w, y / w])


def _reach_on_top(xx: np.ndarray, yy: np.ndarray, top: np.ndarray, camera: PlaneCamera) -> np.ndarray:
    """For each pixel, how far (mm) from the top face's middle the point of the top face's plane
    it sees lies."""
    mm = np.linalg.inv(_plane_at(camera, top[2])) @ np.stack([xx.ravel(), yy.ravel(), np.ones(xx.size)])
    mm = mm[:2] / mm[2]
    return np.hypot(mm[0] - top[0], mm[1] - top[1]).reshape(xx.shape)


def _plane_at(camera: PlaneCamera, z_mm: float) -> np.ndarray:
    """The homography from the horizontal plane `z_mm` above the table (its x, y in mm) to the picture."""
    p = camera.projection
    return np.column_stack([p[:, 0], p[:, 1], p[:, 2] * z_mm + p[:, 3]])
