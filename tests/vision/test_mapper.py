"""The mapper on scenes whose truth is known: cells, directions, stacks, zones, and what it doubts."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from companion.pieces import Colour, Pose, Size
from companion.scoring import parse_observation, score_observation
from companion.synth.labels import sidecar
from companion.synth.scenes import sample_scene
from companion.vision.detection import ESTIMATED_END, Detection
from companion.vision.mapper import (
    Mapper,
    MapperConfig,
    config_for,
    location_from_truth,
    map_truth,
    rest_heights,
    seat_bearings,
    snap_direction,
    stack_rise,
    SQUARE_HEADINGS,
    truth_detections,
    truth_objects,
)
from companion.vision.observation import Observation, icetowers_position


def _truth(game: str, seed: int) -> dict:
    return sidecar(sample_scene(game, seed, 640, 480), None)  # geometry only: every object visible


def _pairs(game: str, seed: int, **config):
    truth = _truth(game, seed)
    obs = Mapper(game, MapperConfig(**config)).map(truth_detections(truth), location_from_truth(truth))
    return list(zip(truth_objects(truth), obs.pieces)), obs


@pytest.mark.parametrize("seed", range(6))
def test_every_sure_piece_is_mapped_to_its_true_cell_and_size_and_colour(seed):
    for game in ("icebomb-arena", "space-arena", "ice-arena", "zamboni-wars"):
        pairs, _ = _pairs(game, seed, directions=8 if game != "icebomb-arena" else 4)
        for obj, seen in pairs:
            if seen.unsure or obj.get("nested_in") is not None or obj.get("cell") is None:
                continue
            assert seen.cell == obj["cell"], (game, seed, obj, seen)
            if obj["kind"] == "pyramid":
                assert (seen.colour.value, seen.size.letter) == (obj["colour"], obj["size"])


def test_lying_directions_snap_to_the_boards_directions():
    checked = 0
    for game, directions in (("zamboni-wars", 8), ("ice-arena", 4), ("icebomb-arena", 4)):
        for seed in range(4):
            pairs, _ = _pairs(game, seed, directions=directions)
            for obj, seen in pairs:
                if obj.get("pose") == "lying" and obj.get("direction") and not seen.unsure and obj.get("nested_in") is None:
                    assert seen.direction == obj["direction"], (game, seed, obj["direction"], seen.direction)
                    checked += 1
    assert checked > 20


def test_snap_direction_reports_how_far_off_the_heading_is():
    assert snap_direction(44.0, SQUARE_HEADINGS) == ("NE", 1.0)
    assert snap_direction(359.0, SQUARE_HEADINGS) == ("N", 1.0)


def test_seats_run_clockwise_from_the_south():
    assert seat_bearings(4) == (180.0, 270.0, 0.0, 90.0)


def _icebomb_pairs(seeds: range):
    """(truth object, mapped piece) of Icebomb Arena scenes, with their seats' zones."""
    for seed in seeds:
        truth = _truth("icebomb-arena", seed)
        seats = len(truth["state"]["players"])
        obs = Mapper("icebomb-arena", MapperConfig(seats=seats)).map(truth_detections(truth), location_from_truth(truth))
        yield from zip(truth_objects(truth), obs.pieces)


def test_revealed_plans_beside_the_board_go_to_their_seats_zone():
    checked = 0
    for obj, seen in _icebomb_pairs(range(5)):
        if obj.get("zone", "").startswith("P"):
            assert seen.cell is None and seen.zone == obj["zone"]
            checked += 1
    assert checked > 10


def test_tokens_beside_the_board_are_on_the_table_not_in_a_seat_zone():
    checked = 0
    for obj, seen in _icebomb_pairs(range(40)):
        if obj["kind"] != "pyramid" and obj.get("zone") == "table":
            assert seen.cell is None and seen.zone is None and seen.where == "table"
            checked += 1
    assert checked >= 2


def test_a_larger_piece_rests_lower_on_a_smaller_ones_axis_and_the_rise_follows_the_sizes():
    assert stack_rise(Size.LARGE, Size.LARGE) < stack_rise(Size.LARGE, Size.MEDIUM) < stack_rise(Size.LARGE, Size.SMALL)
    assert stack_rise(Size.LARGE, Size.SMALL) < 44.5


def test_stacks_are_grouped_and_ordered_bottom_to_top():
    right = total = 0
    for game in ("ice-arena", "space-arena"):
        for seed in range(10):
            pairs, _ = _pairs(game, seed, directions=8)
            for obj, seen in pairs:
                if obj.get("level") is not None:
                    total += 1
                    right += seen.level == obj["level"]
    assert total > 50 and right / total > 0.9


def test_a_piece_on_a_stack_joins_it_over_pieces_the_detector_missed_in_between():
    # An Ice Arena bot is six pieces; the detector often finds its base and its top small but not
    # the pieces between, so the small rests higher on the base than it could directly.
    joined = total = 0
    for seed in range(8):
        truth = _truth("ice-arena", seed)
        objects, detections = truth_objects(truth), truth_detections(truth)
        missed = {k for k, o in enumerate(objects) if o.get("level") not in (None, 0) and o["level"] < 4}
        kept = [k for k in range(len(objects)) if k not in missed]
        obs = Mapper("ice-arena", MapperConfig(directions=8)).map([detections[k] for k in kept],
                                                                location_from_truth(truth))
        for k, seen in zip(kept, obs.pieces):
            if objects[k].get("level", 0) and objects[k]["level"] >= 4:
                total += 1
                joined += seen.stack is not None and seen.cell == objects[k]["cell"]
    assert total > 10 and joined / total >= 0.95  # 29 of 30; 22 when a piece could only rest right on the one below
    over_a_medium = stack_rise(Size.LARGE, Size.MEDIUM) + stack_rise(Size.MEDIUM, Size.SMALL)
    heights = rest_heights(Size.LARGE, Size.SMALL)
    assert min(heights) == pytest.approx(stack_rise(Size.LARGE, Size.SMALL), abs=0.01)
    assert any(h == pytest.approx(over_a_medium, abs=0.01) for h in heights)


def test_stacks_whose_apexes_are_out_of_sight_are_still_grouped_by_the_cameras_vertical():
    # A stack cut by the frame's top edge shows contact points but no apexes: the axis the stack
    # tests measure along comes from the camera the board's homography gives.
    right = total = 0
    for game in ("ice-arena", "space-arena"):
        for seed in range(10):
            truth = _truth(game, seed)
            detections = [replace(d, apex=None) if d.pose == Pose.UPRIGHT else d for d in truth_detections(truth)]
            obs = Mapper(game, MapperConfig(directions=8)).map(detections, location_from_truth(truth))
            for obj, seen in zip(truth_objects(truth), obs.pieces):
                if obj.get("level") is not None:
                    total += 1
                    right += seen.level == obj["level"]
                    assert seen.apex is None  # the estimate is not reported as seen
    assert total > 50 and right / total > 0.9


def test_icetowers_position_is_what_companion_score_reads_and_scores_match_the_truth():
    exact = 0
    for seed in range(10):
        truth = _truth("icetowers", seed)
        obs = map_truth("icetowers", truth)
        position = icetowers_position(obs)
        assert json.loads(json.dumps(position)) == position
        seen = score_observation(parse_observation(position))
        towers = [t["pieces"] for t in truth["state"]["towers"]] + [[p] for p in truth["state"]["lying"]]
        true = score_observation(parse_observation({"towers": towers}))
        exact += dict(seen.colour_scores) == dict(true.colour_scores) or {
            c: v for c, v in seen.colour_scores if v} == {c: v for c, v in true.colour_scores if v}
    assert exact >= 6


def _location():
    return location_from_truth(_truth("icebomb-arena", 0))


def test_a_point_near_a_cell_border_is_marked_unsure_not_guessed():
    loc = _location()
    cell = loc.spec.cell_mm
    f0, r0, _, _ = loc.spec.area_box
    on_line = loc.board_to_image(np.array([[(f0 + 1) * cell + 0.5, (r0 + 0.5) * cell]]))[0]
    middle = loc.board_to_image(np.array([[(f0 + 0.5) * cell, (r0 + 0.5) * cell]]))[0]
    pawn = lambda at: Detection("pawn", (at[0] - 5, at[1] - 20, at[0] + 5, at[1]), 0.9, "pawn", contact=tuple(at))
    obs = Mapper("icebomb-arena").map([pawn(on_line), pawn(middle)], loc)
    assert obs.pieces[0].unsure and "near the border" in obs.pieces[0].unsure[0]
    assert obs.pieces[1].cell == "a1" and not obs.pieces[1].unsure
    assert obs.unsure


def test_missing_keypoints_and_colour_are_unsure():
    loc = _location()
    d = Detection("pyramid", (10, 10, 30, 40), 0.9, "L-lying", size=Size.LARGE, pose=Pose.LYING)
    piece = Mapper("icebomb-arena").map([d], loc).pieces[0]
    assert "colour not read" in piece.unsure and "direction not seen" in piece.unsure
    assert piece.direction is None


def test_a_direction_from_an_estimated_end_is_given_and_marked_unsure():
    loc = _location()
    cell = loc.spec.cell_mm
    f0, r0, _, _ = loc.spec.area_box
    # A large lying in the middle of a cell, pointing along the files (east on the board).
    contact, apex = loc.board_to_image(np.array([[(f0 + 0.2) * cell, (r0 + 0.5) * cell],
                                                 [(f0 + 0.8) * cell, (r0 + 0.5) * cell]]))
    box = (min(contact[0], apex[0]) - 3, min(contact[1], apex[1]) - 6, max(contact[0], apex[0]) + 3,
           max(contact[1], apex[1]) + 6)

    def lying(seen):
        return Detection("pyramid", box, 0.9, "L-lying", Colour.RED, Size.LARGE, Pose.LYING,
                         apex=tuple(apex), contact=tuple(contact), keypoint_confidence=seen)

    sure = Mapper("icebomb-arena").map([lying((0.9, 0.9))], loc).pieces[0]
    estimated = Mapper("icebomb-arena").map([lying((ESTIMATED_END, 0.9))], loc).pieces[0]
    assert sure.direction is not None and estimated.direction == sure.direction
    assert "one end beyond the picture's edge: direction estimated" in estimated.unsure
    assert not any("direction" in note for note in sure.unsure)


def test_a_pyramid_found_with_little_confidence_is_marked_unsure():
    loc = _location()
    cell = loc.spec.cell_mm
    f0, r0, _, _ = loc.spec.area_box
    x, y = loc.board_to_image(np.array([[(f0 + 0.5) * cell, (r0 + 0.5) * cell]]))[0]
    d = Detection("pyramid", (x - 8, y - 30, x + 8, y), 0.9, "M-upright", colour=Colour.RED, size=Size.MEDIUM,
                  pose=Pose.UPRIGHT, apex=(x, y - 30), contact=(x, y - 2))
    mapper = Mapper("icebomb-arena", MapperConfig(check_sizes=False))
    [sure], [doubtful] = mapper.map([d], loc).pieces, mapper.map([replace(d, confidence=0.4)], loc).pieces
    assert sure.cell == doubtful.cell == "a1" and not sure.unsure
    assert doubtful.unsure == ("found with low confidence (0.40)",)


def test_low_confidence_detections_are_dropped():
    loc = _location()
    d = Detection("bead", (10, 10, 30, 40), 0.1, "bead")
    assert Mapper("icebomb-arena").map([d], loc).pieces == ()


def test_observation_json_round_trips():
    obs = map_truth("space-arena", _truth("space-arena", 3), config_for("space-arena"))
    data = json.loads(json.dumps(obs.to_json()))
    assert Observation.from_json(data).to_json() == data  # JSON keeps pixels to 0.1
    assert {"board", "pieces", "position", "unsure"} <= set(data)
    assert set(data["board"]) == {"kind", "corners", "confidence"}
    piece = data["pieces"][0]
    for key in ("colour", "size", "pose", "direction", "cell", "table_mm", "stack", "level", "box", "apex", "confidence"):
        assert key in piece



def test_a_size_misread_on_a_lone_piece_is_put_right_by_the_boards_geometry():

    one_off = {Size.SMALL: Size.MEDIUM, Size.MEDIUM: Size.LARGE, Size.LARGE: Size.MEDIUM}
    misread = restored = 0
    for seed in range(8):  # Icebomb Arena's pieces stand alone on their cells (stacks keep the detector's size)
        truth = _truth("icebomb-arena", seed)
        right = truth_detections(truth)
        wrong = [replace(d, size=one_off[d.size]) if d.kind == "pyramid" else d for d in right]
        location = location_from_truth(truth)
        as_read = Mapper("icebomb-arena", MapperConfig(check_sizes=False)).map(wrong, location)
        checked = Mapper("icebomb-arena").map(wrong, location)
        untouched = Mapper("icebomb-arena").map(right, location)
        for d, before, after, kept in zip(right, as_read.pieces, checked.pieces, untouched.pieces):
            if d.kind != "pyramid":
                continue
            assert kept.size == d.size  # a size read right is not changed
            assert before.size != d.size
            misread += 1
            restored += after.size == d.size
    # Not all: seen from straight above, a large turned square-on to the camera spans about what a
    # medium turned 45 degrees does, and the detector's reading is preferred when the boxes tie.
    assert misread >= 80 and restored >= 0.7 * misread, (restored, misread)


def test_in_icebomb_arena_a_piece_seen_twice_or_a_pawns_head_seen_as_a_pyramid_is_one_piece():
    loc = _location()
    large = Detection("pyramid", (942, 294, 971, 345), 0.8, "L-lying", Colour.BLUE, Size.LARGE, Pose.LYING)
    medium_again = Detection("pyramid", (946, 293, 969, 337), 0.6, "M-lying", Colour.BLUE, Size.MEDIUM, Pose.LYING)
    pawn = Detection("pawn", (692, 139, 717, 174), 0.88, "pawn")
    head = Detection("pyramid", (698, 138, 713, 160), 0.43, "S-upright", Colour.BLUE, Size.SMALL, Pose.UPRIGHT)
    seen = [large, medium_again, pawn, head]
    icebomb = Mapper("icebomb-arena", replace(config_for("icebomb-arena"), check_sizes=False)).map(seen, loc)
    assert sorted((p.kind, p.size or 0) for p in icebomb.pieces) == [("pawn", 0), ("pyramid", Size.LARGE)]
    # Where pieces nest (Zamboni Wars), overlapping pyramids are different pieces.
    zamboni = Mapper("zamboni-wars", replace(config_for("zamboni-wars"), check_sizes=False)).map(seen, loc)
    assert sum(p.kind == "pyramid" for p in zamboni.pieces) == 3


def test_a_token_stands_where_its_box_ends_and_is_not_unsure_for_lacking_keypoints():
    loc = _location()
    cell = loc.spec.cell_mm
    f0, r0, _, _ = loc.spec.area_box
    x, y = loc.board_to_image(np.array([[(f0 + 0.5) * cell, (r0 + 0.5) * cell]]))[0]
    pawn = Detection("pawn", (x - 6, y - 24, x + 6, y), 0.9, "pawn")  # the detector gives tokens no keypoints
    pyramid = Detection("pyramid", (x - 6, y - 24, x + 6, y), 0.9, "M-upright", Colour.RED, Size.MEDIUM, Pose.UPRIGHT)
    seen_pawn, seen_pyramid = (Mapper("icebomb-arena").map([d], loc).pieces[0] for d in (pawn, pyramid))
    assert seen_pawn.cell == "a1" and not seen_pawn.unsure
    assert seen_pyramid.cell == "a1" and "contact point not seen" in seen_pyramid.unsure
