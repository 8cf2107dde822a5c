"""Labels from geometry: the JSON sidecar (full truth) and YOLO-pose label lines derived from it.

The box and keypoints come from projecting the scene's 3-D points with the camera, never from
pixels. The rendered object-id map is used only to say how much of each object is visible and
whether each keypoint is hidden by something else.

YOLO-pose line: `class cx cy w h ax ay av kx ky kv`, normalised to the image, keypoints apex then
contact, visibility 2 = visible, 1 = in the image but hidden, 0 = outside the image (then x=y=0).
With `carried_apex_hidden`, the apex of an upright pyramid that carries another piece of its stack is
written 0 too: ultralytics teaches a keypoint's score as "labelled" (visibility not 0), so only then does
the score of an apex say whether something rests on it (docs/training.md, session 26).
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from companion.pieces import Colour, Pose, Size
from companion.synth.scene import Scene
from companion.vision.classes import DEFAULT_SCHEME, ClassScheme

SIDECAR_VERSION = 1
MIN_VISIBLE_FRACTION = 0.15
_WINDOW = 2  # a keypoint counts as visible when its own object shows within this many pixels


def _keypoint_visibility(px: np.ndarray, ids: np.ndarray | None, own_id: int, width: int, height: int) -> int:
    x, y = float(px[0]), float(px[1])
    if not (np.isfinite(x) and np.isfinite(y)) or not (0 <= x < width and 0 <= y < height):
        return 0
    if ids is None:
        return 2
    xi, yi = int(x), int(y)
    window = ids[max(0, yi - _WINDOW): yi + _WINDOW + 1, max(0, xi - _WINDOW): xi + _WINDOW + 1]
    return 2 if np.any(window == own_id) else 1


def sidecar(scene: Scene, ids: np.ndarray | None = None) -> dict:
    """The full truth of a rendered scene; `ids` is the renderer's object-id map (None: all visible)."""
    cam = scene.camera
    w, h = cam.width, cam.height
    counts = np.bincount(ids.ravel(), minlength=len(scene.objects) + 1) if ids is not None else None
    objects = []
    for index, obj in enumerate(scene.objects):
        truth = obj.truth()
        truth["id"] = index
        apex, contact = obj.keypoints()
        kp = cam.project(np.array([apex, contact]))
        hull = cam.project(obj.hull_points())
        if np.isnan(hull).any():
            truth.update(box_px=None, visible_fraction=0.0)
            objects.append(truth)
            continue
        x0, y0 = hull.min(axis=0)
        x1, y1 = hull.max(axis=0)
        hull_pts = cv2.convexHull(hull.astype(np.float32))
        area = float(cv2.contourArea(hull_pts))
        box = [max(0.0, x0), max(0.0, y0), min(float(w), x1), min(float(h), y1)]
        inside = box[2] > box[0] and box[3] > box[1]
        if counts is not None:
            visible_px = int(counts[index + 1])
            fraction = min(1.0, visible_px / area) if area > 0 else 0.0
        else:
            visible_px = None
            fraction = 1.0 if inside else 0.0
        truth.update(
            box_px=[round(float(v), 2) for v in box] if inside else None,
            apex_px=[round(float(v), 3) for v in kp[0]], contact_px=[round(float(v), 3) for v in kp[1]],
            apex_visibility=_keypoint_visibility(kp[0], ids, index + 1, w, h),
            contact_visibility=_keypoint_visibility(kp[1], ids, index + 1, w, h),
            silhouette_px=round(area, 1), visible_px=visible_px, visible_fraction=round(fraction, 4))
        objects.append(truth)
    out = {"version": SIDECAR_VERSION, "game": scene.game, "seed": scene.seed,
           "image": {"width": w, "height": h}, "camera": cam.to_json(), "look": scene.look.to_json(),
           "state": scene.state, "objects": objects, "board": None}
    if scene.board is not None:
        top = scene.board.thickness_mm
        board = scene.board.to_json()
        homography = cam.plane_homography(top)
        board["homography_mm_to_px"] = [[round(float(v), 8) for v in row] for row in homography]
        board["plane_z_mm"] = top
        board["outline_mm"] = [[round(x, 3), round(y, 3)] for x, y in scene.board.outline()]
        board["outline_px"] = _plane_to_px(homography, scene.board.outline())
        if hasattr(scene.board, "area_corners"):
            corners = scene.board.area_corners()
            board["corners_mm"] = [[round(x, 3), round(y, 3)] for x, y in corners]
            board["corners_px"] = _plane_to_px(homography, corners)
        out["board"] = board
    return out


def _plane_to_px(homography: np.ndarray, points) -> list[list[float]]:
    pts = np.column_stack([np.asarray(points, float), np.ones(len(points))]) @ homography.T
    return [[round(float(x / z), 3), round(float(y / z), 3)] for x, y, z in pts]


def _class_of(obj: dict, scheme: ClassScheme) -> int | None:
    return scheme.class_id(obj["kind"], Colour(obj["colour"]) if "colour" in obj else None,
                           Size.parse(obj["size"]) if "size" in obj else None,
                           Pose(obj["pose"]) if "pose" in obj else None)


def carrying(objects: list[dict]) -> set[int]:
    """Indices of the upright pyramids on which another piece of their stack rests."""
    levels = {(o["stack"], o["level"]) for o in objects if o.get("stack") is not None and o.get("level") is not None}
    return {i for i, o in enumerate(objects)
            if o.get("kind") == "pyramid" and o.get("pose") == "upright" and o.get("stack") is not None
            and o.get("level") is not None and (o["stack"], o["level"] + 1) in levels}


def yolo_lines(truth: dict, scheme: ClassScheme = DEFAULT_SCHEME,
               min_visible: float = MIN_VISIBLE_FRACTION, carried_apex_hidden: bool = False) -> list[str]:
    """YOLO-pose label lines for a sidecar: learnable objects at least `min_visible` visible."""
    w, h = truth["image"]["width"], truth["image"]["height"]
    lines = []
    carriers = carrying(truth["objects"]) if carried_apex_hidden else set()
    for index, obj in enumerate(truth["objects"]):
        if obj.get("box_px") is None or obj.get("visible_fraction", 0) < min_visible:
            continue
        cls = _class_of(obj, scheme)
        if cls is None:
            continue
        x0, y0, x1, y1 = obj["box_px"]
        fields = [f"{(x0 + x1) / 2 / w:.6f}", f"{(y0 + y1) / 2 / h:.6f}", f"{(x1 - x0) / w:.6f}", f"{(y1 - y0) / h:.6f}"]
        for name in ("apex", "contact"):
            vis = 0 if name == "apex" and index in carriers else obj[f"{name}_visibility"]
            x, y = obj[f"{name}_px"] if vis else (0.0, 0.0)
            fields += [f"{x / w:.6f}", f"{y / h:.6f}", str(vis)]
        lines.append(" ".join([str(cls)] + fields))
    return lines


def relabel(root: Path, scheme: ClassScheme = DEFAULT_SCHEME, min_visible: float = MIN_VISIBLE_FRACTION,
            carried_apex_hidden: bool = False) -> int:
    """Rewrites every label file of a dataset from its sidecars (`truth/<split>/<name>.json` ->
    `labels/<split>/<name>.txt`); returns how many were written."""
    root = Path(root)
    written = 0
    for path in sorted((root / "truth").glob("*/*.json")):
        truth = json.loads(path.read_text())
        out = root / "labels" / path.parent.name / (path.stem + ".txt")
        out.parent.mkdir(parents=True, exist_ok=True)
        lines = yolo_lines(truth, scheme, min_visible, carried_apex_hidden)
        out.write_text("\n".join(lines) + ("\n" if lines else ""))
        written += 1
    return written
