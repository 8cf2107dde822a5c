"""ARENA space combat: the rule text's worked examples, each ruling of docs/rulings/space-arena.md,
and the tracking the companion does (hull, fuel, speeds, positions, resolution order)."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest

from companion.games import CHANCE, SIMULTANEOUS, TERMINAL, GameError, IllegalActionError, InvalidActionError, get_game
from companion.games.base import random_playout
from companion.games.space_arena import (
    Arena,
    ArenaState,
    Phase,
    ScheduledCollision,
    ScheduledMove,
    ScheduledShot,
    Ship,
    axis_distance,
    collision_losses,
    effective_aim,
    hit_chance,
    next_axis,
    range_cost,
    roll_needed,
    shot_loss,
)
from companion.records import read_record, replay

GAME = get_game("space-arena")
ARENA = Arena()
SAMPLE = Path(__file__).resolve().parents[2] / "companion" / "data" / "samples" / "space-arena.jsonl"
FAR_CORNERS = ("a1h1", "h8h8", "a8h1", "h1h8", "a1h8", "h8h1")


def at(name: str):
    return ARENA.parse(name)


def ship(where: str, aim=5, damage=5, hull=5, speed=5, velocity=(0, 0, 0), fuel=100, **more) -> Ship:
    return Ship(aim=aim, damage=damage, hull=hull, speed=speed, at=at(where), velocity=velocity, fuel=fuel, **more)


def scene(*ships: Ship, stations=None, variant="standard", options=None) -> ArenaState:
    """A position at the start of round 1's planning with the given ships (stations far away by default)."""
    n = len(ships)
    start = GAME.new_initial_state(n, variant, options)
    places = tuple(at(s) for s in (stations or FAR_CORNERS[:n]))
    state = replace(start, phase=Phase.PLAN, round=1, ships=tuple(ships), stations=places)
    assert state.invariant_violations() == []
    return state


def play(state: ArenaState, *actions: str) -> ArenaState:
    for action in actions:
        state = state.apply(action)
        assert state.invariant_violations() == [], f"after {action}: {state.invariant_violations()}"
    return state


def hold_all(state: ArenaState) -> ArenaState:
    """Everyone still giving fire orders this round holds."""
    this_round = state.round
    while state.phase == Phase.ORDERS and state.round == this_round and state.players_to_act():
        state = state.apply(f"P{state.players_to_act()[0] + 1} hold")
    return state


def round_of(state: ArenaState, *plans: str, fire=()) -> ArenaState:
    """Plans for the ships that may move (P1 first), the given fire orders, everyone else holds."""
    state = play(state, *plans)
    state = play(state, *fire)
    return hold_all(state)


def where(state: ArenaState, seat: int) -> str:
    return ARENA.name(state.ships[seat].at)


# --- set-up ------------------------------------------------------------------------------------------

def test_set_up_is_secret_designs_then_corners_in_seat_order():
    state = GAME.new_initial_state(2)
    assert state.current_player() == SIMULTANEOUS and state.players_to_act() == (0, 1)
    state = play(state, "P2 ship A5 D5 H5 S5")
    assert state.summary()["ships"][1]["committed"] is True
    assert state.summary()["ships"][1]["aim"] == 0  # not revealed before everyone has designed
    state = play(state, "P1 ship A8 D8 H3 S1")
    assert state.phase == Phase.START and state.current_player() == 0
    assert (state.ships[0].aim, state.ships[0].damage, state.ships[0].hull, state.ships[0].speed) == (8, 8, 3, 1)
    taken = play(state, "P1 start h1h5")
    assert "another ship already starts" in taken.illegal_reason(GAME.parse_action("P2 start h1h5"))
    state = play(state, "P1 start h1h5", "P2 start h1h2")  # same corner tile, another height
    assert state.phase == Phase.PLAN and state.round == 1
    assert [where(state, 0), where(state, 1)] == ["h1h5", "h1h2"]
    assert all(s.fuel == 100 and s.velocity == (0, 0, 0) for s in state.ships)


@pytest.mark.parametrize(("text", "problem"), [
    ("P1 ship A9 D5 H3 S3", "1-8"),
    ("P1 ship A5 D5 H5 S6", "add up to 20"),
    ("P1 ship A0 D8 H8 S4", "1-8"),
])
def test_designs_take_20_points_each_1_to_8(text, problem):
    state = GAME.new_initial_state(2)
    assert problem in state.illegal_reason(GAME.parse_action(text))
    assert len(state.legal_actions(0)) == 315  # every split of 20 points into four values 1-8


def test_ships_start_in_a_corner_tile_at_any_height():
    state = play(GAME.new_initial_state(2), "P1 ship A5 D5 H5 S5", "P2 ship A5 D5 H5 S5")
    assert len(state.legal_actions(0)) == 32  # four corner tiles, eight heights
    assert "not a corner" in state.illegal_reason(GAME.parse_action("P1 start b1h1"))
    assert "outside heights" in state.illegal_reason(GAME.parse_action("P1 start a1h9"))


# --- movement: the B4 to B8 example --------------------------------------------------------------

def test_b4_example_round_one_ends_at_b6_height_5():
    state = scene(ship("b4h3", speed=4), ship("h8h8", speed=4))
    state = round_of(state, "P1 plan +0 +2 +2", "P2 plan +0 +0 +0")
    assert where(state, 0) == "b6h5"
    assert state.ships[0].velocity == (0, 2, 2) and state.ships[0].fuel == 96


def test_b4_example_round_two_coasts_to_b8_height_7_for_no_fuel():
    state = scene(ship("b4h3", speed=4), ship("h8h8", speed=4))
    state = round_of(state, "P1 plan +0 +2 +2", "P2 plan +0 +0 +0")
    state = round_of(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    assert where(state, 0) == "b8h7" and state.ships[0].fuel == 96 and state.round == 3


def test_b4_example_braking_then_back_to_height_3_as_fast_as_speed_4_allows():
    state = scene(ship("b4h3", speed=4), ship("h8h8", speed=4))
    state = round_of(state, "P1 plan +0 +2 +2", "P2 plan +0 +0 +0")
    state = round_of(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    # "2 Fuel to brake the horizontal speed and 2 Fuel to brake the number speed": the height and rank speeds.
    state = round_of(state, "P1 plan +0 -2 -2", "P2 plan +0 +0 +0")
    assert where(state, 0) == "b8h7" and state.ships[0].velocity == (0, 0, 0) and state.ships[0].fuel == 92
    state = round_of(state, "P1 plan +0 +0 -4", "P2 plan +0 +0 +0")  # 4 fuel this turn for movement...
    assert where(state, 0) == "b8h3" and state.ships[0].fuel == 88
    state = round_of(state, "P1 plan +0 +0 +4", "P2 plan +0 +0 +0")  # ...and 4 next turn to brake
    assert where(state, 0) == "b8h3" and state.ships[0].velocity == (0, 0, 0) and state.ships[0].fuel == 84


def test_height_7_in_one_turn_with_speed_4_then_4_fuel_to_brake():
    state = scene(ship("b4h3", speed=4), ship("h8h8", speed=4))
    state = round_of(state, "P1 plan +0 +0 +4", "P2 plan +0 +0 +0")
    assert where(state, 0) == "b4h7"
    state = round_of(state, "P1 plan +0 +0 -4", "P2 plan +0 +0 +0")
    assert where(state, 0) == "b4h7" and state.ships[0].fuel == 92


def test_or_one_fuel_four_rounds_of_waiting_and_one_fuel_to_brake():
    state = scene(ship("b4h3", speed=4), ship("h8h8", speed=4))
    state = round_of(state, "P1 plan +0 +0 +1", "P2 plan +0 +0 +0")
    for _ in range(3):
        state = round_of(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    assert where(state, 0) == "b4h7"
    state = round_of(state, "P1 plan +0 +0 -1", "P2 plan +0 +0 +0")
    assert where(state, 0) == "b4h7" and state.ships[0].fuel == 98


def test_speed_limits_the_change_on_each_axis_not_the_total():
    state = scene(ship("b4h3", speed=4), ship("h8h8", speed=4))
    assert "at most 4" in state.illegal_reason(GAME.parse_action("P1 plan +5 +0 +0"))
    assert state.is_legal(GAME.parse_action("P1 plan +4 -4 +4"))
    assert len(state.legal_actions(0)) == 9 ** 3


def test_a_plan_never_costs_more_fuel_than_is_left():
    state = scene(ship("b4h3", speed=4, fuel=3), ship("h8h8", speed=4))
    assert "costs 4 fuel" in state.illegal_reason(GAME.parse_action("P1 plan +2 +2 +0"))
    assert all(GAME.parse_action(str(a)).cost <= 3 for a in state.legal_actions(0))
    state = round_of(state, "P1 plan +1 +1 +1", "P2 plan +0 +0 +0")
    assert state.ships[0].fuel == 0
    assert [str(a) for a in state.legal_actions(0)] == ["P1 plan +0 +0 +0"]


def test_movement_is_one_step_at_a_time_for_every_ship_at_once():
    # Lockstep: at step k every ship with a k-th move makes it.
    state = scene(ship("c3h3", velocity=(3, 0, 0)), ship("f6h6", velocity=(0, 0, -1)))
    moves = [e for e in state.resolution_order() if isinstance(e, ScheduledMove)]
    assert [(m.step, [(p, ARENA.name(a), ARENA.name(b)) for p, a, b in m.moves]) for m in moves] == [
        (1, [(0, "c3h3", "d3h3"), (1, "f6h6", "f6h5")]),
        (2, [(0, "d3h3", "e3h3")]),
        (3, [(0, "e3h3", "f3h3")]),
    ]


def test_a_ship_spreads_its_moves_evenly_over_its_axes():
    # 6 up, 1 left, 1 back: three climbs, the left and back steps, three more climbs.
    velocity, done, axes = (-1, -1, 6), [0, 0, 0], []
    while (axis := next_axis(velocity, tuple(done))) is not None:
        axes.append(axis)
        done[axis] += 1
    assert axes == [2, 2, 2, 0, 1, 2, 2, 2]


def test_ruling_speed_itself_is_not_capped_only_its_change():
    state = scene(ship("a1h1", speed=3), ship("h8h8", aim=1))
    state = round_of(state, "P1 plan +0 +3 +0", "P2 plan +0 +0 +0")
    state = play(state, "P1 plan +0 +3 +0", "P2 plan +0 +0 +0")
    assert state.ships[0].velocity == (0, 6, 0)
    moves = [e for e in state.resolution_order() if isinstance(e, ScheduledMove)]
    assert [m.bumps for m in moves][-1] == ((0, 1),)  # four tiles to the far edge, then the wall
    state = hold_all(state)
    assert where(state, 0) == "a8h1" and state.ships[0].velocity == (0, 0, 0)


def test_ruling_a_wall_stops_the_ship_on_that_axis():
    state = scene(ship("g2h2", velocity=(3, 0, 1)), ship("a8h8"))
    state = round_of(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    assert where(state, 0) == "h2h3"
    assert state.ships[0].velocity == (0, 0, 1) and state.ships[0].hull == 5


# --- range, aim and the hit roll ---------------------------------------------------------------------

def test_range_a1h1_to_h8h8_needs_aim_6():
    distance = axis_distance(at("a1h1"), at("h8h8"))
    assert distance == 21  # ruling: the text's "8+8+8" counts tiles inclusively; the sum of distances is 21
    assert range_cost(distance) == 6
    assert roll_needed(5, distance, 0) is None  # Aim 5 reaches 20 tiles
    assert roll_needed(6, distance, 0) == 5


def test_a_sitting_duck_at_that_range_is_hit_on_5_6_7_or_8():
    assert hit_chance(6, 21, 0) == Fraction(4, 8)


def test_descending_at_2_it_takes_a_7_or_8():
    assert roll_needed(6, 21, 2) == 7 and hit_chance(6, 21, 2) == Fraction(2, 8)


def test_ruling_above_total_speed_3_that_shot_is_impossible():
    # The text says "above 5"; its other examples fix the threshold, which makes it above 3.
    assert hit_chance(6, 21, 3) == Fraction(1, 8)
    assert hit_chance(6, 21, 4) == 0


def test_a1_to_c6_example_with_aim_4_needs_6_or_higher():
    distance = axis_distance(at("a1h1"), at("c6h3"))
    assert distance == 9 and range_cost(distance) == 3  # the text's "6 + 2 + 2"; three started fours either way
    assert roll_needed(4, distance, 2) == 6 and hit_chance(4, distance, 2) == Fraction(3, 8)


def _a1_c6_shot() -> ArenaState:
    # The victim goes 1 up and 1 to the right (towards d6): total speed 2.
    state = scene(ship("a1h1", aim=4, damage=7, hull=4), ship("c6h3", hull=4, velocity=(1, 0, 1)))
    state = play(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    assert state.planned_shot_chance(0, 1, 0) == Fraction(3, 8)
    return play(state, "P1 fire P2 at 0", "P2 hold")


def test_a1_to_c6_example_played_a_5_misses():
    state = _a1_c6_shot()
    assert state.current_player() == CHANCE and state.summary()["waiting_shot"]["needs"] == 6
    state = play(state, "roll 5")
    assert state.ships[1].hull == 4 and where(state, 1) == "d6h4"


def test_a1_to_c6_example_played_a_6_hits_for_damage_above_hull():
    state = play(_a1_c6_shot(), "roll 6")
    assert state.ships[1].hull == 1  # Damage 7 against Hull 4


def test_ruling_a_shot_beyond_aim_x4_cannot_be_ordered():
    state = scene(ship("a1h1", aim=5), ship("h8h8"))
    state = play(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    assert state.phase == Phase.PLAN and state.round == 2  # 21 tiles: neither can reach, nobody is asked
    state = scene(ship("a1h1", aim=5), ship("h8h7", aim=6, velocity=(0, 0, 1)))
    state = play(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    assert state.players_to_act() == (0, 1)
    assert state.is_legal(GAME.parse_action("P1 fire P2 at 0"))  # 20 tiles
    assert "at step 1 P2 will be 21 away, beyond P1's range of 20" in state.illegal_reason(
        GAME.parse_action("P1 fire P2 at 1"))


def test_a_disabled_ship_aims_4_worse_never_below_1():
    assert effective_aim(6, 0) == 2 and effective_aim(3, 0) == 1 and effective_aim(3, 2) == 3
    state = scene(ship("a1h1", aim=6, hull=0), ship("c1h1"))
    assert state.ships[0].aim_now == 2
    state = play(state, "P2 plan +0 +0 +0")  # the disabled ship has nothing to plan
    assert state.players_to_act() == (0, 1)
    assert state.is_legal(GAME.parse_action("P1 fire P2 at 0"))  # 2 tiles, within 2 x 4
    assert state.planned_shot_chance(0, 1, 0) == hit_chance(2, 2, 0) == Fraction(5, 8)


# --- hitting -------------------------------------------------------------------------------------------

def test_each_point_of_damage_above_hull_removes_one_hull():
    assert shot_loss(6, 4) == 2 and shot_loss(4, 4) == 0 and shot_loss(2, 5) == 0


def test_ruling_damage_8_against_hull_4_disables_it_and_9_destroys_it():
    assert shot_loss(8, 4) == 4  # "one-shot killing" a Hull 4: down to 0, out of action but not destroyed
    for damage, hull, status in ((8, 0, "disabled"), (9, -1, "destroyed")):
        state = scene(ship("a1h1", aim=8, damage=damage), ship("b1h1", hull=4, velocity=(0, 1, 0)), ship("h8h8"))
        state = play(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0", "P3 plan +0 +0 +0", "P1 fire P2 at 0")
        state = hold_all(state)  # range 1 with Aim 8: the shot cannot miss, no die
        assert state.ships[1].hull == hull and state.ships[1].status() == status
        assert state.ships[1].velocity == (0, 0, 0) and where(state, 1) == "b1h1"  # stopped before moving


def test_a_disabled_ship_cannot_move_but_still_shoots():
    state = scene(ship("a1h1", hull=0), ship("c1h1"))
    assert state.players_to_act() == (1,)
    assert "disabled" in state.illegal_reason(GAME.parse_action("P1 plan +1 +0 +0"))


def test_ruling_shots_at_the_same_step_are_simultaneous():
    # Both fire at step 0 and disable each other. Had P1's hit come first, P2 would have aimed at 4
    # and needed a die; at the same step P2 still aims at 8 and cannot miss.
    state = scene(ship("a1h1", aim=8, damage=10, hull=5), ship("b1h1", aim=8, damage=10, hull=5))
    state = play(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0", "P1 fire P2 at 0", "P2 fire P1 at 0")
    assert [s.hull for s in state.ships] == [0, 0]
    assert state.phase == Phase.ORDERS and state.round == 2  # both disabled: no plans, only fire orders


def test_ruling_ships_destroyed_together_share_the_result():
    state = scene(ship("a1h1", aim=8, damage=9, hull=2), ship("b1h1", aim=8, damage=9, hull=2))
    state = play(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0", "P1 fire P2 at 0", "P2 fire P1 at 0")
    assert state.is_terminal() and state.outcome().termination == "destroyed together"
    assert state.ships[0].hull == state.ships[1].hull == -5 and state.returns() == (0.5, 0.5)


# --- collisions ----------------------------------------------------------------------------------------

def test_collision_losses_reproduce_the_three_examples():
    assert collision_losses(4, 2, 4, 2) == (4, 4)  # 8 damage each against Hull 4
    assert collision_losses(4, 2, 4, 0) == (2, 2)  # 6 damage each
    assert collision_losses(3, 1, 6, 6) == (10, 4)  # 13 against Hull 3, 10 against Hull 6


def test_two_hull_4_ships_frontal_at_speed_2_crash_and_burn():
    state = scene(ship("b4h4", hull=4, velocity=(2, 0, 0)), ship("f4h4", hull=4, velocity=(-2, 0, 0)))
    collisions = [e for e in state.resolution_order() if isinstance(e, ScheduledCollision)]
    assert [(c.step, ARENA.name(c.at)) for c in collisions] == [(2, "d4h4")]
    state = round_of(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    # Ruling: "crash and burn" is both knocked out at hull 0: dead in space, neither destroyed.
    assert [s.hull for s in state.ships] == [0, 0] and [s.velocity for s in state.ships] == [(0, 0, 0)] * 2
    assert where(state, 0) == where(state, 1) == "d4h4" and not state.is_terminal()


def test_one_standing_still_and_one_at_speed_2_lose_2_hull_each():
    state = scene(ship("b4h4", hull=4, velocity=(2, 0, 0)), ship("d4h4", hull=4))
    state = round_of(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    assert [s.hull for s in state.ships] == [2, 2]


def test_the_extreme_example_destroys_the_weak_ship_and_leaves_the_tough_one_at_hull_2():
    weak = ship("d4h7", hull=3, speed=4, velocity=(1, 0, 0))
    tough = ship("f5h1", hull=6, speed=2, velocity=(-1, -1, 6))  # 8 tiles, ending in the weak ship's tile
    state = scene(weak, tough, ship("a8h8"))
    entries = state.resolution_order()
    collisions = [e for e in entries if isinstance(e, ScheduledCollision)]
    assert [(c.step, ARENA.name(c.at)) for c in collisions] == [(8, "e4h7")]
    last = [e for e in entries if isinstance(e, ScheduledMove)][-1]
    assert [(ARENA.name(a), ARENA.name(b)) for _, a, b in last.moves] == [("e4h6", "e4h7")]  # from beneath
    state = round_of(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0", "P3 plan +0 +0 +0")
    assert state.ships[0].destroyed and state.ships[0].hull == -7
    assert state.ships[1].hull == 2 and where(state, 1) == "e4h7"
    assert state.ships[1].velocity == (-1, -1, 6)  # ruling: no bounce; a ship flies on after a collision


def test_ruling_three_ships_meeting_collide_pair_by_pair_all_at_once():
    state = scene(ship("c4h4", velocity=(1, 0, 0)), ship("e4h4", velocity=(-1, 0, 0)),
                  ship("d5h4", velocity=(0, -1, 0)))
    state = round_of(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0", "P3 plan +0 +0 +0")
    assert [s.hull for s in state.ships] == [1, 1, 1]  # two collisions each, 1 + 1 + 5 against hull 5


def test_ruling_ships_that_swap_places_collide():
    state = scene(ship("c4h4", hull=4, velocity=(1, 0, 0)), ship("d4h4", hull=4, velocity=(-1, 0, 0)))
    state = round_of(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    assert [where(state, 0), where(state, 1)] == ["d4h4", "c4h4"]
    assert [s.hull for s in state.ships] == [2, 2]


def test_ruling_ships_that_stay_together_do_not_collide_again():
    # Two ships in one place at the start of a round (after an earlier collision) move on together
    # for a step: no new collision. They part at step 2.
    state = scene(ship("d4h4", velocity=(2, 0, 0)), ship("d4h4", velocity=(1, 0, 0)))
    assert not [e for e in state.resolution_order() if isinstance(e, ScheduledCollision)]
    state = round_of(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    assert [s.hull for s in state.ships] == [5, 5] and [where(state, 0), where(state, 1)] == ["f4h4", "e4h4"]


# --- refuelling ------------------------------------------------------------------------------------------

def test_a_round_standing_still_on_a_station_gives_40_fuel_up_to_the_full_100():
    state = scene(ship("a1h1", fuel=50), ship("h8h8", fuel=90), stations=("a1h1", "h8h8"))
    state = round_of(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    assert [s.fuel for s in state.ships] == [90, 100]


def test_zooming_through_a_station_gives_10_fuel():
    state = scene(ship("a3h1", fuel=50, velocity=(0, -2, 0)), ship("h8h8"), stations=("a1h1", "h8h8"))
    state = round_of(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    assert where(state, 0) == "a1h1" and state.ships[0].fuel == 60
    state = round_of(state, "P1 plan +0 +2 +0", "P2 plan +0 +0 +0")  # brakes: a round standing still there
    assert state.ships[0].fuel == 98
    state = round_of(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    assert state.ships[0].fuel == 100


def test_ruling_a_station_is_its_place_tile_and_height_and_serves_every_ship():
    state = scene(ship("a1h2", fuel=50), ship("h8h8", fuel=50), stations=("h8h8", "a1h1"))
    state = round_of(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    assert state.ships[0].fuel == 50  # same tile as P2's station, another height
    assert state.ships[1].fuel == 90  # P1's station serves P2 as well


# --- fire orders and the resolution order -------------------------------------------------------------

def test_fire_orders_name_a_step_of_the_revealed_movement():
    state = scene(ship("a1h1", aim=4, velocity=(3, 0, 0)), ship("a4h1"))
    state = play(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    assert state.players_to_act() == (0, 1)
    assert "steps 0-3" in state.illegal_reason(GAME.parse_action("P1 fire P2 at 4"))
    state = play(state, "P2 hold", "P1 fire P2 at 2")
    assert state.current_player() == CHANCE and state.step == 2
    assert where(state, 0) == "c1h1"  # the shot comes after step 2, before step 3
    state = play(state, "roll 1")
    assert where(state, 0) == "d1h1" and state.phase == Phase.PLAN


def test_resolution_order_lists_steps_collisions_and_shots_with_their_chances():
    state = scene(ship("a1h1", aim=4, velocity=(2, 0, 0)), ship("d1h1", velocity=(-1, 0, 0)))
    state = play(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    order = state.resolution_order([(0, 1, 0), (1, 0, 2)])
    assert [type(e).__name__ for e in order] == [
        "ScheduledShot", "ScheduledMove", "ScheduledMove", "ScheduledCollision", "ScheduledShot"]
    first, last = order[0], order[-1]
    assert isinstance(first, ScheduledShot) and isinstance(last, ScheduledShot)
    # Aim 4, range 3 (one started four), target speed 1: 5 - (4 - 1 - 1) = 3
    assert (first.step, first.distance, first.need, first.chance) == (0, 3, 3, Fraction(6, 8))
    # P2 reached c1 after one step and waits there; P1 arrives at step 2: range 0, P1's speed 2
    assert (last.step, last.shooter, last.distance, last.need, last.chance) == (2, 1, 0, 2, Fraction(7, 8))
    assert isinstance(order[3], ScheduledCollision) and ARENA.name(order[3].at) == "c1h1"


def test_ruling_a_shot_that_cannot_hit_or_cannot_miss_is_not_rolled():
    state = scene(ship("a1h1", aim=6), ship("h8h8", velocity=(0, 0, -4)))
    state = play(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0", "P2 hold")
    state, effects = state.apply_with_effects(GAME.parse_action("P1 fire P2 at 0"))
    assert state.current_player() != CHANCE
    assert any("cannot hit (would need 9)" in e for e in effects) and state.ships[1].hull == 5
    # Aim 7 at range 2 (one started four) on a ship standing still: 5 - (7 - 1 - 0) = -1, a sure hit.
    state = scene(ship("a1h1", aim=7, damage=7), ship("c1h1", hull=4, aim=1), ship("h8h8", aim=1))
    state = play(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0", "P3 plan +0 +0 +0", "P2 hold")
    state, effects = state.apply_with_effects(GAME.parse_action("P1 fire P2 at 0"))
    assert state.current_player() != CHANCE and state.round == 2
    assert any("cannot miss" in e for e in effects) and state.ships[1].hull == 1


def test_a_shot_at_a_ship_destroyed_earlier_in_the_round_is_void():
    state = scene(ship("a1h1", aim=8, damage=9, velocity=(0, 0, 1)), ship("c1h1", hull=1), ship("a3h1", aim=8))
    state = play(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0", "P3 plan +0 +0 +0")
    state, effects = state.apply_with_effects(GAME.parse_action("P1 fire P2 at 0"))
    state = play(state, "P2 hold")
    state, effects = state.apply_with_effects(GAME.parse_action("P3 fire P2 at 1"))
    assert state.ships[1].destroyed and any("void" in e for e in effects)


def test_a_shot_whose_target_stopped_out_of_reach_is_not_fired():
    # P2 was to come within P1's reach (8) by step 2, but P3 disables it at step 0 and it stops.
    state = scene(ship("a1h1", aim=2), ship("a8h4", velocity=(0, -2, 0)), ship("a8h3", aim=8, damage=10))
    state = play(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0", "P3 plan +0 +0 +0",
                 "P1 fire P2 at 2", "P2 hold")
    state, effects = state.apply_with_effects(GAME.parse_action("P3 fire P2 at 0"))
    assert state.ships[1].hull == 0 and where(state, 1) == "a8h4"
    assert any("out of range (10 > 8), no shot" in e for e in effects)


# --- power-ups -----------------------------------------------------------------------------------------

def powered(kind: str, *ships: Ship, respawn=4) -> ArenaState:
    return scene(*ships, options={"powerups": [f"{kind}@d4h4"], "respawn": respawn})


def test_speed_power_up_raises_speed_by_2_for_three_plans():
    state = powered("speed", ship("c4h4", speed=4, velocity=(1, 0, 0)), ship("h8h8", aim=1))
    state = round_of(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    assert state.ships[0].max_speed_change == 6 and state.powerups == (5,)
    for _ in range(3):
        assert state.is_legal(GAME.parse_action("P1 plan +0 +0 +6"))
        state = round_of(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    assert state.ships[0].max_speed_change == 4


def test_extra_attack_power_up_gives_a_second_order_once():
    state = powered("attack", ship("c4h4", aim=4), ship("h8h8", aim=1))
    state = round_of(state, "P1 plan +1 +0 +0", "P2 plan +0 +0 +0")
    assert state.ships[0].extra_shots == 1
    state = play(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0", "P1 fire P2 at 0")
    assert state.players_to_act() == (0,)  # a second shot is still to order
    state = play(state, "P1 fire P2 at 0")
    assert state.ships[0].extra_shots == 0 and state.current_player() == CHANCE


def test_heavy_power_up_adds_3_damage_to_the_next_shot_only():
    state = powered("heavy", ship("c4h4", aim=8, damage=5), ship("e4h4", hull=4))
    state = round_of(state, "P1 plan +1 +0 +0", "P2 plan +0 +0 +0")  # picked up at step 1
    assert state.ships[0].heavy_shots == 1
    state = play(state, "P1 plan -1 +0 +0", "P2 plan +0 +0 +0", "P1 fire P2 at 0", "P2 hold")
    assert state.ships[1].hull == 0 and state.ships[0].heavy_shots == 0  # 8 against 4; cannot miss at range 1


def test_hull_power_up_repairs_even_a_disabled_ship_and_respawns():
    state = powered("hull", ship("d4h4", hull=0), ship("h8h8", aim=1), respawn=2)
    state = round_of(state, "P2 plan +0 +0 +0")
    assert state.ships[0].hull == 1 and state.powerups == (3,)
    state = round_of(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    assert state.ships[0].hull == 1  # not back yet
    state = round_of(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    assert state.ships[0].hull == 2 and state.powerups == (5,)


def test_ruling_a_contested_power_up_goes_to_nobody():
    state = powered("hull", ship("d4h4"), ship("d4h4", aim=1))
    state = round_of(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    assert [s.hull for s in state.ships] == [5, 5] and state.powerups == (0,)


def test_power_ups_never_raise_a_value_past_10():
    state = powered("hull", ship("d4h4", hull=10), ship("h8h8", aim=1))
    state = round_of(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    assert state.ships[0].hull == 10


# --- the end -------------------------------------------------------------------------------------------

def test_the_last_ship_flying_wins():
    state = scene(ship("a1h1", aim=8, damage=9), ship("b1h1", hull=2, aim=1))
    state = play(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0", "P1 fire P2 at 0", "P2 hold")
    assert state.is_terminal() and state.outcome().winners == (0,) and state.returns() == (1.0, 0.0)
    assert state.legal_actions() == []


def test_ruling_the_round_limit_ends_the_game_with_the_survivors_sharing():
    state = scene(ship("a1h1", aim=1), ship("h8h8", aim=1), options={"round_limit": 2})
    state = round_of(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    state = round_of(state, "P1 plan +0 +0 +0", "P2 plan +0 +0 +0")
    assert state.is_terminal() and state.outcome().termination == "round limit"
    assert state.outcome().winners == (0, 1)


def test_ruling_disabled_ships_out_of_each_others_reach_end_in_a_stalemate():
    # P2 rams P3 at speed 5: P2 is left at hull 0 (5 + 3 against 4), P3 destroyed (5 + 4 against 3).
    # P1, disabled at a1h1 with Aim 1, and P2 can never reach each other again.
    state = scene(ship("a1h1", aim=1, hull=0), ship("h3h8", aim=1, hull=4, velocity=(0, 5, 0)),
                  ship("h8h8", aim=1, hull=3))
    state = round_of(state, "P2 plan +0 +0 +0", "P3 plan +0 +0 +0")
    assert [s.hull for s in state.ships] == [0, 0, -3]
    assert state.is_terminal() and state.outcome().termination == "stalemate"
    assert state.outcome().winners == (0, 1)


# --- text forms, options, records ------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["P1 ship A5 D5 H5 S5", "P2 start h8h1", "P3 plan +0 -2 +4",
                                  "P1 fire P3 at 0", "P2 hold", "roll 8"])
def test_action_text_round_trips(text):
    assert str(GAME.parse_action(text)) == text


@pytest.mark.parametrize(("text", "message"), [
    ("P1 ship 5 5 5 5", "bad ARENA design 'P1 ship 5 5 5 5': expected A, D, H and S"),
    ("P1 plan +1 +1", "unknown ARENA action 'P1 plan \\+1 \\+1'"),
    ("P1 fire P2 3", "unknown ARENA action 'P1 fire P2 3'"),
    ("roll x", "bad die roll 'x' in 'roll x'"),
    ("P1 jump", "unknown ARENA action 'P1 jump'"),
    ("P1", "incomplete ARENA action 'P1'"),
])
def test_unreadable_actions_say_what_is_wrong(text, message):
    with pytest.raises(InvalidActionError, match=message):
        GAME.parse_action(text)


def test_options_configure_the_arena_fuel_and_power_ups():
    state = GAME.new_initial_state(3, "powerups", {"size": [6, 5, 4], "fuel": 60, "round_limit": 0})
    assert state.arena == Arena(6, 5, 4) and len(state.legal_actions(0)) == 315
    assert [p.kind for p in state.rules.powerups] == ["speed", "attack", "heavy", "hull"]
    assert all(s.fuel == 60 for s in state.ships)
    assert GAME.state_from_json(json.loads(json.dumps(state.to_json()))) == state
    for bad in ({"size": 1}, {"colour": "red"}, {"powerups": ["laser@d4h4"]}, {"powerups": ["hull@z9h1"]},
                {"fuel": -1}):
        with pytest.raises(GameError):
            GAME.new_initial_state(2, "standard", bad)


def test_illegal_actions_raise_with_the_reason():
    state = GAME.new_initial_state(2)
    with pytest.raises(IllegalActionError, match="design"):
        state.apply("P1 plan +0 +0 +0")
    assert "no shot is waiting" in state.illegal_reason(GAME.parse_action("roll 3"))


def test_random_games_never_let_fuel_go_negative_and_track_everything_in_json():
    rng = random.Random(5)
    for _ in range(20):
        def check(before, action, after):
            assert all(0 <= s.fuel <= 100 for s in after.ships)
            assert GAME.state_from_json(json.loads(json.dumps(after.to_json()))) == after
        final = random_playout(GAME.new_initial_state(rng.randint(2, 4), rng.choice(["standard", "powerups"])),
                               rng, on_action=check)
        assert final.current_player() == TERMINAL


def test_the_sample_record_replays_with_every_action_legal():
    header, events = read_record(SAMPLE)
    assert header.game == "space-arena"
    verdicts = list(replay(header, events))
    assert all(v.legal for v, _ in verdicts), [str(v) for v, _ in verdicts if not v.legal]
    final = verdicts[-1][1]
    assert final.is_terminal()
    assert all(v.line is not None for v, _ in verdicts)  # every die is in the record
