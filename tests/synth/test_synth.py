"""Scene generator: geometry, game truth, labels against an independent projection, determinism."""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.pieces import BASE_MM, HEIGHT_MM, Colour, Direction, Pose, Size
from companion import geometry as geo
from companion.boards.hexgrid import HexDirection
from companion.synth.boards import HexBoard
from companion.synth.camera import Camera, look_at
from companion.synth.dataset import SPLITS, plan_item, write_dataset
from companion.synth.labels import sidecar, yolo_lines
from companion.synth.scene import D8, PYRAMID, Look, Scene, SceneObject
from companion.synth.scenes import GAMES, sample_scene
from companion.vision.classes import DEFAULT_SCHEME, SCHEMES, get_scheme


def _renderer():
    pytest.importorskip("moderngl")
    from companion.synth.render import Renderer

    try:
        return Renderer()
    except Exception as exc:  # no EGL on this machine
        pytest.skip(f"no headless GL context: {exc}")


@pytest.fixture(scope="module")
def renderer():
    return _renderer()


# --- geometry ---------------------------------------------------------------------------------

def test_a_tree_of_large_medium_small_is_much_shorter_than_their_heights_added():
    rise_m = geo.stack_rise(Size.LARGE, Size.MEDIUM)
    rise_s = geo.stack_rise(Size.MEDIUM, Size.SMALL)
    top = rise_m + rise_s + HEIGHT_MM[Size.SMALL]
    assert HEIGHT_MM[Size.LARGE] < top < 0.6 * sum(HEIGHT_MM.values())
    # The medium's rim meets the large's faces where the large is as wide as the rim's inside.
    width_there = BASE_MM[Size.LARGE] * (1 - rise_m / HEIGHT_MM[Size.LARGE])
    assert width_there == pytest.approx(BASE_MM[Size.MEDIUM] - 2 * geo.WALL_MM)


def test_a_trees_rims_sit_where_they_do_on_real_pieces():
    # Measured on the reference photograph of real trees (docs/synth.md, ruling 2): the medium's rim
    # at about 0.25-0.27 of a large-medium-small tree's height, the small's at 0.55. A thin rim
    # (0.8 mm, before session 18) nests the pieces so deep that a tree looks like a lone large.
    rise_m = geo.stack_rise(Size.LARGE, Size.MEDIUM)
    rise_s = geo.stack_rise(Size.MEDIUM, Size.SMALL)
    top = rise_m + rise_s + HEIGHT_MM[Size.SMALL]
    assert 0.25 <= rise_m / top <= 0.29
    assert 0.53 <= (rise_m + rise_s) / top <= 0.57


def test_a_larger_piece_cannot_rest_on_a_smaller_one_and_nests_only_inside_larger():
    with pytest.raises(ValueError, match="cannot rest on a small"):
        geo.stack_rise(Size.SMALL, Size.MEDIUM)
    with pytest.raises(ValueError, match="does not nest"):
        geo.nest_rise(Size.MEDIUM, Size.MEDIUM)
    assert 0 < geo.nest_rise(Size.LARGE, Size.MEDIUM) < geo.stack_rise(Size.LARGE, Size.MEDIUM)


@pytest.mark.parametrize("size", list(Size))
@pytest.mark.parametrize("heading", [0, 45, 90, 135, 180, 225, 270, 315, 17.5])
def test_a_lying_piece_rests_on_one_face_with_its_apex_towards_the_heading(size, heading):
    pose = geo.lying_pose(size, 100.0, 50.0, 3.0, heading)
    corners = geo.apply(pose, geo.pyramid_corners(size))
    assert corners[:, 2].min() == pytest.approx(3.0, abs=1e-9)
    on_table = np.isclose(corners[:, 2], 3.0, atol=1e-9)
    assert on_table.sum() == 3 and on_table[4]  # two base corners and the apex
    apex, contact = geo.pyramid_keypoints(size, True, pose)
    assert contact == pytest.approx([100.0, 50.0, 3.0])
    assert geo.heading_of(apex[0] - contact[0], apex[1] - contact[1]) == pytest.approx(heading % 360, abs=1e-6)


# --- scenes and game truth ---------------------------------------------------------------------

def _footprint_centre(obj: SceneObject) -> tuple[float, float]:
    """Where a piece stands: its base centre, or for a lying piece midway along the face on the table."""
    apex, contact = obj.keypoints()
    if obj.kind == PYRAMID and obj.piece_pose is Pose.LYING:
        return (apex[0] + contact[0]) / 2, (apex[1] + contact[1]) / 2
    return contact[0], contact[1]


@pytest.mark.parametrize("seed", range(60))
def test_the_capping_rule_holds_in_every_tower(seed):
    scene = sample_scene("icetowers", seed)
    towers: dict[int, list[SceneObject]] = {}
    for obj in scene.objects:
        if obj.kind == PYRAMID and obj.piece_pose is Pose.UPRIGHT:
            towers.setdefault(obj.stack if obj.stack is not None else -id(obj), []).append(obj)
    assert towers
    for pieces in towers.values():
        pieces.sort(key=lambda o: o.level or 0)
        assert 1 <= len(pieces) <= 5
        for lower, upper in zip(pieces, pieces[1:]):
            assert upper.size <= lower.size and upper.colour != lower.colour
            rise = upper.pose[2, 3] - lower.pose[2, 3]
            assert rise == pytest.approx(geo.stack_rise(lower.size, upper.size))
    listed = sorted(len(t["pieces"]) for t in scene.state["towers"])
    assert listed == sorted(len(p) for k, p in towers.items() if k >= 0 or len(p) == 1)


@pytest.mark.parametrize("game", [g for g in GAMES if g != "icetowers"])
@pytest.mark.parametrize("seed", range(25))
def test_cells_and_directions_agree_with_the_geometry(game, seed):
    scene = sample_scene(game, seed)
    board = scene.board
    placed = 0
    for obj in scene.objects:
        if obj.cell is None or obj.nested_in is not None:
            continue
        placed += 1
        assert board.cell_at(*_footprint_centre(obj)) == obj.cell, (obj.kind, obj.cell)
        if obj.kind == PYRAMID and obj.piece_pose is Pose.LYING:
            apex, contact = obj.keypoints()
            seen = geo.heading_of(apex[0] - contact[0], apex[1] - contact[1])
            if isinstance(board, HexBoard):
                expected = board.heading(HexDirection(obj.direction))
            else:
                expected = Direction(obj.direction).degrees
            assert abs((seen - expected + 180) % 360 - 180) < 1e-6
    assert placed > 0


@pytest.mark.parametrize("seed", range(20))
def test_the_scene_matches_its_game_state(seed):
    bomb = sample_scene("icebomb-arena", seed)
    by_cell = {}
    for obj in bomb.objects:
        if obj.cell is not None:
            by_cell.setdefault(obj.cell, []).append(obj)
    assert set(by_cell) == set(bomb.state["cells"])
    for cell, what in bomb.state["cells"].items():
        (obj,) = by_cell[cell]  # one thing per arena cell
        kind = {"bomb": "bead", "gladiator": "pawn", "block": "pyramid"}[next(iter(what))]
        assert obj.kind == kind
        if kind == "pyramid":
            assert f"{obj.colour.value}-{obj.size.letter}" == what["block"] and obj.piece_pose is Pose.UPRIGHT
    files, ranks = (int(v) for v in bomb.state["arena"].split("x"))
    assert (bomb.board.area[2], bomb.board.area[3]) == (files, ranks)

    zamboni = sample_scene("zamboni-wars", seed)
    for player, z in zamboni.state["zambonis"].items():
        nest = [o for o in zamboni.objects if o.owner == player]
        assert [o.size.letter for o in nest] == z["armour"]
        assert {o.cell for o in nest} == {z["cell"]} and {o.direction for o in nest} == {z["facing"]}
        assert all(o.colour.value == z["colour"] and o.piece_pose is Pose.LYING for o in nest)

    arena = sample_scene("space-arena", seed)
    for player, ship in arena.state["ships"].items():
        pieces = [o for o in arena.objects if o.owner == player and o.kind == PYRAMID]
        assert {o.cell for o in pieces} == {ship["cell"]}
        if ship.get("lying"):
            # A lying ship is one pyramid; its height is what the d8 beside it shows, if it has one.
            dice = [o for o in arena.objects if o.kind == D8 and o.cell == ship.get("height_die")]
            assert len(pieces) == 1 and ship["height"] == (dice[0].value if dice else 1)
        else:
            assert len(pieces) == ship["height"]
        assert {o.colour.value for o in pieces} == {ship["colour"]}


def test_an_unknown_game_is_named_in_the_error():
    with pytest.raises(ValueError, match="'chess'"):
        sample_scene("chess", 1)


# --- labels ------------------------------------------------------------------------------------

def _independent_projection(camera_json: dict, points: np.ndarray) -> np.ndarray:
    k = np.array([[camera_json["fx"], 0, camera_json["cx"]], [0, camera_json["fy"], camera_json["cy"]], [0, 0, 1]])
    rvec, _ = cv2.Rodrigues(np.array(camera_json["R"]))
    px, _ = cv2.projectPoints(np.asarray(points, float), rvec, np.array(camera_json["t"], float), k, None)
    return px.reshape(-1, 2)


@pytest.mark.parametrize("game", GAMES)
def test_labels_agree_with_an_independent_projection(game):
    scene = sample_scene(game, 11)
    truth = json.loads(json.dumps(sidecar(scene)))  # exactly what a sidecar file holds
    w, h = truth["image"]["width"], truth["image"]["height"]
    checked = 0
    for obj in truth["objects"]:
        if obj.get("box_px") is None:
            continue
        expected = _independent_projection(truth["camera"], [obj["apex_mm"], obj["contact_mm"]])
        assert obj["apex_px"] == pytest.approx(list(expected[0]), abs=0.02)
        assert obj["contact_px"] == pytest.approx(list(expected[1]), abs=0.02)
        checked += 1
    assert checked > 0
    lines = yolo_lines(truth)
    labelled = [o for o in truth["objects"] if o.get("box_px") and o["kind"] in ("pyramid", "pawn", "bead", "d6", "d8")]
    assert len(lines) == len(labelled)
    for line, obj in zip(lines, labelled):
        v = [float(x) for x in line.split()]
        x0, y0, x1, y1 = obj["box_px"]
        assert v[1] * w == pytest.approx((x0 + x1) / 2, abs=1e-3) and v[3] * w == pytest.approx(x1 - x0, abs=1e-3)
        if v[7]:
            assert (v[5] * w, v[6] * h) == pytest.approx(tuple(obj["apex_px"]), abs=1e-3)
    if truth["board"] is not None and "corners_mm" in truth["board"]:
        z = truth["board"]["plane_z_mm"]
        corners = [[x, y, z] for x, y in truth["board"]["corners_mm"]]
        assert np.allclose(truth["board"]["corners_px"], _independent_projection(truth["camera"], corners), atol=0.02)


def _single_piece_scene(colour: Colour, size: Size, lying: bool) -> Scene:
    pose = geo.lying_pose(size, -20, 0, 0, 60) if lying else geo.upright_pose(0, 0, 0, 20)
    obj = SceneObject(PYRAMID, pose, colour=colour, size=size, piece_pose=Pose.LYING if lying else Pose.UPRIGHT)
    r, t = look_at(np.array([60.0, -180.0, 260.0]), np.array([0.0, 0.0, 10.0]))
    camera = Camera(320, 240, 300.0, 300.0, 160.0, 120.0, tuple(map(tuple, r)), tuple(t))
    look = Look((0.3, 0.2, 0.93), (1, 1, 1), 0.5, 2.0, 0, "white", (1, 1, 1), 0, 0.6, 1.0, (1, 1, 1), 0.0, 0.0, 95, 0.0)
    return Scene("test", 0, None, [obj], camera, look)


@pytest.mark.parametrize("lying", [False, True])
def test_rendered_pixels_fill_the_labelled_box(renderer, lying):
    scene = _single_piece_scene(Colour.RED, Size.LARGE, lying)
    out = renderer.render(scene)
    truth = sidecar(scene, out.ids)
    obj = truth["objects"][0]
    ys, xs = np.nonzero(out.ids == 1)
    x0, y0, x1, y1 = obj["box_px"]
    assert abs(xs.min() - x0) <= 1.5 and abs(xs.max() + 1 - x1) <= 1.5
    assert abs(ys.min() - y0) <= 1.5 and abs(ys.max() + 1 - y1) <= 1.5
    assert obj["visible_fraction"] == pytest.approx(1.0, abs=0.05)
    assert obj["apex_visibility"] == 2 and obj["contact_visibility"] == 2
    # The piece reads as red plastic: redder than the white table around it.
    piece = out.image[out.ids == 1].astype(float).mean(axis=0)
    table = out.image[out.ids == 0].astype(float).mean(axis=0)
    assert piece[0] - piece[1] > 40 and table[0] - table[1] < 15



@pytest.mark.parametrize("value", range(1, 7))
def test_a_d6_shows_its_value_on_top_and_still_rests_on_the_table(value):
    from companion.synth.meshes import d6
    from companion.synth.scene import D6
    from companion.synth.scenes import _Builder

    die = _Builder(np.random.default_rng(0), 0.0).token(D6, 40.0, -20.0, 3.0, (0.9, 0.9, 0.9), yaw=25.0,
                                                        scale=1.2, value=value)
    rows = d6()
    world = geo.apply(die.matrix, rows[:, :3])
    top = world[rows[:, -1] == 10 + value]
    assert np.allclose(top[:, 2], world[:, 2].max())  # the face carrying `value` pips is the highest
    assert world[:, 2].min() == pytest.approx(3.0)  # and the die rests on the surface it was put on
    apex, contact = die.keypoints()
    assert contact[2] == pytest.approx(3.0) and apex[2] == pytest.approx(3.0 + 15.0 * 1.2)
    assert die.truth()["value"] == value
    with pytest.raises(ValueError, match="1 to 6"):
        _Builder(np.random.default_rng(0), 0.0).token(D6, 0.0, 0.0, 0.0, (1, 1, 1), value=7)

def test_a_piece_under_another_is_partly_hidden_and_its_apex_is_covered(renderer):
    scene = _single_piece_scene(Colour.BLUE, Size.LARGE, False)
    lower = scene.objects[0]
    upper_pose = lower.pose @ geo.translation(0, 0, geo.stack_rise(Size.LARGE, Size.MEDIUM))
    scene.objects.append(SceneObject(PYRAMID, upper_pose, colour=Colour.YELLOW, size=Size.MEDIUM,
                                     piece_pose=Pose.UPRIGHT, stack=0, level=1))
    out = renderer.render(scene)
    truth = sidecar(scene, out.ids)
    below, above = truth["objects"]
    assert below["visible_fraction"] < 0.8 and above["visible_fraction"] > 0.95
    assert below["apex_visibility"] == 1 and above["apex_visibility"] == 2


# --- determinism -------------------------------------------------------------------------------

def test_the_same_seed_gives_the_same_scene_and_a_different_seed_another():
    a = json.dumps(sidecar(sample_scene("ice-arena", 5)), sort_keys=True)
    b = json.dumps(sidecar(sample_scene("ice-arena", 5)), sort_keys=True)
    c = json.dumps(sidecar(sample_scene("ice-arena", 6)), sort_keys=True)
    assert a == b and a != c


def test_the_same_seed_gives_the_same_image(renderer):
    scene_a, scene_b = sample_scene("zamboni-wars", 3, 160, 120), sample_scene("zamboni-wars", 3, 160, 120)
    first = renderer.render(scene_a)
    renderer.render(sample_scene("icetowers", 9, 160, 120))  # state left behind must not leak
    second = renderer.render(scene_b)
    assert np.array_equal(first.image, second.image) and np.array_equal(first.ids, second.ids)


def test_items_are_planned_from_the_seed_alone():
    assert plan_item(4, 17) == plan_item(4, 17)
    plans = [plan_item(4, i) for i in range(2000)]
    counts = {s: sum(p.split == s for p in plans) for s in SPLITS}
    assert 1450 < counts["train"] < 1750 and 120 < counts["val"] < 280 and 120 < counts["test"] < 280
    assert [p.game for p in plans[:5]] == list(GAMES)


def test_a_referee_share_frames_that_share_of_items_and_changes_nothing_else():
    plain = [plan_item(4, i) for i in range(1000)]
    mixed = [plan_item(4, i, referee_share=0.3) for i in range(1000)]
    assert {p.framing for p in plain} == {"free"}
    assert 230 < sum(p.framing == "referee" for p in mixed) < 370
    assert [(p.game, p.seed, p.split) for p in mixed] == [(p.game, p.seed, p.split) for p in plain]
    with pytest.raises(ValueError, match="referee share"):
        write_dataset(Path("/nonexistent/never-written"), 1, referee_share=1.5)


# --- classes and the dataset writer ----------------------------------------------------------------

def test_the_default_class_scheme_has_one_class_per_colour_size_pose_then_tokens():
    names = DEFAULT_SCHEME.names
    assert len(names) == 64 and len(set(names)) == 64
    assert names[-4:] == ("pawn", "bead", "d6", "d8")
    cid = DEFAULT_SCHEME.class_id("pyramid", Colour.CLEAR, Size.SMALL, Pose.LYING)
    assert names[cid] == "clear-S-lying"
    decoded = DEFAULT_SCHEME.decode(cid)
    assert (decoded.colour, decoded.size, decoded.pose) == (Colour.CLEAR, Size.SMALL, Pose.LYING)
    assert DEFAULT_SCHEME.class_id("hand") is None
    assert get_scheme("size-pose").class_id("pyramid", Colour.RED, Size.LARGE, Pose.UPRIGHT) == \
        get_scheme("size-pose").class_id("pyramid", Colour.BLUE, Size.LARGE, Pose.UPRIGHT)
    with pytest.raises(ValueError, match="class id 64"):
        DEFAULT_SCHEME.decode(64)
    with pytest.raises(ValueError, match="'nope'"):
        get_scheme("nope")


def test_the_dataset_writer_resumes_and_labels_can_be_regenerated(renderer, tmp_path):
    summary = write_dataset(tmp_path, 3, seed=2, width=160, height=120, workers=1, progress=False)
    assert summary["rendered"] == 3
    yaml = (tmp_path / "data.yaml").read_text()
    assert "kpt_shape: [2, 3]" in yaml and "  63: d8" in yaml and "train: images/train" in yaml
    truths = sorted(tmp_path.glob("truth/*/*.json"))
    assert len(truths) == 3 and len(list(tmp_path.glob("images/*/*.jpg"))) == 3
    for path in truths:
        label = tmp_path / "labels" / path.parent.name / (path.stem + ".txt")
        assert label.read_text().splitlines() == yolo_lines(json.loads(path.read_text()))
    truths[0].unlink()
    again = write_dataset(tmp_path, 3, seed=2, width=160, height=120, workers=1, progress=False)
    assert (again["rendered"], again["skipped"]) == (1, 2)
    from companion.synth.labels import relabel

    assert relabel(tmp_path, SCHEMES["size-pose"]) == 3
    for path in tmp_path.glob("labels/*/*.txt"):
        assert all(int(line.split()[0]) < len(SCHEMES["size-pose"].names) for line in path.read_text().splitlines())


def test_the_apex_of_a_piece_carrying_another_can_be_labelled_unseen():
    from companion.synth.labels import carrying

    truth = sidecar(sample_scene("ice-arena", 3, 640, 480), None)  # bots: stacks of six
    objects = truth["objects"]
    carriers = carrying(objects)
    tops = {o["stack"]: max(q["level"] for q in objects if q.get("stack") == o["stack"])
            for o in objects if o.get("stack") is not None}
    assert carriers and all(objects[i]["level"] < tops[objects[i]["stack"]] for i in carriers)
    assert all(o["level"] == tops[o["stack"]] for i, o in enumerate(objects)
               if o.get("stack") is not None and o.get("pose") == "upright" and i not in carriers)
    plain, hidden = yolo_lines(truth), yolo_lines(truth, carried_apex_hidden=True)
    labelled = [i for i, o in enumerate(objects) if o.get("box_px") and o.get("visible_fraction", 0) >= 0.15
                and o["kind"] in ("pyramid", "pawn", "bead", "d6", "d8")]
    assert len(plain) == len(hidden) == len(labelled)
    for i, a, b in zip(labelled, plain, hidden):
        a, b = a.split(), b.split()
        if i in carriers:
            assert b[5:8] == ["0.000000", "0.000000", "0"] and a[7] != "0" and a[8:] == b[8:]
        else:
            assert a == b


def test_drawn_coasters_show_the_shared_layout_with_the_scene_colours():
    from companion.boards.coasters import Quadrant, martian_coasters

    scene = sample_scene("zamboni-wars", 4)
    layout = scene.board.layout
    assert layout is not None and layout.dots_meet_at_centre
    assert layout is martian_coasters(colours={q: layout.colour(q) for q in Quadrant})  # the shared instance
    near_left, near_right, far_left, far_right = scene.state["coaster_colours"]
    assert (layout.colour(Quadrant.BOTTOM_LEFT).value, layout.colour(Quadrant.BOTTOM_RIGHT).value,
            layout.colour(Quadrant.TOP_LEFT).value, layout.colour(Quadrant.TOP_RIGHT).value) == \
        (near_left, near_right, far_left, far_right)
    # The sidecar's exits are the equipment table's rows, top rank first.
    assert scene.state["exits"][0] == "RDL URDL URL UDL URL UDL".split()
    assert sidecar(scene)["board"]["coasters"]["top-left"]["colour"] == far_left


@pytest.mark.parametrize("radius", [3, 5])
def test_hex_cells_on_the_table_step_as_the_shared_grid_says(radius):
    board = HexBoard(radius, 28.0, 10.0, 2.0)
    grid = board.grid
    assert board.grid is hex_grid_of(radius)
    spacing = 28.0 * math.sqrt(3)
    for cell in grid.cells:
        x, y = board.centre_of(cell)
        assert board.cell_at(x, y) == grid.name(cell)
        # Half-way to a corner is still inside; a neighbour's centre is one spacing away.
        assert board.cell_at(x + 0.45 * 28.0, y) == grid.name(cell)
        for direction in HexDirection:
            hx, hy = geo.heading_vector(board.heading(direction))
            stepped = grid.step(cell, direction)
            seen = board.cell_at(x + hx * spacing, y + hy * spacing)
            assert (grid.name(stepped) if stepped is not None else None) == seen
    # Headings: E is east, and the six are 60 degrees apart anticlockwise as hexgrid turns them.
    assert board.heading(HexDirection.E) == pytest.approx(90.0)
    for direction in HexDirection:
        turned = board.heading(direction.turned(1))
        assert (board.heading(direction) - turned) % 360 == pytest.approx(60.0)


def hex_grid_of(radius: int):
    from companion.boards.hexgrid import hex_grid

    return hex_grid(radius)


@pytest.mark.parametrize("seed", range(10))
def test_close_up_views_are_near_and_low_with_every_piece_on_the_table(seed):
    from companion.synth.scenes import SCENE_KINDS

    assert "close-up" in SCENE_KINDS and "close-up" not in GAMES  # a training view, not a game
    scene = sample_scene("close-up", seed)
    cam = scene.camera
    centre = np.mean([obj.truth()["contact_mm"] for obj in scene.objects if obj.kind == PYRAMID], axis=0)
    position = cam.position
    distance = float(np.linalg.norm(position - centre))
    view = np.asarray(cam.R).T @ np.array([0.0, 0.0, 1.0])  # the optical axis in table coordinates
    tilt = math.degrees(math.acos(-view[2]))
    assert 100 < distance < 700 and 28 < tilt < 82
    truth = json.loads(json.dumps(sidecar(scene)))
    assert truth["board"] is None and len(yolo_lines(truth)) > 0


# --- referee framing ---------------------------------------------------------------------------

@pytest.mark.parametrize("game", [g for g in GAMES if g != "icetowers"])
def test_referee_framing_keeps_the_table_and_shows_the_whole_board(game):
    in_view, filled = 0, []
    for seed in range(20):
        free, framed = sample_scene(game, seed, 1280, 720), sample_scene(game, seed, 1280, 720, "referee")
        assert framed.board == free.board and len(framed.objects) == len(free.objects)
        assert all(np.array_equal(a.pose, b.pose) for a, b in zip(framed.objects, free.objects))
        outline = np.array([(x, y, framed.board.thickness_mm) for x, y in framed.board.outline()])
        px = _independent_projection(json.loads(json.dumps(sidecar(framed)))["camera"], outline)
        in_view += bool(px.min() >= 0 and px[:, 0].max() < 1280 and px[:, 1].max() < 720)
        filled.append(float(np.ptp(px, axis=0).max()) / 720)
    # A stand-mounted camera: the whole board nearly always, and not a speck in the middle.
    assert in_view >= 18 and np.median(filled) > 0.6


def test_icetowers_has_no_board_so_referee_framing_changes_nothing():
    assert sidecar(sample_scene("icetowers", 4, framing="referee")) == sidecar(sample_scene("icetowers", 4))


def test_an_unknown_framing_is_named_in_the_error():
    with pytest.raises(ValueError, match="'aerial'"):
        sample_scene("ice-arena", 1, framing="aerial")
