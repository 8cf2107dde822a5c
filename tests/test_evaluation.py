"""The detector evaluation scores a perfect detector perfectly and a colour-blind one as such."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace

import pytest

from companion.evaluation import angle_diff, evaluate, match_by_box, snap
from companion.pieces import Colour, Pose, Size
from companion.vision.detection import Detection


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    pytest.importorskip("moderngl")
    from companion.synth.dataset import write_dataset

    root = tmp_path_factory.mktemp("eval-ds")
    try:
        write_dataset(root, 10, seed=4, width=320, height=240, workers=1, progress=False)
    except Exception as exc:  # no headless GL here
        pytest.skip(f"cannot render: {exc}")
    return root


def oracle(root, split="train"):
    """A detector that reads the answer from the truth sidecars, in the order evaluate() visits them."""
    frames = iter(sorted(root.glob("truth/*/*.json" if split == "all" else f"truth/{split}/*.json")))

    def detect(frame):
        truth = json.loads(next(frames).read_text())
        out = []
        for o in truth["objects"]:
            if not o.get("box_px") or o["kind"] not in ("pyramid", "pawn", "bead", "d6", "d8"):
                continue
            if o["kind"] == "pyramid":
                out.append(Detection("pyramid", tuple(o["box_px"]), 0.9, "x", Colour(o["colour"]),
                                     Size.parse(o["size"]), Pose(o["pose"]), tuple(o["apex_px"]),
                                     tuple(o["contact_px"]), (1.0, 1.0)))
            else:
                out.append(Detection(o["kind"], tuple(o["box_px"]), 0.9, o["kind"]))
        return out

    return detect


def test_a_perfect_detector_scores_perfectly(dataset):
    figures = evaluate(oracle(dataset), dataset, split="train", look="whole")["all"]
    assert figures["pieces_at_least_half_visible"] > 0
    assert figures["recall_colour_and_size"] == 1.0
    assert figures["precision_colour_and_size"] == 1.0
    assert figures["upright_lying_accuracy"] == 1.0
    assert figures["false_detections_per_image"] == 0.0
    if figures["lying_pieces_in_game_directions"]:
        assert figures["direction_snapped_accuracy"] == 1.0
        assert figures["direction_error_median_deg"] < 2.0


def test_wrong_colours_lose_recall_and_precision_but_not_pose(dataset):
    detect = oracle(dataset)

    def colour_blind(frame):
        return [replace(d, colour=Colour.RED if d.colour != Colour.RED else Colour.BLUE) if d.kind == "pyramid" else d
                for d in detect(frame)]

    figures = evaluate(colour_blind, dataset, split="train", look="whole")["all"]
    assert figures["recall_colour_and_size"] == 0.0 and figures["precision_colour_and_size"] == 0.0
    assert figures["upright_lying_accuracy"] == 1.0


def test_sizes_are_checked_against_the_geometry_and_the_changes_counted(dataset):
    one_off = {Size.SMALL: Size.MEDIUM, Size.MEDIUM: Size.LARGE, Size.LARGE: Size.MEDIUM}

    def size_blind(detect):
        return lambda frame: [replace(d, size=one_off[d.size]) if d.kind == "pyramid" else d for d in detect(frame)]

    kept = evaluate(size_blind(oracle(dataset)), dataset, split="train", look="whole", check_sizes=False)["all"]
    assert kept["recall_colour_and_size"] == 0.0 and kept["sizes_changed_by_geometry"] == 0
    checked = evaluate(size_blind(oracle(dataset)), dataset, split="train", look="whole")["all"]
    assert checked["sizes_changed_to_right"] > 0 and checked["sizes_changed_to_wrong"] == 0
    assert checked["size_accuracy_matched"] == pytest.approx(
        checked["sizes_changed_to_right"] / checked["pieces_at_least_half_visible"], abs=0.01)
    perfect = evaluate(oracle(dataset), dataset, split="train", look="whole")["all"]
    assert perfect["sizes_changed_to_wrong"] == 0


def test_split_all_scores_every_item_of_a_test_only_dataset(dataset):
    every = evaluate(oracle(dataset, "all"), dataset, split="all", look="whole")["all"]
    train = evaluate(oracle(dataset), dataset, split="train", look="whole")["all"]
    assert every["recall_colour_and_size"] == 1.0 and every["images"] == 10 > train["images"]


def test_missing_split_is_a_clear_error(dataset):
    with pytest.raises(FileNotFoundError, match="no truth sidecars"):
        evaluate(lambda f: [], dataset, split="nope")


def test_angles_and_snapping():
    assert angle_diff(350, 10) == 20 and angle_diff(90, 270) == 180
    assert snap(44, 90) == 0 and snap(46, 90) == 1 and snap(359, 45) == 0 and snap(90, 60, 30) == 1


def test_by_default_the_detector_looks_at_the_board_region_and_round_it_as_the_companion_does(dataset):
    import cv2
    import numpy as np

    from companion.vision.region import SEAT_ZONE_MARGIN, board_region

    seen = []
    evaluate(lambda frame: seen.append(frame.shape[:2]) or [], dataset, split="train")
    expected = []
    for path in sorted(dataset.glob("truth/train/*.json")):
        truth = json.loads(path.read_text())
        shape = cv2.imread(str(dataset / "images" / "train" / (path.stem + ".jpg"))).shape
        if truth["board"] is None:
            expected.append(shape[:2])  # nothing found on the first look: no second one
        else:
            # The board's region, then the seat zones round it (the pipeline seats every game's players).
            outline = np.asarray(truth["board"]["outline_px"], float)
            region = board_region(outline, shape)
            expected.append((region.height, region.width))
            zones = board_region(outline, shape, SEAT_ZONE_MARGIN)
            if zones != region:
                expected.append((zones.height, zones.width))
    assert seen == expected and any(s != (240, 320) for s in seen)
    with pytest.raises(ValueError, match="unknown look"):
        evaluate(lambda f: [], dataset, split="train", look="sideways")


def test_true_boxes_are_matched_to_the_seen_box_overlapping_most_each_used_once():
    truth = [(0, 0, 10, 10), (20, 0, 30, 10), (50, 50, 60, 60)]
    seen = [(21, 0, 31, 10), (1, 0, 11, 10), (0, 1, 10, 11), (80, 80, 90, 90)]
    # (0, 1, 10, 11) overlaps the first box as much as (1, 0, 11, 10) does: one of them wins and
    # the other is left over; nothing overlaps the third box enough.
    match = match_by_box(truth, seen)
    assert match[0] in (1, 2) and match[1] == 0 and match[2] is None
    twins = match_by_box(truth, [(0, 0, 10, 10)] * 2)
    assert twins[0] in (0, 1) and twins[1:] == [None, None]  # the second twin is left over
    assert match_by_box(truth, [(5, 0, 15, 10)]) == [None, None, None]  # IoU 1/3, under 0.5



def test_a_box_goes_to_the_piece_that_is_judged_before_a_hidden_one_whose_box_it_overlaps_more():
    cap, hidden = (0, 0, 10, 12), (0, 1, 10, 12)  # a piece nearly covered by its cap: nearly the same box
    seen = [(0, 1, 10, 12.5)]  # overlaps the hidden piece's box more than the cap's
    assert match_by_box([cap, hidden], seen) == [None, 0]
    assert match_by_box([cap, hidden], seen, judged=[True, False]) == [0, None]
    # A second detection there goes to the hidden piece: neither credited nor a false detection.
    assert match_by_box([cap, hidden], seen + [hidden], judged=[True, False]) == [1, 0]

def _eval_mapper():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scripts" / "eval_mapper.py"
    spec = importlib.util.spec_from_file_location("eval_mapper", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_icetowers_scores_as_a_picture_shows_them_leave_out_pieces_hidden_inside_towers():
    eval_mapper = _eval_mapper()

    def pyramid(colour, size, visible, stack=None, level=None):
        return {"kind": "pyramid", "colour": colour, "size": size, "box_px": [0, 0, 10, 10],
                "visible_fraction": visible, "stack": stack, "level": level}

    truth = {"state": {"towers": [{"pieces": ["black-M", "purple-S", "purple-S"]}, {"pieces": ["red-L"]}]},
             "objects": [pyramid("black", "M", 0.5, 0, 0), pyramid("purple", "S", 0.1, 0, 1),
                         pyramid("purple", "S", 1.0, 0, 2), pyramid("red", "L", 1.0)]}
    # Seen: purple-S on black-M (purple controls 2 + 1 pips) and a lone red-L (3).
    assert eval_mapper.visible_icetowers_scores(truth) == {"purple": 3, "red": 3}
    assert eval_mapper.true_icetowers_scores(truth) != eval_mapper.visible_icetowers_scores(truth)


def test_arena_ships_are_judged_as_the_referee_names_them_and_ships_laid_down_are_left_out():
    eval_mapper = _eval_mapper()
    truth = {"state": {"ships": {"P1": {"colour": "red", "cell": "b4", "height": 3, "stack": ["L", "M", "S"]},
                                 "P2": {"colour": "blue", "cell": "g7", "height": 1, "lying": "NE"}}}}
    assert eval_mapper.true_upright_ships(truth) == {"red @b4 h3": 1}


def test_eval_mapper_with_the_board_located_counts_a_board_not_found_as_every_piece_missed(dataset):
    import numpy as np
    from collections import defaultdict

    eval_mapper = _eval_mapper()
    truths = [json.loads(p.read_text()) for p in sorted(dataset.glob("truth/*/*.json"))]
    with_board = next(t for t in truths if t.get("board") is not None)
    blank = np.full((with_board["image"]["height"], with_board["image"]["width"], 3), 128, np.uint8)
    assert eval_mapper.located(with_board, blank) is None
    tally = defaultdict(lambda: defaultdict(int) | {"examples": []})
    eval_mapper.evaluate(with_board, 0.0, np.random.default_rng(0), tally, detect=lambda frame: [], frame=blank,
                         locate=True)
    t = tally[with_board["game"]]
    assert t["not_located"] == 1 and t["objects"] > 0 and t["missed"] == t["objects"]
    # A bare table has no board to find: the scene's own plane stands (its marker sheet is not rendered).
    table = next((t for t in truths if t.get("board") is None), None)
    if table is not None:
        assert eval_mapper.located(table, blank).method == "truth"


def test_dice_values_count_as_read_and_right_only_for_dice_whose_face_is_known():
    from companion.evaluation import Tally, score_image

    camera = {"fx": 500.0, "fy": 500.0, "cx": 160.0, "cy": 120.0, "width": 320, "height": 240,
              "R": [[1, 0, 0], [0, -1, 0], [0, 0, -1]], "t": [0, 0, 500.0]}
    truth = {"game": "zamboni-wars", "camera": camera, "objects": [
        {"kind": "d6", "box_px": [10, 10, 30, 30], "visible_fraction": 1.0, "value": 4},
        {"kind": "d6", "box_px": [50, 10, 70, 30], "visible_fraction": 1.0, "value": 2},
        {"kind": "d6", "box_px": [90, 10, 110, 30], "visible_fraction": 1.0},  # rendered before faces varied
        {"kind": "d8", "box_px": [10, 50, 30, 70], "visible_fraction": 1.0, "value": 7},
        {"kind": "d8", "box_px": [50, 50, 70, 70], "visible_fraction": 1.0, "value": 3},
        {"kind": "d8", "box_px": [90, 50, 110, 70], "visible_fraction": 1.0, "value": 8}]}
    seen = [Detection("d6", (10, 10, 30, 30), 0.9, "d6", value=4), Detection("d6", (50, 10, 70, 30), 0.9, "d6"),
            Detection("d6", (90, 10, 110, 30), 0.9, "d6", value=5),
            Detection("d8", (10, 50, 30, 70), 0.9, "d8", value=7), Detection("d8", (50, 50, 70, 70), 0.9, "d8", value=5),
            Detection("d8", (90, 50, 110, 70), 0.9, "d8")]
    tally = Tally()
    score_image(truth, seen, [tally])
    figures = tally.figures()
    assert figures["d6_values_read"] == 0.5 and figures["d6_values_right_of_read"] == 1.0
    assert figures["d8_values_read"] == round(2 / 3, 4) and figures["d8_values_right_of_read"] == 0.5


def test_a_webcam_effect_is_applied_to_every_picture_the_detector_sees(dataset):
    import cv2
    from companion.webcam import apply_effect

    seen = []
    evaluate(lambda frame: seen.append(frame.copy()) or [], dataset, split="train", look="whole", webcam="warm-light")
    clean = [cv2.imread(str(dataset / "images" / p.parent.name / (p.stem + ".jpg")))
             for p in sorted(dataset.glob("truth/train/*.json"))]
    assert len(seen) == len(clean) > 0
    assert all((s == apply_effect("warm-light", c, 0)).all() for s, c in zip(seen, clean))
    with pytest.raises(ValueError, match="unknown webcam effect"):
        evaluate(lambda f: [], dataset, split="train", webcam="sepia")


def test_eval_mapper_tells_arena_trees_read_short_from_tall_and_unseen():
    read = _eval_mapper().tree_heights_read
    expected = Counter({"red @b4 h3": 1, "blue @g2 h1": 1, "green @c8 h2": 1, "black @a1 h2": 1})
    seen = Counter({"red @b4 h1": 1, "blue @g2 h2": 1, "green @c8 h2": 1, "black @a2 h2": 1, "black @a1 h?": 1})
    assert read(expected, seen) == {"short": 1, "tall": 1, "right": 1, "not seen": 1}


def test_eval_mapper_names_arena_ships_standing_and_laid_down_beside_a_d8_apart():
    eval_mapper = _eval_mapper()
    truth = {"state": {"ships": {
        "P1": {"colour": "red", "cell": "b4", "height": 3},
        "P2": {"colour": "blue", "cell": "g2", "height": 4, "lying": "NE", "height_die": "h2"},
        "P3": {"colour": "green", "cell": "c8", "height": 1, "lying": "W"}}}}  # no die: its height is not shown
    assert eval_mapper.true_upright_ships(truth) == {"red @b4 h3": 1}
    assert eval_mapper.true_lying_ships(truth) == {"blue @g2 h4": 1}
