"""Auto-scoring of IceTowers tables as the camera sees them."""

from __future__ import annotations

import random

import pytest

from companion.games import get_game
from companion.games.base import random_playout
from companion.pieces import Colour
from companion.scoring import ObservationError, parse_observation, score_observation

ANN_BOB = [{"name": "Ann", "colours": ["red"]}, {"name": "Bob", "colours": ["yellow"]}]


def test_scores_controllers_and_players():
    report = score_observation(parse_observation({
        "players": ANN_BOB,
        "towers": [[["yellow", "L"], ["red", "M"], ["red", "S"]], ["red-L", "yellow-M", "red-M", "yellow-S"]],
        "free": [["yellow", 1], "red-M"],
    }))
    assert [(t.controller.value, t.owner, t.points) for t in report.towers] == [
        ("red", "Ann", 6), ("yellow", "Bob", 8), ("yellow", "Bob", 1), ("red", "Ann", 2)]
    assert dict(report.colour_scores) == {Colour.RED: 8, Colour.YELLOW: 9}
    assert report.player_scores == (("Ann", 8), ("Bob", 9)) and report.winners == ("Bob",)
    assert report.violations == ()
    assert report.notes == (
        "split opportunity: yellow-L/red-M|red-S (red-M under red-S), for anyone but Ann",
        "mining opportunity: 2 red pieces in red-L/yellow-M/red-M/yellow-S, for Ann")


def test_a_piece_on_a_smaller_piece_is_a_violation():
    report = score_observation(parse_observation({"towers": [["red-S", "yellow-L"], ["yellow-M", "red-M"]]}))
    assert report.violations == ("yellow-L rests on the smaller red-S (level 2 of red-S/yellow-L)",)
    # Without a player list, colours are scored and ranked on their own.
    assert report.player_scores == () and dict(report.colour_scores) == {Colour.YELLOW: 4, Colour.RED: 4}
    assert set(report.winners) == {"yellow", "red"}


def test_two_colours_score_together_and_gus_scores_alone():
    report = score_observation(parse_observation({
        "players": [{"name": "Ann", "colours": ["red", "blue"]}, {"name": "Bob", "colours": ["yellow", "green"]}],
        "towers": [["red-L", "blue-M"], ["yellow-L", "red-S"], ["green-M"], ["blue-S", "yellow-S"]]}))
    assert report.player_scores == (("Ann", 9), ("Bob", 4))
    report = score_observation(parse_observation({
        "players": ANN_BOB, "gus": "white",
        "towers": [["white-L", "yellow-L", "red-M", "white-M"], ["red-L", "white-M", "white-S"]], "free": ["yellow-S"]}))
    assert report.player_scores == (("Ann", 0), ("Bob", 1), ("Gus", 16)) and report.winners == ("Gus",)
    assert "any player (Gus never splits)" in report.notes[0]


@pytest.mark.parametrize(("data", "message"), [
    ([], "JSON object"),
    ({"towers": [["red-Q"]]}, "towers[1] piece 1: unknown size"),
    ({"towers": [[]]}, "non-empty list"),
    ({"towers": [["pink-S"]]}, "unknown colour"),
    ({"free": [["red"]]}, "free[1]"),
    ({"towers": []}, "nothing to score"),
    ({"towers": [["red-S"]], "players": [{"name": "A", "colours": ["red"]}, {"name": "B", "colours": "red"}]},
     "one player only"),
    ({"towers": [["red-S"]], "tables": 1}, "unknown field"),
    ({"game": "zamboni-wars", "towers": [["red-S"]]}, "only icetowers"),
])
def test_malformed_observations_name_the_problem(data, message):
    with pytest.raises(ObservationError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_observation(data)


def test_auto_scoring_agrees_with_the_engine_on_finished_games():
    game = get_game("icetowers")
    rng = random.Random(5)
    for variant in game.variants:
        final = random_playout(game.new_initial_state(3, variant), rng)
        players = [{"name": f"P{s + 1}", "colours": [c.value for c in final.colours_of(s)]} for s in range(3)]
        data = {"players": players, "towers": [[str(p) for p in t] for t, _ in final.towers]}
        if final.gus_colour() is not None:
            data["gus"] = final.gus_colour().value
        report = score_observation(parse_observation(data))
        assert [v for _, v in report.player_scores[:3]] == list(final.scores())
        assert report.violations == ()
