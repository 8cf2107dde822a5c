"""IceTowers: capping, mining, splitting, No Minebacks, the endings, two colours and Gus."""

from __future__ import annotations

import json
import random
from importlib import resources
from pathlib import Path

import pytest

from companion.cli import main
from companion.games import SIMULTANEOUS, TERMINAL, GameError, IllegalActionError, InvalidActionError, get_game
from companion.games.base import random_playout
from companion.games.icetowers import (
    Cap,
    Done,
    Mine,
    SetDown,
    Showdown,
    Split,
    TowerWar,
    parse_tower,
    tower_text,
)
from companion.pieces import Colour, Pyramid
from companion.records import read_record, replay

GAME = get_game("icetowers")


def table(*towers: str, players: int = 2, variant: str = "standard", **options):
    return GAME.new_initial_state(players, variant, {"table": list(towers), **options})


def play(state, *actions: str):
    for action in actions:
        state = state.apply(action)
        assert state.invariant_violations() == [], f"after {action}: {state.invariant_violations()}"
    return state


def towers_of(state) -> list[str]:
    return sorted(tower_text(t) for t, _ in state.towers)


def texts(actions) -> set[str]:
    return {str(a) for a in actions}


# --- set-up and text forms ----------------------------------------------------------------

def test_setup_scatters_one_stash_per_colour_free_standing():
    state = GAME.new_initial_state(3)
    assert state.current_player() == SIMULTANEOUS
    assert state.players_to_act() == (0, 1, 2)
    assert len(state.towers) == 45 and all(len(t) == 1 for t, _ in state.towers)
    assert [state.colours_of(s) for s in range(3)] == [(Colour.RED,), (Colour.YELLOW,), (Colour.GREEN,)]
    # Free-standing pieces are one-piece towers that their colour controls: 5 x (3 + 2 + 1).
    assert state.scores() == (30, 30, 30)


def test_legal_actions_from_a_small_start_are_counted_exactly():
    state = GAME.new_initial_state(2, options={"pieces_per_size": 1})
    # red-L caps yellow-L; red-M caps yellow-M or -L; red-S caps any of the three; or agree to end.
    assert texts(state.legal_actions(0)) == {
        "P1 cap red-L on yellow-L", "P1 cap red-M on yellow-M", "P1 cap red-M on yellow-L",
        "P1 cap red-S on yellow-S", "P1 cap red-S on yellow-M", "P1 cap red-S on yellow-L", "P1 done"}
    # With three other colours: green-L has 3 targets, green-M 6, green-S 9.
    assert len(GAME.new_initial_state(4).legal_actions(2)) == 3 + 6 + 9 + 1


@pytest.mark.parametrize("text", [
    "P1 cap red-S on blue-L/green-M",
    "P2 mine blue-L/[red-M]/green-S",
    "P3 mine [red-L]/blue-M/red-M/blue-S",
    "P1 split blue-L/red-M|red-S",
    "P4 set down red-M",
    "P2 done",
    "P1 showdown",
    "P3 tower war",
])
def test_action_text_round_trips(text):
    assert str(GAME.parse_action(text)) == text


def test_action_values_hold_the_tower_and_the_place():
    assert GAME.parse_action("P2 mine blue-L/[red-M]/green-S") == Mine(
        1, parse_tower("blue-L/red-M/green-S"), 2)
    assert GAME.parse_action("P1 split blue-L/red-M|red-S") == Split(0, parse_tower("blue-L/red-M/red-S"), 2)
    assert GAME.parse_action("P1 cap red-S on blue-L") == Cap(0, Pyramid.parse("red-S"), parse_tower("blue-L"))


@pytest.mark.parametrize("text", [
    "P1", "P1 cap red-S", "P1 cap red-S onto blue-L", "P1 cap pink-S on blue-L", "P1 cap red-X on blue-L",
    "P1 mine blue-L/red-M", "P1 mine [blue-L]/[red-M]", "P1 split blue-L/red-M", "P1 split a|b|c",
    "P1 split |red-S", "P0 done", "X1 done", "P1 done now", "P1 tower", "P1 fly",
])
def test_malformed_actions_are_invalid(text):
    with pytest.raises(InvalidActionError):
        GAME.parse_action(text)


def test_bad_setups_are_refused():
    with pytest.raises(GameError, match="2-4 players"):
        GAME.new_initial_state(5)
    with pytest.raises(GameError, match="one player only"):
        GAME.new_initial_state(2, options={"colours": ["red", "red"]})
    with pytest.raises(GameError, match="2 colour"):
        GAME.new_initial_state(2, "two-colour", options={"colours": ["red", "blue"]})
    with pytest.raises(GameError, match="not a colour in play"):
        table("red-L/blue-M")
    with pytest.raises(GameError, match="rests on the smaller"):
        table("red-S/yellow-L")
    with pytest.raises(GameError, match="pieces_per_size"):
        GAME.new_initial_state(2, options={"pieces_per_size": 6})
    with pytest.raises(GameError, match="no option"):
        GAME.new_initial_state(2, options={"dice": 2})
    with pytest.raises(GameError, match="gus variant"):
        GAME.new_initial_state(2, options={"gus_colour": "white"})


# --- capping ------------------------------------------------------------------------------

def test_capping_takes_control_and_moves_the_piece():
    state = table("yellow-L/red-M", "yellow-M", "red-S")
    after = play(state, "P2 cap yellow-M on yellow-L/red-M")
    assert towers_of(after) == ["red-S", "yellow-L/red-M/yellow-M"]
    assert after.scores() == (1, 7)


@pytest.mark.parametrize(("action", "reason"), [
    ("P2 cap yellow-L on yellow-M/red-M", "larger than red-M"),
    ("P1 cap red-S on yellow-M/red-M", "its own colour"),
    ("P1 cap yellow-S on yellow-M/red-M", "may not move yellow"),
    ("P2 cap yellow-L on red-S", "larger than red-S"),
    ("P2 cap yellow-S on red-L", "no tower red-L"),
    ("P1 cap red-M on yellow-L", "no free-standing red-M"),  # red-M is inside a tower
])
def test_capping_restrictions(action, reason):
    state = table("yellow-M/red-M", "yellow-L", "yellow-L/yellow-M", "red-S", "yellow-S")
    assert reason in state.illegal_reason(GAME.parse_action(action))
    with pytest.raises(IllegalActionError):
        state.apply(action)


def test_same_size_caps_and_smaller_caps_anything():
    state = table("yellow-M/red-M", "yellow-S", "yellow-L", "red-S")
    assert state.is_legal(GAME.parse_action("P2 cap yellow-S on yellow-M/red-M"))
    assert state.is_legal(GAME.parse_action("P1 cap red-S on yellow-L"))
    assert state.is_legal(GAME.parse_action("P1 cap red-S on yellow-S"))


# --- mining and No Minebacks --------------------------------------------------------------

def test_mining_puts_the_piece_in_hand_and_it_must_cap_a_different_tower():
    state = table("red-L/yellow-L/red-M/yellow-S", "yellow-M", "red-S/yellow-S")
    after = play(state, "P1 mine [red-L]/yellow-L/red-M/yellow-S")
    assert towers_of(after) == ["red-S/yellow-S", "yellow-L/red-M/yellow-S", "yellow-M"]
    assert after.hand_of(0).piece == Pyramid.parse("red-L")
    # red-L is too large for every tower but the one it left: it must be set down.
    assert texts(after.legal_actions(0)) == {"P1 set down red-L"}
    after = play(after, "P1 set down red-L")
    assert towers_of(after) == ["red-L", "red-S/yellow-S", "yellow-L/red-M/yellow-S", "yellow-M"]


def test_no_minebacks_and_a_held_piece_must_cap_when_it_can():
    state = table("red-L/yellow-L/red-M/yellow-S", "yellow-M", "red-S/yellow-S")
    after = play(state, "P1 mine red-L/yellow-L/[red-M]/yellow-S")
    assert texts(after.legal_actions(0)) == {"P1 cap red-M on yellow-M"}
    back = GAME.parse_action("P1 cap red-M on red-L/yellow-L/yellow-S")
    assert "No Minebacks" in after.illegal_reason(back)
    assert "can still cap yellow-M" in after.illegal_reason(GAME.parse_action("P1 set down red-M"))
    # One play at a time: the holder can do nothing else, not even agree to end.
    assert "must first play" in after.illegal_reason(Done(0))
    assert "must play it first" in after.illegal_reason(GAME.parse_action("P1 cap red-S on yellow-M"))


def test_a_mineback_onto_an_identical_other_tower_is_allowed():
    state = table("red-M/yellow-M/red-M/yellow-M", "yellow-M/red-M/yellow-M")
    after = play(state, "P1 mine [red-M]/yellow-M/red-M/yellow-M")
    # The tower left behind looks just like the other one, which is a different tower.
    assert texts(after.legal_actions(0)) == {"P1 cap red-M on yellow-M/red-M/yellow-M"}
    after = play(after, "P1 cap red-M on yellow-M/red-M/yellow-M")
    assert towers_of(after) == ["yellow-M/red-M/yellow-M", "yellow-M/red-M/yellow-M/red-M"]


@pytest.mark.parametrize(("action", "reason"), [
    ("P1 mine [red-L]/yellow-M/red-S", "controls"),          # red is on top
    ("P1 mine [red-L]/yellow-M/yellow-S", "two or more red"),  # only one red inside
    ("P1 mine [yellow-L]/red-M/yellow-S/red-S", "may not mine yellow"),
])
def test_mining_restrictions(action, reason):
    state = table("red-L/yellow-M/red-S", "red-L/yellow-M/yellow-S", "yellow-L/red-M/yellow-S/red-S")
    assert reason in state.illegal_reason(GAME.parse_action(action))


def test_others_keep_playing_while_a_piece_is_held_but_not_on_the_tower_being_reassembled():
    state = table("red-L/yellow-L/red-M/yellow-S", "red-M", "yellow-S")
    after = play(state, "P1 mine [red-L]/yellow-L/red-M/yellow-S")
    assert after.players_to_act() == (0, 1)
    mine_it = GAME.parse_action("P2 mine yellow-L/red-M/[yellow-S]")
    assert "being handled" in after.illegal_reason(mine_it)
    after = play(after, "P2 cap yellow-S on red-M")
    assert texts(after.legal_actions(0)) == {"P1 set down red-L"}


# --- splitting ----------------------------------------------------------------------------

def test_splitting_separates_a_pair_of_another_players_colour():
    state = table("yellow-L/red-M/red-S/yellow-S", "yellow-M")
    assert "own colour" in state.illegal_reason(GAME.parse_action("P1 split yellow-L/red-M|red-S/yellow-S"))
    assert texts(a for a in state.legal_actions(1) if isinstance(a, Split)) == {"P2 split yellow-L/red-M|red-S/yellow-S"}
    after = play(state, "P2 split yellow-L/red-M|red-S/yellow-S")
    assert towers_of(after) == ["red-S/yellow-S", "yellow-L/red-M", "yellow-M"]
    assert after.scores() == (5, 4)
    assert "not a pair" in state.illegal_reason(GAME.parse_action("P2 split yellow-L|red-M/red-S/yellow-S"))


def test_ruling_a_split_off_piece_is_free_standing_and_its_owner_may_cap_with_it_at_once():
    state = table("yellow-L/red-M/red-M", "yellow-M/yellow-M")
    after = play(state, "P2 split yellow-L/red-M|red-M")
    assert after.is_legal(GAME.parse_action("P1 cap red-M on yellow-M/yellow-M"))
    # The splitter never owns the piece split off, so cannot cap with it.
    assert "may not move red" in after.illegal_reason(GAME.parse_action("P2 cap red-M on yellow-M/yellow-M"))


# --- the endings --------------------------------------------------------------------------

def test_the_game_ends_by_itself_when_no_play_is_possible():
    state = table("yellow-L", "red-M", "yellow-S")
    state = play(state, "P1 cap red-M on yellow-L")
    assert not state.is_terminal()
    final = play(state, "P2 cap yellow-S on yellow-L/red-M")
    assert final.current_player() == TERMINAL and final.legal_actions() == []
    assert final.players_to_act() == ()
    assert final.outcome().termination == "no plays left"
    assert final.outcome().scores == (0.0, 6.0) and final.outcome().winners == (1,)


def test_a_table_with_no_plays_is_over_before_it_starts():
    state = table("yellow-L/red-M/yellow-S")
    assert state.is_terminal() and state.outcome().winners == (1,)


def test_all_players_agreeing_ends_the_game_and_a_play_withdraws_agreement():
    state = table("yellow-L/red-M/red-S/yellow-S", "yellow-M", "red-M", players=2)
    state = play(state, "P1 done")
    assert "already agreed" in state.illegal_reason(Done(0))
    state = play(state, "P2 cap yellow-M on red-M")
    assert state.done == frozenset()
    state = play(state, "P1 done")
    final = play(state, "P2 done")
    assert final.is_terminal() and final.outcome().termination == "agreed"
    assert final.scores() == (0, 11) and final.outcome().winners == (1,)


def test_a_player_who_agreed_and_has_no_play_waits():
    state = table("yellow-L/red-M/red-S/yellow-S", "red-M", "red-S", players=2)
    # After capping, P1 has nothing left to play, while P2 can still split the red pair.
    state = play(state, "P1 cap red-S on yellow-L/red-M/red-S/yellow-S", "P1 done")
    assert state.players_to_act() == (1,)
    assert state.legal_actions(0) == []


def showdown_table():
    return table("red-S/red-S/yellow-S", "yellow-S/yellow-S/red-S", players=2)


def test_final_piece_showdown():
    state = play(showdown_table(), "P1 mine [red-S]/red-S/yellow-S")
    assert texts(state.legal_actions(0)) == {"P1 set down red-S"}
    assert "two or more" in state.illegal_reason(Showdown(0))
    state = play(state, "P2 mine [yellow-S]/yellow-S/red-S")
    # Each holds a small piece that can cap nothing, and neither wants to set it down first.
    assert texts(state.legal_actions(1)) == {"P2 set down yellow-S", "P2 showdown"}
    final = play(state, "P2 showdown")
    assert final.outcome().termination == "final piece showdown"
    assert towers_of(final) == ["red-S", "red-S/yellow-S", "yellow-S", "yellow-S/red-S"]
    # Pieces left free-standing score as usual.
    assert final.scores() == (3, 3) and final.outcome().winners == (0, 1)


def test_setting_down_first_in_a_showdown_lets_the_other_cap_it():
    state = play(showdown_table(), "P1 mine [red-S]/red-S/yellow-S", "P2 mine [yellow-S]/yellow-S/red-S",
                 "P1 set down red-S")
    assert "P2 cap yellow-S on red-S" in texts(state.legal_actions(1))
    assert "P2 showdown" not in texts(state.legal_actions(1))


def test_no_showdown_while_someone_else_can_still_play():
    state = table("red-L/red-L/yellow-L", "yellow-L/yellow-L/red-L", "green-M/red-M/red-S", players=3)
    state = play(state, "P1 mine [red-L]/red-L/yellow-L", "P2 mine [yellow-L]/yellow-L/red-L")
    assert not any(isinstance(a, Cap) for a in state.legal_actions(0) + state.legal_actions(1))
    assert "P3 can still play" in state.illegal_reason(Showdown(0))
    state = play(state, "P3 done")
    assert state.is_legal(Showdown(0))


# A loop found by search: P2 mines, sets down, splits and caps back; P1 re-caps.
LOOP = ["P2 mine yellow-M/red-M/[yellow-M]/red-M", "P2 set down yellow-M", "P2 split yellow-M/red-M|red-M",
        "P2 cap yellow-M on yellow-M/red-M", "P1 cap red-M on yellow-M/red-M/yellow-M"]


def test_tower_war_is_offered_when_the_position_comes_round_a_third_time():
    state = table("yellow-M/red-M/yellow-M/red-M", "red-M/red-M/red-M/yellow-M", "yellow-L", "red-S")
    start = towers_of(state)
    once = play(state, *LOOP)
    assert towers_of(once) == start
    assert "come round 2 time" in once.illegal_reason(TowerWar(0))
    twice = play(once, *LOOP)
    assert texts(twice.legal_actions(0)) >= {"P1 tower war"} and "P2 tower war" in texts(twice.legal_actions(1))
    final = play(twice, "P1 tower war")
    assert final.outcome().termination == "tower war"
    # The towers the loop changed are removed and score nothing; the others stay.
    assert towers_of(final) == ["red-M/red-M/red-M/yellow-M", "red-S", "yellow-L"]
    assert [tower_text(t) for t in final.removed] == ["yellow-M/red-M/yellow-M/red-M"]
    assert final.scores() == (1, 11) and final.outcome().winners == (1,)


def test_no_tower_war_claim_while_a_mined_piece_is_in_hand():
    state = table("yellow-M/red-M/yellow-M/red-M", "red-M/red-M/red-M/yellow-M")
    state = play(state, *LOOP, *LOOP, LOOP[0])
    assert "no mined piece" in state.illegal_reason(TowerWar(1))


# --- the two-player option ----------------------------------------------------------------

def two_colour(*towers: str):
    return table(*towers, variant="two-colour")  # P1 red+blue, P2 yellow+green


def test_two_colour_player_may_cap_one_colour_with_the_other():
    state = two_colour("red-M", "blue-S", "yellow-M", "green-L")
    assert state.colours_of(0) == (Colour.RED, Colour.BLUE)
    after = play(state, "P1 cap blue-S on red-M")
    assert after.colour_scores()[Colour.BLUE] == 3 and after.scores() == (3, 5)


def test_two_colour_player_may_mine_one_colour_from_a_tower_the_other_controls():
    state = two_colour("red-L/yellow-L/red-M/blue-S", "green-M", "yellow-S")
    assert state.is_legal(GAME.parse_action("P1 mine [red-L]/yellow-L/red-M/blue-S"))
    # Counting is per colour: one red and one blue are not two pieces of a colour.
    state = two_colour("red-L/yellow-L/blue-M/green-S", "red-S")
    assert "two or more red" in state.illegal_reason(GAME.parse_action("P1 mine [red-L]/yellow-L/blue-M/green-S"))


def test_two_colour_only_the_opponent_splits_either_colour():
    state = two_colour("yellow-L/red-M/red-S", "green-L/blue-M/blue-S", "yellow-M/yellow-S/green-S")
    splits = {str(a) for a in state.legal_actions() if isinstance(a, Split)}
    assert splits == {"P2 split yellow-L/red-M|red-S", "P2 split green-L/blue-M|blue-S",
                      "P1 split yellow-M|yellow-S/green-S"}


def test_two_colour_scores_both_colours_together():
    state = two_colour("red-L/blue-M", "yellow-L/red-S", "green-M", "blue-S/yellow-S")
    assert state.scores() == (3 + 2 + 3 + 1, 2 + 1 + 1)


# --- Gus, the ghost -----------------------------------------------------------------------

def gus(*towers: str, players: int = 2):
    return table(*towers, players=players, variant="gus")


def test_gus_is_white_and_anyone_may_move_him():
    state = gus("white-S", "red-M/yellow-M", "yellow-L")
    assert state.gus_colour() == Colour.WHITE
    assert state.is_legal(GAME.parse_action("P1 cap white-S on red-M/yellow-M"))
    assert state.is_legal(GAME.parse_action("P2 cap white-S on red-M/yellow-M"))
    assert GAME.new_initial_state(2, "gus", {"colours": ["red", "white"]}).gus_colour() == Colour.CLEAR


def test_gus_never_caps_a_single_piece_tower():
    state = gus("white-S", "yellow-L", "red-M/yellow-M")
    assert "Gus never caps a single-piece tower" in state.illegal_reason(GAME.parse_action("P1 cap white-S on yellow-L"))
    assert not any(isinstance(a, Cap) and a.target == parse_tower("yellow-L") and a.piece.colour == Colour.WHITE
                   for a in state.legal_actions())


def test_gus_never_splits_but_his_pairs_may_be_split():
    state = gus("yellow-L/red-M/red-S", "red-L/white-M/white-S")
    splits = {str(a) for a in state.legal_actions() if isinstance(a, Split)}
    # Nobody splits for Gus: P1 may not split its own red pair by claiming to act for him.
    assert splits == {"P2 split yellow-L/red-M|red-S", "P1 split red-L/white-M|white-S", "P2 split red-L/white-M|white-S"}


def test_a_mined_gus_piece_follows_gus_rules():
    state = gus("white-L/red-L/white-M/yellow-S", "yellow-M", "red-M/yellow-M")
    after = play(state, "P2 mine white-L/red-L/[white-M]/yellow-S")
    assert texts(after.legal_actions(1)) == {"P2 cap white-M on red-M/yellow-M"}
    assert texts(after.legal_actions(0)) >= {"P1 done"}


def test_gus_can_win():
    state = gus("white-L/yellow-L/red-M", "white-M", "yellow-M/red-S")
    final = play(state, "P1 cap white-M on white-L/yellow-L/red-M")
    assert final.scores() == (3, 0) and final.gus_score() == 10
    assert final.outcome().winners == () and "Gus wins" in final.outcome().termination
    assert final.returns() == (0.0, 0.0)


# --- whole games --------------------------------------------------------------------------

def sample_record_path() -> Path:
    return Path(str(resources.files("companion") / "data" / "samples" / "icetowers.jsonl"))


def test_sample_record_replays_all_legal_to_exact_scores():
    header, events = read_record(sample_record_path())
    results = list(replay(header, events))
    assert all(v.legal for v, _ in results)
    final = results[-1][1]
    assert final.is_terminal() and final.outcome().termination == "no plays left"
    assert towers_of(final) == ["red-M/yellow-S/red-S", "yellow-L/red-L/yellow-M"]
    assert final.outcome().scores == (4.0, 8.0) and final.outcome().winners == (1,)


def test_sample_record_replays_from_the_command_line(capsys):
    assert main(["replay", str(sample_record_path())]) == 0
    out = capsys.readouterr().out
    assert "12 events, 0 illegal" in out and "game over (no plays left): P1 4, P2 8" in out


def test_scripted_four_player_game():
    state = GAME.new_initial_state(4, options={"pieces_per_size": 1})
    final = play(state,
                 "P1 cap red-L on blue-L", "P2 cap yellow-L on blue-L/red-L",
                 "P3 cap green-L on blue-L/red-L/yellow-L", "P4 cap blue-M on blue-L/red-L/yellow-L/green-L",
                 "P1 cap red-M on yellow-M", "P2 cap yellow-S on yellow-M/red-M",
                 "P3 cap green-S on blue-L/red-L/yellow-L/green-L/blue-M",
                 "P1 done", "P2 done", "P3 done", "P4 done")
    assert final.outcome().termination == "agreed"
    assert towers_of(final) == ["blue-L/red-L/yellow-L/green-L/blue-M/green-S", "blue-S", "green-M", "red-S",
                                "yellow-M/red-M/yellow-S"]
    assert final.colour_scores() == {Colour.RED: 1, Colour.YELLOW: 5, Colour.GREEN: 17, Colour.BLUE: 1}
    assert final.outcome().scores == (1.0, 5.0, 17.0, 1.0) and final.outcome().winners == (2,)


def test_state_survives_json_with_a_piece_in_hand():
    state = play(showdown_table(), "P1 mine [red-S]/red-S/yellow-S", "P2 done")
    data = json.loads(json.dumps(state.to_json()))
    assert GAME.state_from_json(data) == state
    with pytest.raises(GameError):
        GAME.state_from_json({"players": 2})


@pytest.mark.parametrize("variant", list(GAME.variants))
def test_random_play_caps_by_the_rules_and_conserves_pieces(variant):
    rng = random.Random(variant)

    def check(before, action, after):
        assert after.invariant_violations() == []
        if isinstance(action, Cap):
            top = action.target[-1]
            assert top.colour != action.piece.colour and action.piece.size <= top.size
            if before._owner(action.piece.colour) is None:
                assert len(action.target) > 1
        if isinstance(action, SetDown):
            assert not any(isinstance(a, Cap) for a in before.legal_actions(action.player))

    for players in (2, 3, 4):
        for _ in range(5):
            final = random_playout(GAME.new_initial_state(players, variant), rng, on_action=check)
            assert final.is_terminal()
            total = sum(s for s in final.outcome().scores) + (final.gus_score() or 0)
            assert total == sum(p.size.pips * n for p, n in final.inventory) - sum(
                sum(q.size.pips for q in t) for t in final.removed)
