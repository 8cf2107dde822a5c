#!/usr/bin/env python3
"""Trains the size classifier (companion/vision/size_reader.py) on crops cut by scripts/make_size_crops.py.

    python scripts/train_size.py datasets/sizes-v1 [--epochs 6] [--name sizes] [--model yolo11n-cls.yaml | WEIGHTS] [--lr0 0.0004]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from companion.training import train_size_classifier


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--name", default="sizes")
    parser.add_argument("--model", default="yolo11n-cls.yaml",
                        help="an architecture (from scratch) or weights to start from (another classifier's: its head is replaced)")
    parser.add_argument("--lr0", type=float,
                        help="continue trained weights at this learning rate (AdamW, no warm-up)")
    parser.add_argument("--hours", type=float, help="train for this long instead of a fixed number of epochs")
    args = parser.parse_args()
    start = time.time()
    best = train_size_classifier(args.data, epochs=args.epochs, name=args.name, model=args.model, hours=args.hours,
                                 lr0=args.lr0)
    print(f"done in {time.time() - start:.0f} s: {best}")


if __name__ == "__main__":
    main()
