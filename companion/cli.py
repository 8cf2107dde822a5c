"""The `companion` command. Each sub-command is one small function that calls the package.

Exit codes: 0 success, 1 the input was read but judged bad (an illegal move in a
record), 2 the input could not be read (a one-line error on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import resources
from pathlib import Path

from companion import models
from companion.games import GameError, game_names, get_game
from companion.records import RecordError, Verdict, read_record, replay

SAMPLE_RECORD = "icebomb-arena-4p.jsonl"


def sample_record_path() -> Path:
    return Path(str(resources.files("companion") / "data" / "samples" / SAMPLE_RECORD))


def cmd_replay(args: argparse.Namespace) -> int:
    header, events = read_record(args.record)
    verdicts: list[Verdict] = []
    state = header.initial_state()
    for verdict, state in replay(header, events):
        verdicts.append(verdict)
        if not args.json:
            print(verdict)
    illegal = sum(not v.legal for v in verdicts)
    if args.json:
        json.dump({"game": header.game, "variant": header.variant, "players": list(header.players),
                   "verdicts": [v.to_json() for v in verdicts], "illegal": illegal,
                   "final": state.summary()}, sys.stdout, indent=2)
        print()
    else:
        print()
        print(f"{len(verdicts)} events, {illegal} illegal")
        print(state)
        print("players: " + ", ".join(f"P{i + 1} {name}" for i, name in enumerate(header.players)))
    return 1 if illegal else 0


def cmd_games(args: argparse.Namespace) -> int:
    for name in game_names():
        game = get_game(name)
        variants = ", ".join(game.variants)
        print(f"{name:15} {game.title} ({game.min_players}-{game.max_players} players; variants: {variants})")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """The main job: serves the page on the demo feed (the sample game replayed); opens nothing."""
    from companion.server.commands import cmd_demo as serve_demo

    return serve_demo(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="companion", description="Icehouse Companion: referee and score keeper")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("replay", help="check a game record event by event and print the final state")
    p.add_argument("record", type=Path, help="a JSON-lines game record (docs/records.md)")
    p.add_argument("--json", action="store_true", help="print verdicts and final state as JSON")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("games", help="list the games the referee knows")
    p.set_defaults(func=cmd_games)

    p = sub.add_parser("demo", help="serve the page on the bundled demo (a sample game replayed)")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--duration", type=float, default=None, help="stop after this many seconds")
    p.set_defaults(func=cmd_demo)

    from companion.server.commands import add_server_commands  # `serve` and `export`
    add_server_commands(sub)

    p = sub.add_parser("score", help="score an IceTowers table observation (docs/observations/icetowers.md)")
    p.add_argument("observation", type=Path, help="a JSON observation: towers bottom to top, free pieces, players")
    p.add_argument("--json", action="store_true", help="print the scores as JSON")
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("eval", help="evaluate the piece detector on a held-out synthetic split")
    p.add_argument("dataset", type=Path, help="a dataset written by `scripts/synth dataset` (truth sidecars)")
    p.add_argument("--split", default="test", choices=("train", "val", "test", "all"),
                   help="all: every item of a dataset rendered only for testing (default: test)")
    p.add_argument("--model", type=Path, default=models.DETECTOR_WEIGHTS)
    p.add_argument("--colour-model", type=Path, default=models.COLOUR_WEIGHTS)
    p.add_argument("--size-model", type=Path, default=models.SIZE_WEIGHTS,
                   help="the classifier reading sizes at the board's scale (companion/vision/size_reader.py), "
                        "used when the file exists")
    p.add_argument("--no-size-model", dest="size_model", action="store_const", const=None,
                   help="keep the detector's sizes (then checked against the geometry unless --no-size-check)")
    p.add_argument("--dice-model", type=Path, default=models.DICE_WEIGHTS,
                   help="the dice face classifier (companion/vision/dice.py), used when the file exists")
    p.add_argument("--no-dice-model", dest="dice_model", action="store_const", const=None,
                   help="count a d6's pips and match a d8's number against drawn ones instead")
    p.add_argument("--tip-model", type=Path, default=models.TIP_WEIGHTS,
                   help="the classifier dropping a piece's tip taken for a piece stacked on it "
                        "(companion/vision/tips.py), used when the file exists")
    p.add_argument("--no-tip-model", dest="tip_model", action="store_const", const=None,
                   help="keep every piece the detector finds on another")
    p.add_argument("--imgsz", type=int, default=models.DETECTOR_IMGSZ)
    p.add_argument("--close-imgsz", type=int, default=models.DETECTOR_CLOSE_IMGSZ,
                   help="input size of the close look at small pieces (0: never look closely)")
    p.add_argument("--limit", type=int, help="at most this many images")
    p.add_argument("--look", choices=("board", "whole"), default="board",
                   help="board: detect within the board's region as the companion does (default); "
                        "whole: on the whole image (a dataset of crops)")
    p.add_argument("--no-size-check", dest="check_sizes", action="store_false",
                   help="keep the detector's sizes (by default each is checked against the scene's geometry "
                        "as the mapper does: companion/vision/sizing.py)")
    p.add_argument("--no-colour-mirror", dest="colour_mirror", action="store_false",
                   help="classify each crop's colour once, not also mirrored (companion/vision/colour.py)")
    p.add_argument("--single-look", dest="mirror_look", action="store_false",
                   help="run the detector once per picture, not also on its mirror image (companion/vision/mirrored.py)")
    p.add_argument("--no-white-balance", dest="white_balance", action="store_false",
                   help="read each piece's colour only as the picture shows it (by default also with half of "
                        "the picture's colour cast taken out: companion/vision/balance.py)")
    p.add_argument("--confidence", type=float,
                   help="keep detections scoring at least this (default: DetectorConfig's, "
                        "companion/vision/detect.py; one look used 0.35 until session 11)")
    from companion.webcam import EFFECTS
    p.add_argument("--webcam", choices=sorted(EFFECTS), metavar="EFFECT",
                   help="make every picture worse first, as a real camera or room would (companion/webcam.py): "
                        + ", ".join(sorted(EFFECTS)))
    p.add_argument("--map", action="store_true", help="also run ultralytics validation for box and keypoint mAP")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.set_defaults(func=cmd_eval)

    from companion.vision.locate import add_vision_commands  # `calibrate camera` and `locate`
    add_vision_commands(sub)
    from companion.recognize import add_recognize_command  # `recognize IMAGE... --game G`
    add_recognize_command(sub)
    return parser


def cmd_eval(args: argparse.Namespace) -> int:
    """Runs the detector over a dataset split and prints what a referee cares about."""
    from dataclasses import replace

    from companion.evaluation import evaluate, format_report, ultralytics_map
    from companion.vision.colour import ColourClassifier
    from companion.vision.detect import Detector, DetectorConfig

    if args.map and args.split == "all":
        print("companion eval: --map needs one split (train, val or test), not all", file=sys.stderr)
        return 2
    colour = ColourClassifier(args.colour_model, mirror=args.colour_mirror) if args.colour_model.exists() else None
    try:
        config = DetectorConfig(weights=args.model, imgsz=args.imgsz, close_imgsz=args.close_imgsz or args.imgsz,
                                mirror_look=args.mirror_look)
        if not args.white_balance:
            config = replace(config, white_balance=0.0)
        if args.confidence is not None:
            config = replace(config, confidence=args.confidence)
    except ValueError as exc:
        print(f"companion eval: {exc}", file=sys.stderr)
        return 2
    size_of = None
    if args.size_model is not None and args.size_model.exists():
        from companion.vision.size_reader import SizeClassifier

        size_of = SizeClassifier(args.size_model)
    faces_of = None
    if args.dice_model is not None and args.dice_model.exists():
        from companion.vision.dice import DiceFaceClassifier

        faces_of = DiceFaceClassifier(args.dice_model)
    tips_of = None
    if args.tip_model is not None and args.tip_model.exists():
        from companion.vision.tips import TipClassifier

        tips_of = TipClassifier(args.tip_model)
    detector = Detector(config, colour, size_of, faces_of, tips_of)
    report = evaluate(detector, args.dataset, split=args.split, limit=args.limit, look=args.look,
                      check_sizes=args.check_sizes, webcam=args.webcam)
    report["model"], report["colour_model"] = str(args.model), str(args.colour_model) if colour else None
    report["size_model"] = str(args.size_model) if size_of else None
    report["dice_model"] = str(args.dice_model) if faces_of else None
    report["tip_model"] = str(args.tip_model) if tips_of else None
    report["colour_mirror"] = bool(colour) and args.colour_mirror
    report["mirror_look"], report["confidence"] = config.mirror_look, config.confidence
    report["white_balance"] = config.white_balance
    report["imgsz"], report["close_imgsz"] = args.imgsz, args.close_imgsz or args.imgsz
    if args.map:
        report["map"] = ultralytics_map(args.model, args.dataset, args.split, args.imgsz)
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
    else:
        print(format_report(report))
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    """Scores an IceTowers table; exit 1 when the table shows a rule violation."""
    from companion.scoring import ObservationError, read_observation, score_observation

    try:
        report = score_observation(read_observation(args.observation))
    except ObservationError as exc:
        print(f"companion score: {args.observation}: {exc}", file=sys.stderr)
        return 2
    if args.json:
        json.dump(report.to_json(), sys.stdout, indent=2)
        print()
    else:
        print(report)
    return 1 if report.violations else 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (RecordError, GameError) as exc:
        print(f"companion {args.command}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"companion {args.command}: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
