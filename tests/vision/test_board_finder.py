"""Boards placed from a board model's guess (companion/vision/board_finder.py), checked with guesses made
from the renders' truth plus noise, so that what is tested is the fit to the picture's cues, not a model."""

from __future__ import annotations

import numpy as np
import pytest

from companion.vision.board_finder import BoardGuess, locate_from_guess
from companion.vision.board_keypoints import board_keypoints
from companion.vision.locate import BoardLocation, BoardNotFound, LocateConfig, Locator
from tests.vision.test_locate import _rendered_board, evaluate


def _noisy_guess(spec, h_true, seed: int, noise: float = 0.015, shift: tuple[float, float] = (0.0, 0.0)) -> BoardGuess:
    corners = board_keypoints(spec, h_true)
    side = float(np.mean([np.hypot(*(corners[i] - corners[i - 1])) for i in range(len(corners))]))
    rng = np.random.default_rng(seed)
    return BoardGuess(spec.kind, corners + rng.normal(0, noise * side, corners.shape) + np.array(shift) * side, 0.9)


def _location(spec, h, frame) -> BoardLocation:
    return BoardLocation(spec, tuple(tuple(float(v) for v in row) for row in h / h[2, 2]),
                         (frame.shape[1], frame.shape[0]), 1.0, "board-model")


def _scene(game: str, seed: int):
    return _rendered_board(game, seed, "referee")


# A referee render (scripts/bench_locate_synth.py --framing referee) that the search alone does not find:
# ARENA 5059, a hand over the board (the corner lattice broken by it: "no alternation").
@pytest.mark.parametrize("game, seed, alone", [("space-arena", 5059, "wrong-board-kind")])
def test_a_board_the_search_misses_under_a_hand_is_placed_from_a_good_guess(game, seed, alone):
    frame, spec, h_true, a1 = _scene(game, seed)
    try:
        err, cells_ok = evaluate(Locator(spec).locate(frame, a1_near=a1), spec, h_true)
        seen_alone = "found" if cells_ok else "wrong-cells"
    except BoardNotFound as exc:
        seen_alone = exc.reason
    assert seen_alone == alone  # the render is as the test means
    guess = _noisy_guess(spec, h_true, seed)
    location = Locator(spec, board_model=lambda image, kind: guess).locate(frame, a1_near=a1)
    err, cells_ok = evaluate(location, spec, h_true)
    assert location.method == "board-model" and cells_ok and err < 0.03, (err, cells_ok)


@pytest.mark.parametrize("game, seed", [("icebomb-arena", 5040), ("space-arena", 5009)])
def test_a_rough_guess_is_fitted_onto_the_board_s_own_cues(game, seed):
    frame, spec, h_true, a1 = _scene(game, seed)
    found = locate_from_guess(frame, spec, _noisy_guess(spec, h_true, seed, noise=0.03), LocateConfig())
    location = Locator(spec)._choose_orientation(found.candidates, (frame.shape[1], frame.shape[0]), None, a1)
    err, cells_ok = evaluate(_location(spec, location, frame), spec, h_true)
    assert found.method == "board-model" and cells_ok and err < 0.03, (err, cells_ok)


@pytest.mark.parametrize("game, seed", [("space-arena", 5059), ("icebomb-arena", 5040)])
def test_a_guess_a_third_of_the_board_off_is_not_taken(game, seed):
    frame, spec, h_true, a1 = _scene(game, seed)
    guess = _noisy_guess(spec, h_true, seed, shift=(0.33, 0.1))
    with pytest.raises(BoardNotFound):
        locate_from_guess(frame, spec, guess, LocateConfig())


def test_a_board_the_search_finds_is_kept_and_the_model_not_asked():
    frame, spec, h_true, a1 = _scene("icebomb-arena", 5040)
    asked = []
    location = Locator(spec, board_model=lambda image, kind: asked.append(kind)).locate(frame, a1_near=a1)
    assert evaluate(location, spec, h_true)[1] and location.method != "board-model" and asked == []


@pytest.mark.parametrize("game, seed", [("zamboni-wars", 5036), ("ice-arena", 5048)])
def test_coasters_and_hex_boards_are_not_placed_from_the_board_model(game, seed):
    frame, spec, h_true, a1 = _scene(game, seed)
    asked = []
    with pytest.raises(BoardNotFound):  # their searches miss these (a hand over the board)
        Locator(spec, board_model=lambda image, kind: asked.append(kind)).locate(frame, a1_near=a1)
    assert asked == []
    with pytest.raises(BoardNotFound, match="not placed from the board model"):
        locate_from_guess(frame, spec, _noisy_guess(spec, h_true, 0), LocateConfig())


def test_the_shipped_board_model_places_a_chessboard_the_search_misses_under_a_hand():
    from companion.vision.board_finder import shipped_board_finder
    from companion.vision.yolo_env import import_ultralytics

    try:
        import_ultralytics()  # offline first: a bare import would leave it online for the rest of the run
    except ImportError:
        pytest.skip("ultralytics is not installed")
    finder = shipped_board_finder()
    if finder is None:
        pytest.skip("models/boards* is not in this tree")
    frame, spec, h_true, a1 = _scene("space-arena", 5059)
    with pytest.raises(BoardNotFound):
        Locator(spec).locate(frame, a1_near=a1)
    location = Locator(spec, board_model=finder).locate(frame, a1_near=a1)
    err, cells_ok = evaluate(location, spec, h_true)
    assert location.method == "board-model" and cells_ok and err < 0.01, (err, cells_ok)
