"""IceTowers on the table: towers to scores, live and at the end.

The camera sees towers (bottom to top) and free pieces; the engine knows every tower's full
contents from the history of caps, mines and splits. A piece inside a tower can be hidden (a large
capping a large covers it almost whole), so a seen tower matches a known one when its pieces are
the known ones in order with some left out and the same top piece: the history fills in what the
picture cannot show. Scores follow the engine's towers, never a guess.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from companion.games.icetowers import IceTowersState, tower_text
from companion.referee.core import MISREAD_COST, Adapter
from companion.vision.observation import Observation, SeenPiece


def _size(text: str) -> int:
    return "SML".index(text.rsplit("-", 1)[1]) + 1


def explains_hidden(seen: list[str], known: list[str], doubtful: frozenset[int] = frozenset()) -> bool:
    """Whether tower `known` (bottom to top) looks like `seen` when some pieces are hidden.

    Only a piece capped by one of its own size (or larger) is hidden: a smaller piece on top
    leaves the lower one in view. The top piece is always seen. The seen pieces whose indices are
    in `doubtful` may be of any colour (`colours_in_doubt`).
    """
    if not seen or seen[-1] != known[-1]:
        return False
    i = 0
    for k, piece in enumerate(known):
        if i < len(seen) and (seen[i] == piece or (i in doubtful and _size(seen[i]) == _size(piece))):
            i += 1
        elif k + 1 >= len(known) or _size(known[k + 1]) < _size(piece):
            return False
    return i == len(seen)


def colours_in_doubt(seen: list[str]) -> frozenset[int]:
    """The pieces of a seen stack (bottom to top) read the colour of the piece on them: a covered
    piece shows only a band below the one on it, through which that one's colour shows (the commonest
    colour error on stacked pieces), so their colour says little."""
    colour = [text.rsplit("-", 1)[0] for text in seen]
    return frozenset(i for i in range(len(seen) - 1) if colour[i] == colour[i + 1])


def _one_piece_a_size_off(seen: list[str], known: list[str]) -> bool:
    """Whether a seen tower is a known one, piece for piece, but for one piece read one size off."""
    if len(seen) != len(known):
        return False
    off = [(a, b) for a, b in zip(seen, known) if a != b]
    if len(off) != 1:
        return False
    (a, b), = off
    return a.rsplit("-", 1)[0] == b.rsplit("-", 1)[0] and abs(_size(a) - _size(b)) == 1


def towers_seen(observation: Observation) -> Counter:
    """Every tower seen, as text bottom to top (a free piece, standing or lying, is a one-piece tower)."""
    out: Counter = Counter()
    for stack in observation.stacks():
        out["/".join(p.piece_text for p in stack if p.is_pyramid)] += 1
    for p in observation.pyramids:
        if p.stack is None:
            out[p.piece_text] += 1
    return out


class IceTowersAdapter(Adapter):
    game = "icetowers"

    def expected(self, state: IceTowersState) -> Counter:
        return Counter(tower_text(t) for t, _ in state.towers)

    def seen(self, observation: Observation) -> tuple[Counter, Counter]:
        unsure: Counter = Counter()
        for stack in observation.stacks():
            if any(p.unsure for p in stack):
                unsure["/".join(p.piece_text for p in stack if p.is_pyramid)] += 1
        for p in observation.pyramids:
            if p.stack is None and p.unsure:
                unsure[p.piece_text] += 1
        return towers_seen(observation), unsure

    def relevant(self, piece: SeenPiece) -> bool:
        return piece.is_pyramid

    def compare(self, expected: Counter, seen: Counter, unsure: Counter) -> float:
        exact = expected & seen
        known = list((expected - exact).elements())
        cost = 0.0
        left = []
        for text in (seen - exact).elements():
            parts = text.split("/")
            match = next((k for k in known if explains_hidden(parts, k.split("/"))), None)
            if match is not None:
                known.remove(match)  # pieces hidden inside: the history knows them
            else:
                left.append(text)
        for text in left:
            parts = text.split("/")
            doubtful = colours_in_doubt(parts)
            match = next((k for k in known if _one_piece_a_size_off(parts, k.split("/"))
                          or (doubtful and explains_hidden(parts, k.split("/"), doubtful))), None)
            if match is not None:
                known.remove(match)  # misread a little: the history corrects it, the engine's tower is scored
                cost += MISREAD_COST
            else:
                cost += 0.5 if unsure[text] else 1.0
        return cost + len(known)

    def scores(self, state: IceTowersState) -> dict[str, int]:
        """Each colour's live score: what it would score if the game ended now."""
        return {c.value: v for c, v in state.colour_scores().items()}

    def candidates(self, state: IceTowersState, seen: Counter) -> list[tuple[Any, ...]]:
        return [(a,) for a in state.legal_actions()]
