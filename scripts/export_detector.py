#!/usr/bin/env python3
"""Exports models/pieces.pt to OpenVINO (models/pieces_openvino_model/) for fast CPU inference.

    python scripts/export_detector.py [--weights models/pieces.pt] [--imgsz 416]

Also strips the optimizer state from the weights, so the committed file is only the model.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from companion import models
from companion.vision.yolo_env import import_ultralytics


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", type=Path, default=models.DETECTOR_WEIGHTS)
    parser.add_argument("--imgsz", type=int, default=models.DETECTOR_IMGSZ)
    args = parser.parse_args()
    ultralytics = import_ultralytics()
    from ultralytics.utils.torch_utils import strip_optimizer

    strip_optimizer(str(args.weights))
    # Dynamic input: the detector runs at 416 and, for a close look at small pieces, at 640
    # (companion/vision/detect.py); a static export would answer both at the size it was made for.
    out = Path(ultralytics.YOLO(str(args.weights), task="pose").export(format="openvino", imgsz=args.imgsz,
                                                                         half=False, dynamic=True))
    target = args.weights.with_name(args.weights.stem + "_openvino_model")
    if out.resolve() != target.resolve():
        shutil.rmtree(target, ignore_errors=True)
        shutil.move(str(out), target)
    print(f"exported {args.weights} -> {target}")


if __name__ == "__main__":
    main()
