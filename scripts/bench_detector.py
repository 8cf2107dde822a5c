#!/usr/bin/env python3
"""Detector latency on this machine: median ms per frame, PyTorch weights vs the exported copy.

    python scripts/bench_detector.py [--model models/pieces.pt] [--exported models/pieces_openvino_model ...]
                                     [--images datasets/pieces-v1/images/test] [--frames 60] [--json OUT]
                                     [--imgsz 416 640]

The exported copies are by default the float one and, where it exists, the INT8 one
(`scripts/export_detector.py --int8`). Each input size is timed: 416 is the detector's own, 640 its close look at small pieces; each
with the two looks the companion takes (the frame and its mirror image, merged) and with one.

Frames are the given images, or by default the bundled demo's 1280x720 frames.
Times cover our whole Detector.detect() call (pre-processing, inference, NMS, conversion to
Detection values), after a warm-up, with 2 threads.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import cv2

from companion import models
from companion.vision.detect import Detector, DetectorConfig


DEMO_FRAMES = Path(__file__).resolve().parent.parent / "companion" / "data" / "demo" / "frames"


def frames_from(folder: Path | None, count: int) -> list:
    # Rendering here would load an EGL context beside torch/OpenVINO in one process, which
    # crashed; the bundled demo's frames (1280x720) are real frames of the main use case anyway.
    paths = sorted((folder or DEMO_FRAMES).glob("*.jpg"))[:count]
    if not paths:
        raise SystemExit(f"no .jpg frames in {folder or DEMO_FRAMES}")
    return [cv2.imread(str(p)) for p in paths]


def time_detector(weights: Path, frames: list, imgsz: int, mirror_look: bool) -> dict:
    detector = Detector(DetectorConfig(weights=weights, imgsz=imgsz, mirror_look=mirror_look))
    for frame in frames[:5]:
        detector.detect(frame)
    times = []
    for frame in frames:
        start = time.perf_counter()
        detector.detect(frame)
        times.append((time.perf_counter() - start) * 1000)
    return {"weights": str(weights), "imgsz": imgsz, "looks": 2 if mirror_look else 1, "frames": len(frames),
            "median_ms": round(statistics.median(times), 2), "p90_ms": round(sorted(times)[int(len(times) * 0.9)], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=Path("models/pieces.pt"))
    parser.add_argument("--exported", type=Path, nargs="+",
                        default=[Path("models/pieces_openvino_model"), Path("models/pieces_int8_openvino_model")])
    parser.add_argument("--images", type=Path)
    parser.add_argument("--frames", type=int, default=60)
    parser.add_argument("--imgsz", type=int, nargs="+", default=[models.DETECTOR_IMGSZ, models.DETECTOR_CLOSE_IMGSZ])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    frames = frames_from(args.images, args.frames)
    results = [time_detector(w, frames, size, twice) for size in args.imgsz for w in (args.model, *args.exported)
               if w.exists() for twice in (True, False)]
    for r in results:
        print(f"{r['weights']:40} imgsz {r['imgsz']}, {r['looks']} look(s): median {r['median_ms']:.1f} ms, p90 {r['p90_ms']:.1f} ms "
              f"over {r['frames']} frames")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
