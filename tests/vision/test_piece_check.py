"""The piece checker (companion/vision/piece_check.py): which found pyramids it drops, its crop, and
how its training crops are labelled (scripts/make_check_crops.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from companion.pieces import Pose, Size
from companion.vision.detection import Detection
from companion.vision.piece_check import (A_PIECE, CHECK_GROWTH, MIN_NONE_PROBABILITY, NOT_A_PIECE, PieceChecker,
                                          crop_for_check, without_false_pieces)
from companion.vision.size_reader import BOX_GROWTH, GREY, crop_at_board_scale

ROOT = Path(__file__).resolve().parents[2]


def _scaled(px_per_mm: float) -> np.ndarray:
    return np.array([[px_per_mm, 0, 0.0], [0, px_per_mm, 0.0], [0, 0, 1.0]])


def _pyramid(x: float, size: Size = Size.SMALL) -> Detection:
    return Detection("pyramid", (x, 200, x + 30, 240), 0.6, f"{size.name[0]}-upright", size=size,
                     pose=Pose.UPRIGHT, contact=(x + 15, 236))


class _FakeChecker:
    min_none_probability = MIN_NONE_PROBABILITY

    def __init__(self, none_probabilities):
        self.answers = list(none_probabilities)
        self.crops = []

    def none_probabilities(self, crops):
        self.crops += crops
        return np.array(self.answers[:len(crops)])


def test_only_pyramids_called_no_piece_surely_enough_are_dropped():
    frame = np.zeros((480, 640, 3), np.uint8)
    pawn = Detection("pawn", (50, 50, 60, 80), 0.9, "pawn")
    kept, dropped, doubtful = _pyramid(100), _pyramid(200), _pyramid(300)
    checker = _FakeChecker([0.1, MIN_NONE_PROBABILITY, MIN_NONE_PROBABILITY - 0.05])
    out = without_false_pieces(frame, [kept, pawn, dropped, doubtful], _scaled(2.0), checker)
    assert out == [kept, pawn, doubtful]
    assert len(checker.crops) == 3, "tokens are not checked"
    assert without_false_pieces(frame, [], _scaled(2.0), _FakeChecker([])) == []


def test_the_check_crop_shows_more_round_the_box_than_the_size_crop():
    frame = np.full((480, 640, 3), 255, np.uint8)  # a white table round a red piece
    piece = _pyramid(300)
    frame[200:240, 300:330] = (0, 0, 200)
    check = crop_for_check(frame, piece, _scaled(2.0))
    size = crop_at_board_scale(frame, piece.box, piece.ground_point, _scaled(2.0))
    table = lambda crop: int((crop == 255).all(axis=2).sum())  # noqa: E731
    assert CHECK_GROWTH > BOX_GROWTH and table(check) > 2 * table(size) > 0
    assert (check[0, 0] == GREY).all(), "beyond the grown box it is still greyed out"


def test_a_classifier_with_other_classes_is_not_taken_for_a_checker():
    sizes = ROOT / "models" / "sizes.pt"
    if not sizes.exists():
        pytest.skip("the shipped size classifier is not in models/")
    with pytest.raises(ValueError, match="not a piece checker"):
        PieceChecker(sizes)


def _script():
    spec = importlib.util.spec_from_file_location("make_check_crops", ROOT / "scripts" / "make_check_crops.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _labelled():
    return _script().labelled


def _upright(id_, size, box, stack=None, level=0, **extra):
    x1, y1, x2, y2 = box
    return {"kind": "pyramid", "id": id_, "size": size, "pose": "upright", "box_px": list(box), "visible_fraction": 1.0,
            "apex_px": [(x1 + x2) / 2, y1], "contact_px": [(x1 + x2) / 2, y2 - 4], "apex_visibility": 2,
            "stack": stack, "level": level, **extra}


def test_tips_are_drawn_only_over_upright_pieces_that_nothing_rests_on():
    import random

    truth = {"objects": [
        _upright(0, "L", (100, 100, 160, 200), stack=0, level=0),
        _upright(1, "M", (108, 92, 152, 160), stack=0, level=1),  # on the large: its tip is covered
        _upright(2, "L", (300, 100, 360, 200)),  # alone
        _upright(3, "L", (500, 100, 560, 200), apex_visibility=1),  # its apex hidden
        {**_upright(4, "L", (700, 100, 760, 200)), "pose": "lying"},  # a nest would show there
    ]}
    tips = _script().tip_boxes(truth, random.Random(0))
    assert sorted(name for name, _, _ in tips) == ["tip1S", "tip2M", "tip2S"]
    for name, box, contact in tips:
        host = truth["objects"][int(name[3])]
        ratio = (box[2] - box[0]) / (host["box_px"][2] - host["box_px"][0])
        expected = {"S": 25.4, "M": 34.9}[name[-1]] / {"L": 44.5, "M": 34.9}[host["size"]]
        assert 0.9 * expected - 1e-9 <= ratio <= 1.15 * expected + 1e-9
        assert box[1] == pytest.approx(host["apex_px"][1]), "the tip box hangs from the host's apex"
        assert host["apex_px"][1] < contact[1] < host["contact_px"][1]


def test_training_crops_are_labelled_as_the_evaluation_matches():
    truth = {"objects": [
        {"kind": "pyramid", "box_px": [100, 100, 140, 160], "visible_fraction": 1.0},
        {"kind": "pyramid", "box_px": [300, 100, 340, 160], "visible_fraction": 0.2},  # barely in view
        {"kind": "pawn", "box_px": [500, 100, 520, 150], "visible_fraction": 1.0},
    ]}
    found = [Detection("pyramid", (101, 101, 140, 161), 0.9, "L-upright", size=Size.LARGE, pose=Pose.UPRIGHT),
             Detection("pyramid", (110, 100, 130, 125), 0.5, "S-upright", size=Size.SMALL, pose=Pose.UPRIGHT),
             Detection("pyramid", (300, 100, 340, 160), 0.5, "L-upright", size=Size.LARGE, pose=Pose.UPRIGHT),
             Detection("pyramid", (500, 100, 520, 150), 0.4, "S-upright", size=Size.SMALL, pose=Pose.UPRIGHT),
             Detection("pawn", (500, 100, 520, 150), 0.9, "pawn")]
    # The large is a piece; the small at its tip matches nothing; the piece barely in view is left
    # out; a pyramid on the pawn is none (the pawn itself takes the pawn's truth, and is no pyramid).
    assert _labelled()(truth, found) == [(0, A_PIECE), (1, NOT_A_PIECE), (3, NOT_A_PIECE)]
