#!/usr/bin/env python3
"""Cuts the board model's training set from rendered datasets (companion/synth/board_set.py).

    python scripts/make_board_set.py datasets/boards-v1 --train datasets/pieces-hd:train datasets/mix-s21:train \
        --val datasets/pieces-hd:val [--width 416]

Each SOURCE is DATASET:SPLIT (a split of a rendered dataset with truth/ sidecars).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion.synth.board_set import write_board_dataset  # noqa: E402


def _source(text: str) -> tuple[Path, str]:
    dataset, sep, split = text.rpartition(":")
    if not sep or not dataset:
        raise argparse.ArgumentTypeError(f"expected DATASET:SPLIT, got {text!r}")
    return Path(dataset), split


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--train", type=_source, nargs="+", required=True)
    parser.add_argument("--val", type=_source, nargs="+", required=True)
    parser.add_argument("--width", type=int, default=416)
    parser.add_argument("--no-board-share", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sources = [(d, s, "train") for d, s in args.train] + [(d, s, "val") for d, s in args.val]
    counts = write_board_dataset(sources, args.out, args.width, args.no_board_share, args.seed)
    print(json.dumps(dict(counts)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
