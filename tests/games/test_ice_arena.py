"""Ice Arena: building, dice, weapons, damage, order of play and every "Miscellaneous
Clarification" of the rule text. Positions are set up through the game's options and,
for mid-round situations, by putting a state into the stage under test."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest

from companion.games import CHANCE, SIMULTANEOUS, TERMINAL, GameError, IllegalActionError, get_game
from companion.games.base import random_playout
from companion.games.ice_arena import (
    UNIQUE_WEAPON,
    BuildError,
    Fire,
    IceArenaState,
    Mine,
    Small,
    parse_build,
)
from companion.boards.hexgrid import HexDirection
from companion.pieces import Colour
from companion.records import read_record, replay

GAME = get_game("ice-arena")
SAMPLE = Path(__file__).resolve().parents[2] / "companion" / "data" / "samples" / "ice-arena.jsonl"

RIFLEMAN = "red-L blue-M red-S"          # Attack 2, Move 2: smash
GUARD = "green-L green-M yellow-S"       # Defend 3: acid stream (for seat 2, cap yellow)


def arena(p1=(RIFLEMAN,), p2=(GUARD,), positions=None, radius=4, players=2, **more):
    bots = {"P1": list(p1), "P2": list(p2), **more}
    return GAME.new_initial_state(players, options={"radius": radius, "bots": bots, "positions": positions or {}})


def at_stage(state: IceArenaState, stage: str, smalls=(), mines=(), **bots) -> IceArenaState:
    """The state put into `stage` with the given small pieces ('colour q,r [dir]') and bot fields."""
    grid = state.grid
    pieces = []
    for text in smalls:
        words = text.split()
        pieces.append(Small(grid.parse(words[1]), Colour(words[0]),
                            HexDirection(words[2]) if len(words) > 2 and words[2] != "up" else None))
    changed = []
    for b in state.bots:
        fields = {"picks": (0, 0, 0, 0)}
        fields.update(bots.get("b" + b.id, {}))
        changed.append(replace(b, **fields))
    s = replace(state, stage=stage, bots=tuple(changed), smalls=tuple(sorted(pieces)), mines=tuple(mines),
                order=tuple(b.id for b in changed) if stage in ("moving", "scrub", "misc", "place") else ())
    if stage == "turrets":
        s = replace(s, turrets=tuple(p.cell for p in s.smalls if p.colour is Colour.RED))
    return s._settle([])


def texts(actions):
    return {str(a) for a in actions}


# --- building -------------------------------------------------------------------------------

def test_a_bot_needs_a_large_under_a_medium_and_the_owners_cap():
    core, spares = parse_build("red-L blue-M green-S red-S", Colour.RED)
    assert [str(p) for p in core] == ["red-L", "blue-M"] and spares == (Colour.GREEN,)
    with pytest.raises(BuildError, match="capped by a small red"):
        parse_build("red-L blue-M red-S green-S", Colour.RED)
    with pytest.raises(BuildError, match="large with a medium directly on it"):
        parse_build("blue-M red-L red-S", Colour.RED)
    with pytest.raises(BuildError, match="large with a medium"):
        parse_build("red-L red-L red-S", Colour.RED)
    with pytest.raises(BuildError, match="on top"):
        parse_build("red-L green-S blue-M red-S", Colour.RED)
    with pytest.raises(BuildError, match="no role"):
        parse_build("purple-L blue-M red-S", Colour.RED)


def test_twenty_pips_each_and_the_box_limits():
    ok = ["red-L blue-M red-M blue-S green-S red-S", "yellow-L red-M green-M red-S yellow-S red-S"]  # 10 + 10
    arena(p1=ok)
    with pytest.raises(BuildError, match="21 pips"):
        arena(p1=[*ok[:1], "yellow-L red-M green-M red-S yellow-S blue-S red-S"])
    with pytest.raises(BuildError, match="box holds 5"):
        GAME.new_initial_state(2, options={"stashes": 1, "bots": {
            "P1": ["red-L red-M red-S", "red-L red-M red-S", "red-L red-M red-S"],
            "P2": ["red-L red-M yellow-S", "red-L red-M yellow-S", "red-L green-M yellow-S"]}})
    with pytest.raises(GameError):
        GAME.new_initial_state(5)


def test_attributes_weapon_and_dice_allowed():
    s = arena(p1=["green-L red-M blue-M blue-S red-S"])
    bot = s.bot("1A")
    assert (bot.base(0), bot.base(1), bot.base(2), bot.base(3)) == (2, 2, 2, 1)
    assert bot.weapons == ("rifle", "shotgun", "minigun") and bot.dice_allowed == 3
    info = s.summary()["bots"][0]
    assert info["primary"] == "defend" and info["secondary"] == "attack"
    assert info["dice_limits"] == {"d4": 2, "d6": 2, "d8": 1, "d10": 2}


@pytest.mark.parametrize(("pair", "weapon"), [
    (("yellow", "yellow"), "mortar"), (("blue", "yellow"), "laser"), (("green", "red"), "minigun"),
    (("green", "blue"), "minigun"), (("red", "yellow"), "flame"), (("red", "red"), "smash"),
    (("red", "blue"), "smash"), (("blue", "red"), "smash"), (("green", "yellow"), "mines"),
    (("yellow", "green"), "mines"), (("blue", "blue"), "corrode"), (("blue", "green"), "corrode"),
    (("red", "green"), "acid"), (("green", "green"), "acid"), (("yellow", "blue"), "strike"),
    (("yellow", "red"), "throw")])
def test_unique_weapon_table(pair, weapon):
    s = arena(p1=[f"{pair[0]}-L {pair[1]}-M red-S"])
    assert s.bot("1A").unique_weapon == weapon
    assert len(UNIQUE_WEAPON) == 16


# --- dice -------------------------------------------------------------------------------------

def test_dice_picking_limits_and_secrecy():
    s = arena()
    assert s.current_player() == SIMULTANEOUS and s.players_to_act() == (0, 1)
    assert "P1 1A pick d4 d4 d10" not in texts(s.legal_actions(0)), "only two pieces: two dice"
    assert {"P1 1A pick d4 d10", "P1 1A pick d10 d10"} <= texts(s.legal_actions(0))
    with pytest.raises(IllegalActionError, match="at most 2 dice"):
        s.apply("P1 1A pick d4 d4 d10")
    with pytest.raises(IllegalActionError, match="at most 1 d6"):
        s.apply("P1 1A pick d6 d6")
    s = s.apply("P1 1A pick d4 d10")
    assert s.players_to_act() == (1,) and s.legal_actions(0) == []
    assert s.summary()["bots"][0]["picked"] is None, "picks stay secret until all have picked"


def test_ability_dice_score_specials_at_or_under_ability_and_five():
    s = arena(p1=["yellow-L yellow-M red-S"], p2=["red-L red-M yellow-S"])  # Ability 3 / 1
    s = s.apply("P1 1A pick d8 d8").apply("P2 2A pick -")
    assert s.current_player() == CHANCE and len(s.rolls) == 5 + 1
    for value in (3, 4, 1, 8, 2):
        s = s.apply(f"d8={value}")
    assert s.bot("1A").specials == 3
    with pytest.raises(IllegalActionError, match="d8, not a d6"):
        s.apply("d6=1")
    s = s.apply("d8=1")
    assert s.bot("2A").specials == 1


# --- weapons ----------------------------------------------------------------------------------

def test_rifle_reaches_ten_hexes_and_never_scores_a_critical():
    s = arena(positions={"1A": "-6,0", "2A": "4,0"}, radius=6)
    s = at_stage(s, "dice", b1A={"attack_dice": (10,)})
    assert "P1 1A rifle 4,0" in texts(s.legal_actions())
    far = at_stage(arena(positions={"1A": "-6,0", "2A": "5,0"}, radius=6), "dice", b1A={"attack_dice": (10,)})
    assert "P1 1A rifle 5,0" not in texts(far.legal_actions())
    s = s.apply("P1 1A rifle 4,0")
    assert s.bot("2A").hits == 1 and not s.damage, "a 10 against CT 11 is only a regular hit"


def test_shotgun_critical_at_nine_downgraded_when_defend_is_over_the_threshold():
    s = arena(positions={"1A": "0,0", "2A": "2,0"})
    crit = at_stage(s, "dice", b1A={"attack_dice": (9,)}, b2A={"defend_roll": 5})  # Defend 8
    out = crit.apply("P1 1A shotgun 2,0")
    assert out.bot("2A") is not None and out.bot("2A").life == 0 + 1 or out.is_terminal()
    assert out.is_terminal(), "the guard has only its cap: one critical destroys it"
    tough = at_stage(s, "dice", b1A={"attack_dice": (9,)}, b2A={"defend_roll": 7})  # Defend 10 > CT 9
    out = tough.apply("P1 1A shotgun 2,0")
    assert out.bot("2A").hits == 1 and not out.is_terminal()
    missed = at_stage(s, "dice", b1A={"attack_dice": (8,)}, b2A={"defend_roll": 5})
    assert missed.apply("P1 1A shotgun 2,0").bot("2A").hits == 0, "8 does not beat Defend 8"
    too_far = at_stage(arena(positions={"1A": "0,0", "2A": "3,0"}), "dice", b1A={"attack_dice": (9,)})
    assert "P1 1A shotgun 3,0" not in texts(too_far.legal_actions())


def test_smash_is_adjacent_with_threshold_eight():
    s = at_stage(arena(positions={"1A": "0,0", "2A": "1,0"}), "dice", b1A={"attack_dice": (8,)},
                 b2A={"defend_roll": 5})  # Defend 8: not over the CT
    assert s.apply("P1 1A smash 1,0").is_terminal()
    s = at_stage(arena(positions={"1A": "0,0", "2A": "2,0"}), "dice", b1A={"attack_dice": (8,)})
    assert not any(a.weapon == "smash" for a in s.legal_actions() if isinstance(a, Fire))


def test_minigun_reaches_four():
    p1 = ["green-L red-M red-S"]
    s = at_stage(arena(p1=p1, positions={"1A": "-2,0", "2A": "2,0"}), "dice", b1A={"attack_dice": (10,)})
    assert "P1 1A minigun 2,0" in texts(s.legal_actions())
    s = at_stage(arena(p1=p1, positions={"1A": "-3,0", "2A": "2,0"}), "dice", b1A={"attack_dice": (10,)})
    assert "P1 1A minigun 2,0" not in texts(s.legal_actions())


def test_bots_and_small_greens_block_even_partially_but_mortar_does_not():
    p1 = ["yellow-L yellow-M red-S"]
    s = arena(p1=p1, p2=[GUARD, "red-L red-M yellow-S"], positions={"1A": "0,0", "2A": "2,0", "2B": "1,0"})
    s = at_stage(s, "dice", b1A={"attack_dice": (10,), "specials": 2})
    options = texts(s.legal_actions())
    assert "P1 1A rifle 2,0" not in options and "P1 1A rifle 1,0" in options
    assert "P1 1A mortar 2,0" in options
    # The line 0,0 -> 1,1 runs along the edge between 1,0 and 0,1: a green on either blocks.
    s = arena(p1=p1, positions={"1A": "0,0", "2A": "1,1"})
    for green in ("green 1,0", "green 0,1"):
        t = at_stage(s, "dice", smalls=[green], b1A={"attack_dice": (10,), "specials": 2})
        assert "P1 1A rifle 1,1" not in texts(t.legal_actions())
        assert "P1 1A mortar 1,1" in texts(t.legal_actions())


def test_laser_has_no_range_limit_but_is_blocked_and_costs_a_special():
    p1 = ["blue-L yellow-M red-S"]
    s = arena(p1=p1, positions={"1A": "-6,0", "2A": "6,0"}, radius=6)
    t = at_stage(s, "dice", b1A={"attack_dice": (10,), "specials": 1})
    assert "P1 1A laser 6,0" in texts(t.legal_actions()) and "P1 1A rifle 6,0" not in texts(t.legal_actions())
    out = t.apply("P1 1A laser 6,0")
    assert out.is_terminal(), "10 at CT 10 against Defend 3 is a critical"
    broke = at_stage(s, "dice", b1A={"attack_dice": (10,), "specials": 0})
    assert "P1 1A laser 6,0" not in texts(broke.legal_actions())


def test_flamethrower_hits_every_bot_in_or_next_to_a_hex_two_away():
    p1 = ["red-L yellow-M red-S", "red-L red-M red-S"]
    p2 = [GUARD, "red-L red-M yellow-S"]
    s = arena(p1=p1, p2=p2, positions={"1A": "0,0", "1B": "2,-1", "2A": "2,0", "2B": "3,0"})
    s = at_stage(s, "dice", b1A={"attack_dice": (9,), "specials": 1})
    out = s.apply("P1 1A flame 2,0")
    assert out.bot("2A") is None and out.bot("2B") is None and out.bot("1B") is None
    assert out.is_terminal() and out.outcome().winners == (0,)


def test_acid_stream_hits_all_bots_in_a_line_up_to_six_and_stops_at_green():
    p1 = ["green-L green-M red-S"]
    p2 = ["red-L red-M yellow-S", "red-L red-M yellow-S", "red-L blue-M yellow-S"]
    s = arena(p1=p1, p2=p2, positions={"1A": "-4,0", "2A": "-2,0", "2B": "1,0", "2C": "3,0"})
    t = at_stage(s, "dice", b1A={"attack_dice": (10,)})
    out = t.apply("P1 1A acid E")
    assert out.bot("2A") is None and out.bot("2B") is None and out.bot("2C") is not None, "3,0 is 7 away"
    t = at_stage(s, "dice", smalls=["green 0,0"], b1A={"attack_dice": (10,)})
    out = t.apply("P1 1A acid E")
    assert out.bot("2A") is None and out.bot("2B") is not None


def test_throw_moves_the_target_and_strike_jumps_first():
    thrower = ["yellow-L red-M red-S"]
    s = at_stage(arena(p1=thrower, positions={"1A": "0,0", "2A": "1,0"}), "dice",
                 b1A={"attack_dice": (2,), "specials": 1})
    out = s.apply("P1 1A throw 1,0 -2,1")
    assert out.grid.name(out.bot("2A").cell) == "-2,1"
    with pytest.raises(IllegalActionError):
        s.apply("P1 1A throw 1,0 3,0")  # three hexes from the thrower
    striker = ["yellow-L blue-M red-S"]
    s = at_stage(arena(p1=striker, positions={"1A": "0,0", "2A": "3,0"}), "dice",
                 b1A={"attack_dice": (2,), "specials": 1})
    out = s.apply("P1 1A strike 2,0 3,0")
    assert out.grid.name(out.bot("1A").cell) == "2,0" and out.bot("1A").specials == 0


# --- damage and destruction -------------------------------------------------------------------

def test_two_hits_make_a_point_of_damage_paid_with_a_small_then_the_cap_destroys():
    s = arena(p2=["green-L green-M red-S yellow-S"], positions={"1A": "0,0", "2A": "3,0"})
    s = at_stage(s, "dice", b1A={"attack_dice": (5, 6, 7)})
    s = s.apply("P1 1A rifle 3,0")
    assert s.bot("2A").hits == 1 and not s.damage
    s = s.apply("P1 1A rifle 3,0")
    assert s.current_player() == 1 and s.damage == ("2A",)
    answers = texts(s.legal_actions())
    assert "P2 2A play red 2,0" in answers and not any("discard" in a for a in answers)
    with pytest.raises(IllegalActionError, match="must play"):
        s.apply("P2 2A discard red")
    s = s.apply("P2 2A play red 4,0")
    assert s.bot("2A").life == 1 and s.smalls[0].colour is Colour.RED
    s = s.apply("P1 1A rifle 3,0")
    assert s.bot("2A").hits == 1
    assert not s.is_terminal()


def test_a_bot_that_loses_its_cap_is_destroyed_and_the_last_player_wins():
    s = at_stage(arena(positions={"1A": "0,0", "2A": "1,0"}), "dice", b1A={"attack_dice": (9,)})
    out = s.apply("P1 1A smash 1,0")
    assert out.current_player() == TERMINAL and out.outcome().winners == (0,)
    assert out.returns() == (1.0, 0.0) and out.legal_actions() == []


def test_discard_only_when_no_small_can_be_played():
    # A red needs an adjacent hex; surround the victim so nothing can be played.
    p2 = ["green-L green-M red-S yellow-S"]
    s = arena(p2=p2, positions={"1A": "4,0", "2A": "4,-4"})  # a corner hex: three neighbours
    s = at_stage(s, "dice", smalls=["blue 3,-4", "blue 4,-3", "blue 3,-3"], b1A={"attack_dice": (10, 10)})
    s = s.apply("P1 1A rifle 4,-4").apply("P1 1A rifle 4,-4")
    assert s.bot("2A").life == 1, "the red could not be played, so it was discarded"


# --- order of play ----------------------------------------------------------------------------

def test_attack_dice_resolve_lowest_first_across_players():
    s = arena(p1=["red-L red-M red-S"], p2=["red-L red-M yellow-S"], positions={"1A": "0,0", "2A": "4,0"})
    s = at_stage(s, "dice", b1A={"attack_dice": (3, 7)}, b2A={"attack_dice": (5,)})
    assert s.resolution_order() == ["1A d10=3", "2A d10=5", "1A d10=7"]
    assert s.current_player() == 0
    s = s.apply("P1 1A hold")
    assert s.current_player() == 1


def test_lower_move_moves_first_and_ties_are_drawn_by_chance():
    p1 = ["blue-L blue-M red-S"]  # Move 3
    s = arena(p1=p1, p2=[GUARD, "red-L red-M yellow-S"], positions={"1A": "0,0", "2A": "3,0", "2B": "-3,0"})
    s = at_stage(s, "moving")
    assert s.current_player() == CHANCE
    assert {str(a) for a, _ in s.chance_outcomes()} == {"first 2A", "first 2B"}
    s = s.apply("first 2B")
    assert s.acting_bot().id == "2B"
    s = s.apply("P2 2B to -3,1")
    assert s.acting_bot().id == "2A"
    s = s.apply("P2 2A to 3,0")
    assert s.acting_bot().id == "1A" and "P1 1A to 3,-1" in texts(s.legal_actions())


def test_lower_ability_places_first():
    s = arena(p1=["yellow-L yellow-M blue-S red-S"], p2=["red-L red-M green-S yellow-S"],
              positions={"1A": "0,0", "2A": "3,0"})
    s = replace(s, bots=tuple(replace(b, picks=(0, 0, 0, 0), ability_now=3 if b.id == "1A" else 1)
                              for b in s.bots), stage="ability")._enter("place")._settle([])
    assert s.acting_bot().id == "2A"
    assert s.resolution_order() == ["2A", "1A"]


def test_a_whole_round_runs_through_every_phase():
    s = arena(positions={"1A": "0,0", "2A": "3,0"})
    rng = random.Random(5)
    seen = set()
    while s.round == 1 and not s.is_terminal():
        seen.add(s.stage)
        s = random_playout(s, rng, max_actions=1)
    assert {"pick", "ability", "moving"} <= seen


# --- the text's Miscellaneous Clarifications ---------------------------------------------------

def test_clarification_ct_11_means_no_critical_hits():
    s = at_stage(arena(positions={"1A": "0,0", "2A": "1,0"}), "dice", b1A={"attack_dice": (10,)})
    out = s.apply("P1 1A rifle 1,0")
    assert out.bot("2A").hits == 1 and not out.is_terminal()


def test_clarification_only_base_defend_and_ability_count_for_mines():
    layer = ["green-L yellow-M red-S"]  # base Defend 2 + Ability 2 = 4 mines
    s = arena(p1=layer, positions={"1A": "0,0", "2A": "3,0"})
    mines = [Mine(s.grid.parse(c), "1A") for c in ("1,-1", "0,-1", "-1,0", "-1,1")]
    t = at_stage(s, "dice", smalls=["yellow 0,0", "yellow 0,0"], mines=mines,
                 b1A={"attack_dice": (3,), "specials": 2, "ability_now": 4})
    assert not any(a.weapon == "mines" for a in t.legal_actions() if isinstance(a, Fire))
    t = at_stage(s, "dice", mines=mines[:3], b1A={"attack_dice": (3,), "specials": 2})
    assert "P1 1A mines 1,0" in texts(t.legal_actions())


def test_mines_detonate_for_free_with_ct_7_only_at_ground_zero():
    layer = ["green-L yellow-M red-S"]
    p2 = ["red-L red-M yellow-S", "red-L red-M yellow-S"]
    s = arena(p1=layer, p2=p2, positions={"1A": "-4,0", "2A": "2,0", "2B": "3,0"})
    t = at_stage(s, "dice", mines=[Mine(s.grid.parse("2,0"), "1A")], b1A={"attack_dice": (7,)})
    out = t.apply("P1 1A detonate 2,0")
    assert out.bot("2A") is None, "7 at ground zero is a critical"
    assert out.bot("2B").hits == 1, "7 beats Defend 1 next door: a regular hit (CT 11)"
    assert out.bot("1A").specials == 0 and not out.mines


def test_clarification_strike_keeps_its_starting_ability():
    striker = ["yellow-L blue-M red-S"]
    s = arena(p1=striker, positions={"1A": "0,0", "2A": "3,0"})
    t = at_stage(s, "dice", smalls=["yellow 0,0", "yellow 2,0", "yellow 2,0"],
                 b1A={"attack_dice": (2,), "specials": 1, "ability_now": 3})
    out = t.apply("P1 1A strike 2,0 3,0")
    assert out.bot("1A").ability_now == 3


def test_clarification_strike_needs_a_target():
    striker = ["yellow-L blue-M red-S"]
    s = at_stage(arena(p1=striker, positions={"1A": "-4,0", "2A": "4,0"}), "dice",
                 b1A={"attack_dice": (2,), "specials": 1})
    assert not any(a.weapon == "strike" for a in s.legal_actions() if isinstance(a, Fire))
    with pytest.raises(IllegalActionError):
        s.apply("P1 1A strike -2,0 -1,0")


def test_clarification_strike_and_throw_ignore_blues_and_bots_but_never_land_on_blue():
    striker = ["yellow-L blue-M red-S"]
    s = arena(p1=striker, p2=[GUARD, "red-L red-M yellow-S"], positions={"1A": "0,0", "2A": "3,0", "2B": "1,0"})
    t = at_stage(s, "dice", smalls=["blue 1,-1"], b1A={"attack_dice": (2,), "specials": 1})
    assert "P1 1A strike 2,0 3,0" in texts(t.legal_actions()), "jumps over the bot on 1,0"
    assert "P1 1A strike 2,-1 3,-1" not in texts(t.legal_actions())
    t = at_stage(s, "dice", smalls=["blue 2,0"], b1A={"attack_dice": (2,), "specials": 1})
    assert not any(a.args[0] == "2,0" for a in t.legal_actions() if isinstance(a, Fire) and a.weapon == "strike")
    thrower = ["yellow-L red-M red-S"]
    s = at_stage(arena(p1=thrower, positions={"1A": "0,0", "2A": "1,0"}), "dice", smalls=["blue -1,0"],
                 b1A={"attack_dice": (2,), "specials": 1})
    assert "P1 1A throw 1,0 -2,0" in texts(s.legal_actions()), "thrown over the blue"
    assert "P1 1A throw 1,0 -1,0" not in texts(s.legal_actions())


def test_clarification_no_bot_ever_shares_a_hex_with_a_small_blue():
    s = arena(positions={"1A": "0,0", "2A": "3,0"})
    t = at_stage(s, "moving", smalls=["blue 1,0 up"], b1A={"move_roll": 2}, b2A={"move_roll": 9})
    assert "P1 1A to 1,0" not in texts(t.legal_actions())
    # A large blue crosses the blue, paying a step, but still cannot stop on it.
    crosser = arena(p1=["blue-L red-M red-S"], positions={"1A": "0,0", "2A": "-3,3"})
    t = at_stage(crosser, "moving", smalls=["blue 1,0", "blue 0,1", "blue 1,-1", "blue 0,-1", "blue -1,0",
                                            "blue -1,1"], b2A={"move_roll": 9})
    options = texts(t.legal_actions())
    assert "P1 1A to 2,0" in options and "P1 1A to 1,0" not in options
    plain = arena(positions={"1A": "0,0", "2A": "-3,3"})
    t = at_stage(plain, "moving", smalls=["blue 1,0", "blue 0,1", "blue 1,-1", "blue 0,-1", "blue -1,0",
                                          "blue -1,1"], b2A={"move_roll": 9})
    assert texts(t.legal_actions()) == {"P1 1A to 0,0"}


def test_a_blue_is_entered_from_the_back_and_left_the_way_it_points():
    s = arena(positions={"1A": "0,0", "2A": "-3,3"})
    t = at_stage(s, "moving", smalls=["blue 1,0 E"], b2A={"move_roll": 9})
    options = texts(t.legal_actions())  # Move 2 (base) with no d4
    assert "P1 1A to 2,0" in options and "P1 1A to 3,0" in options, "the blue hex costs nothing"
    t = at_stage(s, "moving", smalls=["blue 1,0 W"], b2A={"move_roll": 9})
    options = texts(t.legal_actions())
    assert not {"P1 1A to 1,0", "P1 1A to 2,0", "P1 1A to 3,0"} & options, "blocked from the front"
    assert "P1 1A to 2,-1" in options


def test_clarification_blue_placement_uses_current_move():
    p1 = ["red-L blue-M blue-S red-S"]  # Move 2
    s = at_stage(arena(p1=p1, positions={"1A": "0,0", "2A": "-4,4"}), "place")
    options = texts(s.legal_actions())
    assert "P1 1A place blue 2,0 E" in options and "P1 1A place blue 3,0 E" not in options


def test_clarification_a_bot_on_a_green_may_still_be_targeted():
    s = at_stage(arena(positions={"1A": "0,0", "2A": "3,0"}), "dice", smalls=["green 3,0"],
                 b1A={"attack_dice": (10,)})
    assert "P1 1A rifle 3,0" in texts(s.legal_actions())


def test_a_bot_on_a_pointed_green_attacks_only_that_way():
    s = arena(p2=[GUARD, "red-L red-M yellow-S"], positions={"1A": "0,0", "2A": "3,0", "2B": "0,3"})
    t = at_stage(s, "dice", smalls=["green 0,0 SE"], b1A={"attack_dice": (10,)})
    options = texts(t.legal_actions())
    assert "P1 1A rifle 0,3" in options and "P1 1A rifle 3,0" not in options


def test_clarification_a_red_does_not_target_the_bot_on_its_hex_and_fires_first():
    s = arena(p2=[GUARD, "red-L red-M yellow-S"], positions={"1A": "0,0", "2A": "2,0", "2B": "-3,0"})
    t = at_stage(s, "turrets", smalls=["red 0,0"])
    assert t.current_player() == CHANCE
    assert [b.id for b in t.turret_targets(t.grid.parse("0,0"))] == ["2A"]
    out = t.apply("d10=10")
    assert out.bot("2A").hits == 1, "a turret is Laser(11): no criticals"


def test_a_pointed_red_fires_at_the_first_bot_that_way():
    s = arena(p2=[GUARD, "red-L red-M yellow-S"], positions={"1A": "-3,0", "2A": "2,0", "2B": "4,0"})
    t = at_stage(s, "turrets", smalls=["red 0,0 E"])
    assert [b.id for b in t.turret_targets(t.grid.parse("0,0"))] == ["2A"]
    t = at_stage(s, "turrets", smalls=["red 0,0 E", "green 1,0"])
    assert t.turret_targets(t.grid.parse("0,0")) == [] and t.stage != "turrets"


def test_clarification_reds_on_one_hex_point_the_same_way_and_a_new_one_follows():
    p1 = ["red-L blue-M red-S red-S"]
    s = at_stage(arena(p1=p1, positions={"1A": "0,0", "2A": "-4,4"}), "place", smalls=["red 1,0 NE"])
    s = s.apply("P1 1A place red 1,0")
    assert [p.direction for p in s.smalls] == [HexDirection.NE, HexDirection.NE]
    assert s.invariant_violations() == []


def test_clarification_red_played_in_the_attack_phase_fires_next_round_only():
    s = arena(p1=["red-L red-M red-S"], p2=["green-L green-M red-S yellow-S"],
              positions={"1A": "0,0", "2A": "4,0"})
    s = at_stage(s, "dice", b1A={"attack_dice": (10, 10)})
    s = s.apply("P1 1A rifle 4,0").apply("P1 1A rifle 4,0").apply("P2 2A play red 3,0")
    assert s.stage not in ("turrets", "dice") and s.turrets == ()
    assert not any(p.colour is Colour.RED and p.cell in s.turrets for p in s.smalls)


def test_clarification_pushing_moves_one_hex_away_and_a_line_moves_together():
    p1 = ["red-L blue-M red-S"]
    s = at_stage(arena(p1=p1, positions={"1A": "0,0", "2A": "-4,4"}), "place",
                 smalls=["red 1,0", "red 2,0", "green 3,-1"], b1A={"specials": 1, "placed": 1})
    s = s.apply("P1 1A push red 1,0")
    assert sorted(s.grid.name(p.cell) for p in s.smalls if p.colour is Colour.RED) == ["2,0", "3,0"]
    assert s.bot("1A").specials == 0
    blocked = at_stage(arena(p1=p1, positions={"1A": "0,0", "2A": "3,0"}), "place",
                       smalls=["red 1,0", "red 2,0"], b1A={"specials": 1, "placed": 1})
    assert "P1 1A push red 1,0" not in texts(blocked.legal_actions()), "a bot stands in the way"


def test_clarification_a_played_green_shields_from_the_next_laser_die():
    p1 = ["blue-L yellow-M red-S"]
    p2 = ["red-L red-M green-S yellow-S"]
    s = arena(p1=p1, p2=p2, positions={"1A": "-3,0", "2A": "2,0"})
    s = at_stage(s, "dice", b1A={"attack_dice": (10, 10), "specials": 2})
    s = s.apply("P1 1A laser 2,0")
    assert s.damage == ("2A",)
    shielded = s.apply("P2 2A play green 1,0")
    assert shielded.stage != "dice", "the second die has no target left and lapses"
    open_ = s.apply("P2 2A play green 3,0")
    assert open_.stage == "dice" and "P1 1A laser 2,0" in texts(open_.legal_actions())


def test_corrosion_hits_on_later_rounds_and_can_be_scrubbed():
    p1 = ["blue-L blue-M red-S"]
    p2 = ["red-L red-M green-S yellow-S"]
    s = arena(p1=p1, p2=p2, positions={"1A": "0,0", "2A": "1,0"})
    t = at_stage(s, "dice", b1A={"attack_dice": (1,)})
    t = t.apply("P1 1A corrode 1,0")
    assert t.bot("2A").corrosion == 1 and t.bot("2A").hits == 0
    later = at_stage(t, "corrosion")
    assert later.bot("2A").hits == 1
    scrub = at_stage(t, "scrub")
    assert "P2 2A scrub green" in texts(scrub.legal_actions())
    after = scrub.apply("P2 2A scrub green")
    assert after.bot("2A").corrosion == 0 and after.bot("2A").life == 1


# --- text forms, JSON, random play, records -----------------------------------------------------

@pytest.mark.parametrize("text", ["P1 1A pick d4 d10", "P2 2B pick -", "P1 1A place blue 1,0 NE",
                                  "P1 1A place red 0,1", "P1 1A play green -1,2", "P1 1A discard red",
                                  "P1 1A scrub yellow", "P1 1A push green 1,-1", "P1 1A orient red 0,1 up",
                                  "P1 1A buy 2", "P1 1A done", "P1 1A rifle 2,-1", "P1 1A acid NE",
                                  "P1 1A strike 1,1 2,1", "P1 1A hold", "P1 1A to 2,-3", "P1 1A add green",
                                  "P1 1A rearrange green-L red-M blue-M", "d8=3", "draw blue", "first 2B"])
def test_action_text_round_trips(text):
    assert str(GAME.parse_action(text)) == text


@pytest.mark.parametrize("text", ["P1 1A pick d10 d4", "P1 1A place blue 1,0", "P1 1A place red 1,0 E",
                                  "d8=9", "P1 1A acid up", "P1 x to 1,0", "P1 1A fly 1,0"])
def test_bad_action_text_is_refused_naming_it(text):
    with pytest.raises(ValueError, match="'"):
        GAME.parse_action(text)


def test_random_games_end_with_a_winner_and_survive_json():
    rng = random.Random(11)
    for players in (2, 3, 4):
        final = random_playout(GAME.new_initial_state(players), rng)
        assert final.is_terminal()
        assert GAME.state_from_json(json.loads(json.dumps(final.to_json()))) == final
        assert len({b.owner for b in final.bots}) <= 1


def test_sample_record_replays_all_legal_to_the_end():
    header, events = read_record(SAMPLE)
    verdicts = list(replay(header, events))
    assert verdicts and all(v.legal for v, _ in verdicts)
    assert verdicts[-1][1].is_terminal()
