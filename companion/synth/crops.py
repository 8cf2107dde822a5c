"""A detector dataset of close looks: crops of full renders around the board (or the pieces).

At run time the detector sees the located board's region (`companion/vision/region.py`), so it
learns on the same: each full render becomes one crop around its board outline with a random
margin (and a small random shift), or, for a share of the items, the whole frame, so that the
first pass on a bare table still works. The truth is carried over exactly: boxes clipped to the
crop, keypoints that leave it marked outside, the visible share reduced by what was cut off,
and the board's homography and the camera's intrinsics moved into the crop's pixels. Labels
come from the moved truth with the usual `yolo_lines`, so relabelling works on crops too.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from functools import partial
from pathlib import Path

import cv2
import numpy as np

from companion.synth.dataset import SPLITS, dataset_yaml
from companion.synth.labels import yolo_lines
from companion.vision.classes import ClassScheme
from companion.vision.region import Region, board_region, region_around
from companion.webcam import random_effect

# Margins drawn around the board: the run-time margin (region.BOARD_MARGIN) sits inside the range.
BOARD_MARGINS = (0.08, 0.35)
WHOLE_FRAME_SHARE = 0.2          # items kept whole (with a board)
WHOLE_FRAME_SHARE_NO_BOARD = 0.35  # items kept whole on a bare table
PIECE_MARGINS = (0.1, 0.45)


def choose_region(truth: dict, rng: np.random.Generator) -> Region | None:
    """The crop for one render (None: the whole frame)."""
    shape = (truth["image"]["height"], truth["image"]["width"])
    board = truth.get("board")
    if board is not None:
        if rng.random() < WHOLE_FRAME_SHARE:
            return None
        outline = np.asarray(board["outline_px"], float)
        span = float(np.ptp(outline, axis=0).max())
        outline = outline + rng.normal(0, 0.03 * span, size=2)  # an imperfect localisation
        return board_region(outline, shape, float(rng.uniform(*BOARD_MARGINS)))
    if rng.random() < WHOLE_FRAME_SHARE_NO_BOARD:
        return None
    boxes = [o["box_px"] for o in truth["objects"] if o.get("box_px") and o.get("visible_fraction", 0) > 0.3]
    if not boxes:
        return None
    corners = np.array([[b[0], b[1]] for b in boxes] + [[b[2], b[3]] for b in boxes])
    return region_around(corners, shape, float(rng.uniform(*PIECE_MARGINS)), min_pad=24)


def _move_points(points, x0: float, y0: float, scale: float) -> list[list[float]]:
    return [[round((x - x0) * scale, 3), round((y - y0) * scale, 3)] for x, y in points]


def crop_truth(truth: dict, region: Region | None, scale: float) -> dict:
    """The sidecar of the crop `region` (None: whole frame) resized by `scale`."""
    w, h = truth["image"]["width"], truth["image"]["height"]
    region = region or Region(0, 0, w, h)
    x0, y0 = region.x0, region.y0
    cw, ch = region.width * scale, region.height * scale
    out = json.loads(json.dumps(truth))
    out["image"] = {"width": int(round(cw)), "height": int(round(ch))}
    out["crop"] = {"from": [x0, y0, region.x1, region.y1], "scale": scale, "source_size": [w, h]}
    cam = out["camera"]
    cam.update(width=out["image"]["width"], height=out["image"]["height"], fx=cam["fx"] * scale,
               fy=cam["fy"] * scale, cx=(cam["cx"] - x0) * scale, cy=(cam["cy"] - y0) * scale)
    for obj in out["objects"]:
        box = obj.get("box_px")
        if box is None:
            continue
        bx0, by0 = max(box[0], x0), max(box[1], y0)
        bx1, by1 = min(box[2], region.x1), min(box[3], region.y1)
        full = max((box[2] - box[0]) * (box[3] - box[1]), 1e-9)
        if bx1 <= bx0 or by1 <= by0:
            obj.update(box_px=None, visible_fraction=0.0)
            continue
        kept = (bx1 - bx0) * (by1 - by0) / full
        obj["box_px"] = [round((bx0 - x0) * scale, 2), round((by0 - y0) * scale, 2),
                         round((bx1 - x0) * scale, 2), round((by1 - y0) * scale, 2)]
        obj["visible_fraction"] = round(obj.get("visible_fraction", 1.0) * kept, 4)
        for name in ("apex", "contact"):
            px = obj.get(f"{name}_px")
            if px is None:
                continue
            inside = region.x0 <= px[0] < region.x1 and region.y0 <= px[1] < region.y1
            obj[f"{name}_px"] = _move_points([px], x0, y0, scale)[0]
            if not inside:
                obj[f"{name}_visibility"] = 0
    board = out.get("board")
    if board is not None:
        move = np.array([[scale, 0, -x0 * scale], [0, scale, -y0 * scale], [0, 0, 1.0]])
        board["homography_mm_to_px"] = (move @ np.asarray(board["homography_mm_to_px"], float)).round(8).tolist()
        for key in ("outline_px", "corners_px"):
            if key in board:
                board[key] = _move_points(board[key], x0, y0, scale)
    return out


def _write_crop(source: Path, out: Path, scheme: ClassScheme, size: int, seed: int, jpeg_quality: int,
                webcam_share: float, item: tuple[str, int, Path]) -> None:
    """Cuts, moves and writes the crop of one item (its split, its place there from 1, its truth
    file); a module-level function so that worker processes can run it."""
    split, index, truth_path = item
    truth = json.loads(truth_path.read_text())
    image = cv2.imread(str(source / "images" / split / (truth_path.stem + ".jpg")))
    if image is None:
        raise FileNotFoundError(f"image for {truth_path} is missing or unreadable")
    rng = np.random.default_rng([seed, int(truth.get("seed", 0)), index])
    region = choose_region(truth, rng)
    crop = image if region is None else region.crop(image)
    webcam = None
    if split == "train" and webcam_share and rng.random() < webcam_share:
        name, strength, crop = random_effect(np.ascontiguousarray(crop), rng)
        webcam = {"effect": name, "strength": round(strength, 3)}
    scale = min(2.0, size / max(crop.shape[:2]))
    resized = cv2.resize(crop, (max(1, round(crop.shape[1] * scale)), max(1, round(crop.shape[0] * scale))),
                         interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR)
    moved = crop_truth(truth, region, scale)
    moved["image"] = {"width": resized.shape[1], "height": resized.shape[0]}
    if webcam is not None:
        moved["webcam"] = webcam
    lines = yolo_lines(moved, scheme)
    for sub, name, data in (
            ("images", truth_path.stem + ".jpg",
             cv2.imencode(".jpg", resized, [cv2.IMWRITE_JPEG_QUALITY, jpeg_quality])[1].tobytes()),
            ("labels", truth_path.stem + ".txt", ("\n".join(lines) + ("\n" if lines else "")).encode()),
            ("truth", truth_path.name, json.dumps(moved, separators=(",", ":")).encode())):
        path = out / sub / split / name
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + f".tmp{os.getpid()}")
        tmp.write_bytes(data)
        os.replace(tmp, path)


def make_crop_dataset(source: Path, out: Path, scheme: ClassScheme, size: int = 480, seed: int = 0,
                      jpeg_quality: int = 92, webcam_share: float = 0.0, workers: int = 1) -> dict:
    """Writes the crop dataset of `source` (a `scripts/synth dataset` folder) under `out`.

    Each crop is resized so its longer side is `size` pixels (never enlarged past 2x). Resumable:
    finished items (their truth written last) are skipped. Returns counts per split.
    `webcam_share`: the share of training crops made worse first by a random effect of
    companion/webcam.py at a random strength (a colour cast, a dim room, blur...); the effect is
    named in the crop's sidecar (`webcam`). Validation and test crops are left as rendered.
    `workers` processes cut the crops; each item's crop depends only on the seeds and its place
    in its split, so any number of workers writes the same dataset.
    """
    if not 0.0 <= webcam_share <= 1.0:
        raise ValueError(f"webcam_share must be between 0 and 1, got {webcam_share}")
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    source, out = Path(source), Path(out)
    counts = {s: 0 for s in SPLITS}
    items = []
    for split in SPLITS:
        for truth_path in sorted((source / "truth" / split).glob("*.json")):
            counts[split] += 1
            if not (out / "truth" / split / truth_path.name).exists():
                items.append((split, counts[split], truth_path))
    write = partial(_write_crop, source, out, scheme, size, seed, jpeg_quality, webcam_share)
    if workers == 1 or len(items) < 2:
        for item in items:
            write(item)
    else:
        # Fresh interpreters rather than forks: OpenCV's thread pool does not survive a fork well.
        with multiprocessing.get_context("spawn").Pool(min(workers, len(items))) as pool:
            for _ in pool.imap_unordered(write, items, chunksize=16):
                pass
    out.mkdir(parents=True, exist_ok=True)
    (out / "data.yaml").write_text(dataset_yaml(out, scheme))
    return {"root": str(out), "splits": counts}
