"""Rendered, scripted games of Zamboni Wars, Ice Arena, ARENA and IceTowers: hands pass over the board
between moves; every move must be recognised as the right legal action, and nothing may fire while
a hand moves (the Icebomb Arena video test, for the other refereed games)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import pytest

from companion.games import get_game
from companion.games.base import State
from companion.games.ice_arena import MoveTo
from companion.games.space_arena import Design
from companion.pieces import Colour
from companion.referee import Referee, adapter_for
from companion.synth.scene import Scene
from companion.vision.tracker import Tracker, TrackerConfig
from tests.referee import scripted, scripted_games

CALM_BEFORE, CALM_AFTER = 3, 4
ARENA_COLOURS = (Colour.RED, Colour.BLUE)


@dataclass(frozen=True)
class Script:
    """A game played on camera: from `start()`, each move is the actions one seen change explains."""

    game: str
    start: Callable[[], State]
    moves: tuple[tuple[str, ...], ...]
    scene: Callable[[State, tuple[float, float] | None], Scene]
    colours: tuple[Colour, ...] = ()

    def actions(self, move: tuple[str, ...]) -> list:
        return [get_game(self.game).parse_action(text) for text in move]

    def adapter(self):
        return adapter_for(self.game, self.colours)


def _zamboni_start():
    return get_game("zamboni-wars").new_initial_state(2)


def _ice_arena_moving(seed: int = 3):
    """Round 1 of a two-player game played at random up to its first bot move: picks, dice and
    placed smalls are behind (the page enters what the camera cannot see)."""
    rng = random.Random(seed)
    state = get_game("ice-arena").new_initial_state(2)
    while not any(isinstance(a, MoveTo) for a in state.legal_actions()):
        state = state.apply(rng.choice(state.legal_actions()))
    return state


def _arena_designed():
    state = get_game("space-arena").new_initial_state(2)
    for seat in range(2):
        state = state.apply(Design(seat, 5, 5, 5, 5))  # secret, entered on the players' pages
    return state


def _icetowers_start():
    return get_game("icetowers").new_initial_state(2, options={"pieces_per_size": 1})


_ICETOWERS_SPOTS = scripted_games.icetowers_spots(_icetowers_start())


SCRIPTS = {
    # The die is not read: each move is the first roll that allows it, then where the Zamboni ends.
    "zamboni-wars": Script(
        "zamboni-wars", _zamboni_start,
        (("roll 3", "P1 move a4 N"), ("roll 2", "P2 move f4 S"), ("roll 5", "P1 move b5 NE"),
         ("roll 4", "P2 move d3 W")),
        scripted_games.zamboni_scene),
    "ice-arena": Script(
        "ice-arena", _ice_arena_moving,
        (("P2 2B to -3,2",), ("P1 1B to 2,-3",), ("P2 2A to -2,4",), ("P1 1A to 1,3",)),
        scripted_games.ice_arena_scene),
    # The ships appear in their corners (both starts seen at once), then each round is read off
    # where the ships now fly: both plans, then both holding fire.
    "space-arena": Script(
        "space-arena", _arena_designed,
        (("P1 start a1h2", "P2 start h8h1"),
         ("P1 plan +1 +1 +0", "P2 plan -1 -1 +1", "P1 hold", "P2 hold"),
         ("P1 plan +0 +1 +1", "P2 plan +0 +0 -1", "P1 hold", "P2 hold")),
        lambda state, hand_at=None: scripted_games.arena_scene(state, ARENA_COLOURS, hand_at), ARENA_COLOURS),
    # The third cap puts a large on a large, which hides it: the history knows it is there.
    "icetowers": Script(
        "icetowers", _icetowers_start,
        (("P1 cap red-S on yellow-M",), ("P2 cap yellow-S on red-M",), ("P1 cap red-L on yellow-L",)),
        lambda state, hand_at=None: scripted_games.icetowers_scene(state, _ICETOWERS_SPOTS, hand_at)),
}


@pytest.fixture(scope="module")
def renderer():
    return scripted.renderer_for_tests()


def _frame(renderer, scene: Scene):
    image, truth = scripted.render(renderer, scene)
    return cv2.cvtColor(image, cv2.COLOR_RGB2BGR), truth  # as a camera gives


def film(renderer, script: Script):
    """(frames, truths, indices of the frames with a hand in view, the engine's final state):
    calm frames of each position, the hand's frames while the move is made."""
    state = script.start()
    frames, truths, hand_frames = [], [], set()
    calm = script.scene(state, None)
    hand_path = scripted_games.hand_path(calm)
    image, truth = _frame(renderer, calm)
    frames += [image] * CALM_BEFORE
    truths += [truth] * CALM_BEFORE
    for move in script.moves:
        for action in script.actions(move):
            state = state.apply(action)
        for at in hand_path:
            image, truth = _frame(renderer, script.scene(state, at))
            hand_frames.add(len(frames))
            frames.append(image)
            truths.append(truth)
        image, truth = _frame(renderer, script.scene(state, None))
        frames += [image] * CALM_AFTER
        truths += [truth] * CALM_AFTER
    return frames, truths, hand_frames, state


@pytest.fixture(scope="module", params=list(SCRIPTS))
def played(request, renderer):
    script = SCRIPTS[request.param]
    return script, film(renderer, script)


def test_the_first_observation_shows_the_start_exactly(played):
    script, (_, truths, _, _) = played
    adapter = script.adapter()
    seen, unsure = adapter.seen(scripted_games.observe(script.game, truths[0]))
    assert adapter.compare(adapter.expected(script.start()), seen, unsure) == 0, sorted(seen.elements())
    assert not unsure


def test_every_move_is_recognised_and_nothing_fires_while_a_hand_moves(played):
    script, (frames, truths, hand_frames, final) = played
    tracker = Tracker(TrackerConfig(calm_frames=3))
    referee = Referee(script.adapter(), script.start())
    observed, verdicts = [], []
    for index, (frame, truth) in enumerate(zip(frames, truths)):
        def observe(index=index, truth=truth):
            observed.append(index)
            return scripted_games.observe(script.game, truth)

        change = tracker.update(frame, observe)
        if change is not None:
            verdicts.append(referee.update(change.after))
    assert not hand_frames & set(observed), "the detector ran on a frame with a moving hand"
    assert [v.text for v in verdicts] == ["; ".join(map(str, script.actions(m))) for m in script.moves]
    assert all(v.accepted for v in verdicts)
    assert [list(v.actions) for v in verdicts] == [script.actions(m) for m in script.moves]
    assert referee.state.to_json() == final.to_json()
