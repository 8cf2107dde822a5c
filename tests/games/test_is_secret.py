"""`State.is_secret`: which actions the rules keep hidden until everyone has committed (one test per game)."""

from __future__ import annotations

from companion.games import get_game


def first_state_where(state, predicate, limit=200):
    """Plays each acting seat's first legal action (or the first chance outcome) until `predicate`."""
    for _ in range(limit):
        if predicate(state):
            return state
        if state.is_chance_node():
            state = state.apply(state.chance_outcomes()[0][0])
        else:
            state = state.apply(state.legal_actions(state.players_to_act()[0])[0])
    raise AssertionError("never reached")


def test_icebomb_arena_bids_and_plans_are_secret_moves_are_not():
    game = get_game("icebomb-arena")
    state = game.new_initial_state(4)
    assert state.is_secret(game.parse_action("P1 bid LM"))
    planning = first_state_where(state, lambda s: "plan" in str(s.legal_actions(s.players_to_act()[0])[0])
                                 if s.players_to_act() else False)
    plan = planning.legal_actions(planning.players_to_act()[0])[0]
    assert planning.is_secret(plan)
    moving = first_state_where(planning, lambda s: s.players_to_act() and not s.is_secret(
        s.legal_actions(s.players_to_act()[0])[0]))
    assert not moving.is_secret(moving.legal_actions(moving.players_to_act()[0])[0])
    assert not state.is_secret(game.parse_action("P1 bomb d4"))
    assert not state.is_secret(game.parse_action("edge P2"))


def test_space_arena_designs_plans_and_fire_orders_are_secret_starts_and_rolls_are_not():
    game = get_game("space-arena")
    state = game.new_initial_state(2)
    for text in ("P1 ship A5 D5 H5 S5", "P1 plan +1 0 -1", "P1 fire P2 at 0", "P1 hold"):
        assert state.is_secret(game.parse_action(text)), text
    for text in ("P1 start a1h1", "roll 3"):
        assert not state.is_secret(game.parse_action(text)), text


def test_ice_arena_dice_picks_are_secret_other_actions_are_not():
    game = get_game("ice-arena")
    state = game.new_initial_state(2)
    picks = state.legal_actions(0)
    assert picks and all(state.is_secret(a) for a in picks)
    later = first_state_where(state, lambda s: not s.is_chance_node() and s.players_to_act()
                              and "pick" not in str(s.legal_actions(s.players_to_act()[0])[0]))
    action = later.legal_actions(later.players_to_act()[0])[0]
    assert not later.is_secret(action), str(action)


def test_icetowers_has_no_secrets():
    game = get_game("icetowers")
    state = game.new_initial_state(2)
    assert not any(state.is_secret(a) for a in state.legal_actions())


def test_zamboni_wars_has_no_secrets():
    game = get_game("zamboni-wars")
    state = first_state_where(game.new_initial_state(2), lambda s: s.is_chance_node())
    assert not any(state.is_secret(a) for a, _ in state.chance_outcomes())
    state = first_state_where(game.new_initial_state(2), lambda s: bool(s.players_to_act()))
    assert not any(state.is_secret(a) for a in state.legal_actions(state.players_to_act()[0]))
