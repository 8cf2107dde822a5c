#!/usr/bin/env python3
"""Trains the piece checker (companion/vision/piece_check.py) on crops cut by scripts/make_check_crops.py.

    python scripts/train_check.py datasets/checks-v1 [--pieces-per-none 4] [--epochs 6] [--name checks] [--model WEIGHTS]

The detector's true pyramids outnumber its false ones many times; `--pieces-per-none R` trains on
every "none" crop and at most R times as many "piece" crops (drawn at random, seeded), linked into
DATA-balanced/train; the validation crops are all kept, for the threshold is chosen on them.
"""

from __future__ import annotations

import argparse
import random
import shutil
import time
from pathlib import Path

from companion.training import train_check_classifier
from companion.vision.piece_check import A_PIECE, NOT_A_PIECE


def balanced(data: Path, pieces_per_none: float, seed: int) -> Path:
    """A copy of the folder made of links: every "none" training crop, at most `pieces_per_none`
    times as many "piece" ones, and every validation and test crop."""
    out = data.parent / f"{data.name}-balanced"
    if out.exists():
        shutil.rmtree(out)
    rng = random.Random(seed)
    nones = sorted((data / "train" / NOT_A_PIECE).glob("*.jpg"))
    pieces = sorted((data / "train" / A_PIECE).glob("*.jpg"))
    if not nones or not pieces:
        raise SystemExit(f"{data}/train needs crops of both classes ({len(nones)} none, {len(pieces)} piece)")
    chosen = {NOT_A_PIECE: nones, A_PIECE: rng.sample(pieces, min(len(pieces), int(pieces_per_none * len(nones))))}
    for label, files in chosen.items():
        (out / "train" / label).mkdir(parents=True)
        for f in files:
            (out / "train" / label / f.name).symlink_to(f.resolve())
    for split in ("val", "test"):
        if (data / split).exists():
            (out / split).symlink_to((data / split).resolve())
    print(f"training on {len(chosen[NOT_A_PIECE])} none and {len(chosen[A_PIECE])} piece crops (of {len(pieces)})")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--pieces-per-none", type=float, help="balance the training classes (see above)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--name", default="checks")
    parser.add_argument("--model", default="yolo11n-cls.yaml",
                        help="an architecture (from scratch) or weights to start from (another classifier's: its head is replaced)")
    parser.add_argument("--lr0", type=float, help="continue trained weights at this learning rate (AdamW, no warm-up)")
    parser.add_argument("--hours", type=float, help="train for this long instead of a fixed number of epochs")
    args = parser.parse_args()
    data = balanced(args.data, args.pieces_per_none, args.seed) if args.pieces_per_none else args.data
    start = time.time()
    best = train_check_classifier(data, epochs=args.epochs, name=args.name, model=args.model, hours=args.hours,
                                  lr0=args.lr0)
    print(f"done in {time.time() - start:.0f} s: {best}")


if __name__ == "__main__":
    main()
