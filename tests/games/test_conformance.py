"""Random games of every registered game, asserting the invariants every game must keep.

After OpenSpiel's api tests: these run against whatever modules register themselves,
so a new game is covered the moment it exists.
"""

from __future__ import annotations

import json
import math
import random

import pytest

from companion.games import CHANCE, SIMULTANEOUS, TERMINAL, game_names, get_game
from companion.games.base import random_playout


def setups():
    """(game, players, variant) for every variant at the smallest and largest table."""
    for name in game_names():
        game = get_game(name)
        counts = sorted({game.min_players, min(game.min_players + 2, game.max_players), game.max_players})
        for variant in game.variants:
            for n in counts:
                yield pytest.param(name, n, variant, id=f"{name}-{n}p-{variant}")


def check_step(state, action, nxt) -> None:
    game = state.game
    assert game.parse_action(str(action)) == action, f"text form of {action!r} does not round-trip"
    assert state.is_legal(action)
    assert nxt.invariant_violations() == [], f"after {action}: {nxt.invariant_violations()}"
    data = json.loads(json.dumps(nxt.to_json()))
    assert game.state_from_json(data) == nxt, f"state after {action} does not survive JSON"
    player = nxt.current_player()
    if player == TERMINAL:
        assert nxt.legal_actions() == []
        assert nxt.outcome() is not None
        returns = nxt.returns()
        assert len(returns) == nxt.num_players and all(0.0 <= r <= 1.0 for r in returns)
        assert math.isclose(sum(returns), 1.0) or sum(returns) == 0.0
    else:
        assert nxt.outcome() is None
        if player == CHANCE:
            outcomes = nxt.chance_outcomes()
            assert outcomes and math.isclose(sum(p for _, p in outcomes), 1.0)
            assert nxt.players_to_act() == ()
        else:
            seats = nxt.players_to_act()
            assert seats, "a player node with nobody to act"
            if player != SIMULTANEOUS:
                assert seats == (player,)
            for seat in seats:
                assert nxt.legal_actions(seat), f"{nxt.turn_text()}: P{seat + 1} has no legal action"
            for seat in set(range(nxt.num_players)) - set(seats):
                assert nxt.legal_actions(seat) == [], f"P{seat + 1} may act out of turn"


@pytest.mark.parametrize(("name", "players", "variant"), list(setups()))
def test_random_games_keep_every_invariant(name, players, variant):
    game = get_game(name)
    rng = random.Random(f"{name}/{players}/{variant}")
    for _ in range(30):
        start = game.new_initial_state(players, variant)
        assert start.invariant_violations() == []
        assert game.state_from_json(json.loads(json.dumps(start.to_json()))) == start
        before = json.dumps(start.to_json(), sort_keys=True)
        random_playout(start, rng, on_action=check_step)
        assert json.dumps(start.to_json(), sort_keys=True) == before, "apply changed the old state"


@pytest.mark.parametrize("name", game_names())
def test_thousands_of_random_games_end_soundly(name):
    game = get_game(name)
    rng = random.Random(name)
    ended = 0
    for i in range(1000):
        players = rng.randint(game.min_players, game.max_players)
        variant = rng.choice(list(game.variants))
        final = random_playout(game.new_initial_state(players, variant), rng)
        assert final.invariant_violations() == []
        if final.is_terminal():
            ended += 1
            assert final.outcome() is not None and final.legal_actions() == []
    # Random play may wander; most games must still reach an end inside the playout limit.
    assert ended >= 900, f"only {ended} of 1000 random games ended"
