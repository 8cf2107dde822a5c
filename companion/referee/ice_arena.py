"""Ice Arena on the table: bots as stacks on hexes, small pieces played into the arena.

A bot is seen as a stack on its hex: its large and medium pieces bottom to top, then its small
pieces, the owner's cap on top. The engine knows the core's order but keeps the spare smalls as
a set (their order in the stack does not matter to the rules), and a piece capped by one of its
own size or larger is hidden from the camera (as in IceTowers), so a seen stack matches a bot
when its large and medium pieces are the core with hidden ones left out, its smalls are some of
the bot's spares, and the top is a small of the owner's colour. A small piece in the arena is
seen standing ('U') or lying towards one of the six hex directions. Dice, mine and corrosion
tokens are not part of the position the camera checks.

The camera explains the visible steps (a bot moving, a small played, pushed, turned or discarded,
a bot rebuilt); dice, picks and purchases leave the table unchanged and are entered on the page,
or found by the referee when one of them comes just before the visible step.
"""

from __future__ import annotations

from collections import Counter

from companion.games.ice_arena import IceArenaState
from companion.pieces import Pose, Size
from companion.referee.core import MISREAD_COST, Adapter
from companion.referee.icetowers import colours_in_doubt, explains_hidden
from companion.vision.observation import Observation

BOT = "bot "


def bot_text(core: list[str], spares: list[str], cap: str, cell: str) -> str:
    """'bot red-L/blue-M|green,yellow|red @1,-2': core bottom to top | spare smalls | cap colour."""
    return f"{BOT}{'/'.join(core)}|{','.join(sorted(spares))}|{cap} @{cell}"


def stack_matches_bot(seen: list[str], bot: str, doubtful: frozenset[int] = frozenset()) -> bool:
    """Whether a seen stack (piece texts bottom to top, no cell) can be the bot `bot_text` names;
    the seen pieces whose indices are in `doubtful` may be of any colour."""
    core_text, spares_text, cap = bot.removeprefix(BOT).rsplit(" @", 1)[0].split("|")
    core = core_text.split("/")
    spares = Counter(s for s in spares_text.split(",") if s)
    seen_core = [p for p in seen if not p.endswith("-S")]
    seen_smalls = [p.rsplit("-", 1)[0] for p in seen if p.endswith("-S")]
    if seen[: len(seen_core)] != seen_core or not seen_smalls or seen_smalls[-1] != cap:
        return False  # smalls go on top, and the owner's small caps the bot
    if not seen_core or not explains_hidden(seen_core, core, frozenset(i for i in doubtful if i < len(seen_core))):
        return False
    sure_spares = [c for i, c in enumerate(seen_smalls[:-1]) if len(seen_core) + i not in doubtful]
    return not Counter(sure_spares) - spares


class IceArenaAdapter(Adapter):
    game = "ice-arena"

    def expected(self, state: IceArenaState) -> Counter:
        grid = state.grid
        items: Counter = Counter()
        for bot in state.bots:
            items[bot_text([str(p) for p in bot.core], [c.value for c in bot.spares],
                           state.colours[bot.owner].value, grid.name(bot.cell))] += 1
        for small in state.smalls:
            items[f"{small.colour.value}-S {small.direction.value if small.direction else 'U'} "
                  f"@{grid.name(small.cell)}"] += 1
        return items

    def seen(self, observation: Observation) -> tuple[Counter, Counter]:
        items, unsure = Counter(), Counter()
        for stack in observation.stacks():
            pyramids = [p for p in stack if p.is_pyramid]
            if not pyramids or pyramids[0].cell is None:
                continue
            text = "/".join(p.piece_text for p in pyramids) + f" @{pyramids[0].cell}"
            items[text] += 1
            unsure[text] += any(p.unsure for p in pyramids)
        for p in observation.pyramids:
            if p.stack is not None or p.cell is None:
                continue
            if p.size == Size.SMALL:
                text = f"{p.piece_text} {p.direction or '?' if p.pose == Pose.LYING else 'U'} @{p.cell}"
            else:
                text = f"{p.piece_text} @{p.cell}"  # a lone large or medium: a bot seen in part
            items[text] += 1
            unsure[text] += bool(p.unsure)
        return items, +unsure

    def compare(self, expected: Counter, seen: Counter, unsure: Counter) -> float:
        exact = expected & seen
        bots = [e for e in (expected - exact).elements() if e.startswith(BOT)]
        cost = float(sum(1 for e in (expected - exact).elements() if not e.startswith(BOT)))
        left = []
        for text in (seen - exact).elements():
            pieces, cell = text.rsplit(" @", 1)
            match = next((b for b in bots if b.endswith(f" @{cell}") and " " not in pieces
                          and stack_matches_bot(pieces.split("/"), b)), None)
            if match is not None:
                bots.remove(match)
            else:
                left.append(text)
        for text in left:
            # A covered piece read the colour of the one on it: the bot, misread a little.
            pieces, cell = text.rsplit(" @", 1)
            doubtful = colours_in_doubt(pieces.split("/")) if " " not in pieces else frozenset()
            match = next((b for b in bots if doubtful and b.endswith(f" @{cell}")
                          and stack_matches_bot(pieces.split("/"), b, doubtful)), None)
            if match is not None:
                bots.remove(match)
                cost += MISREAD_COST
            else:
                cost += 0.5 if unsure[text] else 1.0
        return cost + len(bots)
