"""A rendered, scripted Icebomb Arena game: hands pass over the board between moves; every move must be
recognised as the right legal action, and nothing may fire while a hand moves."""

from __future__ import annotations

import pytest

from companion.games.icebomb_arena import ICEBOMB_ARENA
from companion.referee import Referee, adapter_for
from companion.vision.tracker import Tracker, TrackerConfig
from tests.referee import scripted

MOVES = [("P1 plan MN SU", "P2 plan LW SN", "P3 plan MS SE", "P4 plan ME SN"), ("P1 move MN",), ("P2 move LW",)]


def _start():
    return ICEBOMB_ARENA.position(4, {0: "b2", 1: "g2", 2: "g7", 3: "b7"}, edge=0, bombs=("b4",),
                                  blocks={"e4": (2, "M")})


@pytest.fixture(scope="module")
def renderer():
    return scripted.renderer_for_tests()


@pytest.fixture(scope="module")
def video(renderer):
    """(frames, truths, index of the frames where a hand is in view), calm frames repeated."""
    state = _start()
    frames, truths, hand_frames = [], [], set()
    image, truth = scripted.render(renderer, scripted.scene_of(state))
    for _ in range(3):
        frames.append(image)
        truths.append(truth)
    cx, cy = scripted.BOARD.centre
    for step, move in enumerate(MOVES):
        for action in move:
            state = state.apply(action)
        for k, at in enumerate([(cx - 120, cy - 60), (cx + 40, cy + 30)]):
            image, truth = scripted.render(renderer, scripted.scene_of(state, hand_at=at))
            hand_frames.add(len(frames))
            frames.append(image)
            truths.append(truth)
        image, truth = scripted.render(renderer, scripted.scene_of(state))
        for _ in range(4):
            frames.append(image)
            truths.append(truth)
    return frames, truths, hand_frames


def test_every_move_is_recognised_and_nothing_fires_while_a_hand_moves(video):
    frames, truths, hand_frames = video
    tracker = Tracker(TrackerConfig(calm_frames=3))
    referee = Referee(adapter_for("icebomb-arena", scripted.COLOURS), _start())
    observed, verdicts, fired = [], [], []
    for index, (frame, truth) in enumerate(zip(frames, truths)):
        def observe(index=index, truth=truth):
            observed.append(index)
            return scripted.observe(truth)

        change = tracker.update(frame, observe)
        if change is not None:
            fired.append(index)
            verdicts.append(referee.update(change.after))
    assert not hand_frames & set(observed), "the detector ran on a frame with a moving hand"
    assert [v.text for v in verdicts] == ["; ".join(m) for m in MOVES]
    assert all(v.accepted for v in verdicts)
    assert len(fired) == len(MOVES)
    assert referee.state.summary()["players"][1]["square"] == "d2"


def test_the_first_observation_shows_the_start_exactly(video):
    _, truths, _ = video
    adapter = adapter_for("icebomb-arena", scripted.COLOURS)
    seen, unsure = adapter.seen(scripted.observe(truths[0]))
    assert seen == adapter.expected(_start())
    assert not unsure


def test_a_pawn_seen_where_no_legal_move_takes_it_is_a_verdict_not_a_state_change(video):
    _, truths, _ = video
    from dataclasses import replace

    referee = Referee(adapter_for("icebomb-arena", scripted.COLOURS), _start())
    for action in MOVES[0]:
        referee.state = referee.state.apply(action)
    start = referee.state
    observation = scripted.observe(truths[-1])  # after P2's move: P1's move is missing from the history
    pieces = tuple(replace(p, cell="h8") if p.kind == "pawn" and p.cell == "d2" else p for p in observation.pieces)
    verdict = referee.update(replace(observation, pieces=pieces))
    assert not verdict.accepted
    assert verdict.text.startswith("illegal or misread: expected ")
    assert "seen pawn @h8" in verdict.text
    assert referee.state is start


def test_a_hand_held_still_over_the_board_fires_nothing(renderer):
    """A hand stops over the board after a move (rendered), then leaves: while it is there nothing
    is observed, and the move is recognised once, after it has gone."""
    state = _start()
    before, truth_before = scripted.render(renderer, scripted.scene_of(state))
    for action in MOVES[0]:
        state = state.apply(action)
    cx, cy = scripted.BOARD.centre
    held, _ = scripted.render(renderer, scripted.scene_of(state, hand_at=(cx + 40, cy + 30)))
    after, truth_after = scripted.render(renderer, scripted.scene_of(state))
    import cv2

    before, held, after = (cv2.cvtColor(f, cv2.COLOR_RGB2BGR) for f in (before, held, after))  # as a camera gives
    frames = [(before, truth_before)] * 3 + [(held, None)] * 6 + [(after, truth_after)] * 4
    tracker = Tracker(TrackerConfig(calm_frames=3))
    referee = Referee(adapter_for("icebomb-arena", scripted.COLOURS), _start())
    observed, verdicts = [], []
    for index, (frame, truth) in enumerate(frames):
        def observe(index=index, truth=truth):
            observed.append(index)
            return scripted.observe(truth)

        change = tracker.update(frame, observe)
        if change is not None:
            verdicts.append(referee.update(change.after))
        if 4 <= index < 9:
            assert tracker.status.state == "hand", index
    assert not set(observed) & set(range(3, 9))
    assert [v.text for v in verdicts] == ["; ".join(MOVES[0])] and verdicts[0].accepted
