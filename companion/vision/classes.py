"""The detector's class vocabulary: which object truth becomes which class id.

A class scheme is a numbered list of class names plus the rule that names an object. The default
scheme, "colour-size-pose", has one class per pyramid colour, size and pose (10 x 3 x 2 = 60), then
one each for the tokens: gladiator pawn, glass bead (a bomb), six-sided die, eight-sided die. Pyramid
class names read like pieces: 'red-L-upright', 'clear-S-lying'. Other schemes trade detail for
data: "size-pose" leaves colour to a later stage, "piece" drops the pose.

Object truth is given in the piece vocabulary (`companion.pieces`) plus a kind word, so labels can
be regenerated from scene sidecars whenever the scheme changes, without rendering again.
"""

from __future__ import annotations

from dataclasses import dataclass

from companion.pieces import Colour, Pose, Size

PYRAMID, PAWN, BEAD, D6, D8 = "pyramid", "pawn", "bead", "d6", "d8"
TOKENS = (PAWN, BEAD, D6, D8)
KEYPOINTS = ("apex", "contact")
# Mirroring an image does not swap the apex and the contact point.
FLIP_INDEX = (0, 1)


@dataclass(frozen=True)
class ObjectClass:
    """What a class id stands for; fields a scheme does not distinguish are None."""

    kind: str
    colour: Colour | None = None
    size: Size | None = None
    pose: Pose | None = None

    @property
    def name(self) -> str:
        if self.kind != PYRAMID:
            return self.kind
        parts = [self.colour.value if self.colour else None, self.size.letter if self.size else None,
                 self.pose.value if self.pose else None]
        return "-".join(p for p in parts if p) or PYRAMID


@dataclass(frozen=True)
class ClassScheme:
    """A numbered vocabulary; `by_colour`, `by_size` and `by_pose` say which pyramid fields it keeps."""

    name: str
    by_colour: bool
    by_size: bool
    by_pose: bool

    @property
    def classes(self) -> tuple[ObjectClass, ...]:
        colours = list(Colour) if self.by_colour else [None]
        sizes = list(Size) if self.by_size else [None]
        poses = list(Pose) if self.by_pose else [None]
        pyramids = [ObjectClass(PYRAMID, c, s, p) for c in colours for s in sizes for p in poses]
        return tuple(pyramids) + tuple(ObjectClass(kind) for kind in TOKENS)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.classes)

    def class_id(self, kind: str, colour: Colour | None = None, size: Size | None = None,
                 pose: Pose | None = None) -> int | None:
        """The class of an object, or None for things the detector does not learn (hands, coins, cards).

        Raises:
            ValueError: for a pyramid missing a field this scheme needs.
        """
        if kind in TOKENS:
            return self._index[ObjectClass(kind)]
        if kind != PYRAMID:
            return None
        key = ObjectClass(PYRAMID, colour if self.by_colour else None, size if self.by_size else None,
                          pose if self.by_pose else None)
        if key not in self._index:
            raise ValueError(f"pyramid ({colour}, {size}, {pose}) lacks a field the {self.name!r} scheme needs")
        return self._index[key]

    def decode(self, class_id: int) -> ObjectClass:
        """What class `class_id` stands for.

        Raises:
            ValueError: for an id outside the scheme.
        """
        if not 0 <= class_id < len(self.classes):
            raise ValueError(f"class id {class_id} is outside the {self.name!r} scheme (0-{len(self.classes) - 1})")
        return self.classes[class_id]

    @property
    def _index(self) -> dict[ObjectClass, int]:
        return _INDEXES.setdefault(self.name, {c: i for i, c in enumerate(self.classes)})


_INDEXES: dict[str, dict[ObjectClass, int]] = {}
SCHEMES = {
    "colour-size-pose": ClassScheme("colour-size-pose", True, True, True),
    "size-pose": ClassScheme("size-pose", False, True, True),
    "piece": ClassScheme("piece", True, True, False),
}
DEFAULT_SCHEME = SCHEMES["colour-size-pose"]


def get_scheme(name: str) -> ClassScheme:
    """The scheme called `name`.

    Raises:
        ValueError: for an unknown name.
    """
    try:
        return SCHEMES[name]
    except KeyError:
        raise ValueError(f"unknown class scheme {name!r} (expected one of: {', '.join(SCHEMES)})") from None
