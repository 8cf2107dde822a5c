"""Ice Arena: building, dice, weapons, damage, order of play and every "Miscellaneous
Clarification" of the rule text. Positions are set up through the game's options and,
for mid-round situations, through the public `IceArena.position`."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from companion.games import CHANCE, SIMULTANEOUS, TERMINAL, GameError, IllegalActionError, get_game
from companion.games.base import random_playout
from companion.games.ice_arena import (
    STAGES,
    UNIQUE_WEAPON,
    BuildError,
    Fire,
    IceArenaState,
    Land,
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
    """The bots of `state` (stacks, hexes, pending hits and corrosion) set up afresh with
    `IceArena.position` at the start of `stage`, with the given small pieces ('colour q,r [dir]'),
    mines ('bot q,r') and bot fields (keyword 'b' + bot id)."""
    grid = state.grid
    layout = {b.id: f"{b.stack_text(state.colours[b.owner])} at {grid.name(b.cell)}" for b in state.bots}
    status = {b.id: {"hits": b.hits, "corrosion": b.corrosion, **bots.get("b" + b.id, {})} for b in state.bots}
    return GAME.position(layout, num_players=state.num_players, stage=stage, radius=state.radius,
                         smalls=tuple(smalls), mines=tuple(mines), status=status)


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
    # The guard (Attack 1, Defend 3, Move 1, Ability 1) has two pieces: two dice, each within its attribute.
    assert "P2 2A pick d6 d6" in texts(s.legal_actions(1))
    for dice, limit in (("d10 d10", "at most 1 d10"), ("d4 d4", "at most 1 d4"), ("d8 d8", "at most 1 d8")):
        with pytest.raises(IllegalActionError, match=limit):
            s.apply(f"P2 2A pick {dice}")
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


def test_ability_dice_never_score_over_five_even_with_ability_six():
    # Base Ability 4 and two yellows on its hex: Ability 6, so 3 picked d8s + 6 = 9 dice.
    s = GAME.position({"1A": "yellow-L yellow-M yellow-M red-S at 0,0", "2A": "red-L red-M yellow-S at 3,0"},
                      smalls=["yellow 0,0", "yellow 0,0"])
    s = s.apply("P1 1A pick d8 d8 d8").apply("P2 2A pick -")
    assert s.bot("1A").ability_now == 6 and s.rolls.count("1A") == 9
    for value in (5, 6, 6, 6, 6, 6, 6, 7, 8):
        s = s.apply(f"d8={value}")
    assert s.bot("1A").specials == 1, "a 6 is at or under Ability 6 but over 5"


def test_ability_dice_limit_counts_the_yellows_on_the_bots_hex():
    bots = {"1A": "red-L red-M red-S at 0,0", "2A": "red-L red-M yellow-S at 3,0"}  # base Ability 1
    bare = GAME.position(bots)
    with pytest.raises(IllegalActionError, match="at most 1 d8"):
        bare.apply("P1 1A pick d8 d8")
    boosted = GAME.position(bots, smalls=["yellow 0,0"])
    s = boosted.apply("P1 1A pick d8 d8").apply("P2 2A pick -")
    assert s.rolls.count("1A") == 2 + 2, "two picked and Ability 2 on the yellow hex"


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
    assert out.bot("2A") is None and out.is_terminal(), "the guard has only its cap: one critical destroys it"
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


# The weapon table of the text: (weapon, a stack whose unique weapon it is (or any, for the
# standard two), shooter hex, target hex, the action's words, critical threshold, specials to fire).
WEAPON_TABLE = [
    ("rifle", "red-L blue-M red-S", "0,0", "3,0", "rifle 3,0", 11, 0),
    ("shotgun", "red-L blue-M red-S", "0,0", "2,0", "shotgun 2,0", 9, 0),
    ("mortar", "yellow-L yellow-M red-S", "0,0", "4,0", "mortar 4,0", 11, 2),
    ("laser", "blue-L yellow-M red-S", "0,0", "4,0", "laser 4,0", 10, 1),
    ("minigun", "green-L red-M red-S", "0,0", "4,0", "minigun 4,0", 10, 0),
    ("flame", "red-L yellow-M red-S", "0,0", "2,0", "flame 2,0", 9, 1),
    ("smash", "red-L red-M red-S", "0,0", "1,0", "smash 1,0", 8, 0),
    ("acid", "green-L green-M red-S", "0,0", "4,0", "acid E", 10, 0),
    ("strike", "yellow-L blue-M red-S", "0,0", "3,0", "strike 2,0 3,0", 9, 1),
    ("throw", "yellow-L red-M red-S", "0,0", "1,0", "throw 1,0 -1,0", 9, 1),
]


def _duel(stack, shooter, target, die, specials):
    # The target has only its cap (Defend 1): a critical destroys it, a regular hit leaves it at 1 hit.
    return GAME.position({"1A": f"{stack} at {shooter}", "2A": f"red-L red-M yellow-S at {target}"},
                         stage="dice", status={"1A": {"attack_dice": (die,), "specials": specials}})


@pytest.mark.parametrize(("weapon", "stack", "shooter", "target", "words", "ct", "cost"), WEAPON_TABLE)
def test_weapon_table_critical_thresholds(weapon, stack, shooter, target, words, ct, cost):
    below = _duel(stack, shooter, target, min(ct - 1, 10), cost).apply(f"P1 1A {words}")
    assert below.bot("2A") is not None and below.bot("2A").hits == 1, f"{weapon}: under CT {ct} is a regular hit"
    if ct <= 10:
        assert _duel(stack, shooter, target, ct, cost).apply(f"P1 1A {words}").is_terminal(), \
            f"{weapon}: {ct} is a critical"


@pytest.mark.parametrize(("weapon", "stack", "shooter", "target", "words", "ct", "cost"),
                         [row for row in WEAPON_TABLE if row[-1]])
def test_weapon_table_special_costs(weapon, stack, shooter, target, words, ct, cost):
    short = _duel(stack, shooter, target, 5, cost - 1)
    assert not any(isinstance(a, Fire) and a.weapon == weapon for a in short.legal_actions())
    with pytest.raises(IllegalActionError, match="costs"):
        short.apply(f"P1 1A {words}")
    paid = _duel(stack, shooter, target, 5, cost).apply(f"P1 1A {words}")
    assert paid.bot("1A").specials == 0


def test_flamethrower_centre_is_exactly_two_away_and_strike_jumps_at_most_two():
    flamer = _duel("red-L yellow-M red-S", "0,0", "2,0", 5, 1)
    assert {str(a) for a in flamer.legal_actions() if isinstance(a, Fire) and a.weapon == "flame"} == \
        {"P1 1A flame 2,0", "P1 1A flame 2,-1", "P1 1A flame 1,1"}, "hexes two away with 2,0 in or next to them"
    with pytest.raises(IllegalActionError):
        flamer.apply("P1 1A flame 1,0")  # next to the target, but only one hex away
    striker = _duel("yellow-L blue-M red-S", "0,0", "4,0", 5, 1)
    assert "P1 1A strike 3,0 4,0" not in texts(striker.legal_actions())
    assert not any(isinstance(a, Fire) and a.weapon == "strike" for a in striker.legal_actions())


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
    s = at_stage(s, "dice", smalls=["blue 3,-4 up", "blue 4,-3 up", "blue 3,-3 up"], b1A={"attack_dice": (10, 10)})
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
    s = GAME.position({"1A": "yellow-L yellow-M blue-S red-S at 0,0", "2A": "red-L red-M green-S yellow-S at 3,0"},
                      stage="place")
    assert (s.bot("1A").ability_now, s.bot("2A").ability_now) == (3, 1)
    assert s.acting_bot().id == "2A"
    assert s.resolution_order() == ["2A", "1A"]
    # Yellows on its hex count: with two, 2A's Ability is 3 and the tie goes to seat order.
    s = GAME.position({"1A": "yellow-L yellow-M blue-S red-S at 0,0", "2A": "red-L red-M green-S yellow-S at 3,0"},
                      stage="place", smalls=["yellow 3,0", "yellow 3,0"])
    assert s.resolution_order() == ["1A", "2A"]


def test_a_whole_round_runs_through_every_phase():
    s = arena(positions={"1A": "0,0", "2A": "3,0"})
    rng = random.Random(5)
    seen = set()
    while s.round == 1 and not s.is_terminal():
        seen.add(s.stage)
        s = random_playout(s, rng, max_actions=1)
    assert {"pick", "ability", "moving"} <= seen


def test_the_phases_come_in_the_texts_order():
    # a) dice, b) ability (d8s, then placing), c) defence (d6s, then extra d6s), d) attack (d10s,
    # extra d10s, then the dice one by one), e) move (d4s, extra d4s, then moving), f) misc.
    s = GAME.position({"1A": "red-L green-M blue-M green-S red-S at -3,0", "2A": "green-L green-M yellow-S at 3,0"})
    s = s.apply("P1 1A pick d4 d6 d10").apply("P2 2A pick d6")
    stages = ["pick"]
    while s.round == 1:
        if stages[-1] != s.stage:
            stages.append(s.stage)
        if s.current_player() == CHANCE:
            # Ability d8s of 1 give each bot a special, so the buying turns come up; other dice high.
            s = s.apply("d8=1" if s.stage == "ability" else str(s.legal_actions()[-1]))
            continue
        bot = s.acting_bot()
        s = s.apply(next(a for a in s.legal_actions()
                         if str(a).endswith((" done", " buy 0", " hold", f" to {s.grid.name(bot.cell)}"))))
    assert stages == ["pick", "ability", "place", "defend", "defend-buy", "attack", "attack-buy", "dice",
                      "move", "move-buy", "moving"]
    assert s.stage == "pick" and s.round == 2


# --- the text's Miscellaneous Clarifications ---------------------------------------------------

def test_clarification_ct_11_means_no_critical_hits():
    s = at_stage(arena(positions={"1A": "0,0", "2A": "1,0"}), "dice", b1A={"attack_dice": (10,)})
    out = s.apply("P1 1A rifle 1,0")
    assert out.bot("2A").hits == 1 and not out.is_terminal()


def test_clarification_only_base_defend_and_ability_count_for_mines():
    layer = ["green-L yellow-M red-S"]  # base Defend 2 + Ability 2 = 4 mines
    s = arena(p1=layer, positions={"1A": "0,0", "2A": "3,0"})
    mines = [f"1A {c}" for c in ("1,-1", "0,-1", "-1,0", "-1,1")]
    t = at_stage(s, "dice", smalls=["yellow 0,0", "yellow 0,0"], mines=mines,
                 b1A={"attack_dice": (3,), "specials": 2, "ability_now": 4})
    assert not any(a.weapon == "mines" for a in t.legal_actions() if isinstance(a, Fire))
    t = at_stage(s, "dice", mines=mines[:3], b1A={"attack_dice": (3,), "specials": 2})
    assert "P1 1A mines 1,0" in texts(t.legal_actions())


def test_mines_detonate_for_free_with_ct_7_only_at_ground_zero():
    layer = ["green-L yellow-M red-S"]
    p2 = ["red-L red-M yellow-S", "red-L red-M yellow-S"]
    s = arena(p1=layer, p2=p2, positions={"1A": "-4,0", "2A": "2,0", "2B": "3,0"})
    t = at_stage(s, "dice", mines=["1A 2,0"], b1A={"attack_dice": (7,)})
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
    assert out.grid.name(out.bot("1A").cell) == "2,0" and out.ability_at_hex(out.bot("1A")) == 4, \
        "the new hex holds two yellows"
    assert out.bot("1A").ability_now == 3 and out.summary()["bots"][0]["ability_now"] == 3


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
    t = at_stage(s, "dice", smalls=["blue 1,-1 up"], b1A={"attack_dice": (2,), "specials": 1})
    assert "P1 1A strike 2,0 3,0" in texts(t.legal_actions()), "jumps over the bot on 1,0"
    assert "P1 1A strike 2,-1 3,-1" not in texts(t.legal_actions())
    t = at_stage(s, "dice", smalls=["blue 2,0 up"], b1A={"attack_dice": (2,), "specials": 1})
    assert not any(a.args[0] == "2,0" for a in t.legal_actions() if isinstance(a, Fire) and a.weapon == "strike")
    thrower = ["yellow-L red-M red-S"]
    s = at_stage(arena(p1=thrower, positions={"1A": "0,0", "2A": "1,0"}), "dice", smalls=["blue -1,0 up"],
                 b1A={"attack_dice": (2,), "specials": 1})
    assert "P1 1A throw 1,0 -2,0" in texts(s.legal_actions()), "thrown over the blue"
    assert "P1 1A throw 1,0 -1,0" not in texts(s.legal_actions())


def test_clarification_no_bot_ever_shares_a_hex_with_a_small_blue():
    s = arena(positions={"1A": "0,0", "2A": "3,0"})
    t = at_stage(s, "moving", smalls=["blue 1,0 up"], b1A={"move_roll": 2}, b2A={"move_roll": 9})
    assert "P1 1A to 1,0" not in texts(t.legal_actions())
    # A large blue crosses the blue, paying a step, but still cannot stop on it.
    crosser = arena(p1=["blue-L red-M red-S"], positions={"1A": "0,0", "2A": "-3,3"})
    t = at_stage(crosser, "moving", smalls=["blue 1,0 up", "blue 0,1 up", "blue 1,-1 up", "blue 0,-1 up", "blue -1,0 up",
                                            "blue -1,1 up"], b2A={"move_roll": 9})
    options = texts(t.legal_actions())
    assert "P1 1A to 2,0" in options and "P1 1A to 1,0" not in options
    plain = arena(positions={"1A": "0,0", "2A": "-3,3"})
    t = at_stage(plain, "moving", smalls=["blue 1,0 up", "blue 0,1 up", "blue 1,-1 up", "blue 0,-1 up", "blue -1,0 up",
                                          "blue -1,1 up"], b2A={"move_roll": 9})
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


def test_a_bot_on_a_pointed_green_mortars_only_that_way():
    # "If a bot is on a green hex, it can only attack in the direction the small green piece is
    # pointing": the mortar ignores range and blocking, not that restriction.
    bots = {"1A": "yellow-L yellow-M red-S at 0,0", "2A": "red-L red-M yellow-S at 0,3",
            "2B": "red-L red-M yellow-S at 3,0", "2C": "red-L red-M yellow-S at 1,0"}
    s = GAME.position(bots, stage="dice", smalls=["green 0,0 E"], status={"1A": {"attack_dice": (10,), "specials": 2}})
    mortars = {str(a) for a in s.legal_actions() if isinstance(a, Fire) and a.weapon == "mortar"}
    assert mortars == {"P1 1A mortar 1,0", "P1 1A mortar 3,0"}, "straight east only, over the bot on 1,0"
    with pytest.raises(IllegalActionError):
        s.apply("P1 1A mortar 0,3")
    free = GAME.position(bots, stage="dice", status={"1A": {"attack_dice": (10,), "specials": 2}})
    assert "P1 1A mortar 0,3" in texts(free.legal_actions()), "off the green it reaches every enemy"


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


PASSES = (" pick -", " done", " buy 0", " hold")


def pass_until(state: IceArenaState, stage: str) -> IceArenaState:
    """Plays on, every bot passing (no dice, no pieces, no attacks, staying put) and every die
    showing its highest face, until `stage` is reached."""
    for _ in range(500):
        if state.stage == stage:
            return state
        if state.current_player() == CHANCE:
            state = state.apply(state.legal_actions()[-1])
            continue
        seat = state.players_to_act()[0]
        bot = state.acting_bot()
        stay = f" to {state.grid.name(bot.cell)}" if bot is not None else None
        choice = next(a for a in state.legal_actions(seat)
                      if str(a).endswith(PASSES) or (stay and str(a).endswith(stay)))
        state = state.apply(choice)
    raise AssertionError(f"never reached {stage}")


def test_clarification_red_played_while_turrets_fire_waits_for_next_round():
    # 2A carries a hit; the pointed turret's hit makes a point of damage, paid with a red.
    s = GAME.position({"1A": "red-L red-M red-S at -4,0", "2A": "green-L green-M red-S yellow-S at 2,0"},
                      stage="turrets", smalls=["red 0,0 E"], status={"2A": {"hits": 1}})
    assert [s.grid.name(c) for c in s.turrets] == ["0,0"] and s.current_player() == CHANCE
    s = s.apply("d10=10")
    assert s.damage == ("2A",)
    s = s.apply("P2 2A play red 3,0")
    assert s.stage != "turrets" and s.turrets == (), \
        "the red just played (2A is within its reach) does not fire this attack phase"
    assert s.bot("2A").hits == 0 and s.bot("2A").life == 1
    s = pass_until(s, "turrets")
    assert s.round == 2 and [s.grid.name(c) for c in s.turrets] == ["0,0", "3,0"]
    s = s.apply("d10=10").apply("d10=10")
    assert s.is_terminal() and s.outcome().winners == (0,), "next round both reds fire: two hits destroy 2A"


def test_clarification_red_played_during_the_attack_dice_fires_next_round():
    s = arena(p1=["red-L red-M red-S"], p2=["green-L green-M red-S yellow-S"],
              positions={"1A": "0,0", "2A": "4,0"})
    s = at_stage(s, "dice", b1A={"attack_dice": (10, 10)})
    s = s.apply("P1 1A rifle 4,0").apply("P1 1A rifle 4,0").apply("P2 2A play red 3,0")
    assert s.stage not in ("turrets", "dice") and s.turrets == ()
    s = pass_until(s, "turrets")
    assert s.round == 2 and [s.grid.name(c) for c in s.turrets] == ["3,0"]
    assert s.current_player() == CHANCE and [b.id for b in s.turret_targets(s.grid.parse("3,0"))] == ["2A"]


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


# --- greens turn attacks ----------------------------------------------------------------------

TURNED = {"1A": "green-L red-M red-S at 0,0", "2A": "red-L red-M yellow-S at 2,2"}  # 1A: minigun


def test_a_pointed_green_turns_a_shot_onto_a_bot_round_the_corner():
    # An upright green on 1,1 hides 2A from 0,0; the green on 2,0 pointing SE turns shots onto it.
    wall = ["green 1,1 up", "green 2,0 SE"]
    s = GAME.position(TURNED, stage="dice", smalls=wall, status={"1A": {"attack_dice": (10,)}})
    options = texts(s.legal_actions())
    assert {"P1 1A rifle 2,2", "P1 1A minigun 2,2"} <= options, "path 2 to the green + 2 turned = 4"
    assert "P1 1A shotgun 2,2" not in options, "the turned path is longer than the shotgun's 2"
    out = s.apply("P1 1A minigun 2,2")
    assert out.is_terminal(), "10 at CT 10 through the turn: a critical"
    upright = GAME.position(TURNED, stage="dice", smalls=["green 1,1 up", "green 2,0 up"],
                            status={"1A": {"attack_dice": (10,)}})
    assert not any(isinstance(a, Fire) and a.weapon != "hold" for a in upright.legal_actions())


def test_a_turned_shot_hits_the_first_bot_on_its_new_line():
    bots = {**TURNED, "2B": "red-L red-M yellow-S at 2,1"}
    s = GAME.position(bots, stage="dice", smalls=["green 1,1 up", "green 2,0 SE"],
                      status={"1A": {"attack_dice": (10,)}})
    options = texts(s.legal_actions())
    assert "P1 1A rifle 2,1" in options and "P1 1A rifle 2,2" not in options, "2B shields 2A"


def test_acid_stream_is_turned_by_a_pointed_green():
    p1 = ["green-L green-M red-S"]
    p2 = ["red-L red-M yellow-S", "red-L red-M yellow-S"]
    s = arena(p1=p1, p2=p2, positions={"1A": "-4,0", "2A": "-2,0", "2B": "0,2"})
    out = at_stage(s, "dice", smalls=["green 0,0 SE"], b1A={"attack_dice": (10,)}).apply("P1 1A acid E")
    assert out.is_terminal(), "the stream hits 2A, turns SE at 0,0 and reaches 2B on its sixth hex"
    out = at_stage(s, "dice", smalls=["green 0,0 up"], b1A={"attack_dice": (10,)}).apply("P1 1A acid E")
    assert out.bot("2A") is None and out.bot("2B") is not None


def test_a_turret_shot_is_turned_by_a_pointed_green():
    s = GAME.position({"1A": "red-L red-M red-S at -4,0", "2A": "red-L red-M yellow-S at 2,2"},
                      stage="turrets", smalls=["red 0,0 E", "green 2,0 SE"])
    assert [b.id for b in s.turret_targets(s.grid.parse("0,0"))] == ["2A"]


# --- the large yellow's toss ---------------------------------------------------------------------

TOSSER = {"1A": "yellow-L red-M red-S at 0,0", "2A": "red-L red-M yellow-S at 1,-1"}  # 1A: throw


def test_large_yellow_tosses_every_adjacent_yellow_up_to_three_hexes():
    yellows = ["yellow 1,0", "yellow 1,0", "yellow -1,1", "yellow 3,0", "yellow 1,-1", "green -2,0 up"]
    s = GAME.position(TOSSER, stage="misc", smalls=yellows, status={"1A": {"specials": 1}})
    assert s.bot("2A").ability_now == 2, "2A stands on a yellow"
    s = s.apply("P1 1A toss")
    assert s.bot("1A").specials == 0 and sorted(map(s.grid.name, s.tossing)) == ["-1,1", "1,-1", "1,0", "1,0"]
    assert s.current_player() == 0 and all(isinstance(a, Land) for a in s.legal_actions())
    assert s.legal_actions(1) == []
    for early in ("P1 1A done", "P1 1A add red"):
        with pytest.raises(IllegalActionError, match="must land first"):
            s.apply(early)
    with pytest.raises(IllegalActionError, match="at most 3 hexes"):
        s.apply("P1 1A land 1,0 -3,0")  # four hexes from 1,0
    for bad in ("-2,0", "0,0"):  # a green's hex, a bot's hex
        with pytest.raises(IllegalActionError):
            s.apply(f"P1 1A land -1,1 {bad}")
    s = s.apply("P1 1A land 1,0 4,0").apply("P1 1A land 1,0 3,0").apply("P1 1A land -1,1 -1,1")
    s = s.apply("P1 1A land 1,-1 -2,2")
    assert s.tossing == () and s.tosser is None
    assert sorted(f"{s.grid.name(p.cell)}" for p in s.smalls if p.colour is Colour.YELLOW) == \
        ["-1,1", "-2,2", "3,0", "3,0", "4,0"]
    assert s.ability_at_hex(s.bot("2A")) == 1, "the yellow under 2A was tossed away"


def test_toss_needs_a_large_yellow_a_special_and_an_adjacent_yellow():
    s = GAME.position(TOSSER, stage="dice", smalls=["yellow 1,0"], status={"1A": {"attack_dice": (5,)}})
    assert s.acting_bot().id == "1A"
    with pytest.raises(IllegalActionError, match="no special"):
        s.apply("P1 1A toss")
    s = GAME.position(TOSSER, stage="dice", smalls=["yellow 2,0"], status={"1A": {"specials": 1, "attack_dice": (5,)}})
    with pytest.raises(IllegalActionError, match="no small yellow is next to"):
        s.apply("P1 1A toss")
    s = GAME.position({**TOSSER, "1A": "red-L yellow-M red-S at 0,0"}, stage="dice", smalls=["yellow 1,0"],
                      status={"1A": {"specials": 1, "attack_dice": (5,)}})
    with pytest.raises(IllegalActionError, match="no large piece"):
        s.apply("P1 1A toss")


# --- "at any time" -----------------------------------------------------------------------------------

SHIELDED = {"1A": "green-L red-M red-S at 0,0", "2A": "red-L red-M yellow-S at 3,0"}


def test_at_any_time_powers_are_open_whenever_the_owner_has_the_floor():
    s = GAME.position(SHIELDED, stage="dice", smalls=["green 1,0 up"],
                      status={"1A": {"attack_dice": (10,), "specials": 1}})
    # The rifle is blocked, but the die waits: its owner may turn the green first.
    assert s.current_player() == 0 and "P1 1A rifle 3,0" not in texts(s.legal_actions())
    assert "P1 1A orient green 1,0 E" in texts(s.legal_actions())
    s = s.apply("P1 1A orient green 1,0 E")
    assert s.stage == "dice" and s.bot("1A").specials == 0
    assert "P1 1A rifle 3,0" in texts(s.legal_actions()), "the turned green now sends the shot on to 3,0"
    for stage in ("place", "defend-buy", "attack-buy", "moving", "misc"):
        t = GAME.position(SHIELDED, stage=stage, smalls=["green 1,0 up"],
                          status={"1A": {"specials": 1}, "2A": {"move_roll": 3}})
        assert t.acting_bot().id == "1A" and "P1 1A push green 1,0" in texts(t.legal_actions()), stage


def test_a_team_mate_may_use_its_power_while_another_bot_acts():
    team = {**SHIELDED, "1B": "red-L red-M red-S at -3,0"}
    s = GAME.position(team, stage="dice", smalls=["green 1,0 up"],
                      status={"1B": {"attack_dice": (2,)}, "1A": {"specials": 1}})
    assert s.acting_bot().id == "1B", "1B has no shot, but its player may still act"
    assert "P1 1B rifle 3,0" not in texts(s.legal_actions())
    s = s.apply("P1 1A push green 1,0")
    assert [s.grid.name(p.cell) for p in s.smalls] == ["2,0"] and s.bot("1A").specials == 0
    assert s.stage != "dice", "with no shot and no power left, 1B's die lapses"


def test_at_any_time_actions_wait_for_the_floor_and_for_damage_answers():
    s = GAME.position({"1A": "green-L red-M green-S red-S at 0,0", "2A": "red-L red-M yellow-S at 2,0"},
                      stage="dice", smalls=["green -1,0 up"],
                      status={"1A": {"specials": 1, "corrosion": 1}, "2A": {"attack_dice": (10, 10)}})
    assert s.current_player() == 1 and s.legal_actions(0) == []
    for action in ("P1 1A push green -1,0", "P1 1A scrub green"):
        with pytest.raises(IllegalActionError, match="P2 has the floor"):
            s.apply(action)
    s = s.apply("P2 2A shotgun 0,0")  # a 10 against CT 9 and Defend 2: a critical
    assert s.damage == ("1A",)
    assert not {"P1 1A orient green -1,0 E", "P1 1A scrub green"} & texts(s.legal_actions())
    with pytest.raises(IllegalActionError, match="must first answer"):
        s.apply("P1 1A orient green -1,0 E")


def test_corrosion_may_be_scrubbed_whenever_its_owner_has_the_floor():
    bots = {"1A": "red-L blue-M green-S red-S at 0,0", "2A": "red-L red-M yellow-S at 3,0"}
    s = GAME.position(bots, stage="moving", status={"1A": {"corrosion": 1}, "2A": {"move_roll": 3}})
    assert s.acting_bot().id == "1A"
    s = s.apply("P1 1A scrub green")
    assert s.bot("1A").corrosion == 0 and s.bot("1A").life == 1 and s.bot("1A").damage_taken == 1
    assert s.acting_bot().id == "1A", "scrubbing does not use up the move"


# --- positions and the companion's summary ------------------------------------------------------

def test_position_builds_a_table_position_and_names_bad_input():
    s = GAME.position({"1A": "red-L blue-M green-S red-S at 0,0", "2B": "green-L green-M yellow-S at 2,-1"},
                      stage="dice", smalls=["blue 1,0 NE", "red 0,1", "yellow -1,0"], mines=["1A 1,-1"],
                      status={"1A": {"attack_dice": (9, 2), "specials": 2}}, round=3)
    assert s.round == 3 and s.bot("1A").attack_dice == (2, 9) and s.acting_bot().id == "1A"
    assert s.pool == (10 - 2, 10 - 2, 10 - 1, 10 - 1)  # red: cap and turret, yellow: cap and one in the arena
    assert GAME.state_from_json(json.loads(json.dumps(s.to_json()))) == s
    with pytest.raises(GameError, match="'stack at q,r'"):
        GAME.position({"1A": "red-L blue-M red-S", "2A": "red-L red-M yellow-S at 3,0"})
    with pytest.raises(BuildError, match="capped by a small yellow"):
        GAME.position({"1A": "red-L blue-M red-S at 0,0", "2A": "red-L red-M red-S at 3,0"})
    with pytest.raises(GameError, match="impossible position: 1A stands on a small blue"):
        GAME.position({"1A": "red-L blue-M red-S at 0,0", "2A": "red-L red-M yellow-S at 3,0"}, smalls=["blue 0,0 up"])
    with pytest.raises(GameError, match="unknown field"):
        GAME.position({"1A": "red-L blue-M red-S at 0,0", "2A": "red-L red-M yellow-S at 3,0"},
                      status={"1A": {"life": 3}})
    with pytest.raises(GameError, match="unknown stage"):
        GAME.position({"1A": "red-L blue-M red-S at 0,0", "2A": "red-L red-M yellow-S at 3,0"}, stage="fight")


def test_position_at_the_start_of_a_round_lets_every_bot_pick():
    s = GAME.position({"1A": "red-L blue-M red-S at 0,0", "2A": "red-L red-M yellow-S at 3,0"},
                      status={"2A": {"hits": 1, "corrosion": 2}}, round=4)
    assert s.current_player() == SIMULTANEOUS and s.round == 4
    assert (s.bot("2A").hits, s.bot("2A").corrosion) == (1, 2)


def test_summary_shows_attributes_dice_specials_damage_and_each_phase_order():
    s = GAME.position({"1A": "red-L red-M green-S red-S at 0,0", "2A": "green-L green-M red-S yellow-S at 4,0",
                       "2B": "blue-L blue-M yellow-S at -3,3"},
                      stage="dice", smalls=["red 2,-2 up"],
                      status={"1A": {"attack_dice": (10, 10), "specials": 1}, "2A": {"corrosion": 1},
                              "2B": {"move_roll": 4}})
    s = s.apply("P1 1A rifle 4,0").apply("P1 1A rifle 4,0")
    info = s.summary()
    assert [p["phase"] for p in info["phases"]] == ["dice picking", "ability", "defence", "attack", "move", "misc"]
    assert [p["now"] for p in info["phases"]] == [False, False, False, True, False, False]
    victim = next(b for b in info["bots"] if b["id"] == "2A")
    assert victim["damage"] == {"taken": 0, "pending_hits": 0, "owed": 1, "corrosion": 1}
    assert (victim["attack"], victim["defend"], victim["move"], victim["ability"]) == (1, 3, 1, 1)
    assert victim["dice_allowed"] == 2 and victim["weapons"] == ["rifle", "shotgun", "acid"]
    assert [(w["name"], w["ct"], w["range"]) for w in victim["weapon_table"]] == [
        ("rifle", 11, 10), ("shotgun", 9, 2), ("acid", 10, 6)]
    assert next(b for b in info["bots"] if b["id"] == "1A")["specials"] == 1
    s = s.apply("P2 2A play red 3,0")
    info = s.summary()
    assert next(b for b in info["bots"] if b["id"] == "2A")["damage"]["taken"] == 1
    move = next(p for p in info["phases"] if p["phase"] == "move")
    assert move["order"] == ["1A (Move 1, tied)", "2A (Move 1, tied)", "2B (Move 7)"]
    misc = next(p for p in info["phases"] if p["phase"] == "misc")
    assert misc["order"][0] == "2A (life 1)"
    start = GAME.position({"1A": "red-L red-M red-S at 0,0", "2A": "green-L green-M red-S yellow-S at 4,0"},
                          smalls=["red 2,-2 up"], status={"2A": {"corrosion": 1}})
    attack = next(p for p in start.summary()["phases"] if p["phase"] == "attack")
    assert attack["order"] == ["red at 2,-2", "corrosion on 2A x1"]


def test_every_stage_can_be_entered_from_a_position():
    for stage in STAGES:
        s = GAME.position({"1A": "red-L blue-M red-S at 0,0", "2A": "red-L red-M yellow-S at 3,0"}, stage=stage)
        assert s.invariant_violations() == [] and (s.legal_actions() or s.is_terminal()), stage


# --- text forms, JSON, random play, records -----------------------------------------------------

@pytest.mark.parametrize("text", ["P1 1A pick d4 d10", "P2 2B pick -", "P1 1A place blue 1,0 NE",
                                  "P1 1A place red 0,1", "P1 1A play green -1,2", "P1 1A discard red",
                                  "P1 1A scrub yellow", "P1 1A push green 1,-1", "P1 1A orient red 0,1 up",
                                  "P1 1A buy 2", "P1 1A done", "P1 1A rifle 2,-1", "P1 1A acid NE",
                                  "P1 1A strike 1,1 2,1", "P1 1A hold", "P1 1A to 2,-3", "P1 1A add green",
                                  "P1 1A toss", "P1 1A land 1,0 -2,3",
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
