"""Contact sheets: a few renders per game side by side, with their labels drawn over one copy."""

from __future__ import annotations

import cv2
import numpy as np

from companion.synth.labels import yolo_lines
from companion.synth.scenes import GAMES


def draw_labels(image: np.ndarray, truth: dict) -> np.ndarray:
    """A copy of an RGB image with each label's box, apex (red) and contact point (blue) drawn."""
    out = image.copy()
    h, w = out.shape[:2]
    for line in yolo_lines(truth):
        v = [float(x) for x in line.split()]
        cx, cy, bw, bh = v[1] * w, v[2] * h, v[3] * w, v[4] * h
        cv2.rectangle(out, (int(cx - bw / 2), int(cy - bh / 2)), (int(cx + bw / 2), int(cy + bh / 2)), (255, 255, 0), 1)
        for (x, y, vis), colour in zip((v[5:8], v[8:11]), ((255, 40, 40), (40, 80, 255))):
            if vis:
                cv2.circle(out, (int(x * w), int(y * h)), 3 if vis == 2 else 2, colour, -1 if vis == 2 else 1)
    return out


def contact_sheet(renderer, seed: int = 0, per_game: int = 3, tile: tuple[int, int] = (256, 192),
                  games: tuple[str, ...] = GAMES, width: int = 640, height: int = 480) -> np.ndarray:
    """One row per game: `per_game` renders, the last with its labels drawn (RGB uint8)."""
    from companion.synth.labels import sidecar
    from companion.synth.scenes import sample_scene

    rows = []
    for game in games:
        tiles = []
        for k in range(per_game):
            scene = sample_scene(game, seed + k, width, height)
            rendered = renderer.render(scene)
            image = rendered.image
            if k == per_game - 1:
                image = draw_labels(image, sidecar(scene, rendered.ids))
            tiles.append(cv2.resize(image, tile, interpolation=cv2.INTER_AREA))
        row = np.hstack(tiles)
        cv2.putText(row, game, (6, 16), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 255, 255), 1, cv2.LINE_AA)
        rows.append(row)
    return np.vstack(rows)
