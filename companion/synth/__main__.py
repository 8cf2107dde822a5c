"""`python -m companion.synth` (also `scripts/synth`): datasets, relabelling, contact sheets, benchmark."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad image size {text!r} (expected WIDTHxHEIGHT, e.g. 640x480)") from None
    return w, h


def cmd_dataset(args) -> int:
    from companion.synth.dataset import write_dataset
    from companion.vision.classes import get_scheme

    games = tuple(args.games.split(",")) if args.games else None
    kwargs = {"games": games} if games else {}
    if args.splits:
        kwargs["splits"] = tuple(args.splits.split(","))
    summary = write_dataset(args.out, args.count, seed=args.seed, width=args.size[0], height=args.size[1],
                            workers=args.workers, scheme=get_scheme(args.scheme), progress=not args.quiet,
                            item_timeout=args.item_timeout or None, referee_share=args.referee_share,
                            seconds=args.seconds, **kwargs)
    print(json.dumps(summary))
    return 0


def cmd_relabel(args) -> int:
    from companion.synth.labels import relabel
    from companion.synth.dataset import dataset_yaml
    from companion.vision.classes import get_scheme

    scheme = get_scheme(args.scheme)
    n = relabel(args.root, scheme, args.min_visible, args.carried_apex_hidden)
    (args.root / "data.yaml").write_text(dataset_yaml(args.root, scheme))
    print(f"{n} label files rewritten with scheme {scheme.name!r}")
    return 0


def cmd_crops(args) -> int:
    from companion.synth.crops import make_crop_dataset
    from companion.vision.classes import get_scheme

    print(json.dumps(make_crop_dataset(args.source, args.out, get_scheme(args.scheme), args.size, args.seed,
                                       webcam_share=args.webcam_share, workers=args.workers)))
    return 0


def cmd_render(args) -> int:
    from companion.synth.dataset import render_item
    from companion.synth.labels import yolo_lines
    from companion.synth.render import Renderer

    renderer = Renderer()
    args.out.mkdir(parents=True, exist_ok=True)
    for k in range(args.count):
        seed = args.seed + k
        jpeg, truth = render_item(renderer, args.game, seed, *args.size)
        stem = args.out / f"{args.game}-{seed}"
        stem.with_suffix(".jpg").write_bytes(jpeg)
        stem.with_suffix(".json").write_text(json.dumps(truth, indent=1))
        stem.with_suffix(".txt").write_text("\n".join(yolo_lines(truth)) + "\n")
    print(f"{args.count} images written to {args.out}")
    return 0


def cmd_sheet(args) -> int:
    import cv2

    from companion.synth.render import Renderer
    from companion.synth.sheet import contact_sheet

    sheet = contact_sheet(Renderer(), seed=args.seed, per_game=args.per_game, tile=args.tile)
    # Sensor noise makes PNGs large; a light smoothing and 5 bits per channel keep the sheet small.
    sheet = cv2.bilateralFilter(sheet, 5, 20, 5) & 0xF8
    args.out.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(args.out), cv2.cvtColor(sheet, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_PNG_COMPRESSION, 9])
    print(f"{args.out}: {args.out.stat().st_size // 1024} KB")
    return 0


def cmd_bench(args) -> int:
    """Images per second, sampling + rendering + labels + JPEG, one process."""
    from companion.synth.dataset import render_item
    from companion.synth.render import Renderer
    from companion.synth.scenes import GAMES

    started = time.monotonic()
    renderer = Renderer()
    setup = time.monotonic() - started
    render_item(renderer, GAMES[0], 10_000, *args.size)  # warm-up: shader compile, texture pools
    per_game = {}
    total_t, total_n = 0.0, 0
    for game in GAMES:
        t0 = time.monotonic()
        for k in range(args.count):
            render_item(renderer, game, k, *args.size)
        dt = time.monotonic() - t0
        per_game[game] = round(args.count / dt, 2)
        total_t += dt
        total_n += args.count
    result = {"renderer": Renderer.name, "size": f"{args.size[0]}x{args.size[1]}", "images": total_n,
              "images_per_s": round(total_n / total_t, 2), "s_per_image": round(total_t / total_n, 3),
              "per_game_images_per_s": per_game, "context_setup_s": round(setup, 2)}
    print(json.dumps(result, indent=1))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="synth", description="Synthetic labelled table scenes")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("dataset", help="write (or resume) an ultralytics dataset")
    p.add_argument("out", type=Path)
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--games", help="comma-separated game names (default: all five)")
    p.add_argument("--size", type=_size, default=(640, 480))
    p.add_argument("--workers", type=int, default=None, help="processes (default: one per core)")
    p.add_argument("--scheme", default="colour-size-pose")
    p.add_argument("--item-timeout", type=float, default=60.0,
                   help="seconds after which an item is abandoned and its worker replaced (0: no limit)")
    p.add_argument("--referee-share", type=float, default=0.0,
                   help="share of items with the camera stood back to show the whole board (0-1)")
    p.add_argument("--seconds", type=float, default=None,
                   help="begin no item after this long (the same command resumes the rest later)")
    p.add_argument("--splits", help="comma-separated splits to render (default: all); e.g. test makes a "
                                    "held-out split again without its training items")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_dataset)
    p = sub.add_parser("relabel", help="rewrite a dataset's label files from its sidecars")
    p.add_argument("root", type=Path)
    p.add_argument("--scheme", default="colour-size-pose")
    p.add_argument("--min-visible", type=float, default=0.15)
    p.add_argument("--carried-apex-hidden", action="store_true",
                   help="label the apex of a piece that carries another as not seen (its score then tells)")
    p.set_defaults(func=cmd_relabel)
    p = sub.add_parser("crops", help="a dataset of close looks (board or piece crops) made from a full one")
    p.add_argument("source", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--size", type=int, default=480, help="longer side of each crop in pixels")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--scheme", default="colour-size-pose")
    p.add_argument("--webcam-share", type=float, default=0.0,
                   help="share of training crops made worse first by a random webcam effect (companion/webcam.py)")
    p.add_argument("--workers", type=int, default=1, help="processes cutting crops")
    p.set_defaults(func=cmd_crops)
    p = sub.add_parser("render", help="render a few scenes of one game with their sidecars and labels")
    p.add_argument("out", type=Path)
    p.add_argument("--game", default="icebomb-arena")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--count", type=int, default=4)
    p.add_argument("--size", type=_size, default=(640, 480))
    p.set_defaults(func=cmd_render)
    p = sub.add_parser("sheet", help="save a contact sheet of renders per game")
    p.add_argument("out", type=Path)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--per-game", type=int, default=3)
    p.add_argument("--tile", type=_size, default=(224, 168))
    p.set_defaults(func=cmd_sheet)
    p = sub.add_parser("bench", help="measure images per second on this machine")
    p.add_argument("--count", type=int, default=10, help="images per game")
    p.add_argument("--size", type=_size, default=(640, 480))
    p.set_defaults(func=cmd_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ValueError as exc:
        print(f"synth {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
