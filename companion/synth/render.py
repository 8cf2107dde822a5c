"""A fast rasteriser for table scenes: moderngl on headless EGL (Mesa's llvmpipe runs it on the CPU).

One `Renderer` per process: it owns the GL context, the meshes, and a pool of table textures made
once from fixed seeds, so images depend only on the scene. Passes per image: two light-view
passes (opaque depth; translucent depth and colour transmittance, for coloured soft shadows), the
4x multisampled colour pass (opaque first, then translucent pieces back to front, inner faces
before outer ones), and an object-id pass that gives each object's visible pixels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from companion.pieces import Colour
from companion.synth import meshes
from companion.boards.coasters import QUADRANTS
from companion.pieces import CARDINALS
from companion.synth.boards import HexBoard
from companion.synth.scene import BEAD, COIN, D8, PYRAMID, Scene, SceneObject

# Base colours of the plastics (sRGB-ish, 0-1); opaque ones are black and white.
PLASTIC = {
    Colour.RED: (0.88, 0.06, 0.09), Colour.YELLOW: (0.98, 0.82, 0.05), Colour.GREEN: (0.05, 0.62, 0.22),
    Colour.BLUE: (0.06, 0.22, 0.88), Colour.BLACK: (0.035, 0.035, 0.04), Colour.PURPLE: (0.48, 0.12, 0.62),
    Colour.CLEAR: (0.9, 0.93, 0.95), Colour.ORANGE: (1.0, 0.42, 0.03), Colour.CYAN: (0.02, 0.7, 0.85),
    Colour.WHITE: (0.92, 0.92, 0.9),
}

# A d8's numbers: the atlas holds 1-8 in a row per lettering style (Hershey fonts drawn by OpenCV,
# so nothing is downloaded), each cell NUMERAL_CELL_MM wide on the face, the number 5.4 mm tall
# (a face's inscribed circle has a radius of 3.7 mm on an 18 mm die).
NUMERAL_CELL_MM = 8.0
NUMERAL_STYLES = ((cv2.FONT_HERSHEY_SIMPLEX, 5), (cv2.FONT_HERSHEY_DUPLEX, 4),
                  (cv2.FONT_HERSHEY_COMPLEX, 4), (cv2.FONT_HERSHEY_TRIPLEX, 5))
_NUMERAL_CELL_PX = 64


def numeral_glyph(value: int, font: int, thickness: int, cell_px: int = _NUMERAL_CELL_PX,
                  height_share: float = 5.4 / NUMERAL_CELL_MM) -> np.ndarray:
    """`value` drawn white on black, centred in a square cell, `height_share` of the cell tall (uint8)."""
    text = str(value)
    (w, h), _ = cv2.getTextSize(text, font, 1.0, thickness)
    scale = height_share * cell_px / h
    (w, h), _ = cv2.getTextSize(text, font, scale, thickness)
    cell = np.zeros((cell_px, cell_px), np.uint8)
    cv2.putText(cell, text, ((cell_px - w) // 2, (cell_px + h) // 2), font, scale, 255, thickness, cv2.LINE_AA)
    return cell


def numeral_atlas() -> np.ndarray:
    """Rows of styles, columns 1-8 (RGB uint8, ink white)."""
    rows = [np.hstack([numeral_glyph(v, font, thick) for v in range(1, 9)]) for font, thick in NUMERAL_STYLES]
    return np.repeat(np.vstack(rows)[..., None], 3, axis=2)


_VERTEX = """
#version 330
uniform mat4 u_model; uniform mat4 u_viewproj; uniform mat4 u_light_vp;
in vec3 in_pos; in vec3 in_normal; in vec3 in_face;
out vec3 v_world; out vec3 v_normal; out vec3 v_face; out vec4 v_light;
void main() {
    vec4 w = u_model * vec4(in_pos, 1.0);
    v_world = w.xyz;
    v_normal = transpose(inverse(mat3(u_model))) * in_normal;
    v_face = in_face;
    v_light = u_light_vp * w;
    gl_Position = u_viewproj * w;
}
"""

_FRAGMENT = """
#version 330
uniform int u_mode;          // 0 surface (table, board), 1 translucent piece, 2 opaque piece, 3 opaque token, 4 glass
uniform vec3 u_tint; uniform float u_alpha;
uniform sampler2D u_tex; uniform int u_use_tex; uniform vec4 u_tex_xform;
uniform sampler2D u_shadow_opaque; uniform sampler2D u_shadow_depth; uniform sampler2D u_shadow_colour;
uniform vec3 u_light_dir; uniform vec3 u_light_col; uniform float u_ambient; uniform vec3 u_eye; uniform float u_soft;
uniform float u_half_base; uniform float u_slant; uniform float u_shininess; uniform float u_spec;
uniform sampler2D u_numerals; uniform int u_numeral_style;
const float NUMERAL_CELL_MM = @CELL@; const float NUMERAL_STYLES = @STYLES@;
in vec3 v_world; in vec3 v_normal; in vec3 v_face; in vec4 v_light;
out vec4 f_colour;

const vec2 DISK[12] = vec2[](vec2(-0.326,-0.406), vec2(-0.840,-0.074), vec2(-0.696,0.457), vec2(-0.203,0.621),
    vec2(0.962,-0.195), vec2(0.473,-0.480), vec2(0.519,0.767), vec2(0.185,-0.893), vec2(0.507,0.064),
    vec2(0.896,0.412), vec2(-0.322,-0.933), vec2(-0.792,-0.598));

vec3 shadow(float bias) {
    vec3 p = v_light.xyz / v_light.w * 0.5 + 0.5;
    if (p.x < 0.0 || p.x > 1.0 || p.y < 0.0 || p.y > 1.0 || p.z >= 1.0) return vec3(1.0);
    vec2 texel = 1.0 / vec2(textureSize(u_shadow_opaque, 0));
    vec3 acc = vec3(0.0);
    for (int i = 0; i < 12; i++) {
        vec2 q = p.xy + DISK[i] * u_soft * texel;
        float lit = (p.z - bias > texture(u_shadow_opaque, q).r) ? 0.0 : 1.0;
        vec3 through = (p.z - bias > texture(u_shadow_depth, q).r) ? texture(u_shadow_colour, q).rgb : vec3(1.0);
        acc += lit * through;
    }
    return acc / 12.0;
}

bool d6_pip(vec2 uv, int value) {
    int masks[6] = int[](16, 257, 273, 325, 341, 365);
    int mask = masks[clamp(value, 1, 6) - 1];
    for (int j = 0; j < 3; j++) for (int i = 0; i < 3; i++) {
        if (((mask >> (j * 3 + i)) & 1) == 1 && distance(uv, vec2(float(i - 1), float(j - 1)) * 4.0) < 1.5) return true;
    }
    return false;
}

void main() {
    vec3 n = normalize(v_normal);
    if (u_mode == 1 || u_mode == 4) { if (!gl_FrontFacing) n = -n; }
    vec3 v = normalize(u_eye - v_world);
    vec3 l = normalize(u_light_dir);
    vec3 h = normalize(l + v);
    vec3 sh = shadow(u_mode == 0 ? 0.002 : 0.004);
    vec3 hemi = mix(vec3(0.55, 0.5, 0.46), vec3(0.92, 0.95, 1.0), n.z * 0.5 + 0.5) * u_ambient;
    float fres = 0.04 + 0.96 * pow(1.0 - abs(dot(n, v)), 5.0);
    vec3 env = vec3(0.85, 0.87, 0.9);
    vec3 base = u_tint;
    if (u_use_tex == 1) base *= texture(u_tex, (v_world.xy - u_tex_xform.xy) / u_tex_xform.zw).rgb;
    float spec = pow(max(dot(n, h), 0.0), u_shininess) * u_spec;
    if (u_mode == 0) {
        f_colour = vec4(base * (hemi + u_light_col * sh * max(dot(n, l), 0.0)) + spec * sh * 0.3, 1.0);
        return;
    }
    float alpha = u_alpha;
    int code = int(v_face.z + 0.5);
    if (code >= 1 && code <= 3) {
        // Thick plastic at the edges catches light; engraved pips near the base are frosted.
        float y = v_face.y; float x = abs(v_face.x);
        float side = (u_half_base * u_slant - u_slant * x - u_half_base * y) / sqrt(u_slant * u_slant + u_half_base * u_half_base);
        float edge = min(side, y);
        float rim = 1.0 - smoothstep(0.35, 0.9, edge);
        float pip_y = 2.6 + 0.35 * u_half_base;
        bool pip = false;
        for (int k = 0; k < code; k++) {
            float px = (float(k) - float(code - 1) * 0.5) * 2.6;
            if (distance(vec2(v_face.x, y), vec2(px, pip_y)) < 0.8) pip = true;
        }
        if (u_mode == 1) {
            base = mix(base, base * 1.2 + 0.12, rim * 0.6);
            alpha = mix(alpha, 0.92, rim * 0.7);
            if (pip) { base = mix(base, vec3(0.9) * base + 0.25, 0.6); alpha = min(1.0, alpha + 0.3); }
        } else {
            base = mix(base, base + 0.06, rim);
            if (pip) base = (base.r > 0.5) ? base * 0.55 : base + 0.22;
        }
    } else if (code >= 11 && code <= 16) {
        if (d6_pip(v_face.xy, code - 10)) base = (dot(base, vec3(0.33)) > 0.45) ? vec3(0.05) : vec3(0.95);
    } else if (code >= 21 && code <= 28) {
        // A d8's number: one cell of the numeral atlas spans NUMERAL_CELL_MM round the face's middle.
        vec2 g = v_face.xy / NUMERAL_CELL_MM + 0.5;
        if (all(greaterThan(g, vec2(0.0))) && all(lessThan(g, vec2(1.0)))) {
            vec2 at = vec2((float(code - 21) + g.x) / 8.0, (float(u_numeral_style) + 1.0 - g.y) / NUMERAL_STYLES);
            float ink = texture(u_numerals, at).r;
            base = mix(base, (dot(base, vec3(0.33)) > 0.45) ? vec3(0.05) : vec3(0.95), ink);
        }
    }
    vec3 lit = u_light_col * sh;
    vec3 colour;
    if (u_mode == 1 || u_mode == 4) {
        // Translucent plastic and glass pass light from either side.
        colour = base * (hemi + lit * (0.35 + 0.65 * abs(dot(n, l))));
        colour += lit * spec + fres * env * 0.8;
        alpha = clamp(alpha + fres * 0.6 + spec * 0.5, 0.0, 1.0);
    } else {
        colour = base * (hemi + lit * max(dot(n, l), 0.0)) + lit * spec + fres * env * 0.35;
        alpha = 1.0;
    }
    f_colour = vec4(colour, alpha);
}
""".replace("@CELL@", f"{NUMERAL_CELL_MM:.1f}").replace("@STYLES@", f"{len(NUMERAL_STYLES):.1f}")

_SHADOW_VERTEX = """
#version 330
uniform mat4 u_model; uniform mat4 u_light_vp;
in vec3 in_pos;
void main() { gl_Position = u_light_vp * u_model * vec4(in_pos, 1.0); }
"""
_SHADOW_FRAGMENT = """
#version 330
uniform vec3 u_through;
out vec4 f_colour;
void main() { f_colour = vec4(u_through, 1.0); }
"""
_ID_VERTEX = """
#version 330
uniform mat4 u_model; uniform mat4 u_viewproj;
in vec3 in_pos;
void main() { gl_Position = u_viewproj * u_model * vec4(in_pos, 1.0); }
"""
_ID_FRAGMENT = """
#version 330
uniform float u_id;
out vec4 f_id;
void main() { f_id = vec4(u_id, 0.0, 0.0, 1.0); }
"""


@dataclass
class Rendered:
    """The finished image (RGB uint8, before JPEG) and the object-id map (0 background, i+1 object i)."""

    image: np.ndarray
    ids: np.ndarray


def _gl(matrix: np.ndarray) -> bytes:
    return np.ascontiguousarray(matrix.T, dtype="f4").tobytes()


def gl_projection(camera, near: float = 20.0, far: float = 5000.0) -> np.ndarray:
    """OpenGL projection matching the pinhole intrinsics, for images whose row 0 is the top."""
    w, h = camera.width, camera.height
    return np.array([
        [2 * camera.fx / w, 0, 1 - 2 * camera.cx / w, 0],
        [0, 2 * camera.fy / h, 2 * camera.cy / h - 1, 0],
        [0, 0, -(far + near) / (far - near), -2 * far * near / (far - near)],
        [0, 0, -1, 0]])


def gl_view(camera) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3], m[:3, 3] = camera.R, camera.t
    return np.diag([1.0, -1.0, -1.0, 1.0]) @ m


def _noise_field(rng: np.random.Generator, size: int, cells: int) -> np.ndarray:
    small = rng.random((cells, cells)).astype(np.float32)
    return cv2.resize(small, (size, size), interpolation=cv2.INTER_CUBIC)


def table_texture(kind: str, index: int, size: int = 512) -> np.ndarray:
    """A tileable-enough table surface (RGB uint8), the same for the same (kind, index)."""
    rng = np.random.default_rng([hash_kind(kind), index])
    yy = np.linspace(0, 1, size, dtype=np.float32)[:, None]
    if kind == "wood":
        tone = np.array([(0.72, 0.52, 0.32), (0.55, 0.36, 0.2), (0.82, 0.66, 0.45), (0.4, 0.25, 0.14)][index % 4])
        # Grain runs along x: noise stretched that way, bent a little by a slow warp.
        streaks = cv2.resize(rng.random((96, 4)).astype(np.float32), (size, size), interpolation=cv2.INTER_CUBIC)
        warp = _noise_field(rng, size, 4) * rng.uniform(0.5, 1.5)
        grain = 0.5 + 0.5 * np.sin((yy * rng.uniform(8, 20) + warp + streaks * 1.5) * math.pi)
        fine = _noise_field(rng, size, 128) * 0.2
        shade = 0.82 + 0.12 * grain + 0.1 * streaks - 0.08 * fine
        img = tone[None, None, :] * shade[..., None]
    elif kind == "cloth":
        tone = np.array([(0.12, 0.42, 0.2), (0.2, 0.25, 0.5), (0.45, 0.45, 0.45), (0.55, 0.15, 0.15),
                         (0.75, 0.7, 0.6), (0.3, 0.3, 0.35)][index % 6])
        weave = rng.random((size, size)).astype(np.float32) * 0.18 + _noise_field(rng, size, 16) * 0.12
        img = tone[None, None, :] * (0.85 + weave)[..., None]
    elif kind == "dark":
        tone = np.array([(0.1, 0.1, 0.1), (0.16, 0.13, 0.11), (0.09, 0.11, 0.14)][index % 3])
        img = tone[None, None, :] * (0.8 + 0.4 * _noise_field(rng, size, 32))[..., None]
    elif kind == "white":
        img = np.full((size, size, 3), 0.93, np.float32) * (0.96 + 0.06 * _noise_field(rng, size, 8))[..., None]
    else:
        tone = np.array([(0.8, 0.78, 0.72), (0.7, 0.7, 0.7), (0.85, 0.8, 0.68), (0.6, 0.62, 0.65)][index % 4])
        img = tone[None, None, :] * (0.93 + 0.1 * _noise_field(rng, size, 10))[..., None]
    return np.clip(img * 255, 0, 255).astype(np.uint8)


def hash_kind(text: str) -> int:
    return sum((i + 1) * ord(c) for i, c in enumerate(text))


CHESS_STYLES = (((0.93, 0.9, 0.8), (0.35, 0.52, 0.3)), ((0.85, 0.7, 0.5), (0.45, 0.28, 0.15)),
                ((0.95, 0.95, 0.95), (0.08, 0.08, 0.08)), ((0.95, 0.96, 0.98), (0.15, 0.3, 0.65)),
                ((0.9, 0.85, 0.72), (0.55, 0.4, 0.28)), ((0.75, 0.75, 0.75), (0.3, 0.3, 0.32)),
                ((0.95, 0.93, 0.9), (0.7, 0.12, 0.12)), ((0.92, 0.9, 0.7), (0.2, 0.4, 0.25)))
COASTER_RGB = {Colour.RED: (0.8, 0.2, 0.2), Colour.YELLOW: (0.92, 0.8, 0.25), Colour.GREEN: (0.25, 0.6, 0.3),
               Colour.BLUE: (0.25, 0.4, 0.8)}
HEX_STYLES = (((0.85, 0.85, 0.8), (0.2, 0.2, 0.2)), ((0.3, 0.45, 0.6), (0.9, 0.9, 0.9)),
              ((0.7, 0.6, 0.45), (0.25, 0.18, 0.1)), ((0.92, 0.92, 0.92), (0.35, 0.35, 0.6)))


def _bgr255(rgb) -> tuple[int, int, int]:
    return tuple(int(round(c * 255)) for c in reversed(rgb))


@lru_cache(maxsize=32)
def board_texture(board, style: int) -> tuple[np.ndarray, tuple]:
    """The board's top face as an image whose row 0 is the board's south edge, and the
    (x0, y0, width, depth) in millimetres it covers."""
    xs = [p[0] for p in board.outline()]
    ys = [p[1] for p in board.outline()]
    x0, y0, w, d = min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)
    scale = min(4.0, 1400 / max(w, d))
    size = (int(w * scale), int(d * scale))
    rng = np.random.default_rng([style, hash_kind(board.kind)])

    def px(x, y):
        return int(round((x - x0) * scale)), int(round((y - y0) * scale))

    if isinstance(board, HexBoard):
        fill, line = HEX_STYLES[style % len(HEX_STYLES)]
        img = np.zeros((size[1], size[0], 3), np.uint8)
        img[:] = _bgr255([c * 0.8 for c in fill])
        for cell in board.cells():
            q, r = board.grid.coords(cell)
            poly = np.array([px(x, y) for x, y in board.hex_corners(cell)], np.int32)
            shade = 1.0 - 0.08 * ((q + 2 * r) % 3)
            cv2.fillConvexPoly(img, poly, _bgr255([c * shade for c in fill]), cv2.LINE_AA)
            cv2.polylines(img, [poly], True, _bgr255(line), max(1, int(scale * 0.8)), cv2.LINE_AA)
    elif board.kind == "coasters":
        img = np.zeros((size[1], size[0], 3), np.uint8)
        c = board.cell_mm
        layout = board.layout
        for quadrant in QUADRANTS:
            qf, qr = (v // 3 for v in quadrant.origin)
            tone = COASTER_RGB.get(layout.colour(quadrant), (0.6, 0.6, 0.6))
            a, b = px(qf * 3 * c, qr * 3 * c), px((qf + 1) * 3 * c, (qr + 1) * 3 * c)
            cv2.rectangle(img, a, (b[0] - 1, b[1] - 1), _bgr255(tone), -1)
            for f in range(3):
                for r in range(3):
                    p0 = px((qf * 3 + f) * c + 1.2, (qr * 3 + r) * c + 1.2)
                    p1 = px((qf * 3 + f + 1) * c - 1.2, (qr * 3 + r + 1) * c - 1.2)
                    cv2.rectangle(img, p0, p1, _bgr255([min(1, t * 1.15 + 0.05) for t in tone]), -1)
            cv2.rectangle(img, a, (b[0] - 1, b[1] - 1), _bgr255([t * 0.5 for t in tone]), max(1, int(scale)))
            # Each coaster's dot, in the corner its turn puts it (the centre, in the standard set-up).
            dot_f, dot_r = layout.grid.coords(layout.dot_corner(quadrant))
            corner = (3 * qf + (0 if dot_f % 3 == 0 else 3), 3 * qr + (0 if dot_r % 3 == 0 else 3))
            inward = [0.22 if corner[k] < 3 * (qf, qr)[k] + 1.5 else -0.22 for k in (0, 1)]
            centre = px((corner[0] + inward[0]) * c, (corner[1] + inward[1]) * c)
            cv2.circle(img, centre, max(1, int(scale * 2.5)), (20, 20, 20), -1, cv2.LINE_AA)
        for cell in layout.grid.cells:
            file, rank = layout.grid.coords(cell)
            cx, cy = (file + 0.5) * c, (rank + 0.5) * c
            for direction in CARDINALS:
                if direction in layout.exits(cell):
                    dx, dy = direction.delta
                    tip = (cx + dx * c * 0.46, cy + dy * c * 0.46)
                    tail = (cx + dx * c * 0.3, cy + dy * c * 0.3)
                    cv2.arrowedLine(img, px(*tail), px(*tip), (25, 25, 25), max(1, int(scale * 1.2)),
                                    cv2.LINE_AA, tipLength=0.6)
    else:
        light, dark = CHESS_STYLES[style % len(CHESS_STYLES)]
        img = np.zeros((size[1], size[0], 3), np.uint8)
        img[:] = _bgr255([v * 0.75 for v in dark])
        c = board.cell_mm
        for f in range(board.files):
            for r in range(board.ranks):
                colour = dark if (f + r) % 2 == 0 else light  # a1 is dark
                cv2.rectangle(img, px(f * c, r * c), px((f + 1) * c, (r + 1) * c), _bgr255(colour), -1)
    grain = (rng.random(img.shape[:2]) * 14 - 7).astype(np.int16)
    img = np.clip(img.astype(np.int16) + grain[..., None], 0, 255).astype(np.uint8)
    return cv2.cvtColor(img, cv2.COLOR_BGR2RGB), (x0, y0, w, d)


def board_mesh(board) -> np.ndarray:
    """A slab under the board's outline: the top face, then the sides."""
    outline = board.outline()
    top = board.thickness_mm
    rows = []
    n = len(outline)
    cx = sum(p[0] for p in outline) / n
    cy = sum(p[1] for p in outline) / n
    for i in range(n):
        (ax, ay), (bx, by) = outline[i], outline[(i + 1) % n]
        rows += meshes._flat_triangle((cx, cy, top), (ax, ay, top), (bx, by, top))
        rows += meshes._flat_triangle((ax, ay, 0), (bx, by, 0), (bx, by, top))
        rows += meshes._flat_triangle((ax, ay, 0), (bx, by, top), (ax, ay, top))
    return np.array(rows, dtype=np.float32)


class Renderer:
    """Renders scenes; make one per process (the GL context is not shared)."""

    name = "moderngl-egl"

    def __init__(self, samples: int = 4, shadow_size: int = 1024):
        import moderngl  # imported here so that scene sampling and labels work without it

        self.mgl = moderngl
        self.ctx = moderngl.create_standalone_context(backend="egl")
        self.samples = samples
        self.prog = self.ctx.program(vertex_shader=_VERTEX, fragment_shader=_FRAGMENT)
        self.shadow_prog = self.ctx.program(vertex_shader=_SHADOW_VERTEX, fragment_shader=_SHADOW_FRAGMENT)
        self.id_prog = self.ctx.program(vertex_shader=_ID_VERTEX, fragment_shader=_ID_FRAGMENT)
        self.prog["u_shadow_opaque"] = 1
        self.prog["u_shadow_depth"] = 2
        self.prog["u_shadow_colour"] = 3
        self.prog["u_tex"] = 0
        self.prog["u_numerals"] = 4
        self._numerals = None
        self._vaos: dict = {}
        self._tables: dict = {}
        self._boards: dict = {}
        self._fbos: dict = {}
        s = (shadow_size, shadow_size)
        self.shadow_opaque = self.ctx.depth_texture(s)
        self.shadow_depth = self.ctx.depth_texture(s)
        self.shadow_colour = self.ctx.texture(s, 3)
        for tex in (self.shadow_opaque, self.shadow_depth, self.shadow_colour):
            tex.filter = (moderngl.NEAREST, moderngl.NEAREST)
            tex.repeat_x = tex.repeat_y = False
        # Plain depth reads: with comparison on, texture() would return a test result instead.
        self.shadow_opaque.compare_func = ""
        self.shadow_depth.compare_func = ""
        self.fbo_opaque = self.ctx.framebuffer(depth_attachment=self.shadow_opaque)
        self.fbo_trans = self.ctx.framebuffer(color_attachments=[self.shadow_colour], depth_attachment=self.shadow_depth)

    def _vao(self, key, data: np.ndarray):
        if key not in self._vaos:
            vbo = self.ctx.buffer(np.ascontiguousarray(data, dtype="f4").tobytes())
            self._vaos[key] = (
                self.ctx.vertex_array(self.prog, [(vbo, "3f 3f 3f", "in_pos", "in_normal", "in_face")]),
                self.ctx.vertex_array(self.shadow_prog, [(vbo, "3f 24x", "in_pos")]),
                self.ctx.vertex_array(self.id_prog, [(vbo, "3f 24x", "in_pos")]),
            )
        return self._vaos[key]

    def _object_vaos(self, obj: SceneObject):
        key = (obj.kind, obj.size)
        return self._vao(key, meshes.mesh_for(obj.kind, obj.size))

    def _framebuffers(self, width: int, height: int):
        key = (width, height)
        if key not in self._fbos:
            ms = self.ctx.framebuffer(self.ctx.renderbuffer(key, 3, samples=self.samples),
                                      self.ctx.depth_renderbuffer(key, samples=self.samples))
            resolved = self.ctx.framebuffer(self.ctx.renderbuffer(key, 3))
            ids = self.ctx.framebuffer(self.ctx.renderbuffer(key, 1, dtype="f4"), self.ctx.depth_renderbuffer(key))
            self._fbos[key] = (ms, resolved, ids)
        return self._fbos[key]

    def _texture(self, cache: dict, key, make):
        if key not in cache:
            img = make()
            tex = self.ctx.texture((img.shape[1], img.shape[0]), 3, np.ascontiguousarray(img).tobytes(), alignment=1)
            tex.build_mipmaps()
            tex.filter = (self.mgl.LINEAR_MIPMAP_LINEAR, self.mgl.LINEAR)
            # No anisotropic filtering: with it, llvmpipe (Mesa 22.3) never finished drawing a face
            # seen exactly edge-on (a sliver triangle; items 2588 and 2733 of `synth dataset
            # --seed 1`), even when the shader returned before its texture fetch. Trilinear
            # mipmaps only blur the table a little more at grazing angles. See docs/synth.md.
            tex.anisotropy = 1.0
            cache[key] = tex
            if len(cache) > 48:
                oldest = next(iter(cache))
                cache.pop(oldest).release()
        return cache[key]

    def render(self, scene: Scene) -> Rendered:
        # Each renderer has its own GL context, and only the current one draws: a second renderer
        # made since (a test's, a worker's) would otherwise receive this one's draws.
        with self.ctx:
            return self._render(scene)

    def _render(self, scene: Scene) -> Rendered:
        cam, look = scene.camera, scene.look
        ctx, mgl = self.ctx, self.mgl
        rng = np.random.default_rng([scene.seed, 7])
        viewproj = gl_projection(cam) @ gl_view(cam)
        light_vp = self._light_matrix(scene)
        jitter = look.extra.get("colour_jitter", [[0, 0, 0]] * len(PLASTIC))
        colour_index = {c: i for i, c in enumerate(Colour)}

        def tint_of(obj: SceneObject) -> tuple:
            if obj.kind == PYRAMID:
                base = np.array(PLASTIC[obj.colour]) + np.array(jitter[colour_index[obj.colour]])
                return tuple(np.clip(base, 0, 1))
            return obj.tint

        def is_glass(obj: SceneObject) -> bool:
            return (obj.kind == PYRAMID and not obj.colour.opaque) or obj.translucent

        surfaces = [("table", None)] + ([("board", scene.board)] if scene.board is not None else [])
        solid = [o for o in scene.objects if not is_glass(o)]
        glass = [o for o in scene.objects if is_glass(o)]

        # Light-view passes.
        ctx.enable(mgl.DEPTH_TEST)
        ctx.disable(mgl.CULL_FACE)
        self.shadow_prog["u_light_vp"].write(_gl(light_vp))
        self.fbo_opaque.use()
        self.fbo_opaque.clear(depth=1.0)
        ctx.disable(mgl.BLEND)
        for obj in solid:
            self.shadow_prog["u_model"].write(_gl(obj.matrix))
            self._object_vaos(obj)[1].render()
        self.fbo_trans.use()
        self.fbo_trans.clear(1.0, 1.0, 1.0, 1.0, depth=1.0)
        ctx.enable(mgl.BLEND)
        ctx.blend_func = mgl.DST_COLOR, mgl.ZERO
        light = np.array(look.light_dir)
        for obj in sorted(glass, key=lambda o: float(obj_centre(o) @ light)):
            t = np.array(tint_of(obj))
            through = np.clip(t * 0.8 + 0.12, 0, 1) ** 2 if obj.colour is not Colour.CLEAR else np.full(3, 0.7)
            self.shadow_prog["u_through"].value = tuple(float(v) for v in through)
            self.shadow_prog["u_model"].write(_gl(obj.matrix))
            self._object_vaos(obj)[1].render()

        # Colour pass.
        ms, resolved, ids_fbo = self._framebuffers(cam.width, cam.height)
        ms.use()
        bg = np.array(look.table_tint) * 0.3
        ms.clear(*bg, 1.0, depth=1.0)
        ctx.disable(mgl.BLEND)
        p = self.prog
        p["u_viewproj"].write(_gl(viewproj))
        p["u_light_vp"].write(_gl(light_vp))
        p["u_light_dir"].value = tuple(look.light_dir)
        p["u_light_col"].value = tuple(look.light_colour)
        p["u_ambient"].value = look.ambient
        p["u_eye"].value = tuple(float(v) for v in cam.position)
        p["u_soft"].value = look.shadow_softness
        self.shadow_opaque.use(1)
        self.shadow_depth.use(2)
        self.shadow_colour.use(3)
        if self._numerals is None:
            self._numerals = self._texture({}, "numerals", numeral_atlas)
        self._numerals.use(4)
        centre = scene.board.centre if scene.board is not None else (0.0, 0.0)
        for name, board in surfaces:
            if name == "table":
                tex = self._texture(self._tables, (look.table_kind, look.table_texture),
                                    lambda: table_texture(look.table_kind, look.table_texture))
                tile = 350.0 + 100 * (look.table_texture % 3)
                p["u_tex_xform"].value = (0.0, 0.0, tile, tile)
                p["u_tint"].value = tuple(look.table_tint)
                data = meshes._box(6000, 6000, 1.0)
                vao = self._vao("table", data)[0]
                model = np.eye(4)
                model[:3, 3] = (centre[0], centre[1], -1.0)
            else:
                img, (x0, y0, w, d) = board_texture(board, look.board_style)
                tex = self._texture(self._boards, (repr(board), look.board_style), lambda: img)
                p["u_tex_xform"].value = (x0, y0, w, d)
                p["u_tint"].value = (1.0, 1.0, 1.0)
                vao = self._vao(("board", repr(board)), board_mesh(board))[0]
                model = np.eye(4)
            tex.use(0)
            tex.repeat_x = tex.repeat_y = name == "table"
            p["u_use_tex"].value = 1
            p["u_mode"].value = 0
            p["u_model"].write(_gl(model))
            p["u_shininess"].value = 20.0
            p["u_spec"].value = 0.08 if name == "table" else 0.15
            vao.render()
        p["u_use_tex"].value = 0
        for obj in solid:
            self._draw(obj, tint_of(obj), mode=2 if obj.kind == PYRAMID else 3, alpha=1.0)
        ctx.enable(mgl.BLEND)
        ctx.blend_func = mgl.SRC_ALPHA, mgl.ONE_MINUS_SRC_ALPHA
        ctx.depth_mask = False
        ctx.enable(mgl.CULL_FACE)
        eye = cam.position
        for obj in sorted(glass, key=lambda o: -float(np.linalg.norm(obj_centre(o) - eye))):
            alpha = look.piece_alpha if obj.kind == PYRAMID else 0.35
            if obj.kind == PYRAMID and obj.colour is Colour.CLEAR:
                alpha *= 0.45
            mode = 1 if obj.kind == PYRAMID else 4
            for face in ("front", "back"):
                ctx.cull_face = face
                self._draw(obj, tint_of(obj), mode=mode, alpha=alpha)
        ctx.depth_mask = True
        ctx.disable(mgl.CULL_FACE)
        ctx.disable(mgl.BLEND)
        ctx.copy_framebuffer(resolved, ms)
        raw = np.frombuffer(resolved.read(components=3), dtype=np.uint8).reshape(cam.height, cam.width, 3)[::-1]

        # Object-id pass (every object opaque; surfaces occlude with id 0).
        ids_fbo.use()
        ids_fbo.clear(0.0, 0.0, 0.0, 0.0, depth=1.0)
        ip = self.id_prog
        ip["u_viewproj"].write(_gl(viewproj))
        if scene.board is not None:
            ip["u_id"].value = 0.0
            ip["u_model"].write(_gl(np.eye(4)))
            self._vao(("board", repr(scene.board)), board_mesh(scene.board))[2].render()
        for index, obj in enumerate(scene.objects):
            ip["u_id"].value = float(index + 1)
            ip["u_model"].write(_gl(obj.matrix))
            self._object_vaos(obj)[2].render()
        ids = np.frombuffer(ids_fbo.read(components=1, dtype="f4"), dtype=np.float32)
        ids = ids.reshape(cam.height, cam.width)[::-1].astype(np.int32)
        return Rendered(finish(raw, look, rng), ids)

    def _draw(self, obj: SceneObject, tint, mode: int, alpha: float) -> None:
        p = self.prog
        p["u_mode"].value = mode
        p["u_tint"].value = tuple(float(c) for c in tint)
        p["u_alpha"].value = alpha
        p["u_model"].write(_gl(obj.matrix))
        if obj.kind == PYRAMID:
            from companion.geometry import half_base, slant_height

            p["u_half_base"].value = half_base(obj.size)
            p["u_slant"].value = slant_height(obj.size)
            p["u_shininess"].value = 90.0
            p["u_spec"].value = 0.9
        else:
            if obj.kind == D8:
                # The lettering differs from die to die; drawn from its place, as a d6's face is.
                p["u_numeral_style"].value = int(abs(obj.pose[0, 3] * 7 + obj.pose[1, 3] * 13)) % len(NUMERAL_STYLES)
            p["u_shininess"].value = 60.0 if obj.kind in (COIN, BEAD) else 25.0
            p["u_spec"].value = 0.8 if obj.kind in (COIN, BEAD) else 0.3
        self._object_vaos(obj)[0].render()

    def _light_matrix(self, scene: Scene) -> np.ndarray:
        """Orthographic view from the key light covering every object and the board."""
        pts = [obj_centre(o) for o in scene.objects] or [np.zeros(3)]
        if scene.board is not None:
            pts += [np.array([x, y, 0.0]) for x, y in scene.board.outline()]
        pts = np.array(pts)
        centre = pts.mean(axis=0)
        radius = float(np.max(np.linalg.norm(pts - centre, axis=1))) + 80
        d = np.array(scene.look.light_dir, float)
        d /= np.linalg.norm(d)
        from companion.synth.camera import look_at

        r, t = look_at(centre + d * 2000, centre)
        view = np.eye(4)
        view[:3, :3], view[:3, 3] = r, t
        view = np.diag([1.0, -1.0, -1.0, 1.0]) @ view
        near, far = 2000 - radius - 300, 2000 + 3 * radius + 300
        ortho = np.array([[1 / radius, 0, 0, 0], [0, 1 / radius, 0, 0],
                          [0, 0, -2 / (far - near), -(far + near) / (far - near)], [0, 0, 0, 1]])
        return ortho @ view


def obj_centre(obj: SceneObject) -> np.ndarray:
    return obj.hull_points().mean(axis=0)


def finish(raw: np.ndarray, look, rng: np.random.Generator) -> np.ndarray:
    """Camera-like finish: exposure and white balance, vignetting, blur, sensor noise (RGB uint8)."""
    img = raw.astype(np.float32) * look.exposure * np.array(look.white_balance, np.float32)
    h, w = img.shape[:2]
    if look.vignette > 0:
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        r2 = ((xx - w / 2) ** 2 + (yy - h / 2) ** 2) / ((w / 2) ** 2 + (h / 2) ** 2)
        img *= (1 - look.vignette * r2)[..., None]
    if look.blur_sigma > 0:
        img = cv2.GaussianBlur(img, (0, 0), look.blur_sigma)
    img += rng.normal(0, look.noise_sigma, img.shape).astype(np.float32)
    return np.clip(img, 0, 255).astype(np.uint8)


def encode_jpeg(image: np.ndarray, quality: int) -> bytes:
    ok, data = cv2.imencode(".jpg", cv2.cvtColor(image, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise ValueError("JPEG encoding failed")
    return data.tobytes()
