"""The referee's core: explain a change seen on the table by the engine's legal actions.

Vision proposes, the rules judge. For a stable position seen after a change, every candidate
action (or short sequence of actions: a reveal commits every player's secret plan at once) is
applied to the engine's current state, and the position it would leave is compared with the
position seen. The best exact explanation is accepted; when none is exact, or two explain the
table equally well, the verdict says so ("illegal or misread: expected ..., seen ...") and the
state does not change. Nothing is ever changed silently.

A camera misreads some pieces the same way in every frame (a pawn taken for a pyramid in one
corner, a shadow for a bead). When the position is not read exactly, the referee also looks at
the change since the last position it agreed on (the baseline), as chess-camera projects do: a
legal action whose own changes are exactly the items that appeared and vanished since then
explains the move, and the misreads, seen in both positions, cancel out. Such a verdict says so
(`by_change`) and names the differences that persist. Pieces do not change size: a pyramid seen
in the same place, pose and direction but read another size than in the baseline is the same piece
read two ways, not part of the move.

A fixed camera also says where its picture changed since the baseline (the cells under the blobs
of changed pixels, `companion.vision.change`). When the detector's items explain nothing (a clear
bead on a white square not found at all, a pawn seen leaving but not arriving), a single legal
action that changes exactly those cells, and nothing the detector still sees in place, explains
the move; the verdict names the cells (`from_picture`). This is the chess-camera way of reading
moves from square changes, kept as a second cue behind the detector's.

A misread can also be caught late. Icebomb Arena's plans are read once, when revealed, and a plan
piece read one size off (its coloured shadow inside its box) is only shown wrong when the gladiator
moves with it. So when nothing explains a change, the referee also tries other readings of the last
few actions that the game's adapter offers (`Adapter.revisions`): one whose replayed game agrees
better with the position last agreed on or with the one seen now (the table showed the other
reading) and then explains the change exactly, when it is the only one, is accepted together with
the correction (`Verdict.revision`), which the journal keeps.

Positions are compared as multisets of short item texts, the ones `companion.vision.tracker`
writes ('red-L N @d4', 'pawn @c3', 'blue-M U @e2#1'); each game's adapter says which items its
engine state shows and which seen items matter to it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from companion.games.base import CHANCE, TERMINAL, State
from companion.vision.observation import Observation
from companion.vision.tracker import item_text, item_where

UNSURE_COST = 0.5
"""A mismatch on an item the mapper marked unsure costs this much: a misread, not a move."""
MAX_OPTIONS = 6
"""An ambiguous verdict offers at most this many of its readings as fixes (a piece's direction
unread on a square board is four)."""
MISREAD_COST = 0.5
"""An expected pyramid seen in its place and pose but one size off (or lying with its direction not
read) costs this much, not a missing item and an extra one: alone it is a misread the best
explanation may still carry."""


class Adapter:
    """What a game shows on the table. Subclasses override `expected` and usually `seen`."""

    game: str = ""
    max_steps: int | None = None
    """Candidate sequences the referee may chain to explain one change (None: the referee's own
    limit); a game whose candidates already cover a whole round sets 1."""

    def expected(self, state: State) -> Counter:
        """The items a camera should see in `state`."""
        raise NotImplementedError

    def seen(self, observation: Observation) -> tuple[Counter, Counter]:
        """(items seen, the unsure ones among them) that this game cares about."""
        items, unsure = Counter(), Counter()
        for p in observation.pieces:
            if self.relevant(p):
                text = item_text(p)
                items[text] += 1
                if p.unsure:
                    unsure[text] += 1
        return items, unsure

    def compare(self, expected: Counter, seen: Counter, unsure: Counter) -> float:
        """How badly `expected` explains `seen` (0: exactly)."""
        return distance(expected, seen, unsure)

    def doubts(self, observation: Observation) -> Counter:
        """The items seen whose reading an accepted move should not rest on silently (the page
        names them); by default the unsure ones of `seen`. A game may doubt more than the mapper
        does, where a reading is known to be often wrong, without changing how moves are judged."""
        return self.seen(observation)[1]

    def doubt_note(self, item: str) -> str:
        """Why `item` is doubted, for the page, where the pieces' own reasons do not say ('' by default)."""
        return ""

    def relevant(self, piece) -> bool:
        """Whether a seen piece belongs to the game (not a loose die on the table, say)."""
        return piece.cell is not None or piece.zone is not None

    def candidates(self, state: State, seen: Counter) -> list[tuple[Any, ...]]:
        """Action sequences that might explain the change; by default each legal action alone."""
        player = state.current_player()
        if player == TERMINAL:
            return []
        if player == CHANCE:
            return [(a,) for a, _ in state.chance_outcomes()]
        return [(a,) for a in state.legal_actions()]

    def revisions(self, state: State, action: Any) -> list[Any]:
        """Other readings of an `action` accepted from the camera in `state` that a misread could
        have turned into it (legal in `state`); by default none."""
        return []


def doubt_texts(adapter: Adapter, doubts: Sequence[str], observation: Observation) -> list[str]:
    """What the page shows for an accepted move's `doubts` (`Verdict.doubts`): each unsure piece they
    name with the mapper's reasons, or, where the items are not pieces' (ARENA's ships), each item
    with the adapter's note on why it is doubted."""
    pieces = [f"{item_text(p)}: {'; '.join(p.unsure)}" for p in observation.pieces
              if p.unsure and item_text(p) in doubts]
    return pieces or [f"{item}: {note}" if (note := adapter.doubt_note(item)) else item for item in doubts]


def distance(expected: Counter, seen: Counter, unsure: Counter | None = None) -> float:
    """How badly a position explains what is seen: mismatched items, unsure ones at a discount, and
    a pyramid seen where one was expected, as expected but one size off or lying with no direction
    read, at `MISREAD_COST` (size is what the camera reads least well: a Zamboni that moved and
    was read a size down; a plan piece pointing away from the camera may show no direction)."""
    unsure = Counter(unsure or ())
    missing = expected - seen
    extra = seen - expected
    cost = 0.0
    for item in sorted(extra):
        for other in sorted(missing):
            pairs = min(extra[item], missing[other])
            if pairs and _read_a_little_off(item, other):
                extra[item] -= pairs
                missing[other] -= pairs
                unsure[item] -= min(pairs, unsure[item])
                cost += pairs * MISREAD_COST
    missing, extra = +missing, +extra
    cost += sum(missing.values())
    for item, n in extra.items():
        doubtful = min(n, unsure[item])
        cost += doubtful * UNSURE_COST + (n - doubtful)
    return float(cost)


@dataclass(frozen=True)
class Explanation:
    actions: tuple[Any, ...]
    state: State
    distance: float
    missing: tuple[str, ...]
    extra: tuple[str, ...]

    @property
    def text(self) -> str:
        return "; ".join(map(str, self.actions)) or "no move"


@dataclass(frozen=True)
class Revision:
    """An earlier action read wrongly: the `back`-th action from the end (1: the last) was `action`
    and is corrected to `replacement`."""

    back: int
    action: Any
    replacement: Any


@dataclass(frozen=True)
class Verdict:
    """The referee's answer to one seen change.

    Attributes:
        accepted: True when `actions` explain the table exactly (then the state moved on).
        actions: the legal actions chosen (empty when none was accepted).
        text: one line for the page: the actions, or "illegal or misread: expected ..., seen ...".
        state: the engine state after the verdict (unchanged unless accepted).
        alternatives: other explanations considered, best first (for the page's correction menu).
        by_change: accepted from the change since the baseline, while the whole position seen
            still differs from the game's in `persistent` (misreads the camera repeats).
        from_picture: the cells whose picture changed, when they (not the detector's items) told
            which legal action was played.
        revision: an earlier action to correct before `actions` are applied (`state` is the state
            after both), when only that correction explains the change.
        doubts: the items seen new since the baseline (or the game's position) that the mapper was
            unsure of, when the verdict accepts actions: the move may rest on them, and the page
            says so rather than take it silently.
        options: the explanations an ambiguous verdict could not choose between, one per position
            they leave (the page offers each as a fix).
    """

    accepted: bool
    actions: tuple[Any, ...]
    text: str
    state: State
    alternatives: tuple[Explanation, ...] = field(default=())
    by_change: bool = False
    persistent: tuple[str, ...] = field(default=())
    from_picture: tuple[str, ...] = field(default=())
    revision: Revision | None = None
    doubts: tuple[str, ...] = field(default=())
    options: tuple[Explanation, ...] = field(default=())

    def __str__(self) -> str:
        return self.text

    def fixes(self, limit: int = 3) -> list[str]:
        """One-click fixes for the page: an ambiguous verdict's options (up to `MAX_OPTIONS`), else
        the explanations considered that come close (distance under 2), of the fewest actions among
        them: single moves, or a reveal's plans together when no single action explains the table."""
        if self.options:
            return [e.text for e in self.options][:MAX_OPTIONS]
        close = [e for e in self.alternatives if e.actions and e.distance < 2]
        fewest = min((len(e.actions) for e in close), default=0)
        return [e.text for e in close if len(e.actions) == fewest][:limit]


class Referee:
    """Holds the engine state and judges each stable observation against it."""

    def __init__(self, adapter: Adapter, state: State, max_actions: int = 2, keep: int = 6):
        self.adapter = adapter
        self.state = state
        self.max_actions = max_actions
        self.keep = keep

    def explain(self, observation: Observation) -> list[Explanation]:
        """Every candidate explanation, best first (the empty one, 'no move', included)."""
        seen, unsure = self.adapter.seen(observation)
        adapter = self.adapter

        def score(actions: tuple[Any, ...], state: State) -> Explanation:
            expected = adapter.expected(state)
            return Explanation(actions, state, adapter.compare(expected, seen, unsure),
                               tuple(sorted((expected - seen).elements())), tuple(sorted((seen - expected).elements())))

        found = [score((), self.state)]
        frontier = [found[0]]
        depth = min(self.max_actions, adapter.max_steps or self.max_actions)
        for _ in range(depth):
            grown = []
            for ex in frontier:
                for seq in adapter.candidates(ex.state, seen):
                    state = ex.state
                    try:
                        for action in seq:
                            state = state.apply(action)
                    except ValueError:
                        continue
                    grown.append(score(ex.actions + tuple(seq), state))
            if not grown:
                break
            grown.sort(key=lambda e: (e.distance, len(e.actions)))
            found += grown
            if grown[0].distance == 0:
                break
            frontier = grown[: self.keep]
        found.sort(key=lambda e: (e.distance, len(e.actions)))
        return found

    def judge(self, observation: Observation, baseline: Observation | None = None,
              changed_cells: frozenset[str] | None = None,
              recent: Sequence[tuple[State, Any]] = ()) -> Verdict:
        """The verdict on a seen position, without changing the referee's state.

        `baseline`: the position last seen when the table and the game agreed (the referee's
        state was accepted from it, or the game started with it); moves are then also read from
        the change since it. `changed_cells`: the cells whose picture changed since the baseline
        (empty: none did; None: the camera cannot tell). Nothing appears or vanishes on a cell
        whose picture did not change; the cells alone tell the move only when the detector's
        items explain nothing. `recent`: the last actions played, each with the state it was
        played in (the last one's leads to the referee's state), whose other readings may be
        tried when nothing else explains the change.
        """
        verdict = self._judge_as_is(observation, baseline, changed_cells)
        if not verdict.accepted and baseline is not None and recent:
            verdict = self._judge_revised(observation, baseline, changed_cells, recent) or verdict
        if verdict.accepted and verdict.actions:
            verdict = replace(verdict, doubts=self._doubts(observation, baseline))
        return verdict

    def _doubts(self, observation: Observation, baseline: Observation | None) -> tuple[str, ...]:
        unsure = self.adapter.doubts(observation)
        known = self.adapter.seen(baseline)[0] if baseline is not None else self.adapter.expected(self.state)
        return tuple(sorted(item for item in unsure if unsure[item] > 0 and item not in known))

    def _judge_revised(self, observation: Observation, baseline: Observation, changed_cells: frozenset[str] | None,
                       recent: Sequence[tuple[State, Any]]) -> Verdict | None:
        """The verdict with one of the recent actions read another way, when exactly one such
        reading explains the change and the table showed it: the game so corrected agrees better
        with the baseline or with the position seen now than the game as it stands."""
        adapter = self.adapter
        shown = [adapter.seen(baseline)[0], adapter.seen(observation)[0]]
        expected = adapter.expected(self.state)
        gaps = [adapter.compare(expected, seen, Counter()) for seen in shown]
        found: list[Verdict] = []
        for i, (before, action) in enumerate(recent):
            for replacement in adapter.revisions(before, action):
                state = _replayed(before, (replacement, *(a for _, a in recent[i + 1:])))
                if state is None:
                    continue
                corrected = adapter.expected(state)
                if all(adapter.compare(corrected, seen, Counter()) >= gap for seen, gap in zip(shown, gaps)):
                    continue
                verdict = Referee(adapter, state, self.max_actions, self.keep)._judge_as_is(
                    observation, baseline, changed_cells)
                if verdict.accepted and verdict.actions:
                    revision = Revision(len(recent) - i, action, replacement)
                    found.append(replace(verdict, revision=revision,
                                         text=f"{verdict.text} (correcting {action} to {replacement})"))
        return found[0] if len(found) == 1 else None

    def _judge_as_is(self, observation: Observation, baseline: Observation | None,
                     changed_cells: frozenset[str] | None) -> Verdict:
        ranked = self.explain(observation)
        best = ranked[0]
        changed = frozenset(changed_cells or ())
        picture_known = changed_cells is not None

        def from_picture() -> Verdict | None:
            if baseline is None or not changed:
                return None
            return self._judge_picture(observation, baseline, changed, ranked)

        if best.distance == 0 and not best.actions:
            return from_picture() or Verdict(True, (), "no move", self.state, tuple(ranked[1: 1 + self.keep]))
        if best.distance >= 1 and baseline is not None:
            verdict = self._judge_change(observation, baseline, ranked, changed if picture_known else None)
            if verdict is not None:
                return verdict if verdict.actions else (from_picture() or verdict)
        ties = [e for e in ranked if e.distance == best.distance and len(e.actions) == len(best.actions)
                and _after(e) != _after(best)]
        if best.distance < 1 and not ties:
            return Verdict(True, best.actions, best.text, best.state, tuple(ranked[1: 1 + self.keep]))
        picture = from_picture()
        if picture is not None:
            return picture
        if best.distance < 1:
            return self._ambiguous([best, *ties], ranked)
        guess = best if best.actions else next((e for e in ranked if e.actions), best)
        expected = ", ".join(guess.missing) or "nothing more"
        seen = ", ".join(guess.extra) or "nothing more"
        return Verdict(False, (), f"illegal or misread: expected {expected} (after {guess.text}), seen {seen}",
                       self.state, tuple(ranked[: self.keep]))

    def _ambiguous(self, explanations: list[Explanation], ranked: list[Explanation]) -> Verdict:
        """'ambiguous: A or B; please confirm', offering each position the explanations leave."""
        options: list[Explanation] = []
        for e in explanations:
            if all(_after(e) != _after(o) for o in options):
                options.append(e)
        named = " or ".join(f"({e.text})" if len(e.actions) > 1 else e.text for e in options[:3])
        more = f" (or {len(options) - 3} more)" if len(options) > 3 else ""
        return Verdict(False, (), f"ambiguous: {named}{more}; please confirm", self.state, tuple(ranked[: self.keep]),
                       options=tuple(options))

    def _judge_picture(self, observation: Observation, baseline: Observation, changed: frozenset[str],
                       ranked: list[Explanation]) -> Verdict | None:
        """The one legal action whose changes are exactly the cells whose picture changed.

        The detector's items must not contradict it: what it saw appear or vanish since the
        baseline is part of the action, and nothing the action takes away is still seen.
        """
        appeared, vanished, expected_now, seen = self._changes_since(observation, baseline, changed)
        matches = []
        for e in ranked:
            if len(e.actions) != 1:
                continue
            after = self.adapter.expected(e.state)
            added, removed = after - expected_now, expected_now - after
            cells = {w for w in map(item_where, (added + removed).elements()) if _is_cell(w)}
            if cells != changed:
                continue
            if appeared - added or vanished - removed or (seen - after) & removed:
                continue
            matches.append(e)
        if not matches or any(_after(e) != _after(matches[0]) for e in matches[1:]):
            return None
        best = matches[0]
        where = ", ".join(sorted(changed))
        return Verdict(True, best.actions, f"{best.text} (read from the picture's change at {where})", best.state,
                       tuple(ranked[: self.keep]), True, self._persistent(observation, self.adapter.expected(best.state)),
                       tuple(sorted(changed)))

    def _changes_since(self, observation: Observation, baseline: Observation,
                       changed: frozenset[str] | None = None) -> tuple[Counter, Counter, Counter, Counter]:
        """(appeared, vanished, expected now, seen now) since the baseline, as the game sees items.

        An item the game expected but the baseline missed (or showed wrongly), now seen right, is
        a misread ending, not part of a move: it is left out of what appeared (or vanished).
        When the picture says where it changed (`changed`, the cells whose picture changed, empty
        when none did), nothing appeared or vanished on a board cell whose picture did not: such a
        difference is the detector's (a glass bead it finds in one frame and not the next, while
        the players reveal their plans beside the board).
        """
        seen, _ = self.adapter.seen(observation)
        before, _ = self.adapter.seen(baseline)
        expected_now = self.adapter.expected(self.state)
        # A misread ends when the baseline, with the item now seen put in (or the item now gone
        # taken out), agrees better with the game: judged as the game compares positions, since a
        # game may see other items than its state names (an Ice Arena bot is seen as a stack).
        agreed = Counter(before)

        def gap(items: Counter) -> float:
            return self.adapter.compare(expected_now, items, Counter())

        appeared, vanished = Counter(), Counter()
        current = gap(agreed)
        for item in sorted((seen - before).elements()):
            grown = agreed + Counter({item: 1})
            if (closer := gap(grown)) < current:
                agreed, current = grown, closer
            else:
                appeared[item] += 1
        for item in sorted((before - seen).elements()):
            shrunk = agreed - Counter({item: 1})
            if (closer := gap(shrunk)) < current:
                agreed, current = shrunk, closer
            else:
                vanished[item] += 1
        appeared, vanished = without_misread_swaps(appeared, vanished)
        if changed is not None:
            def still(item: str) -> bool:
                where = item_where(item)
                return _is_cell(where) and where not in changed

            appeared = Counter({k: v for k, v in appeared.items() if not still(k)})
            vanished = Counter({k: v for k, v in vanished.items() if not still(k)})
        return appeared, vanished, expected_now, seen

    def _persistent(self, observation: Observation, expected: Counter) -> tuple[str, ...]:
        seen, _ = self.adapter.seen(observation)
        return tuple(sorted(((expected - seen) + (seen - expected)).elements()))

    def _judge_change(self, observation: Observation, baseline: Observation, ranked: list[Explanation],
                      changed: frozenset[str] | None = None) -> Verdict | None:
        """The one legal explanation of exactly what changed since `baseline`, if there is one."""
        appeared, vanished, expected_now, _ = self._changes_since(observation, baseline, changed)
        alternatives = tuple(ranked[: self.keep])
        if not appeared and not vanished:
            # The table is as it was when it last agreed with the game: its misreads persist.
            return Verdict(True, (), "no move", self.state, alternatives, True,
                           self._persistent(observation, expected_now))
        # Each explanation's own changes against what appeared and vanished, as the game compares
        # positions (an Ice Arena bot's text against the stack seen, a piece read a little off).
        fits = []
        for e in ranked:
            if not e.actions:
                continue
            after = self.adapter.expected(e.state)
            added, removed = without_misread_swaps(after - expected_now, expected_now - after)
            if added == appeared and removed == vanished:
                fits.append((0.0, e))
                continue
            # Each side on its own: a misread piece that moved is misread where it was and where it is.
            sides = (self.adapter.compare(added, appeared, Counter()), self.adapter.compare(removed, vanished, Counter()))
            if max(sides) < 1:
                fits.append((sum(sides), e))
        closest = min((off for off, _ in fits), default=0.0)
        exact = [e for off, e in fits if off == closest]
        fewest = min((len(e.actions) for e in exact), default=0)
        exact = [e for e in exact if len(e.actions) == fewest]
        if not exact:
            return None  # nothing explains the change: the usual verdict
        if any(_after(e) != _after(exact[0]) for e in exact[1:]):
            return self._ambiguous(exact, ranked)
        best = exact[0]
        return Verdict(True, best.actions, best.text, best.state, alternatives, True,
                       self._persistent(observation, self.adapter.expected(best.state)))

    def update(self, observation: Observation, baseline: Observation | None = None,
               changed_cells: frozenset[str] | None = None) -> Verdict:
        """Judges the observation and, when a legal explanation is accepted, moves the state on."""
        verdict = self.judge(observation, baseline, changed_cells)
        if verdict.accepted:
            self.state = verdict.state
        return verdict


def _replayed(state: State, actions: Sequence[Any]) -> State | None:
    """`state` after `actions`, or None when one of them is illegal on the way."""
    try:
        for action in actions:
            state = state.apply(action)
    except ValueError:
        return None
    return state


def without_misread_swaps(appeared: Counter, vanished: Counter) -> tuple[Counter, Counter]:
    """What appeared and vanished, less each pyramid that vanished and reappeared in the same place
    read another way: with another size but the same pose and direction (pieces do not change size:
    a plan piece beside the board read S in one position and M in the next), or with the same size
    and a direction the camera could not tell ('?'). That is one piece read two ways, not a move."""
    appeared, vanished = Counter(appeared), Counter(vanished)
    for item in sorted(appeared):
        for other in sorted(vanished):
            if not appeared[item]:
                break
            if vanished[other] and _one_piece_read_two_ways(item, other):
                pairs = min(appeared[item], vanished[other])
                appeared[item] -= pairs
                vanished[other] -= pairs
    return +appeared, +vanished


def _one_piece_read_two_ways(a: str, b: str) -> bool:
    pa, pb = _pyramid_parts(a), _pyramid_parts(b)
    if pa is None or pb is None or pa == pb:
        return False
    (colour_a, size_a, facing_a, rest_a), (colour_b, size_b, facing_b, rest_b) = pa, pb
    if (colour_a, rest_a) != (colour_b, rest_b):
        return False
    if facing_a == facing_b:
        return True  # only the size differs
    lying = facing_a != "U" and facing_b != "U"
    return size_a == size_b and lying and "?" in (facing_a, facing_b)


def _read_a_little_off(seen: str, expected: str) -> bool:
    """Whether a seen pyramid is an expected one in its place read a little off: one size larger or
    smaller in the same pose and direction, or lying with a direction the camera could not tell."""
    pa, pb = _pyramid_parts(seen), _pyramid_parts(expected)
    if pa is None or pb is None or (pa[0], pa[3]) != (pb[0], pb[3]) or "?" in (pa[1], pb[1]):
        return False
    if pa[2] == pb[2]:
        return abs("SML".index(pa[1]) - "SML".index(pb[1])) == 1
    return pa[1] == pb[1] and pa[2] == "?" and pb[2] != "U"


def _pyramid_parts(item: str) -> tuple[str, str, str, str] | None:
    """(colour, size, facing, place) of a pyramid's item text ('yellow', 'S', 'N', '@P2' for
    'yellow-S N @P2'); None for a token, and for an item that names no place (an IceTowers tower
    or piece: same colour is not same piece there)."""
    what, _, rest = item.partition(" ")
    colour, dash, size = what.rpartition("-")
    facing, _, place = rest.partition(" ")
    if not dash or size not in ("S", "M", "L", "?") or not place.startswith("@"):
        return None
    return colour, size, facing, place


def _is_cell(where: str) -> bool:
    """Whether an item's place is a board cell (not a seat zone 'P1'.., nor the table)."""
    return where != "table" and not (where[:1] == "P" and where[1:].isdigit())


def _after(e: Explanation) -> str:
    return repr(e.state.to_json())
