#!/usr/bin/env python3
"""Renders the bundled demo (companion/data/demo/): the sample Icebomb Arena record, event by event,
from one fixed webcam, with hands passing over the board between moves. One process; about 15-25
minutes on two busy cores, so run it in the background:

    nohup python scripts/make_demo.py > /tmp/make_demo.log 2>&1 &
    python scripts/make_demo.py --limit 5 --out /tmp/demo-look      # a quick look at the first events
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from companion.synth.demo import OUT, RECORD, make_demo  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--record", type=Path, default=RECORD)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=None, help="render only the first N events")
    args = parser.parse_args(argv)
    index = make_demo(args.out, args.record, seed=args.seed, limit=args.limit)
    size = sum(p.stat().st_size for p in (args.out / "frames").glob("*.jpg"))
    print(f"{len(index['frames'])} frames, {index['files']} images, {size / 1e6:.1f} MB, "
          f"{index['render_seconds']} s -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
