"""Measures the mapper on synthetic scenes: perfect detections (plus pixel noise) in, accuracy out.

For every visible labelled object the mapped cell (or seat zone), size, colour, direction (lying
pieces) and stack level are compared with the scene's truth; for IceTowers the whole table's scores
(`companion.scoring`) are compared with the scores of the towers as the picture shows them (pieces
hidden inside towers left out: only the game's history can tell them), and with the true towers'
scores. Prints a table per game.

    python scripts/eval_mapper.py --count 40 --noise 1.0            # geometry only (every object visible)
    python scripts/eval_mapper.py --count 20 --render               # rendered visibility (slower)

Stack levels are judged among the pieces of a stack a detector can see (`visible_levels`): with
--render, a piece hidden inside a stack is not expected, and the pieces above it count one lower.
    python scripts/eval_mapper.py --dataset datasets/pieces-v1 --split test
    python scripts/eval_mapper.py --dataset datasets/referee --split all --detector   # detector + mapper
    python scripts/eval_mapper.py --dataset datasets/referee --split all --detector --locate  # + localisation

With --detector the trained detector (models/) looks at each rendered image within the board's
true outline (and round it at the seats' zones when the game has them), as the companion does, so
the figures measure detector and mapper together but
not the localisation; with --locate the board is found in the picture too (its a1 corner pointed at,
as at set-up), so the figures are the whole chain's, and a board not found misses all its pieces.
Each object at least half in view is matched to the observed piece whose
box overlaps it most (IoU >= 0.5); one without a match counts as wrong ("missed"), and observed
pieces matching nothing are counted as "extra".
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import cv2
import numpy as np

from companion.evaluation import MIN_VISIBLE, match_by_box
from companion.pieces import Colour, Pyramid, Size
from companion.referee.space_arena import ship_text, ships_seen
from companion.scoring import Observation as ScoredTable, ObservationError, parse_observation, score_observation
from companion.vision.locate import BoardLocation, BoardNotFound, Locator, board_outline
from companion.vision.mapper import (Mapper, board_spec_from_truth, config_for, location_from_truth, truth_detections,
                                     truth_objects)
from companion.vision.dice import dice_read_on_board
from companion.vision.region import detect_near_board
from companion.vision.size_reader import sizes_read_on_board
from companion.vision.observation import icetowers_position

SEATS = {"icebomb-arena": lambda truth: len(truth["state"].get("players", {}))}


def _scores(table: ScoredTable) -> dict[str, int]:
    return {c.value: v for c, v in score_observation(table).colour_scores if v}


def true_icetowers_scores(truth: dict) -> dict[str, int]:
    towers = [tuple(Pyramid.parse(p) for p in t["pieces"]) for t in truth["state"]["towers"]]
    towers += [(Pyramid.parse(p),) for p in truth["state"].get("lying", [])]
    return _scores(ScoredTable(tuple(towers)))


def visible_icetowers_scores(truth: dict, min_visible: float = 0.15) -> dict[str, int]:
    """The scores of the table as one picture shows it: pieces hidden inside towers (capped or mined,
    less than `min_visible` in view) left out, as `truth_detections` leaves them out.

    A single picture cannot show them; the companion keeps them from the history of the game
    (the tracker sees each cap and mine happen), so this is what recognition alone can reach.
    """
    stacks: dict[int, list[dict]] = defaultdict(list)
    free = []
    for obj in truth_objects(truth, min_visible):
        if obj["kind"] != "pyramid":
            continue
        if obj.get("stack") is None:
            free.append(obj)
        else:
            stacks[obj["stack"]].append(obj)
    towers = []
    for members in stacks.values():
        if len(members) == 1:
            free += members
        else:
            towers.append([[o["colour"], o["size"]] for o in sorted(members, key=lambda o: o["level"])])
    if not towers and not free:
        return {}  # nothing in view: as an empty observation is scored below
    return _scores(parse_observation({"game": "icetowers", "towers": towers,
                                      "free": [[o["colour"], o["size"]] for o in free]}))


def true_upright_ships(truth: dict) -> Counter:
    """ARENA's ships standing as trees (`ship_text`, as the referee's adapter writes them)."""
    return Counter(ship_text(ship["colour"], ship["cell"], ship["height"])
                   for ship in truth["state"].get("ships", {}).values() if not ship.get("lying"))


def tree_heights_read(expected: Counter, seen: Counter) -> Counter:
    """How each expected ship's height was read: 'right', 'short' or 'tall' by the first ship seen of
    its colour on its tile with a height, else 'not seen' (ships as `ship_text`)."""
    heights: dict[tuple[str, str], int] = {}
    for text in seen:
        colour, at, height = text.split(" ")
        if height[1:].isdigit():
            heights.setdefault((colour, at), int(height[1:]))
    out: Counter = Counter()
    for text, n in expected.items():
        colour, at, height = text.split(" ")
        got, want = heights.get((colour, at)), int(height[1:])
        out["not seen" if got is None else "right" if got == want else "short" if got < want else "tall"] += n
    return out


def true_lying_ships(truth: dict) -> Counter:
    """ARENA's ships laid down with a d8 beside them showing their height (renders since session 36)."""
    return Counter(ship_text(ship["colour"], ship["cell"], ship["height"])
                   for ship in truth["state"].get("ships", {}).values() if ship.get("lying") and ship.get("height_die"))


def visible_levels(objects: list[dict]) -> dict[int, int | None]:
    """Each stacked object's level among the pieces of its stack that a detector can see.

    A piece hidden inside a stack (too little of it in view) cannot be seen, so the pieces above it
    are judged one level lower; a stack with one piece in view is a lone piece (level None).
    Without rendering every piece counts as seen and these are the true levels.
    """
    stacks: dict[int, list[dict]] = defaultdict(list)
    for obj in objects:
        if obj.get("stack") is not None and obj.get("level") is not None:
            stacks[obj["stack"]].append(obj)
    out: dict[int, int | None] = {}
    for members in stacks.values():
        members.sort(key=lambda o: o["level"])
        for k, obj in enumerate(members):
            out[id(obj)] = k if len(members) > 1 else None
    return out


def located(truth: dict, frame: np.ndarray) -> BoardLocation | None:
    """The board as the companion finds it in the picture (None: not found), its a1 corner pointed
    at as at set-up; a bare table keeps the scene's own plane (the marker sheet is not rendered)."""
    if truth.get("board") is None:
        return location_from_truth(truth)
    spec = board_spec_from_truth(truth)
    a1 = location_from_truth(truth).board_to_image(spec.playing_corners[:1])[0]
    try:
        return Locator(spec).locate(frame, a1_near=(float(a1[0]), float(a1[1])))
    except BoardNotFound:
        return None


def evaluate(truth: dict, noise: float, rng: np.random.Generator, tally: dict, detect=None, frame=None,
             examples: int = 3, locate: bool = False) -> None:
    game = truth["game"]
    seats = SEATS.get(game, lambda t: 0)(truth)
    mapper = Mapper(game, config_for(game, seats))
    objects = truth_objects(truth)
    t = tally[game]
    t["scenes"] += 1
    location = located(truth, frame) if locate else location_from_truth(truth)
    if location is None:
        t["not_located"] += 1
    if detect is None:
        observation = mapper.map(truth_detections(truth, noise, rng), location_from_truth(truth))
        judged = list(zip(objects, observation.pieces))
    elif location is None:  # every piece is missed (a bare table always has its plane)
        observation = None
        judged = [(o, None) for o in objects if o.get("visible_fraction", 0) >= MIN_VISIBLE]
    else:
        # As the companion looks: within the board's region (the true board's, or with --locate the one
        # found), and the seats' zones round it when the game has them.
        outline = board_outline(location) if locate else (None if truth.get("board") is None
                                                          else np.asarray(truth["board"]["outline_px"], float))
        detections = detect_near_board(detect, frame, outline, seat_zones=mapper.config.seats > 0)
        detections = sizes_read_on_board(detect, frame, detections, location.H)
        detections = dice_read_on_board(detect, frame, detections, location.H)
        observation = mapper.map(detections, location)
        judged_objects = [o.get("visible_fraction", 0) >= MIN_VISIBLE for o in objects]
        match = match_by_box([o["box_px"] for o in objects], [p.box for p in observation.pieces],
                             judged=judged_objects)
        seen_for = [None if j is None else observation.pieces[j] for j in match]
        t["extra"] += len(observation.pieces) - sum(j is not None for j in match)
        judged = [(o, s) for o, s, j in zip(objects, seen_for, judged_objects) if j]
    levels = visible_levels(objects)
    for obj, seen in judged:
        t["objects"] += 1
        if seen is None:
            t["missed"] += 1
            t["pyramids"] += obj["kind"] == "pyramid"
            t["lying"] += bool(obj.get("pose") == "lying" and obj.get("direction") and obj.get("nested_in") is None)
            t["stacked"] += obj.get("level") is not None and obj["kind"] == "pyramid"
            if len(t["examples"]) < examples:
                t["examples"].append(f"seed {truth['seed']}: {obj.get('colour')}-{obj.get('size')} {obj['kind']} missed")
            continue
        where_true = obj.get("cell") or obj.get("zone")
        if where_true in (None, "table", "board") and game != "icebomb-arena":
            where_true = None
        where_ok = where_true is None or where_true == seen.where
        t["where"] += where_ok
        ok = where_ok
        t["unsure"] += bool(seen.unsure)
        if obj["kind"] == "pyramid":
            t["pyramids"] += 1
            size_ok = seen.size == Size.parse(obj["size"])
            colour_ok = seen.colour == Colour(obj["colour"])
            t["size"] += size_ok
            t["colour"] += colour_ok
            ok = ok and size_ok and colour_ok
            if obj.get("pose") == "lying" and obj.get("direction") and obj.get("nested_in") is None:
                t["lying"] += 1
                dir_ok = seen.direction == obj["direction"]
                t["direction"] += dir_ok
                ok = ok and dir_ok
            if obj.get("level") is not None:
                t["stacked"] += 1
                t["level"] += seen.level == levels[id(obj)]
                ok = ok and seen.level == levels[id(obj)]
        t["all_right"] += ok
        if not ok and len(t["examples"]) < examples:
            t["examples"].append(f"seed {truth['seed']}: {obj.get('colour')}-{obj.get('size')} {obj['kind']} "
                                 f"truth {where_true} L{obj.get('level')} {obj.get('direction')} -> "
                                 f"{seen.colour and seen.colour.value}-{seen.size and int(seen.size)} "
                                 f"{seen.cell or seen.zone} L{seen.level} {seen.direction} {seen.unsure}")
    if game == "space-arena" and _whole_table_in_view(truth):
        # A ship is read right when the referee's adapter names its colour, tile and height exactly.
        expected = true_upright_ships(truth)
        seen = ships_seen(observation)[0] if observation is not None else Counter()
        t["ships"] += expected.total()
        t["ships_right"] += (expected & seen).total()
        for how, n in tree_heights_read(expected, seen).items():
            t[f"trees_{how.replace(' ', '_')}"] += n
        if detect is not None:  # perfect detections carry no dice values: only the detector's are read
            lying = true_lying_ships(truth)
            t["lying_ships"] += lying.total()
            t["lying_ships_right"] += (lying & seen).total()
    if game == "icetowers" and observation is not None and _whole_table_in_view(truth):
        # A score is only defined for a table the camera sees whole: pieces cut off by the frame's
        # edge are not judged here (pieces hidden inside towers are: that is the mapper's problem).
        t["tables"] += 1
        try:
            seen_scores = _scores(parse_observation(icetowers_position(observation)))
        except ObservationError:  # nothing seen on the table: no scores at all
            seen_scores = {}
        t["exact_score"] += seen_scores == true_icetowers_scores(truth)
        t["exact_visible_score"] += seen_scores == visible_icetowers_scores(truth)


def _whole_table_in_view(truth: dict) -> bool:
    w, h = truth["image"]["width"], truth["image"]["height"]
    for obj in truth["objects"]:
        if obj["kind"] != "pyramid":
            continue
        box = obj.get("box_px")
        if box is None or box[0] <= 0 or box[1] <= 0 or box[2] >= w or box[3] >= h:
            return False
    return True


def _truths(args) -> list[dict]:
    if args.dataset:
        pattern = "*/*.json" if args.split == "all" else f"{args.split}/*.json"
        paths = sorted((Path(args.dataset) / "truth").glob(pattern))[: args.count]
        if not paths:
            raise SystemExit(f"eval_mapper: no truth sidecars under {Path(args.dataset) / 'truth' / args.split}")
        truths = [json.loads(p.read_text()) | {"_split": p.parent.name, "_name": p.stem} for p in paths]
        return [t for t in truths if not args.games or t["game"] in args.games]
    from companion.synth.labels import sidecar
    from companion.synth.scenes import GAMES, sample_scene

    renderer = None
    if args.render:
        from companion.synth.render import Renderer

        renderer = Renderer()
    games = args.games or list(GAMES)
    out = []
    for game in games:
        for i in range(args.count):
            scene = sample_scene(game, args.seed + i, args.width, args.height)
            ids = renderer.render(scene).ids if renderer else None
            out.append(sidecar(scene, ids))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=40, help="scenes per game (or from the dataset)")
    parser.add_argument("--seed", type=int, default=900000, help="first scene seed (held out from training)")
    parser.add_argument("--noise", type=float, default=1.0, help="keypoint noise, pixels (standard deviation)")
    parser.add_argument("--games", nargs="*", help="games to evaluate (default: all; with --dataset, its scenes of these games)")
    parser.add_argument("--render", action="store_true", help="render for true visibility (slower)")
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--height", type=int, default=480)
    parser.add_argument("--dataset", type=Path, help="read sidecars from a dataset instead of sampling")
    parser.add_argument("--split", default="test", help='dataset split, or "all" for a test-only dataset')
    parser.add_argument("--detector", action="store_true", help="detect with the trained model instead of the truth")
    parser.add_argument("--model", type=Path, help="with --detector: these weights, not the shipped ones")
    parser.add_argument("--json", action="store_true", help="print the tally as JSON")
    parser.add_argument("--examples", type=int, default=3, help="wrong pieces to print per game")
    parser.add_argument("--locate", action="store_true",
                        help="with --detector: find the board in the picture as the companion does, not from the truth")
    args = parser.parse_args(argv)
    started = time.monotonic()
    tally: dict = defaultdict(lambda: defaultdict(int) | {"examples": []})
    rng = np.random.default_rng(args.seed)
    detect = None
    if args.detector:
        if not args.dataset:
            parser.error("--detector needs --dataset (rendered images to look at)")
        from companion.recognize import model_detector

        detect = model_detector(args.model) if args.model else model_detector()
    for truth in _truths(args):
        frame = None
        if detect is not None:
            image = Path(args.dataset) / "images" / truth["_split"] / (truth["_name"] + ".jpg")
            frame = cv2.imread(str(image))
            if frame is None:
                raise SystemExit(f"eval_mapper: cannot read {image}")
        evaluate(truth, args.noise, rng, tally, detect, frame, args.examples, args.locate)
    if args.json:
        json.dump(tally, sys.stdout, indent=2, default=list)
        print()
        return 0

    def pct(a: int, b: int) -> str:
        return f"{100 * a / b:6.2f}%" if b else "     -"

    source = "trained detector" if detect else f"truth detections, noise {args.noise} px"
    source += ", board located in the picture" if args.locate else ""
    print(f"{source}, {time.monotonic() - started:.1f} s")
    print(f"{'game':15} {'scenes':>6} {'objects':>7} {'cell':>7} {'size':>7} {'colour':>7} {'dir':>7} "
          f"{'level':>7} {'all ok':>7} {'unsure':>7} {'missed':>7} {'extra':>6} {'score':>7}"
          + ("  boards not found" if args.locate else ""))
    for game, t in tally.items():
        print(f"{game:15} {t['scenes']:>6} {t['objects']:>7} {pct(t['where'], t['objects'])} "
              f"{pct(t['size'], t['pyramids'])} {pct(t['colour'], t['pyramids'])} {pct(t['direction'], t['lying'])} "
              f"{pct(t['level'], t['stacked'])} {pct(t['all_right'], t['objects'])} {pct(t['unsure'], t['objects'])} "
              f"{pct(t['missed'], t['objects'])} {t['extra']:>6} "
              f"{pct(t['exact_visible_score'], t['tables'])}"
              + (f"  {t['not_located']}" if args.locate else "")
              + (f" of {t['tables']} tables wholly in view ({pct(t['exact_score'], t['tables']).strip()} counting the"
                 " pieces hidden inside towers)" if t["tables"] else "")
              + (f" ships standing as trees read right (colour, tile, height): {t['ships_right']} of {t['ships']}"
                 f" (heights read short {t['trees_short']}, tall {t['trees_tall']},"
                 f" tree not seen {t['trees_not_seen']})"
                 if t["ships"] else "")
              + (f"; laid down beside a d8 (its value read for height): {t['lying_ships_right']} of {t['lying_ships']}"
                 if t["lying_ships"] else ""))
    for game, t in tally.items():
        for example in t["examples"]:
            print(f"  {game}: {example}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
