"""The bundled demo: the sample Icebomb Arena record rendered event by event, as a webcam on a stand sees it.

One fixed camera (about 0.75 m from the board, tilted 28 degrees from straight down, 1280x720), one
look for the whole game, an 8x8 chessboard, a pawn per gladiator, glass-bead bombs, upright blocks,
and, during the Action Phase, each gladiator's unused plan pyramids in front of their seat. When an
event changes what the table shows, a hand passes over the board for a few frames first; then the
new position is held for a few calm frames. An event that changes nothing visible (a secret bid or
plan) gets calm frames only.

Output (a folder, small enough to commit): `frames/NNNNN.jpg`, one file per distinct image (calm
frames of one position repeat the same file), and `index.json`: the record, the camera, the board,
and per frame its file, the event it shows (0 = the start, k = after the record's k-th verdict) and
whether a hand is in view. Everything follows from the seed.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from companion.games.icebomb_arena import IcebombState, Phase
from companion.pieces import Colour, Pose, Size
from companion.records import read_record, replay
from companion import geometry as geo
from companion.synth.boards import SquareBoard
from companion.synth.camera import Camera, look_at
from companion.synth.scene import BEAD, HAND, PAWN, Look, Scene, SceneObject
from companion.synth.scenes import _Builder

RECORD = Path(__file__).resolve().parent.parent / "data" / "samples" / "icebomb-arena-4p.jsonl"
OUT = Path(__file__).resolve().parent.parent / "data" / "demo"
WIDTH, HEIGHT = 1280, 720
COLOURS = (Colour.RED, Colour.YELLOW, Colour.GREEN, Colour.BLUE)  # seat p plays COLOURS[p]
PAWN_TINTS = ((0.75, 0.1, 0.1), (0.9, 0.75, 0.1), (0.1, 0.5, 0.2), (0.1, 0.2, 0.7))
BOARD = SquareBoard("chessboard", 8, 8, 44.45, 15.0, 3.0, (0, 0, 8, 8))
SEAT_GAP_MM = 70.0  # from the board's edge to the middle of a seat's plan pyramids
CALM_FRAMES = 2
HAND_FRAMES = 3
SHOWN_PHASES = (Phase.ACTION, Phase.PAY, Phase.OVER)  # when the plans lie revealed on the table


@dataclass(frozen=True)
class DemoFrame:
    """One frame of the demo: the image file, the event whose position it shows, a hand in view."""

    frame: int
    file: str
    event: int
    hand: bool

    def to_json(self) -> dict:
        return {"frame": self.frame, "file": self.file, "event": self.event, "hand": self.hand}


def demo_camera(width: int = WIDTH, height: int = HEIGHT) -> Camera:
    """The fixed webcam: on a stand at the south seat's side, 0.72 m from a point 40 mm south of the
    board's centre, 25 degrees from straight down, 72 degrees of horizontal view; all four seats'
    plan zones are in view."""
    cx, cy = BOARD.centre
    tilt, distance = math.radians(25), 720.0
    target = np.array([cx, cy - 40, BOARD.thickness_mm])
    eye = target + distance * np.array([0.0, -math.sin(tilt), math.cos(tilt)])
    r, t = look_at(eye, target)
    fx = (width / 2) / math.tan(math.radians(72) / 2)
    return Camera(width, height, fx, fx, width / 2, height / 2, tuple(map(tuple, r)), tuple(map(float, t)))


def demo_look() -> Look:
    """Warm indoor light from the upper left, a plain light table, a green-and-cream board (a plain
    table keeps the committed JPEGs small: wood grain costs a third more)."""
    return Look(light_dir=(-0.45, 0.3, 0.84), light_colour=(1.06, 1.0, 0.9), ambient=0.45, shadow_softness=2.5,
                table_texture=2, table_kind="plain", table_tint=(1.0, 1.0, 1.0), board_style=0, piece_alpha=0.55,
                exposure=1.0, white_balance=(1.02, 1.0, 0.97), blur_sigma=0.0, noise_sigma=1.0, jpeg_quality=48,
                vignette=0.12)


def seat_point(seat: int, seats: int = 4) -> tuple[float, float, float]:
    """(x, y, bearing) of a seat's plan zone, clockwise from the south (the mapper's seat zones)."""
    bearing = (180 + 360 * seat / seats) % 360
    cx, cy = BOARD.centre
    reach = BOARD.width_mm / 2 + BOARD.border_mm + SEAT_GAP_MM
    return cx + reach * math.sin(math.radians(bearing)), cy + reach * math.cos(math.radians(bearing)), bearing


def _wobble(seed: int, *key) -> np.random.Generator:
    """A generator fixed by what a thing is and where it stands, so an unmoved piece stays put."""
    digest = hashlib.sha256(repr((seed, key)).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def shows_plans(state: IcebombState) -> bool:
    return state.phase in SHOWN_PHASES


def table_objects(state: IcebombState, seed: int = 0) -> list[SceneObject]:
    """The pieces on the table for a position: pawns, bombs, blocks and revealed plans."""
    b = _Builder(np.random.default_rng(seed), BOARD.thickness_mm)
    z = BOARD.thickness_mm
    grid = state.grid
    nudge = BOARD.cell_mm * 0.06

    def at(cell: int, *key) -> tuple[float, float]:
        x, y = BOARD.centre_of(cell)
        dx, dy = _wobble(seed, cell, *key).normal(0, nudge, 2)
        return x + float(dx), y + float(dy)

    for p, cell in enumerate(state.gladiators):
        if cell is not None and state.alive[p]:
            b.token(PAWN, *at(cell, "pawn", p), z, PAWN_TINTS[p], yaw=0.0, cell=grid.name(cell), owner=f"P{p + 1}")
    for cell in sorted(state.bombs):
        b.token(BEAD, *at(cell, "bomb"), z, (0.82, 0.9, 0.95), yaw=float(_wobble(seed, cell, "yaw").uniform(0, 360)),
                translucent=True, cell=grid.name(cell))
    for cell, block in enumerate(state.blocks):
        if block is not None:
            owner, size = block
            x, y = at(cell, "block", owner, size)
            pose = geo.upright_pose(x, y, z, float(_wobble(seed, cell, "block-yaw").uniform(0, 90)))
            b.add(SceneObject("pyramid", pose, colour=COLOURS[owner], size=Size(size), piece_pose=Pose.UPRIGHT,
                              cell=grid.name(cell), owner=f"P{owner + 1}"))
    if shows_plans(state):
        for p, hand in enumerate(state.hands):
            if not hand or not state.alive[p]:
                continue
            sx, sy, bearing = seat_point(p)
            across = (math.cos(math.radians(bearing)), -math.sin(math.radians(bearing)))
            for k, planned in enumerate(hand):
                offset = (k - (len(hand) - 1) / 2) * 50
                x, y = sx + across[0] * offset, sy + across[1] * offset
                if planned.direction is None:
                    b.upright(COLOURS[p], planned.size, x, y, 0.0, zone=f"P{p + 1}", owner=f"P{p + 1}")
                else:
                    b.lying(COLOURS[p], planned.size, x, y, 0.0, BOARD.heading(planned.direction),
                            direction=planned.direction.value, zone=f"P{p + 1}", owner=f"P{p + 1}")
    return b.objects


def hand_object(at: tuple[float, float], height: float, reach_deg: float) -> SceneObject:
    """A hand and forearm reaching along `reach_deg` (compass) with the palm over `at`."""
    pose = geo.translation(at[0], at[1], height) @ geo.rotation_z(-math.radians(reach_deg)) @ geo.rotation_x(
        math.radians(-8))
    return SceneObject(HAND, pose, tint=(0.86, 0.66, 0.52), scale=(1.05, 1.05, 1.05))


def hand_path(actor: int | None, target: tuple[float, float], frames: int = HAND_FRAMES) -> list[tuple[tuple[float, float], float, float]]:
    """(palm position, height, reach heading) for each hand frame: in from the actor's seat over
    `target`, then back out."""
    if actor is None:
        actor = 0
    sx, sy, bearing = seat_point(actor)
    reach = (bearing + 180) % 360  # from the seat towards the board
    out = []
    for k in range(frames):
        t = (0.55, 1.0, 0.45, 0.8)[k % 4]
        x, y = sx + (target[0] - sx) * t, sy + (target[1] - sy) * t
        out.append(((x, y), 120.0 + 40.0 * (1 - t), reach))
    return out


def _visible(state: IcebombState) -> tuple:
    return (state.gladiators, state.bombs, state.blocks, state.alive,
            tuple(state.hands) if shows_plans(state) else None)


def _changed_cell(before: IcebombState, after: IcebombState) -> tuple[float, float]:
    """Where the hand goes: a cell whose contents changed, else the board centre."""
    for cell in after.grid.cells:
        was = (cell in before.bombs, before.blocks[cell], cell in before.gladiators)
        now = (cell in after.bombs, after.blocks[cell], cell in after.gladiators)
        if was != now:
            return BOARD.centre_of(cell)
    return BOARD.centre


def plan_demo(record: Path = RECORD) -> tuple[list[dict], list[IcebombState]]:
    """The record's verdicts (as dicts) and the positions: positions[k] is the table after verdict k,
    positions[0] the start."""
    header, events = read_record(record)
    positions = [header.initial_state()]
    verdicts = []
    for verdict, state in replay(header, events):
        verdicts.append({"event": len(positions), "line": verdict.line, "action": verdict.action,
                         "legal": verdict.legal})
        positions.append(state)
    return verdicts, positions


def _actor(action: str) -> int | None:
    return int(action[1]) - 1 if action.startswith("P") and action[1:2].isdigit() else None


def make_demo(out: Path = OUT, record: Path = RECORD, seed: int = 0, width: int = WIDTH, height: int = HEIGHT,
              limit: int | None = None, progress: bool = True) -> dict:
    """Renders the demo into `out` (one renderer, this process); returns the index it wrote.

    Args:
        limit: render only the first `limit` events (for a quick look).
    """
    from companion.synth.render import Renderer, encode_jpeg

    verdicts, positions = plan_demo(record)
    if limit is not None:
        verdicts, positions = verdicts[:limit], positions[:limit + 1]
    frames_dir = out / "frames"
    frames_dir.mkdir(parents=True, exist_ok=True)
    for old in frames_dir.glob("*.jpg"):
        old.unlink()
    renderer = Renderer()
    camera, look = demo_camera(width, height), demo_look()
    frames: list[DemoFrame] = []
    files = 0
    started = time.monotonic()

    def render(objects: list[SceneObject], hand: bool) -> str:
        nonlocal files
        scene = Scene("icebomb-arena", seed, BOARD, objects, camera, look, {})
        image = renderer.render(scene).image
        quality = look.jpeg_quality - (26 if hand else 0)
        if hand:  # a webcam smears a frame with a moving hand in it (and it keeps the demo small)
            import cv2

            image = cv2.GaussianBlur(image, (0, 0), 3.0)
        name = f"{files:05d}.jpg"
        (frames_dir / name).write_bytes(encode_jpeg(image, quality))
        files += 1
        return name

    def calm(event: int, state: IcebombState) -> None:
        name = render(table_objects(state, seed), False)
        for _ in range(CALM_FRAMES):
            frames.append(DemoFrame(len(frames), name, event, False))

    calm(0, positions[0])
    for verdict in verdicts:
        k = verdict["event"]
        before, after = positions[k - 1], positions[k]
        if _visible(before) == _visible(after):
            frames.extend(DemoFrame(len(frames), frames[-1].file, k, False) for _ in range(CALM_FRAMES))
            continue
        target = _changed_cell(before, after)
        for step, (palm, lift, reach) in enumerate(hand_path(_actor(verdict["action"]), target)):
            shown = before if step == 0 else after  # the piece moves under the hand
            objects = table_objects(shown, seed) + [hand_object(palm, lift, reach)]
            frames.append(DemoFrame(len(frames), render(objects, True), k - (step == 0), True))
        calm(k, after)
        if progress:
            elapsed = time.monotonic() - started
            print(f"\revent {k}/{len(verdicts)}: {files} images in {elapsed:.0f} s", end="", flush=True)
    if progress:
        print()
    index = {"format": "icehouse-demo/1", "record": str(record.relative_to(out.parent.parent.parent))
             if record.is_relative_to(out.parent.parent.parent) else str(record),
             "game": "icebomb-arena", "seed": seed, "image": {"width": width, "height": height},
             "camera": camera.to_json(), "board": BOARD.to_json(),
             "colours": {f"P{p + 1}": c.value for p, c in enumerate(COLOURS)},
             "calm_frames": CALM_FRAMES, "hand_frames": HAND_FRAMES, "events": verdicts,
             "frames": [f.to_json() for f in frames], "files": files,
             "render_seconds": round(time.monotonic() - started, 1)}
    (out / "index.json").write_text(json.dumps(index, indent=None, separators=(",", ":")) + "\n")
    return index


def read_index(out: Path = OUT) -> dict:
    """The demo's index (see the module docstring); ValueError naming the folder when it is missing."""
    path = Path(out) / "index.json"
    if not path.exists():
        raise ValueError(f"no demo index in {out} (make it with scripts/make_demo.py)")
    return json.loads(path.read_text())
