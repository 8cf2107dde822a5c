#!/usr/bin/env python3
"""The detector's confidence threshold, chosen on the validation split (never on the test split).

    python scripts/choose_confidence.py --dataset datasets/pieces-hd [--limit 200] [--thresholds 0.25,0.35,0.45]

For each threshold: recall and precision of pieces with colour and size right, and their F1 (the
harmonic mean) and false detections per image, detecting within the board's region as the
companion does. Where F1s are close, the threshold with fewer false detections is preferred (a
phantom piece costs the referee more than a missed one); the choice and its reason are written at
DetectorConfig.confidence in companion/vision/detect.py.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from companion import models
from companion.evaluation import evaluate
from companion.vision.colour import ColourClassifier
from companion.vision.detect import Detector, DetectorConfig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--thresholds", default="0.25,0.35,0.45")
    args = parser.parse_args()
    colour = ColourClassifier(models.COLOUR_WEIGHTS) if models.COLOUR_WEIGHTS.exists() else None
    rows = []
    for threshold in (float(t) for t in args.thresholds.split(",")):
        config = DetectorConfig(weights=models.DETECTOR_WEIGHTS, imgsz=models.DETECTOR_IMGSZ, confidence=threshold)
        figures = evaluate(Detector(config, colour), args.dataset, "val", args.limit)["all"]
        recall, precision = figures["recall_colour_and_size"], figures["precision_colour_and_size"]
        f1 = 2 * recall * precision / (recall + precision) if recall + precision else 0.0
        rows.append({"confidence": threshold, "recall": recall, "precision": precision, "f1": round(f1, 4),
                     "false_detections_per_image": figures["false_detections_per_image"]})
        print(json.dumps(rows[-1]))
    best = max(rows, key=lambda r: r["f1"])
    print(f"best F1 on {args.dataset}'s validation split: confidence {best['confidence']}")


if __name__ == "__main__":
    main()
