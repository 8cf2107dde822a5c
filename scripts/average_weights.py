#!/usr/bin/env python3
"""Averages detector checkpoints of one lineage into one (a "model soup").

    python scripts/average_weights.py OUT.pt A.pt B.pt [C.pt ...]

Judge the result as any candidate (docs/training.md, "Commands") before shipping it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from companion.training import average_checkpoints


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("checkpoints", type=Path, nargs="+")
    args = parser.parse_args()
    for path in args.checkpoints:
        if not path.is_file():
            parser.error(f"no such checkpoint: {path}")
    try:
        out = average_checkpoints(args.checkpoints, args.out)
    except ValueError as error:
        parser.error(str(error))
    print(f"averaged {len(args.checkpoints)} checkpoints -> {out}")


if __name__ == "__main__":
    main()
