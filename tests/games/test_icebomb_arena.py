"""Icebomb Arena: every FAQ answer, every ruling of docs/rulings/icebomb-arena.md, scripted play."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.games import CHANCE, SIMULTANEOUS, TERMINAL, IllegalActionError, InvalidActionError, get_game
from companion.games.icebomb_arena import Phase, parse_action

GAME = get_game("icebomb-arena")


def play(state, *actions):
    for a in actions:
        state = state.apply(a)
    return state


def plan_all(state, **plans):
    """Commits every living gladiator's plan, e.g. plan_all(s, P1="LN MU", P2="SE SW")."""
    for seat, plan in plans.items():
        state = state.apply(f"{seat} plan {plan}")
    assert state.phase == Phase.ACTION, "every living gladiator must have planned"
    return state


def square(state, seat):
    return state.summary()["players"][seat]["square"]


def four(**kw):
    """A four-gladiator position; P1 holds The Edge unless told otherwise."""
    kw.setdefault("edge", 0)
    gladiators = kw.pop("gladiators")
    return GAME.position(4, gladiators, **kw)


# --- set-up ----------------------------------------------------------------------------------

def test_setup_bids_are_secret_and_simultaneous():
    s = GAME.new_initial_state(4)
    assert s.current_player() == SIMULTANEOUS
    s = s.apply("P3 bid LM")
    assert s.players_to_act() == (0, 1, 3)
    assert s.summary()["players"][2]["committed"] is True
    assert "LM" not in json.dumps(s.summary()), "a committed bid must not show before all reveal"
    with pytest.raises(IllegalActionError, match="not P3's turn"):
        s.apply("P3 bid S")


def test_highest_bid_wins_edge_and_pays_life():
    s = play(GAME.new_initial_state(4), "P1 bid M", "P2 bid LS", "P3 bid -", "P4 bid L")
    assert s.edge == 1 and s.life == (10, 6, 10, 10)
    assert s.phase == Phase.BOMBS and s.current_player() == 1


def test_bid_is_pip_total_and_cannot_spend_all_life():
    s = GAME.new_initial_state(4)
    assert parse_action("P1 bid LLLS").pips == 10
    assert "no life" in s.illegal_reason(parse_action("P1 bid LLLS"))  # ruling R1
    assert s.is_legal(parse_action("P1 bid LLL"))  # 9 pips: leaves one life
    assert max(a.pips for a in s.legal_actions(0)) == 9


def test_faq_everyone_bids_zero_edge_drawn_at_random():
    s = play(GAME.new_initial_state(4), "P1 bid -", "P2 bid -", "P3 bid -", "P4 bid -")
    assert s.current_player() == CHANCE
    outcomes = s.chance_outcomes()
    assert sorted(str(a) for a, _ in outcomes) == ["edge P1", "edge P2", "edge P3", "edge P4"]
    assert all(p == pytest.approx(0.25) for _, p in outcomes)
    s = s.apply("edge P3")
    assert s.edge == 2 and s.life == (10,) * 4


def test_tied_high_bid_draws_only_among_the_tied():
    s = play(GAME.new_initial_state(4), "P1 bid M", "P2 bid S", "P3 bid SS", "P4 bid -")
    assert sorted(str(a) for a, _ in s.chance_outcomes()) == ["edge P1", "edge P3"]
    assert "not among the tied" in s.illegal_reason(parse_action("edge P2"))
    s = s.apply("edge P3")
    assert s.life == (10, 10, 8, 10)


def test_bombs_edge_first_clockwise_two_each_then_gladiators():
    s = play(GAME.new_initial_state(4), "P1 bid -", "P2 bid -", "P3 bid S", "P4 bid -")
    order = []
    squares = iter(["a1", "b1", "c1", "d1", "e1", "f1", "g1", "h1"])
    while s.phase == Phase.BOMBS:
        order.append(s.current_player())
        s = s.apply(f"P{s.current_player() + 1} bomb {next(squares)}")
    assert order == [2, 3, 0, 1, 2, 3, 0, 1]
    assert len(s.bombs) == 8
    assert "not empty" in s.illegal_reason(parse_action("P3 enter a1"))
    entered = []
    for sq in ["a5", "b5", "c5", "d5"]:
        entered.append(s.current_player())
        s = s.apply(f"P{s.current_player() + 1} enter {sq}")
    assert entered == [2, 3, 0, 1]
    assert s.phase == Phase.PLAN and s.round == 1


@pytest.mark.parametrize(("players", "shape", "bombs"), [(2, (8, 4), 4), (3, (6, 6), 3), (4, (8, 8), 2), (6, (8, 8), 2)])
def test_variant_arena_sizes_and_bomb_counts(players, shape, bombs):
    s = GAME.new_initial_state(players)
    for p in range(players):
        s = s.apply(f"P{p + 1} bid {'S' if p == 0 else '-'}")
    assert (s.grid.files, s.grid.ranks) == shape
    assert len(s.queue) == players * bombs


# --- planning -------------------------------------------------------------------------------

def test_planning_two_pyramids_at_most_one_block():
    s = four(gladiators={0: "a1", 1: "h8", 2: "a8", 3: "h1"})
    assert "no more than one" in s.illegal_reason(parse_action("P1 plan LU MU"))
    assert "must plan 2" in s.illegal_reason(parse_action("P1 plan LN"))
    assert s.is_legal(parse_action("P1 plan LN LN"))
    # 15 kinds of planned pyramid; pairs with at most one block: C(16,2) - C(4,2) = 114.
    assert len(s.legal_actions(0)) == 114


def test_plans_are_hidden_until_all_commit_then_order_starts_with_edge():
    s = four(gladiators={0: "a1", 1: "h8", 2: "a8", 3: "h1"}, edge=2)
    s = play(s, "P1 plan LN MU", "P2 plan SS SW")
    assert s.summary()["players"][0]["hand"] is None
    s = play(s, "P3 plan SE SS", "P4 plan SN SW")
    assert s.phase == Phase.ACTION
    assert s.action_order() == [2, 3, 0, 1, 2, 3, 0, 1]
    assert s.summary()["players"][0]["hand"] == ["LN", "MU"]


def test_faq_all_mediums_in_the_arena_cannot_plan_a_medium():
    blocks = {sq: (0, "M") for sq in ["c3", "c5", "e3", "e5", "g7"]}
    s = four(gladiators={0: "a1", 1: "h8", 2: "a8", 3: "h1"}, blocks=blocks)
    assert "stash has only" in s.illegal_reason(parse_action("P1 plan MN SE"))
    assert all(q.size != 2 for a in s.legal_actions(0) for q in a.pyramids)


# --- the action phase -------------------------------------------------------------------------

def test_movement_moves_pip_count_spaces_and_returns_pyramid_at_once():
    s = four(gladiators={0: "b2", 1: "h8", 2: "a8", 3: "h1"})
    s = plan_all(s, P1="MN SE", P2="SS SW", P3="SE SS", P4="SN SW")
    stash_before = s.stash[0]
    s = s.apply("P1 move MN")
    assert square(s, 0) == "b4"
    assert s.stash[0] == (stash_before[0], stash_before[1] + 1, stash_before[2])


def test_faq_must_move_even_onto_a_bomb_no_pass():
    s = four(gladiators={0: "b2", 1: "h8", 2: "a8", 3: "h1"}, bombs=("b3",))
    s = plan_all(s, P1="SN SN", P2="SS SW", P3="SE SS", P4="SN SW")
    assert [str(a) for a in s.legal_actions(0)] == ["P1 move SN"]
    assert "no S block" in s.illegal_reason(parse_action("P1 forfeit S"))
    s = s.apply("P1 move SN")
    assert square(s, 0) == "b3" and s.life[0] == 9 and not s.bombs


def test_faq_bombs_do_not_stop_movement():
    s = four(gladiators={0: "b2", 1: "h8", 2: "a8", 3: "h1"}, bombs=("b3",))
    s = plan_all(s, P1="LN SE", P2="SS SW", P3="SE SS", P4="SN SW")
    s, effects = s.apply_with_effects("P1 move LN")
    assert square(s, 0) == "b5" and s.life[0] == 9 and not s.bombs
    assert effects[0] == "P1 moves b2-b5"


def test_edge_stops_movement_and_is_never_destroyed():
    s = four(gladiators={0: "b7", 1: "h1", 2: "a1", 3: "h4"})
    s = plan_all(s, P1="LN SE", P2="SS SW", P3="SE SS", P4="SN SW")
    s = s.apply("P1 move LN")
    assert square(s, 0) == "b8"


def test_block_placed_only_on_empty_orthogonal_square():
    s = four(gladiators={0: "b2", 1: "b3", 2: "a8", 3: "h1"}, bombs=("c2",))
    s = plan_all(s, P1="SN MU", P2="SS SW", P3="SE SS", P4="SN SW")
    assert "not one" in s.illegal_reason(parse_action("P1 block M c3"))  # diagonal
    assert "not one" in s.illegal_reason(parse_action("P1 block M c2"))  # FAQ: not on a bomb
    assert "not one" in s.illegal_reason(parse_action("P1 block M b3"))  # a gladiator
    assert sorted(str(a) for a in s.legal_actions(0) if "block" in str(a)) == ["P1 block M a2", "P1 block M b1"]
    s = s.apply("P1 block M a2")
    assert s.summary()["blocks"] == [{"square": "a2", "owner": "P1", "size": "M"}]


def test_faq_a_block_cannot_cover_a_bomb_a_gladiator_or_another_block():
    # d4's neighbours: a bomb (d5), a gladiator (e4), a block (d3); only c4 is empty.
    s = four(gladiators={0: "d4", 1: "e4", 2: "a8", 3: "h1"}, bombs=("d5",), blocks={"d3": (2, "S")})
    s = plan_all(s, P1="MU SS", P2="SN SN", P3="SS SS", P4="SS SS")
    assert sorted(str(a) for a in s.legal_actions(0) if "block" in str(a)) == ["P1 block M c4"]
    for taken in ("d5", "e4", "d3"):
        assert "not one" in s.illegal_reason(parse_action(f"P1 block M {taken}")), taken


def test_faq_block_with_all_four_neighbours_occupied_is_forfeit():
    # P1 in the corner: a2 holds P2 and b1 a bomb, so the planned block has nowhere to go.
    s = four(gladiators={0: "a1", 1: "a2", 2: "h8", 3: "h5"}, bombs=("b1",))
    s = plan_all(s, P1="SW MU", P2="SW SW", P3="SS SS", P4="SS SS")
    assert [str(a) for a in s.legal_actions(0)] == ["P1 move SW"], "the move must come first"
    s = play(s, "P1 move SW", "P2 move SW", "P3 move SS", "P4 move SS")
    assert square(s, 0) == "a1" and square(s, 1) == "a2"
    assert [str(a) for a in s.legal_actions(0)] == ["P1 forfeit M"]
    s, effects = s.apply_with_effects("P1 forfeit M")
    assert "action forfeit" in effects[0]
    assert s.stash[0] == (5, 5, 5), "the forfeit block goes back to the stash"


def test_faq_block_with_all_four_neighbours_occupied_is_forfeit_away_from_the_edges():
    # b2's four neighbours: P2 on b1, P3 on a2, a bomb on c2 and P4's block on b3.
    s = four(gladiators={0: "b2", 1: "b1", 2: "a2", 3: "h8"}, bombs=("c2",), blocks={"b3": (3, "M")})
    s = plan_all(s, P1="SW MU", P2="SS SS", P3="SW SW", P4="SN SN")
    assert [str(a) for a in s.legal_actions(0)] == ["P1 move SW"]
    s = play(s, "P1 move SW")  # P3 cannot be pushed off the arena: a fight, and P1 stays on b2
    s = play(s, "P2 move SS", "P3 move SW", "P4 move SN")  # all stopped by the arena edge
    assert [square(s, p) for p in range(3)] == ["b2", "b1", "a2"]
    assert [str(a) for a in s.legal_actions(0)] == ["P1 forfeit M"]
    assert "not one" in s.illegal_reason(parse_action("P1 block M c2"))
    s = s.apply("P1 forfeit M")
    assert s.phase == Phase.ACTION and s.current_player() == 1 and s.stash[0][1] == 5


def test_faq_mediums_planned_for_this_round_cannot_replace_a_bumped_large():
    # P2's five mediums: three in the arena and two planned this round (not yet used), so none in
    # the stash when P1 bumps P2's large block: it is destroyed rather than shrunk.
    blocks = {"c3": (1, "M"), "c5": (1, "M"), "e3": (1, "M"), "b1": (1, "L")}
    s = four(gladiators={0: "a1", 1: "h8", 2: "a8", 3: "h5"}, blocks=blocks)
    s = plan_all(s, P1="SE SN", P2="MS MW", P3="SS SS", P4="SS SS")
    assert s.stash[1][1] == 0
    s, effects = s.apply_with_effects("P1 move SE")
    assert s.blocks[s.grid.parse("b1")] is None and "P2's block at b1 is removed" in effects
    s = s.apply("P2 move MS")  # the medium played now is back in the stash, but too late
    assert s.blocks[s.grid.parse("b1")] is None and s.stash[1] == (5, 1, 5)


def test_bumped_small_block_frees_its_square_for_a_later_block():
    s = four(gladiators={0: "a1", 1: "a2", 2: "h8", 3: "h1"}, blocks={"b1": (2, "S")})
    s = plan_all(s, P1="SE MU", P2="SS SE", P3="SS SW", P4="SN SW")
    s = s.apply("P1 move SE")  # stopped by the small block at b1, which goes back to P3's stash
    assert square(s, 0) == "a1" and s.blocks[1] is None
    s = play(s, "P2 move SS")  # P2 pushes into P1 at the corner: both fight, P2 takes The Edge
    s = play(s, "P3 move SS", "P4 move SN")
    assert [str(a) for a in s.legal_actions(0)] == ["P1 block M b1"]


def test_forfeit_is_only_for_an_unplaceable_last_block():
    s = four(gladiators={0: "a1", 1: "a2", 2: "b1", 3: "h1"})
    s = plan_all(s, P1="SE MU", P2="SE SE", P3="SE SE", P4="SN SW")
    assert [str(a) for a in s.legal_actions(0)] == ["P1 move SE"]
    assert "always playable" in s.illegal_reason(parse_action("P1 forfeit M"))
    s = play(s, "P1 move SE")  # pushes P3 from b1 to c1
    assert square(s, 0) == "b1" and square(s, 2) == "c1"


def test_push_moves_the_other_gladiator_and_continues():
    s = four(gladiators={0: "a1", 1: "b1", 2: "h8", 3: "h5"})
    s = plan_all(s, P1="LE SN", P2="SN SN", P3="SS SS", P4="SS SS")
    s, effects = s.apply_with_effects("P1 move LE")
    assert square(s, 0) == "d1" and square(s, 1) == "e1"
    assert effects.count("P1 pushes P2 to c1") == 1 and "P1 pushes P2 to e1" in effects


def test_pushed_onto_a_bomb_takes_the_damage():
    s = four(gladiators={0: "a1", 1: "b1", 2: "h8", 3: "h5"}, bombs=("c1",))
    s = plan_all(s, P1="SE SN", P2="SN SN", P3="SS SS", P4="SS SS")
    s = s.apply("P1 move SE")
    assert square(s, 1) == "c1" and s.life[1] == 9 and s.life[0] == 10 and not s.bombs


def test_fight_at_the_edge_both_lose_unless_attacker_has_edge():
    s = four(gladiators={0: "g1", 1: "h1", 2: "a8", 3: "a5"}, edge=2)
    s = plan_all(s, P1="LE SN", P2="SN SN", P3="SS SS", P4="SS SS")
    s = play(s, "P3 move SS", "P4 move SS")
    s, effects = s.apply_with_effects("P1 move LE")
    assert s.life[0] == 9 and s.life[1] == 9 and square(s, 0) == "g1"
    assert s.edge == 0 and "P1 takes The Edge" in effects
    # Ruling: the fight ends the move, so only one fight per move.
    assert sum("fights" in e for e in effects) == 1


def test_attacker_holding_the_edge_takes_no_damage():
    s = four(gladiators={0: "g1", 1: "h1", 2: "a8", 3: "a5"}, edge=0)
    s = plan_all(s, P1="SE SN", P2="SN SN", P3="SS SS", P4="SS SS")
    s = s.apply("P1 move SE")
    assert s.life[:2] == (10, 9) and s.edge == 0


def test_faq_edge_goes_to_any_attacker_not_only_against_its_holder():
    s = four(gladiators={0: "a8", 1: "g1", 2: "h1", 3: "a5"}, edge=0)
    s = plan_all(s, P1="SS SS", P2="SE SN", P3="SN SN", P4="SS SS")
    s = play(s, "P1 move SS", "P2 move SE")
    assert s.edge == 1 and s.life[1:3] == (9, 9)


def test_faq_edge_on_defence_does_not_protect():
    s = four(gladiators={0: "g1", 1: "h1", 2: "a8", 3: "a5"}, edge=1)
    s = plan_all(s, P1="SE SN", P2="SE SE", P3="SS SS", P4="SS SS")
    s = play(s, "P2 move SE", "P3 move SS", "P4 move SS")  # P2 (The Edge) first, stopped by the arena edge
    s = s.apply("P1 move SE")  # P2 cannot be pushed off the arena: fight
    assert s.life[:2] == (9, 9) and s.edge == 0


def test_faq_pushed_into_a_block_fight_and_the_block_shrinks():
    s = four(gladiators={0: "a1", 1: "b1", 2: "h8", 3: "h5"}, edge=1, blocks={"c1": (3, "L")})
    s = plan_all(s, P1="SE SN", P2="SS SS", P3="SS SS", P4="SS SS")
    s = play(s, "P2 move SS", "P3 move SS", "P4 move SS")  # P2 stays at b1 (arena edge)
    s, effects = s.apply_with_effects("P1 move SE")  # P2 cannot be pushed into the large block at c1
    assert s.life[:2] == (9, 9), "The Edge on defence does not protect"
    assert s.edge == 0 and square(s, 0) == "a1" and square(s, 1) == "b1"
    assert s.summary()["blocks"] == [{"square": "c1", "owner": "P4", "size": "M"}]
    assert "P4's block at c1 shrinks to medium" in effects  # ruling R4


def test_faq_large_move_into_large_block_shrinks_once():
    s = four(gladiators={0: "a1", 1: "h8", 2: "a8", 3: "h5"}, blocks={"b1": (1, "L")})
    s = plan_all(s, P1="LE SN", P2="SS SS", P3="SS SS", P4="SS SS")
    s = s.apply("P1 move LE")
    assert square(s, 0) == "a1"
    assert s.summary()["blocks"] == [{"square": "b1", "owner": "P2", "size": "M"}]


def test_faq_medium_movement_back_in_time_to_replace_own_large_block():
    # P1's five mediums: four in the arena, one planned as the movement into P1's own large block.
    blocks = {"c3": (0, "M"), "c5": (0, "M"), "e3": (0, "M"), "e5": (0, "M"), "b1": (0, "L")}
    s = four(gladiators={0: "a1", 1: "h8", 2: "a8", 3: "h5"}, blocks=blocks)
    s = plan_all(s, P1="ME SN", P2="SS SS", P3="SS SS", P4="SS SS")
    assert s.stash[0][1] == 0
    s = s.apply("P1 move ME")
    assert {"square": "b1", "owner": "P1", "size": "M"} in s.summary()["blocks"]
    assert s.stash[0][1] == 0 and s.stash[0][2] == 5, "the bumped large is back in the stash"


def test_faq_no_smaller_piece_in_stash_destroys_block():
    blocks = {"c3": (1, "M"), "c5": (1, "M"), "e3": (1, "M"), "e5": (1, "M"), "g7": (1, "M"), "b1": (1, "L")}
    s = four(gladiators={0: "a1", 1: "h8", 2: "a8", 3: "h5"}, blocks=blocks)
    s = plan_all(s, P1="SE SN", P2="SS SS", P3="SS SS", P4="SS SS")
    s, effects = s.apply_with_effects("P1 move SE")
    assert s.blocks[1] is None and "P2's block at b1 is removed" in effects
    assert s.stash[1][2] == 5, "the destroyed large goes back to its owner's stash"


def test_small_block_bumped_returns_to_stash_leaving_empty_square():
    s = four(gladiators={0: "a1", 1: "h8", 2: "a8", 3: "h5"}, blocks={"b1": (0, "S")})
    s = plan_all(s, P1="LE SN", P2="SS SS", P3="SS SS", P4="SS SS")
    s = s.apply("P1 move LE")
    assert square(s, 0) == "a1" and s.blocks[1] is None and s.stash[0][0] == 4  # 5 minus the planned SN


def test_faq_lethal_attack_without_edge_still_takes_edge():
    s = four(gladiators={0: "g1", 1: "h1", 2: "a8", 3: "a5"}, edge=2, life={0: 1})
    s = plan_all(s, P1="SE SN", P2="SN SN", P3="SS SS", P4="SS SS")
    s = play(s, "P3 move SS", "P4 move SS")
    s = s.apply("P1 move SE")
    assert not s.alive[0] and s.edge == 0 and s.life[1] == 9


def test_faq_dead_edge_holder_next_round_starts_to_the_left():
    s = four(gladiators={0: "g1", 1: "h1", 2: "a8", 3: "a5"}, edge=2, life={0: 1})
    s = plan_all(s, P1="SE SN", P2="SN SN", P3="SS SS", P4="SS SS")
    s = play(s, "P3 move SS", "P4 move SS", "P1 move SE")  # P1 dies but takes The Edge
    s = play(s, "P2 move SN", "P3 move SS", "P4 move SS")  # P1 is skipped: dead
    assert s.action_order() == [1]
    s = s.apply("P2 move SN")
    assert s.phase == Phase.PLAN and s.players_to_act() == (1, 2, 3)
    s = plan_all(s, P2="SN SN", P3="SS SS", P4="SS SS")
    assert s.edge == 0 and s.action_order() == [1, 2, 3, 1, 2, 3]


def test_faq_edge_changing_mid_round_keeps_the_order():
    s = four(gladiators={0: "a8", 1: "g1", 2: "h1", 3: "a5"}, edge=0)
    s = plan_all(s, P1="SS SS", P2="SE SN", P3="SN SN", P4="SS SS")
    s = play(s, "P1 move SS", "P2 move SE")  # P2 attacks and takes The Edge
    assert s.edge == 1
    s = play(s, "P3 move SN", "P4 move SS")
    assert s.current_player() == 0, "second actions still start with the round's first gladiator"


def test_death_mid_move_stops_the_rest_of_the_move():
    s = four(gladiators={0: "a1", 1: "h8", 2: "a8", 3: "h5"}, bombs=("b1",), life={0: 1})
    s = plan_all(s, P1="LE SN", P2="SS SS", P3="SS SS", P4="SS SS")
    s, effects = s.apply_with_effects("P1 move LE")
    assert not s.alive[0] and "P1 dies" in effects
    assert s.gladiators[0] is None and s.stash[0] == (5, 5, 5), "a dead gladiator's hand goes back to the stash"


def test_last_gladiator_standing_wins():
    s = GAME.position(2, {0: "g1", 1: "h1"}, edge=0, life={1: 1})
    s = plan_all(s, P1="SE SN", P2="SS SS")
    s = s.apply("P1 move SE")
    assert s.current_player() == TERMINAL
    assert s.outcome().winners == (0,) and s.returns() == (1.0, 0.0)
    assert s.legal_actions() == []


def test_last_two_dying_together_is_a_tie():
    s = GAME.position(2, {0: "g1", 1: "h1"}, edge=1, life={0: 1, 1: 1})
    s = plan_all(s, P1="SE SN", P2="SS SS")
    s = s.apply("P2 move SS")  # P2 first (The Edge): h1 stays, stopped by the edge
    s = s.apply("P1 move SE")  # P1 attacks without The Edge: both die
    assert s.outcome().termination == "tie" and s.outcome().winners == (0, 1)
    assert s.returns() == (0.5, 0.5)


def test_game_ends_when_only_one_gladiator_remains_even_mid_move():
    # "The game ends when only one gladiator remains alive": P2 dies first (pushed onto c1), so P1
    # has won before reaching the bomb at d1; the two did not die simultaneously, so no tie.
    s = GAME.position(2, {0: "a1", 1: "b1"}, edge=0, bombs=("c1", "d1"), life={0: 1, 1: 1})
    s = plan_all(s, P1="LE SN", P2="SN SN")
    s, effects = s.apply_with_effects("P1 move LE")
    assert s.outcome().termination == "last gladiator standing" and s.outcome().winners == (0,)
    assert s.alive == (True, False) and square(s, 0) == "b1" and s.bombs == {s.grid.parse("d1")}
    assert "P1 dies" not in effects


def test_tie_is_only_among_the_gladiators_who_die_simultaneously():
    # P2 dies on the bomb at c1 first; later in the same move P1 and P3 fight and both die:
    # "the last two remaining gladiators die simultaneously" are P1 and P3, not P2.
    s = GAME.position(3, {0: "a1", 1: "b1", 2: "d1"}, edge=2, bombs=("c1",), blocks={"e1": (2, "S")},
                      life={0: 1, 1: 1, 2: 1})
    s = plan_all(s, P1="LE SN", P2="SN SN", P3="SS SS")
    s = s.apply("P3 move SS")  # The Edge acts first; stopped by the arena edge
    s = s.apply("P1 move LE")
    assert s.outcome().termination == "tie" and s.outcome().winners == (0, 2)
    assert s.returns() == (0.5, 0.0, 0.5)


def _all_blocks(owner_squares):
    """Blocks of each owner's whole stash, 5 of each size, on the given squares."""
    blocks = {}
    for owner, squares in owner_squares.items():
        for i, sq in enumerate(squares):
            blocks[sq] = (owner, "SML"[i // 5])
    return blocks


def test_gladiator_with_empty_stash_plans_nothing_and_has_no_action():
    g = GAME.position(2, {0: "a1", 1: "h4"}, edge=0)
    squares = [g.grid.name(c) for c in g.grid.cells if g.grid.name(c) not in ("a1", "h4")]
    s = GAME.position(2, {0: "a1", 1: "h4"}, edge=0, blocks=_all_blocks({0: squares[:15]}))
    assert s.players_to_act() == (1,)
    s = s.apply("P2 plan SN SW")
    assert s.action_order() == [1, 1]


def test_no_living_gladiator_with_a_pyramid_is_a_stalemate_tie():  # ruling R13
    g = GAME.position(2, {0: "a1", 1: "h4"}, edge=0)
    squares = [g.grid.name(c) for c in g.grid.cells if g.grid.name(c) not in ("a1", "h4")]
    s = GAME.position(2, {0: "a1", 1: "h4"}, edge=0, blocks=_all_blocks({0: squares[:15], 1: squares[15:30]}))
    assert s.is_terminal() and s.outcome().termination == "stalemate" and s.outcome().winners == (0, 1)


# --- your stash is your life -------------------------------------------------------------------

def test_stash_is_life_damage_is_paid_with_chosen_pyramids():
    s = GAME.position(4, {0: "a1", 1: "h8", 2: "a8", 3: "h5"}, edge=0, bombs=("b1",), variant="stash-is-life")
    assert s.life_of(0) == 15
    s = plan_all(s, P1="SE SN", P2="SS SS", P3="SS SS", P4="SS SS")
    s = s.apply("P1 move SE")
    assert s.phase == Phase.PAY and s.current_player() == 0 and s.life_of(0) == 14
    assert "P1 pay L" in [str(a) for a in s.legal_actions(0)]
    s = s.apply("P1 pay L")
    assert s.removed[0] == (0, 0, 1) and s.phase == Phase.ACTION and s.current_player() == 1
    assert s.life_of(0) == 14


def test_stash_is_life_one_pyramid_one_action():
    blocks = {"c3": (0, "L"), "c5": (0, "L"), "e3": (0, "L"), "e5": (0, "L"), "g7": (0, "L"),
              "c7": (0, "M"), "d7": (0, "M"), "e7": (0, "M"), "f7": (0, "M"), "g5": (0, "M"),
              "c2": (0, "S"), "d2": (0, "S"), "e2": (0, "S"), "f2": (0, "S")}
    s = GAME.position(4, {0: "a1", 1: "h8", 2: "a8", 3: "h5"}, edge=0, blocks=blocks, variant="stash-is-life")
    assert s.life_of(0) == 1
    assert sorted(str(a) for a in s.legal_actions(0)) == ["P1 plan SE", "P1 plan SN", "P1 plan SS",
                                                          "P1 plan SU", "P1 plan SW"]
    assert "must plan 1" in s.illegal_reason(parse_action("P1 plan SN SN"))
    s = plan_all(s, P1="SN", P2="SS SS", P3="SS SS", P4="SS SS")
    assert s.action_order() == [0, 1, 2, 3, 1, 2, 3]


# --- text forms, JSON, errors ----------------------------------------------------------------------

@pytest.mark.parametrize("text", ["P1 bid LMM", "P2 bid -", "edge P3", "P1 bomb c4", "P4 enter h8",
                                  "P1 plan LN MU", "P1 plan -", "P2 plan SE", "P1 move LN",
                                  "P1 block M c5", "P1 forfeit M", "P1 pay M", "P1 pay LN"])
def test_action_text_round_trips(text):
    assert str(parse_action(text)) == text


@pytest.mark.parametrize("text", ["", "P1", "P0 bid -", "Q1 bid -", "P1 bid X", "P1 bid L-",
                                  "P1 plan XN", "P1 move LU", "P1 move L", "P1 block M", "P1 jump c4",
                                  "P1 bomb 44", "P1 bomb c0"])
def test_malformed_action_text_is_rejected_with_its_text(text):
    with pytest.raises(InvalidActionError):
        parse_action(text)


def test_plan_and_bid_accept_any_order_and_keep_the_canonical_one():
    assert str(parse_action("P1 plan SN MU")) == "P1 plan MU SN"
    assert str(parse_action("P1 bid SML")) == "P1 bid LMS"


def test_illegal_action_message_names_action_and_reason():
    s = GAME.new_initial_state(4)
    with pytest.raises(IllegalActionError, match=r"illegal action 'P1 bomb c4': the bid phase needs a bid"):
        s.apply("P1 bomb c4")
    assert "no seat P9" in s.illegal_reason(parse_action("P9 bid -"))


def test_bad_setups_are_errors():
    with pytest.raises(ValueError, match="2-10 players"):
        GAME.new_initial_state(1)
    with pytest.raises(ValueError, match="no variant"):
        GAME.new_initial_state(4, "no-such")


@settings(max_examples=60, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(2, 6), st.sampled_from(["standard", "stash-is-life"]))
def test_property_life_never_rises_and_states_round_trip(rng, players, variant):
    from companion.games.base import random_playout

    def check(state, action, nxt):
        if variant == "standard":
            assert all(b <= a for a, b in zip(state.life, nxt.life))
        assert GAME.state_from_json(json.loads(json.dumps(nxt.to_json()))) == nxt
        assert not nxt.invariant_violations()

    random_playout(GAME.new_initial_state(players, variant), rng, max_actions=400, on_action=check)
