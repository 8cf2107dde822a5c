#!/usr/bin/env python3
"""Trains the tip classifier (companion/vision/tips.py) on crops cut by scripts/make_tip_crops.py.

    python scripts/train_tips.py datasets/tips-v1 [--epochs 10] [--name tips] [--model yolo11n-cls.yaml | WEIGHTS]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from companion.training import train_tip_classifier


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--name", default="tips")
    parser.add_argument("--model", default="yolo11n-cls.yaml",
                        help="an architecture (from scratch) or weights to start from (another classifier's: its head is replaced)")
    parser.add_argument("--hours", type=float, help="train for this long instead of a fixed number of epochs")
    args = parser.parse_args()
    start = time.time()
    best = train_tip_classifier(args.data, epochs=args.epochs, name=args.name, model=args.model, hours=args.hours)
    print(f"done in {time.time() - start:.0f} s: {best}")


if __name__ == "__main__":
    main()
