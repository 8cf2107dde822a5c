"""Zamboni Wars: set-up, movement on the arrows, lasers, optional rules and planning."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from companion.boards.coasters import martian_coasters
from companion.games import CHANCE, TERMINAL, GameError, IllegalActionError, InvalidActionError, get_game
from companion.games.zamboni_wars import (
    CoverRollOff,
    Fire,
    Hold,
    Move,
    Phase,
    Roll,
    Zamboni,
    ZamboniState,
    hit_chance,
    laser_target,
    plan_moves,
    reach,
)
from companion.pieces import ALL_DIRECTIONS, CARDINALS, Direction
from companion.records import read_record, replay
from tests.boards.test_coasters import TABLE

GAME = get_game("zamboni-wars")
BOARD = martian_coasters()
G = BOARD.grid
SAMPLE = Path(__file__).resolve().parents[2] / "companion" / "data" / "samples" / "zamboni-wars.jsonl"


def sq(name: str) -> int:
    return G.parse(name)


def position(zambonis: dict[int, str | tuple[str, int]], *, players: int = 2, variant: str = "standard",
             cover: tuple[str, ...] = (), roll: int = 1, turn: int = 0, phase: Phase = Phase.MOVE) -> ZamboniState:
    """A position built by hand: seat -> 'a1 N' (full armour) or ('a1 N', armour); unlisted seats are out."""
    zs = [None] * players
    for seat, spec in zambonis.items():
        text, armour = (spec, 3) if isinstance(spec, str) else spec
        cell, facing = text.split()
        zs[seat] = Zamboni(sq(cell), Direction(facing), armour)
    start = GAME.new_initial_state(players, variant)
    state = replace(start, zambonis=tuple(zs), cover=tuple(sorted(sq(c) for c in cover)), phase=phase,
                    turn=turn, roll=roll if phase == Phase.MOVE else 0)
    assert state.invariant_violations() == []
    return state


def ends(state: ZamboniState) -> set[str]:
    return {str(a).split(" ", 1)[1] for a in state.legal_actions()}


# --- set-up and turn order ---------------------------------------------------------------------

def test_four_zambonis_start_in_the_outer_corners_pointing_clockwise():
    state = GAME.new_initial_state(4)
    assert [(G.name(z.cell), z.facing.value, z.armour) for z in state.zambonis] == [
        ("a1", "N", 3), ("a6", "E", 3), ("f6", "S", 3), ("f1", "W", 3)]
    # Each start square has an arrow the way the Zamboni points.
    assert all(BOARD.allows(z.cell, z.facing) for z in state.zambonis)
    assert [state.colour_of(s).value for s in range(4)] == ["red", "yellow", "green", "blue"]
    assert state.current_player() == CHANCE and state.phase == Phase.MOVE_ROLL and state.turn == 0


def test_two_players_start_on_opposite_coasters_and_options_can_seat_them_elsewhere():
    assert [G.name(z.cell) for z in GAME.new_initial_state(2).zambonis] == ["a1", "f6"]
    assert [G.name(z.cell) for z in GAME.new_initial_state(3).zambonis] == ["a1", "a6", "f6"]
    state = GAME.new_initial_state(2, options={"coasters": ["top-left", "bottom-right"],
                                               "coaster_colours": {"top-left": "purple"}})
    assert [(G.name(z.cell), z.facing.value) for z in state.zambonis] == [("a6", "E"), ("f1", "W")]
    assert state.colour_of(0).value == "purple"


@pytest.mark.parametrize("options", [
    {"coasters": ["top-left", "top-left"]}, {"coasters": ["top-left"]}, {"rotations": {"top-left": 7}},
    {"speed": 3},
])
def test_bad_set_up_options_are_refused(options):
    with pytest.raises(GameError):
        GAME.new_initial_state(2, options=options)


def test_player_counts_and_variants():
    for n in (1, 5):
        with pytest.raises(GameError):
            GAME.new_initial_state(n)
    assert set(GAME.variants) == {"standard", "cover", "warp", "cover-warp"}


def test_turns_pass_in_seat_order_after_the_move():
    state = GAME.new_initial_state(3).apply("roll 1")
    assert state.current_player() == 0 and state.roll == 1
    state = state.apply("P1 move a1 E")
    assert state.phase == Phase.MOVE_ROLL and state.turn == 1
    state = state.apply("roll 2").apply("P2 move a6 S")
    assert state.turn == 2
    assert state.legal_actions(0) == [] and state.legal_actions(1) == []


# --- movement ------------------------------------------------------------------------------------

@pytest.mark.parametrize("square", sorted(TABLE))
def test_each_exit_restriction_of_the_real_layout(square):
    """With one point, facing each way, the Zamboni may step exactly where an arrow leads."""
    for facing in CARDINALS:
        other = "c3" if square != "c3" else "d3"
        state = position({0: f"{square} {facing.value}", 1: f"{other} N"})
        ahead = G.step(sq(square), facing)
        may_step = facing in TABLE[square] and ahead is not None and G.name(ahead) != other
        forward = f"move {G.name(ahead)} {facing.value}" if ahead is not None else None
        assert (forward in ends(state)) == (may_step and forward is not None), (square, facing)
        if forward is not None and facing not in TABLE[square] and G.name(ahead) != other:
            reason = state.illegal_reason(GAME.parse_action(f"P1 {forward}"))
            assert reason is not None and "no path" in reason


def test_turning_costs_one_point_whatever_the_angle_and_must_face_a_new_way():
    state = position({0: "c2 N", 1: "f6 S"}, roll=1)
    turns = {f"move c2 {d.value}" for d in ALL_DIRECTIONS if d is not Direction.N}
    assert ends(state) == turns | {"move c3 N"}
    reason = state.illegal_reason(Move(0, sq("c2"), Direction.N))
    assert reason is not None and "exactly 1 point" in reason


def test_turning_away_and_back_is_two_real_turns():
    state = position({0: "c2 N", 1: "f6 S"}, roll=2)
    assert "move c2 N" in ends(state)


def test_diagonals_are_for_aiming_only():
    state = position({0: "b2 NE", 1: "f6 S"}, roll=1)
    assert ends(state) == {f"move b2 {d.value}" for d in ALL_DIRECTIONS if d is not Direction.NE}


def test_all_points_must_be_spent():
    # a1 -> a2 is one point; with two, the Zamboni cannot stop on a2 still facing N.
    two = position({0: "a1 N", 1: "f6 S"}, roll=2)
    assert not two.is_legal(Move(0, sq("a2"), Direction.N))
    assert two.is_legal(Move(0, sq("a3"), Direction.N))
    assert two.is_legal(Move(0, sq("a2"), Direction.E))
    one = position({0: "a1 N", 1: "f6 S"}, roll=1)
    assert one.is_legal(Move(0, sq("a2"), Direction.N))
    with pytest.raises(IllegalActionError, match="P1 move f1 N.*out of reach of a roll of 2 from a1"):
        two.apply("P1 move f1 N")


def test_a_zamboni_in_the_way_must_be_driven_around():
    free = position({0: "a1 N", 1: "f6 S"}, roll=2)
    blocked = position({0: "a1 N", 1: "a2 S"}, roll=2)
    assert "move a3 N" in ends(free)
    assert "move a3 N" not in ends(blocked)
    assert not any(e.startswith("move a2 ") for e in ends(blocked))
    assert "taken by P2" in blocked.illegal_reason(Move(0, sq("a2"), Direction.E))


def test_out_of_turn_and_out_of_phase_actions_are_refused():
    state = position({0: "a1 N", 1: "f6 S"}, roll=1)
    assert state.illegal_reason(Move(1, sq("f5"), Direction.S)) == "it is P1's turn, not P2's"
    assert "no die roll is due" in state.illegal_reason(Roll(3))
    assert "no cover roll-off" in state.illegal_reason(CoverRollOff((0,)))
    assert "must move" in state.illegal_reason(Hold(0))
    assert "no cover dice" in state.illegal_reason(Move(0, sq("a2"), Direction.N, (sq("a3"),)))


# --- lasers ----------------------------------------------------------------------------------------

def test_laser_range_is_four_squares():
    in_range = position({0: "a1 N", 1: "a5 S"}, phase=Phase.AIM)
    assert in_range.aimed_at().seat == 1 and in_range.aimed_at().distance == 4
    too_far = position({0: "a1 N", 1: "a6 S"}, phase=Phase.MOVE_ROLL)
    assert too_far.aimed_at() is None


def test_moving_into_the_sights_offers_fire_or_hold_and_otherwise_the_turn_passes():
    state = position({0: "a1 N", 1: "a5 S"}, roll=1)
    aiming = state.apply("P1 move a1 E").apply("roll 1")  # P1 turned away; P2's turn now
    assert aiming.phase == Phase.MOVE and aiming.turn == 1
    state = position({0: "a1 E", 1: "a5 S"}, roll=1).apply("P1 move a1 N")
    assert state.phase == Phase.AIM and state.legal_actions() == [Fire(0, 1), Hold(0)]
    assert state.apply("P1 hold").phase == Phase.MOVE_ROLL


def test_diagonal_shots_and_a_clear_line():
    diagonal = position({0: "b2 NE", 1: "e5 S"}, phase=Phase.MOVE_ROLL)
    assert diagonal.aimed_at().seat == 1 and diagonal.aimed_at().distance == 3
    blocked = position({0: "b2 NE", 1: "e5 S", 2: "d4 N"}, players=3, phase=Phase.MOVE_ROLL)
    assert blocked.aimed_at().seat == 2  # the nearer Zamboni takes the shot
    behind_cover = position({0: "b2 NE", 1: "e5 S"}, variant="cover", cover=("c3",), phase=Phase.MOVE_ROLL)
    assert behind_cover.aimed_at() is None
    assert laser_target(BOARD, sq("b2"), Direction.SW, {sq("a1"): (1, 3)}).distance == 1
    assert laser_target(BOARD, sq("b2"), Direction.NW, {sq("a1"): (1, 3)}) is None


def test_arrows_do_not_stop_a_laser():
    # a3 has no arrow to the east: the Zamboni cannot drive that way, but it can fire that way.
    state = position({0: "a3 E", 1: "d3 W"}, phase=Phase.MOVE_ROLL)
    assert Direction.E not in TABLE["a3"] and state.aimed_at().seat == 1


@pytest.mark.parametrize(("armour", "miss", "hit"), [(3, 3, 4), (2, 4, 5), (1, 5, 6)])
def test_hit_thresholds_per_armour(armour, miss, hit):
    aiming = position({0: "a1 N", 1: ("a3 S", armour), 2: "f6 S"}, players=3, phase=Phase.AIM)
    firing = aiming.apply("P1 fire P2")
    assert firing.current_player() == CHANCE and firing.target == 1
    assert firing.apply(f"roll {miss}").zambonis[1].armour == armour
    after = firing.apply(f"roll {hit}")
    assert (after.zambonis[1] is None) if armour == 1 else (after.zambonis[1].armour == armour - 1)
    assert hit_chance(armour) == pytest.approx((7 - hit) / 6)


def test_a_hit_removes_the_largest_piece():
    state = position({0: "a1 N", 1: "a3 S"}, phase=Phase.AIM)
    state, effects = state.apply("P1 fire P2").apply_with_effects("roll 6")
    assert any("loses green-L" in e for e in effects)
    assert GAME.state_from_json(state.to_json()).summary()["zambonis"][1]["pieces"] == ["green-M", "green-S"]


def test_elimination_skips_the_seat_and_the_last_zamboni_wins():
    three = position({0: "a1 N", 1: ("a3 S", 1), 2: "f6 S"}, players=3, phase=Phase.AIM)
    after = three.apply("P1 fire P2").apply("roll 6")
    assert after.zambonis[1] is None and after.turn == 2 and not after.is_terminal()
    assert after.legal_actions(1) == []
    two = position({0: "a1 N", 1: ("a3 S", 1)}, phase=Phase.AIM)
    over = two.apply("P1 fire P2").apply("roll 6")
    assert over.current_player() == TERMINAL and over.outcome().winners == (0,)
    assert over.returns() == (1.0, 0.0) and over.legal_actions() == []


def test_firing_at_the_wrong_seat_or_with_nobody_in_sight_is_refused():
    state = position({0: "a1 N", 1: "a3 S", 2: "f6 S"}, players=3, phase=Phase.AIM)
    assert "aimed at P2 on a3, not at P3" in state.illegal_reason(Fire(0, 2))


# --- Treehouse cover --------------------------------------------------------------------------------

@pytest.mark.parametrize(("players", "dice"), [(2, 1), (3, 1), (4, 2)])
def test_one_cover_die_for_every_two_players_at_the_roll_off_winners_centres(players, dice):
    state = GAME.new_initial_state(players, "cover")
    assert state.phase == Phase.COVER_ROLL_OFF
    outcomes = state.chance_outcomes()
    assert all(len(a.seats) == dice for a, _ in outcomes)
    assert sum(p for _, p in outcomes) == pytest.approx(1.0)
    seats = outcomes[-1][0].seats
    placed = state.apply(outcomes[-1][0])
    assert placed.cover == tuple(sorted(BOARD.centre(state.homes[s]) for s in seats))
    assert placed.phase == Phase.MOVE_ROLL


def test_cover_is_pushed_for_free_along_the_move():
    state = position({0: "a1 N", 1: "f6 S"}, variant="cover", cover=("a2",), roll=1)
    assert "move a2 N cover a3" in ends(state)
    after, effects = state.apply_with_effects("P1 move a2 N cover a3")
    assert after.cover == (sq("a3"),) and any("pushed a2 to a3" in e for e in effects)
    assert "did not move" in state.illegal_reason(Move(0, sq("a1"), Direction.E, (sq("a2"),)))


def test_cover_cannot_be_pushed_against_its_arrows_off_the_board_or_into_a_piece():
    # c2 has no arrow to the east: a Zamboni coming from b2 cannot shove a die out of it.
    against_arrow = position({0: "b2 E", 1: "f6 S"}, variant="cover", cover=("c2",), roll=1)
    assert Direction.E not in TABLE["c2"] and Direction.E in TABLE["b2"]
    assert not any(e.startswith("move c2") for e in ends(against_arrow))
    into_zamboni = position({0: "a1 N", 1: "a3 S"}, variant="cover", cover=("a2",), roll=1)
    assert not any(e.startswith("move a2") for e in ends(into_zamboni))
    into_die = position({0: "a1 N", 1: "f6 S", 2: "f1 W", 3: "a6 E"}, players=4, variant="cover",
                        cover=("a2", "a3"), roll=1)
    assert not any(e.startswith("move a2") for e in ends(into_die))
    off_board = position({0: "a2 S", 1: "f6 S"}, variant="cover", cover=("a1",), roll=2)
    assert not any(e.startswith("move a1") for e in ends(off_board))


@pytest.mark.parametrize("stuck", ["a1", "d2", "b3", "e4", "c5"])
def test_a_stuck_die_still_blocks_but_no_zamboni_can_push_it(stuck):
    cell = sq(stuck)
    tried = 0
    for facing in CARDINALS:
        behind = G.step(cell, facing.opposite)
        if behind is None or not BOARD.allows(behind, facing):
            continue
        state = position({0: f"{G.name(behind)} {facing.value}", 1: "f5 S"}, variant="cover", cover=(stuck,), roll=1)
        assert not any(e.startswith(f"move {stuck}") for e in ends(state)), (stuck, facing)
        tried += 1
    assert tried >= 1  # a Zamboni can drive at it, but cannot move it
    # It still works as cover: a beam through it stops (a corner has no square beyond to aim at).
    lines = [(c, _towards(c, cell)) for c in G.cells if G.chebyshev(c, cell) == 1]
    lines = [(c, d) for c, d in lines if G.step(cell, d) is not None]
    if not lines:
        assert G.name(cell) in ("a1", "a6", "f1", "f6")
        return
    shooter, facing = lines[0]
    beyond = G.step(cell, facing)
    state = position({0: f"{G.name(shooter)} {facing.value}", 1: f"{G.name(beyond)} N"}, variant="cover",
                     cover=(stuck,), phase=Phase.MOVE_ROLL)
    assert state.aimed_at() is None


def test_every_other_square_lets_a_die_be_pushed_somewhere():
    stuck = {"a1", "f1", "d2", "b3", "e4", "c5", "a6", "f6"}
    for cell in G.cells:
        pushes = []
        for facing in CARDINALS:
            behind = G.step(cell, facing.opposite)
            if behind is None or not BOARD.allows(behind, facing):
                continue
            other = next(c for c in ("f5", "a5", "c1") if sq(c) not in (cell, behind, G.step(cell, facing)))
            state = position({0: f"{G.name(behind)} {facing.value}", 1: f"{other} S"}, variant="cover",
                             cover=(G.name(cell),), roll=1)
            pushes += [e for e in ends(state) if e.startswith(f"move {G.name(cell)}")]
        assert bool(pushes) == (G.name(cell) not in stuck), G.name(cell)


def _towards(a: int, b: int) -> Direction:
    (fa, ra), (fb, rb) = G.coords(a), G.coords(b)
    return next(d for d in ALL_DIRECTIONS if d.delta == (fb - fa, rb - ra))


# --- Warp Zones ---------------------------------------------------------------------------------------

def test_warp_zones_jump_between_centres_keeping_the_facing():
    state = position({0: "b2 W", 1: "f6 S"}, variant="warp", roll=1)
    assert {"move b5 W", "move e5 W", "move e2 W"} <= ends(state)
    plain = position({0: "b2 W", 1: "f6 S"}, roll=1)
    assert not {"move b5 W", "move e5 W", "move e2 W"} & ends(plain)


def test_a_taken_or_covered_centre_cannot_be_warped_to_and_warps_chain():
    state = position({0: "b2 W", 1: "e5 S"}, variant="cover-warp", cover=("e2",), roll=1)
    found = ends(state)
    assert "move b5 W" in found and "move e5 W" not in found and "move e2 W" not in found
    twice = position({0: "b2 W", 1: "f6 S"}, variant="warp", roll=2)
    assert "move e5 W" in ends(twice)
    # Ending on e5 still facing W with two points takes two warps (a turn would change the facing).
    path = next(p for p in plan_moves(twice) if G.name(p.cell) == "e5" and p.facing is Direction.W).path
    assert [step.kind for step in path] == ["warp", "warp"] and G.name(path[-1].cell) == "e5"


# --- planning ------------------------------------------------------------------------------------------

def brute_force_ends(zamboni: tuple[int, Direction], roll: int, others: set[int], cover: frozenset[int],
                     warp: bool) -> set[tuple[int, Direction, frozenset[int]]]:
    """An independent enumeration, straight from the rule text and the equipment table."""
    centres = {sq(c) for c in ("b2", "b5", "e5", "e2")}
    layer = {(zamboni[0], zamboni[1], cover)}
    for _ in range(roll):
        nxt = set()
        for cell, facing, dice in layer:
            nxt.update((cell, d, dice) for d in ALL_DIRECTIONS if d is not facing)
            if facing.is_cardinal and facing in TABLE[G.name(cell)]:
                ahead = G.step(cell, facing)
                if ahead is not None and ahead not in others:
                    if ahead not in dice:
                        nxt.add((ahead, facing, dice))
                    elif facing in TABLE[G.name(ahead)]:
                        beyond = G.step(ahead, facing)
                        if beyond is not None and beyond not in others and beyond not in dice:
                            nxt.add((ahead, facing, dice - {ahead} | {beyond}))
            if warp and cell in centres:
                nxt.update((c, facing, dice) for c in centres - {cell} - others - dice)
        layer = nxt
    return layer


@pytest.mark.parametrize(("start", "others", "cover", "warp"), [
    ("a1 N", (), (), False),
    ("c2 E", ("d2", "b4"), (), False),
    ("b2 NE", ("e5",), (), True),
    ("b3 N", ("f6",), ("b4", "c4"), False),
    ("a2 E", ("e2",), ("b2", "c3"), True),
])
@pytest.mark.parametrize("roll", [1, 2, 3, 4, 5, 6])
def test_enumeration_matches_an_independent_brute_force(start, others, cover, warp, roll):
    cell, facing = start.split()
    me = Zamboni(sq(cell), Direction(facing))
    found = reach(BOARD, me, roll, tuple(sq(c) for c in others), tuple(sq(c) for c in cover), warp)
    expected = brute_force_ends((me.cell, me.facing), roll, {sq(c) for c in others},
                                frozenset(sq(c) for c in cover), warp)
    assert {(c, f, frozenset(d)) for c, f, d in found.ends()} == expected


def _replay_path(start: Zamboni, path, others: set[int], cover: set[int],
                 warp: bool) -> tuple[int, Direction, set[int]]:
    """Walks a path by the rules, failing on any step the rules forbid."""
    cell, facing, dice = start.cell, start.facing, set(cover)
    for step in path:
        if step.kind == "turn":
            assert step.facing is not facing and step.cell == cell
        elif step.kind == "warp":
            assert warp and cell in BOARD.centres and step.cell in BOARD.centres and step.cell != cell
            assert step.facing is facing and step.cell not in others | dice
        else:
            assert step.facing is facing and facing in TABLE[G.name(cell)]
            assert step.cell == G.step(cell, facing) and step.cell not in others
            if step.cell in dice:
                assert step.pushed == (step.cell, G.step(step.cell, facing))
                dice = dice - {step.cell} | {step.pushed[1]}
        cell, facing = step.cell, step.facing
    return cell, facing, dice


@pytest.mark.parametrize("variant", ["standard", "cover-warp"])
def test_every_plan_has_a_path_that_spends_exactly_the_roll(variant):
    state = position({0: "b2 E", 1: "c4 W", 2: "e2 N", 3: "f6 S"}, players=4, variant=variant,
                     cover=("c2", "d5") if variant != "standard" else (), roll=6)
    plans = plan_moves(state)
    assert len(plans) == len(state.legal_actions())
    others = {sq(c) for c in ("c4", "e2", "f6")}
    for plan in plans:
        assert len(plan.path) == 6
        end = _replay_path(state.zambonis[0], plan.path, others, set(state.cover), state.warp_rule)
        assert end == (plan.cell, plan.facing, set(plan.cover))
        assert state.is_legal(plan.action(0, state.cover))


def test_plans_list_targets_with_their_hit_chance():
    state = position({0: "a1 E", 1: ("a4 S", 2)}, roll=1)
    plans = {(G.name(p.cell), p.facing.value): p for p in plan_moves(state)}
    shot = plans[("a1", "N")].targets
    assert len(shot) == 1 and shot[0].seat == 1 and shot[0].distance == 3
    assert shot[0].needs == 5 and shot[0].chance == pytest.approx(1 / 3)
    assert plans[("a1", "S")].targets == ()
    assert json.loads(json.dumps(plans[("a1", "N")].to_json()))["targets"][0]["needs"] == 5
    with pytest.raises(ValueError, match="no roll"):
        plan_moves(replace(state, phase=Phase.MOVE_ROLL, roll=0))


def test_roll_of_six_on_an_empty_board_counts():
    """A 'perft' guard for the move generator: end positions from the corners with 6 points."""
    counts = [len(reach(BOARD, Zamboni(sq(c), f), 6).ends()) for c, f in
              (("a1", Direction.N), ("a6", Direction.E), ("f6", Direction.S), ("f1", Direction.W))]
    brute = [len(brute_force_ends((sq(c), f), 6, set(), frozenset(), False)) for c, f in
             (("a1", Direction.N), ("a6", Direction.E), ("f6", Direction.S), ("f1", Direction.W))]
    assert counts == brute and min(counts) > 50


# --- text forms, JSON and records ---------------------------------------------------------------------

@pytest.mark.parametrize("text", ["roll 4", "cover P2", "cover P1 P3", "P1 move c3 E", "P2 move a4 N cover a5",
                                  "P3 move a4 N cover f2 a5", "P1 fire P2", "P4 hold"])
def test_action_text_round_trips(text):
    assert str(GAME.parse_action(text)) == text


def test_cover_squares_are_read_in_any_order():
    # The text form lists them in cell order (by rank, then file).
    assert GAME.parse_action("P1 move a4 N cover a5 f2") == Move(0, sq("a4"), Direction.N, (sq("f2"), sq("a5")))


@pytest.mark.parametrize("text", ["roll 7", "roll", "P1 move c3", "P1 move c9 E", "P1 move c3 Q", "P1 fly",
                                  "cover P2 P1", "P1 move a4 N cover", "P1 move a4 N cover a5 a5", "Q1 hold"])
def test_bad_text_is_an_invalid_action_naming_it(text):
    with pytest.raises(InvalidActionError):
        GAME.parse_action(text)


def test_state_json_round_trips_and_bad_data_is_refused():
    state = position({0: "b2 NE", 1: ("e5 S", 2)}, variant="cover-warp", cover=("c3",), roll=3)
    data = json.loads(json.dumps(state.to_json()))
    assert GAME.state_from_json(data) == state
    data["zambonis"][1][0] = "b2"
    with pytest.raises(GameError, match="share a square"):
        GAME.state_from_json(data)
    with pytest.raises(GameError):
        GAME.state_from_json({"players": 2})


def test_summary_and_text_show_the_board():
    state = position({0: "b2 NE", 1: ("e5 S", 2)}, variant="cover-warp", cover=("c3",), roll=3)
    summary = state.summary()
    assert summary["zambonis"][1]["pieces"] == ["green-M", "green-S"]
    assert summary["cover"] == ["c3"] and summary["warp_zones"] == ["b2", "b5", "e5", "e2"]
    text = str(state)
    assert "1NE" in text and "[#]" in text and "roll 3" in text


def test_the_sample_record_replays_legally_to_the_end():
    header, events = read_record(SAMPLE)
    assert header.game == "zamboni-wars"
    verdicts = list(replay(header, events))
    assert all(v.legal for v, _ in verdicts), [str(v) for v, _ in verdicts if not v.legal]
    assert all(v.line is not None for v, _ in verdicts)  # every roll is written down
    final = verdicts[-1][1]
    assert final.is_terminal() and len(final.outcome().winners) == 1
    assert any(v.action.endswith("fire P1") or v.action.endswith("fire P2") for v, _ in verdicts)
