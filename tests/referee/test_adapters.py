"""The referee adapters of Zamboni Wars, ARENA and Ice Arena: scripted engine states are shown to
the referee as the camera would see them, and it must name the legal action that was played, or
say "illegal or misread" when nothing legal explains the table."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from companion.games import get_game
from companion.games.ice_arena import MoveTo
from companion.games.space_arena import Design, Hold as ArenaHold, Plan, Start
from companion.games.zamboni_wars import Fire, Move, Phase, Roll
from companion.pieces import Colour, Pose, Size
from companion.referee import Referee, adapter_for
from companion.referee.core import doubt_texts
from companion.referee.ice_arena import stack_matches_bot
from companion.referee.icetowers import colours_in_doubt
from companion.vision.observation import Observation, SeenPiece

ARENA_COLOURS = (Colour.PURPLE, Colour.ORANGE)


def _lying(colour, size, direction, cell, stack=None, level=None):
    return SeenPiece(kind="pyramid", colour=colour, size=size, pose=Pose.LYING, direction=direction, cell=cell,
                     stack=stack, level=level)


def _upright(colour, size, cell, stack=None, level=None):
    return SeenPiece(kind="pyramid", colour=colour, size=size, pose=Pose.UPRIGHT, cell=cell, stack=stack, level=level)


# --- Zamboni Wars -----------------------------------------------------------------------------

def zamboni_table(state, inner: bool = True) -> Observation:
    """Each Zamboni as a nest: the outer piece (its armour) at level 0, the inner ones above it."""
    from companion.boards.square import square_grid

    names = square_grid(6, 6)
    pieces = []
    for seat, z in enumerate(state.zambonis):
        if z is None:
            continue
        colour = state.colour_of(seat)
        for level, size in enumerate(z.sizes if inner else z.sizes[:1]):
            pieces.append(_lying(colour, size, z.facing.value, names.name(z.cell), stack=seat, level=level))
    pieces += [SeenPiece(kind="d6", cell=names.name(c)) for c in state.cover]
    pieces.append(SeenPiece(kind="d6", table_mm=(500.0, -80.0)))  # the movement die, off the board
    return Observation("zamboni-wars", tuple(pieces))


def _zamboni_start():
    return get_game("zamboni-wars").new_initial_state(2)


def test_zamboni_the_start_is_seen_exactly_and_inner_pieces_do_not_matter():
    state = _zamboni_start()
    adapter = adapter_for("zamboni-wars")
    for inner in (True, False):
        seen, unsure = adapter.seen(zamboni_table(state, inner))
        assert seen == adapter.expected(state) and not unsure
    assert Referee(adapter, state).judge(zamboni_table(state)).text == "no move"


def test_zamboni_a_move_is_recognised_whatever_the_die_showed():
    state = _zamboni_start()
    rolled = state.apply(Roll(4))
    move = next(m for m in rolled.legal_actions() if isinstance(m, Move) and m.facing != state.zambonis[0].facing)
    after = rolled.apply(move)
    referee = Referee(adapter_for("zamboni-wars"), state)
    verdict = referee.update(zamboni_table(after))
    assert verdict.accepted and verdict.actions[-1] == move and isinstance(verdict.actions[0], Roll)
    assert referee.state.zambonis == after.zambonis and referee.state.turn == after.turn



def test_zamboni_the_roll_recorded_is_the_one_the_movement_die_shows_when_it_allows_the_move():
    state = _zamboni_start()
    moves = {v: set(state.apply(Roll(v)).legal_actions()) for v in range(1, 7)}
    # A move the camera can see that some rolls allow but not all (the lowest would be recorded if the
    # die were not read).
    def seen_to_move(m):
        v = next(v for v in moves if m in moves[v])
        return state.apply(Roll(v)).apply(m).zambonis != state.zambonis

    move = min((m for m in set().union(*moves.values()) if isinstance(m, Move)
                and 2 <= sum(m in moves[v] for v in moves) < len(moves) and seen_to_move(m)), key=str)
    rolled = max(v for v in moves if move in moves[v])
    unread = min(v for v in moves if move in moves[v])
    not_allowing = next(v for v in moves if move not in moves[v])
    after = state.apply(Roll(rolled)).apply(move)

    def table(die):
        seen = zamboni_table(after)
        pieces = tuple(replace(p, value=die) if p.kind == "d6" and p.cell is None else p for p in seen.pieces)
        return replace(seen, pieces=pieces)

    assert Referee(adapter_for("zamboni-wars"), state).update(table(None)).actions == (Roll(unread), move)
    verdict = Referee(adapter_for("zamboni-wars"), state).update(table(rolled))
    assert verdict.accepted and verdict.actions == (Roll(rolled), move) and rolled != unread
    # A die read as a roll that does not allow the move (miscounted) does not make the move illegal.
    verdict = Referee(adapter_for("zamboni-wars"), state).update(table(not_allowing))
    assert verdict.accepted and verdict.actions[-1] == move and verdict.actions[0] != Roll(not_allowing)

def _aiming_state():
    rng = random.Random(3)
    for _ in range(200):
        state = _zamboni_start()
        for _ in range(400):
            if state.phase == Phase.AIM:
                return state
            if state.current_player() < 0 and state.phase != Phase.MOVE_ROLL and state.phase != Phase.LASER_ROLL:
                break
            actions = state.legal_actions()
            if not actions:
                break
            state = state.apply(rng.choice(actions))
    raise AssertionError("no aiming position found")


def test_zamboni_a_laser_hit_is_seen_as_the_targets_outer_piece_gone():
    state = _aiming_state()
    target = state.aimed_at().seat
    hit = state.apply(Fire(state.turn, target)).apply(Roll(6))
    assert hit.zambonis[target].armour == state.zambonis[target].armour - 1
    referee = Referee(adapter_for("zamboni-wars"), state)
    verdict = referee.update(zamboni_table(hit, inner=False))
    assert verdict.accepted and verdict.actions[0] == Fire(state.turn, target)
    assert referee.state.zambonis == hit.zambonis


def test_zamboni_a_jump_no_roll_allows_is_illegal_or_misread():
    state = _zamboni_start()
    table = zamboni_table(state)
    moved = tuple(replace(p, cell="d4") if p.stack == 0 else p for p in table.pieces)
    referee = Referee(adapter_for("zamboni-wars"), state)
    verdict = referee.update(replace(table, pieces=moved))
    assert not verdict.accepted and verdict.text.startswith("illegal or misread: expected ")
    assert "@d4" in verdict.text and referee.state is state


# --- ARENA ------------------------------------------------------------------------------------

def arena_table(state, laid_down: int | None = None, die: int | None = None) -> Observation:
    """Each ship as a tree of its colour, as many pieces as its height; seat `laid_down`'s ship is
    one lying piece with a d8 beside it showing `die` (None: the die's face was not read)."""
    pieces = []
    for seat, ship in enumerate(state.ships):
        if not ship.flying:
            continue
        tile = state.arena.name(ship.at).rpartition("h")[0]
        if seat == laid_down:
            pieces.append(_lying(ARENA_COLOURS[seat], Size.LARGE, "N", tile))
            file = chr(ord(tile[0]) + (1 if tile[0] < "h" else -1))
            pieces.append(SeenPiece(kind="d8", cell=file + tile[1:], value=die))
            continue
        for level in range(ship.at[2] + 1):
            pieces.append(_upright(ARENA_COLOURS[seat], Size(3 - min(level, 2)), tile, stack=seat, level=level))
    return Observation("space-arena", tuple(pieces))


def _arena_designed():
    state = get_game("space-arena").new_initial_state(2)
    for seat in range(2):
        state = state.apply(Design(seat, 5, 5, 5, 5))
    return state


def test_arena_ships_appearing_in_corners_are_the_starts():
    state = _arena_designed()
    after = state.apply(Start(0, "a1h3")).apply(Start(1, "h8h2"))
    referee = Referee(adapter_for("space-arena", ARENA_COLOURS), state)
    verdict = referee.update(arena_table(after))
    assert verdict.accepted and [str(a) for a in verdict.actions] == ["P1 start a1h3", "P2 start h8h2"]


def test_arena_a_round_is_read_off_where_the_ships_now_fly():
    start = _arena_designed().apply(Start(0, "a1h3")).apply(Start(1, "h8h2"))
    plans = (Plan(0, (1, 2, 1)), Plan(1, (0, -1, 0)))
    after = start
    for action in (*plans, ArenaHold(0), ArenaHold(1)):
        after = after.apply(action)
    assert after.ships[0].at == (1, 2, 3)
    referee = Referee(adapter_for("space-arena", ARENA_COLOURS), start)
    verdict = referee.update(arena_table(after))
    assert verdict.accepted and verdict.actions[:2] == plans
    assert referee.state.ships == after.ships


def test_arena_a_laid_down_ship_takes_its_height_from_the_d8_beside_it():
    start = _arena_designed().apply(Start(0, "a1h3")).apply(Start(1, "h8h2"))
    adapter = adapter_for("space-arena", ARENA_COLOURS)
    seen, unsure = adapter.seen(arena_table(start, laid_down=1, die=2))
    assert seen == adapter.expected(start) and not unsure
    # Unread, the height is a doubt: the ship is where it should be, but nothing is confirmed by it.
    seen, unsure = adapter.seen(arena_table(start, laid_down=1, die=None))
    assert "orange @h8 h?" in seen and unsure["orange @h8 h?"] == 1
    assert adapter.compare(adapter.expected(start), seen, unsure) == 0.5


def test_arena_a_move_resting_on_a_tree_s_height_names_that_ship_as_a_doubt_and_a_d8_s_height_does_not():
    start = _arena_designed().apply(Start(0, "a1h3")).apply(Start(1, "h8h2"))
    after = start
    for action in (Plan(0, (1, 1, 0)), Plan(1, (0, -1, 0)), ArenaHold(0), ArenaHold(1)):
        after = after.apply(action)
    adapter = adapter_for("space-arena", ARENA_COLOURS)
    # The trees' heights are counted from pieces the mapper was sure of: judged as read, but named.
    verdict = Referee(adapter, start).judge(arena_table(after), arena_table(start))
    assert verdict.accepted and verdict.actions[:2] == (Plan(0, (1, 1, 0)), Plan(1, (0, -1, 0)))
    assert verdict.doubts == tuple(sorted(adapter.expected(after)))
    assert not adapter.seen(arena_table(after))[1], "the mapper itself was sure of every piece"
    # P2 laid down beside a d8 that was read: only P1's tree is a doubt.
    verdict = Referee(adapter, start).judge(arena_table(after, laid_down=1, die=after.ships[1].at[2] + 1),
                                            arena_table(start))
    assert verdict.accepted and verdict.doubts == (f"{ARENA_COLOURS[0].value} @b2 h3",)
    assert doubt_texts(adapter, verdict.doubts, arena_table(after)) == [
        f"{verdict.doubts[0]}: check its height: a tree's lower pieces are often hidden"]
    assert adapter.doubt_note("red @b2 h?") == "height not read"
    # A ship that did not move is no doubt.
    assert Referee(adapter, start).judge(arena_table(start), arena_table(start)).doubts == ()


def test_arena_a_tree_seen_short_is_a_doubt_and_one_seen_taller_a_contradiction():
    # Plans entered on the players' pages, fire orders awaited: the ships have not moved yet.
    start = _arena_designed().apply(Start(0, "a1h3")).apply(Start(1, "h8h2"))
    start = start.apply(Plan(0, (1, 0, 0))).apply(Plan(1, (0, 0, 0)))
    adapter = adapter_for("space-arena", ARENA_COLOURS)
    table = arena_table(start)
    ship = [p for p in table.pieces if p.colour == ARENA_COLOURS[0]]
    short = replace(table, pieces=tuple(p for p in table.pieces if p is not ship[1]))
    seen, unsure = adapter.seen(short)
    assert adapter.compare(adapter.expected(start), seen, unsure) == 0.5
    verdict = Referee(adapter, start).judge(short)
    assert verdict.accepted and verdict.text == "no move"
    taller = replace(table, pieces=table.pieces + (replace(ship[-1], level=3),))
    seen, unsure = adapter.seen(taller)
    assert adapter.compare(adapter.expected(start), seen, unsure) >= 1
    assert not Referee(adapter, start).judge(taller).accepted


def test_arena_a_ship_beyond_its_speed_is_illegal_or_misread():
    start = _arena_designed().apply(Start(0, "a1h3")).apply(Start(1, "h8h2"))
    table = arena_table(start)
    far = tuple(replace(p, cell="h1") if p.colour == ARENA_COLOURS[0] else p for p in table.pieces)
    referee = Referee(adapter_for("space-arena", ARENA_COLOURS), start)
    verdict = referee.update(replace(table, pieces=far))
    assert not verdict.accepted and verdict.text.startswith("illegal or misread: expected ")
    assert referee.state is start


def test_arena_needs_the_seats_colours():
    with pytest.raises(ValueError, match="colour"):
        adapter_for("space-arena")


# --- Ice Arena --------------------------------------------------------------------------------

def ice_arena_table(state, hide_equal: bool = False) -> Observation:
    """Bots as stacks (core, spares, cap); with `hide_equal` a piece capped by one of its own size
    is left out, as the camera would miss it."""
    grid = state.grid
    pieces = []
    for k, bot in enumerate(state.bots):
        stack = [(p.colour, p.size) for p in bot.core] + [(c, Size.SMALL) for c in bot.spares]
        stack.append((state.colours[bot.owner], Size.SMALL))
        if hide_equal:
            stack = [s for i, s in enumerate(stack) if i + 1 == len(stack) or stack[i + 1][1] < s[1]]
        for level, (colour, size) in enumerate(stack):
            pieces.append(_upright(colour, size, grid.name(bot.cell), stack=k, level=level))
    for small in state.smalls:
        name = grid.name(small.cell)
        if small.direction is None:
            pieces.append(_upright(small.colour, Size.SMALL, name))
        else:
            pieces.append(_lying(small.colour, Size.SMALL, small.direction.value, name))
    return Observation("ice-arena", tuple(pieces))


def _ice_arena_about_to_move():
    rng = random.Random(7)
    state = get_game("ice-arena").new_initial_state(2)
    for _ in range(3000):
        actions = state.legal_actions()
        moves = [a for a in actions if isinstance(a, MoveTo) and state.grid.name(state.bot(a.bot).cell) != a.cell]
        if moves:
            return state, moves[0]
        state = state.apply(rng.choice(actions))
    raise AssertionError("no bot got to move")


def test_ice_arena_bots_are_seen_as_stacks_even_with_hidden_pieces():
    state = get_game("ice-arena").new_initial_state(2)
    adapter = adapter_for("ice-arena")
    for hide in (False, True):
        seen, unsure = adapter.seen(ice_arena_table(state, hide))
        assert adapter.compare(adapter.expected(state), seen, unsure) == 0
    assert Referee(adapter, state).judge(ice_arena_table(state, True)).text == "no move"


def test_a_stack_matches_a_bot_only_with_its_core_in_order_and_its_owners_cap():
    bot = "bot red-L/blue-M/red-M|blue,green|red @0,0"
    assert stack_matches_bot(["red-L", "blue-M", "red-M", "green-S", "blue-S", "red-S"], bot)
    assert stack_matches_bot(["red-L", "blue-M", "red-M", "red-S"], bot)  # smalls under the cap hidden
    assert not stack_matches_bot(["red-L", "red-M", "blue-M", "red-S"], bot)  # core out of order
    assert not stack_matches_bot(["red-L", "blue-M", "red-M", "blue-S"], bot)  # not the owner's cap
    assert not stack_matches_bot(["red-L", "blue-M", "red-M", "yellow-S", "red-S"], bot)  # not a spare


def test_ice_arena_a_bot_moving_is_recognised():
    state, move = _ice_arena_about_to_move()
    after = state.apply(move)
    referee = Referee(adapter_for("ice-arena"), state)
    verdict = referee.update(ice_arena_table(after))
    assert verdict.accepted and verdict.actions == (move,)
    assert referee.state.bot(move.bot).cell == after.bot(move.bot).cell


def _bled(table: Observation) -> Observation:
    """Each bot's large read the colour of the piece on it, as the detector's colour classifier reads
    a covered piece through whose band the piece above shows (the commonest stacked-colour error)."""
    pieces = list(table.pieces)
    for i, p in enumerate(pieces):
        above = next((q for q in pieces if q.stack is not None and q.stack == p.stack and q.level == (p.level or 0) + 1), None)
        if p.stack is not None and p.size == Size.LARGE and above is not None:
            pieces[i] = replace(p, colour=above.colour)
    return replace(table, pieces=tuple(pieces))


def test_a_covered_piece_read_the_colour_of_the_one_on_it_is_in_doubt_and_the_bot_still_matches():
    bot = "bot green-L/red-M/blue-M|green,yellow|yellow @0,0"
    seen = ["blue-L", "blue-M", "yellow-S"]  # the red medium hidden under the blue one, the large read blue
    assert colours_in_doubt(seen) == {0}
    assert not stack_matches_bot(seen, bot)
    assert stack_matches_bot(seen, bot, colours_in_doubt(seen))
    # Doubt is about colour only: a medium read where the large stands is no match.
    assert not stack_matches_bot(["blue-M", "blue-M", "yellow-S"], bot, frozenset({0}))


def test_ice_arena_a_bot_moving_is_recognised_while_every_bot_is_misread_a_little():
    state, move = _ice_arena_about_to_move()
    after = state.apply(move)
    adapter = adapter_for("ice-arena")
    baseline, now = _bled(ice_arena_table(state, True)), _bled(ice_arena_table(after, True))
    seen, unsure = adapter.seen(now)
    assert adapter.compare(adapter.expected(after), seen, unsure) >= 1  # too many misreads to match at once
    # Read from the change since the baseline, whose misreads are the same: the move alone.
    verdict = Referee(adapter, state).judge(now, baseline)
    assert verdict.accepted and verdict.by_change and verdict.actions == (move,)


def test_ice_arena_a_bot_where_it_cannot_go_is_illegal_or_misread():
    state, move = _ice_arena_about_to_move()
    grid = state.grid
    table = ice_arena_table(state)
    here = grid.name(state.bot(move.bot).cell)
    far = next(grid.name(c) for c in reversed(grid.cells)
               if state.bot_at(c) is None and not state.smalls_at(c)
               and not any(m.cell == grid.name(c) for m in state.legal_actions() if isinstance(m, MoveTo)))
    pieces = tuple(replace(p, cell=far) if p.cell == here and p.stack is not None else p for p in table.pieces)
    referee = Referee(adapter_for("ice-arena"), state)
    verdict = referee.update(replace(table, pieces=pieces))
    assert not verdict.accepted and verdict.text.startswith("illegal or misread: expected ")
    assert referee.state is state


# --- Icebomb Arena ----------------------------------------------------------------------------

def test_icebomb_a_clear_small_pyramid_on_a_square_is_read_as_the_glass_bead_it_looks_like():
    adapter = adapter_for("icebomb-arena", (Colour.RED, Colour.YELLOW, Colour.GREEN, Colour.BLUE))
    seen = Observation("icebomb-arena", (
        _upright(Colour.CLEAR, Size.SMALL, "a6"),   # a bead taken for a pyramid: no seat plays clear
        _upright(Colour.RED, Size.SMALL, "c3"),     # P1's block
        _upright(Colour.WHITE, Size.MEDIUM, "d4"),  # too big for a bead: reported as it is
    ))
    items, unsure = adapter.seen(seen)
    assert items == {"bead @a6": 1, "red-S U @c3": 1, "white-M U @d4": 1}
    assert unsure == {"bead @a6": 1}
    # A seat that plays clear has clear blocks.
    clear_seat = adapter_for("icebomb-arena", (Colour.CLEAR, Colour.YELLOW, Colour.GREEN, Colour.BLUE))
    assert clear_seat.seen(seen)[0]["clear-S U @a6"] == 1
