"""A training set for the board model, cut from rendered datasets (`scripts/synth dataset ...`).

Each render's sidecar has the exact board-to-picture homography, so every picture becomes one
label: the board's class and its outline's corners as keypoints (`companion.vision.board_keypoints`).
Pictures are stored smaller (the model looks at a whole frame at a few hundred pixels); pictures of
a bare table, which has no board, are kept as examples of "no board" at a share.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import cv2

from companion.vision.board_keypoints import BOARD_CLASSES, MAX_KEYPOINTS, keypoint_label
from companion.vision.mapper import location_from_truth


def write_board_dataset(sources: list[tuple[Path, str, str]], out: Path, width: int = 416,
                        no_board_share: float = 0.3, seed: int = 0) -> Counter:
    """Writes `out` (images/, labels/, data.yaml) from (dataset, its split, our split) sources.

    Returns how many pictures of each kind were written.
    """
    rng = random.Random(seed)
    counts: Counter = Counter()
    for dataset, split, ours in sources:
        truths = sorted((dataset / "truth" / split).glob("*.json"))
        if not truths:
            raise FileNotFoundError(f"{dataset}/truth/{split} has no sidecars")
        (out / "images" / ours).mkdir(parents=True, exist_ok=True)
        (out / "labels" / ours).mkdir(parents=True, exist_ok=True)
        for path in truths:
            truth = json.loads(path.read_text())
            location = location_from_truth(truth)
            label = None
            if location.spec.kind != "table":
                label = keypoint_label(location.spec, location.H, location.image_size)
                if label is None:
                    counts["board mostly out of view (left out)"] += 1
                    continue
            elif rng.random() >= no_board_share:
                continue
            image = cv2.imread(str(dataset / "images" / split / (path.stem + ".jpg")))
            if image is None:
                raise FileNotFoundError(f"image for {path} is missing or unreadable")
            h, w = image.shape[:2]
            scale = width / w
            small = cv2.resize(image, (width, round(h * scale)), interpolation=cv2.INTER_AREA)
            name = f"{dataset.name}-{path.stem}"
            cv2.imwrite(str(out / "images" / ours / f"{name}.jpg"), small, [cv2.IMWRITE_JPEG_QUALITY, 92])
            text = ""
            if label is not None:
                cls, box, keypoints = label
                x0, y0, x1, y1 = box
                fields = [cls, (x0 + x1) / 2 / w, (y0 + y1) / 2 / h, (x1 - x0) / w, (y1 - y0) / h]
                for x, y, v in keypoints:
                    fields += [x / w, y / h, int(v)]
                text = " ".join(f"{v:.6f}" if isinstance(v, float) else str(v) for v in fields) + "\n"
                counts[BOARD_CLASSES[cls]] += 1
            else:
                counts["no board"] += 1
            (out / "labels" / ours / f"{name}.txt").write_text(text)
    names = "\n".join(f"  {i}: {n}" for i, n in enumerate(BOARD_CLASSES))
    (out / "data.yaml").write_text(
        f"# Boards as one object each, their outline's corners as keypoints (companion/vision/board_keypoints.py)\n"
        f"path: {out.resolve()}\ntrain: images/train\nval: images/val\n"
        f"kpt_shape: [{MAX_KEYPOINTS}, 3]  # outline corners in picture order; x, y, visibility\n"
        f"names:\n{names}\n")
    return counts
