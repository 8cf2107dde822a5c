#!/usr/bin/env python3
"""Exports models/pieces.pt to OpenVINO (models/pieces_openvino_model/) for fast CPU inference.

    python scripts/export_detector.py [--weights models/pieces.pt] [--imgsz 416]
    python scripts/export_detector.py --int8 --calibration datasets/calib/data.yaml [--calibration-split train]

Also strips the optimizer state from the weights, so the committed file is only the model.

`--int8` writes a second copy, quantized to 8-bit integers by NNCF (ultralytics' own INT8 export:
post-training quantization, the detection head's decoding kept in floating point), into
`<weights>_int8_openvino_model/`. Its activations' ranges are taken from the calibration
dataset's pictures (a YOLO dataset yaml; crops of the board's region as the detector sees them,
`scripts/synth crops`), letterboxed at 640, the close look's size. Render the calibration scenes
with seeds never used in training or testing.
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
    parser.add_argument("--int8", action="store_true", help="quantize to INT8 with NNCF (needs --calibration)")
    parser.add_argument("--calibration", type=Path, help="YOLO dataset yaml whose pictures calibrate --int8")
    parser.add_argument("--calibration-split", default="train", help="which of its splits (default: train)")
    parser.add_argument("--calibration-images", type=int, default=300,
                        help="how many of its pictures (NNCF's default statistics subset is 300)")
    args = parser.parse_args()
    if args.int8 and (args.calibration is None or not args.calibration.is_file()):
        parser.error("--int8 needs --calibration DATA.yaml (an existing YOLO dataset yaml)")
    ultralytics = import_ultralytics()
    from ultralytics.utils.torch_utils import strip_optimizer

    strip_optimizer(str(args.weights))
    # Dynamic input: the detector runs at 416 and, for a close look at small pieces, at 640
    # (companion/vision/detect.py); a static export would answer both at the size it was made for.
    settings = {"format": "openvino", "imgsz": args.imgsz, "dynamic": True}
    suffix = "_openvino_model"
    if args.int8:
        # Calibrated at the close look's size: most of the detector's runs are close looks at a
        # board's region. The head's box and keypoint decoding stays in floating point (ultralytics
        # leaves it out of the quantization), so only the backbone's and neck's arithmetic is coarser.
        settings.update(imgsz=models.DETECTOR_CLOSE_IMGSZ, quantize=8, data=str(args.calibration),
                        split=args.calibration_split, fraction=args.calibration_images, batch=1)
        suffix = "_int8_openvino_model"
    else:
        settings.update(half=False)
    out = Path(ultralytics.YOLO(str(args.weights), task="pose").export(**settings))
    target = args.weights.with_name(args.weights.stem + suffix)
    if out.resolve() != target.resolve():
        shutil.rmtree(target, ignore_errors=True)
        shutil.move(str(out), target)
    print(f"exported {args.weights} -> {target}")


if __name__ == "__main__":
    main()
