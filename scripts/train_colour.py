#!/usr/bin/env python3
"""Trains the crop colour classifier on crops cut by scripts/make_colour_crops.py.

    python scripts/train_colour.py datasets/colours-v1 [--epochs 15] [--name colours]      # from scratch
    python scripts/train_colour.py datasets/colours-v2 --model models/colours.pt --epochs 2 # continue
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from companion.training import train_colour_classifier


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--name", default="colours")
    parser.add_argument("--model", default="yolo11n-cls.yaml", help="an architecture (from scratch) or weights to continue from")
    parser.add_argument("--hours", type=float, help="train for this long instead of a fixed number of epochs")
    args = parser.parse_args()
    start = time.time()
    best = train_colour_classifier(args.data, epochs=args.epochs, name=args.name, model=args.model, hours=args.hours)
    print(f"done in {time.time() - start:.0f} s: {best}")


if __name__ == "__main__":
    main()
