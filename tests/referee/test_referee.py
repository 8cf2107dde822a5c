"""The referee core and the IceTowers adapter, without images."""

from __future__ import annotations

from companion.games import get_game
from companion.pieces import Colour, Pose, Size
from companion.referee import Referee, adapter_for
from companion.referee.core import distance, doubt_texts
from companion.vision.observation import Observation, SeenPiece
from collections import Counter
from dataclasses import replace


def _tower(stack_id, *pieces):
    return [SeenPiece(kind="pyramid", colour=Colour(c), size=Size.parse(s), pose=Pose.UPRIGHT, stack=stack_id, level=i)
            for i, (c, s) in enumerate(p.split("-") for p in pieces)]


def _free(piece):
    c, s = piece.split("-")
    return SeenPiece(kind="pyramid", colour=Colour(c), size=Size.parse(s), pose=Pose.UPRIGHT)


def _table(state):
    return Counter(str(t[0][0]) if len(t[0]) == 1 else "/".join(map(str, t[0])) for t in state.towers)


def test_unsure_items_cost_less_than_sure_ones():
    assert distance(Counter({"a": 1}), Counter({"b": 1}), Counter({"b": 1})) == 1.5
    assert distance(Counter({"a": 1}), Counter({"a": 1})) == 0


def test_icetowers_a_cap_is_recognised_from_the_towers_seen():
    game = get_game("icetowers")
    state = game.new_initial_state(2, options={"pieces_per_size": 1})
    referee = Referee(adapter_for("icetowers"), state, max_actions=1)
    cap = next(a for a in state.legal_actions() if str(a).startswith("P1 cap") and "/" not in str(a).split(" on ")[1])
    after = state.apply(cap)
    pieces = []
    for k, (tower, _) in enumerate(after.towers):
        pieces += _tower(k, *map(str, tower)) if len(tower) > 1 else [_free(str(tower[0]))]
    verdict = referee.update(Observation("icetowers", tuple(pieces)))
    assert verdict.accepted and verdict.actions == (cap,)
    assert referee.state == after


def test_icetowers_a_piece_hidden_inside_a_tower_is_filled_in_from_the_history():
    game = get_game("icetowers")
    state = game.new_initial_state(2, options={"pieces_per_size": 1})
    # Cap a large with a large: the lower one is almost hidden, and the camera sees one large.
    cap = next(a for a in state.legal_actions() if str(a).startswith("P1 cap red-L on yellow-L"))
    after = state.apply(cap)
    pieces = []
    for k, (tower, _) in enumerate(after.towers):
        shown = [str(p) for p in tower][-1:] if len(tower) > 1 else [str(tower[0])]
        pieces += [_free(shown[0])]
    referee = Referee(adapter_for("icetowers"), state, max_actions=1)
    verdict = referee.update(Observation("icetowers", tuple(pieces)))
    assert verdict.accepted and verdict.actions == (cap,)


def test_icetowers_a_tower_read_with_one_piece_a_size_off_still_shows_the_cap_and_the_history_keeps_its_sizes():
    game = get_game("icetowers")
    state = game.new_initial_state(2, options={"pieces_per_size": 1})
    before = state.apply("P1 cap red-S on yellow-M")
    cap = game.parse_action("P2 cap yellow-S on red-M")
    after = before.apply(cap)
    pieces = []
    for k, (tower, _) in enumerate(after.towers):
        texts = [str(p) for p in tower]
        # The camera reads the first tower's medium as a large.
        texts = ["yellow-L" if (t == "yellow-M" and "red-S" in texts) else t for t in texts]
        pieces += _tower(k, *texts) if len(texts) > 1 else [_free(texts[0])]
    assert any(p.colour == Colour.YELLOW and p.size == Size.LARGE and p.stack is not None for p in pieces)
    referee = Referee(adapter_for("icetowers"), before, max_actions=1)
    verdict = referee.update(Observation("icetowers", tuple(pieces)))
    assert verdict.accepted and verdict.actions == (cap,)
    assert referee.state == after  # scored from the history: yellow-M under red-S, as capped


def test_icetowers_a_covered_piece_read_the_colour_of_the_one_on_it_still_shows_the_cap():
    game = get_game("icetowers")
    state = game.new_initial_state(2, options={"pieces_per_size": 1})
    cap = game.parse_action("P1 cap red-S on yellow-M")
    after = state.apply(cap)
    pieces = []
    for k, (tower, _) in enumerate(after.towers):
        texts = [str(p) for p in tower]
        # The yellow medium under the red small is read red, the colour that shows through it.
        texts = ["red-M" if (t == "yellow-M" and len(texts) > 1) else t for t in texts]
        pieces += _tower(k, *texts) if len(texts) > 1 else [_free(texts[0])]
    assert any(p.colour == Colour.RED and p.size == Size.MEDIUM and p.stack is not None for p in pieces)
    referee = Referee(adapter_for("icetowers"), state, max_actions=1)
    verdict = referee.update(Observation("icetowers", tuple(pieces)))
    assert verdict.accepted and verdict.actions == (cap,)
    assert referee.state == after  # the history's yellow medium, not the red one read


def test_a_table_no_play_explains_is_a_verdict():
    game = get_game("icetowers")
    state = game.new_initial_state(2, options={"pieces_per_size": 1})
    referee = Referee(adapter_for("icetowers"), state, max_actions=1)
    verdict = referee.update(Observation("icetowers", tuple(_tower(0, "red-S", "yellow-L"))))
    assert not verdict.accepted and verdict.text.startswith("illegal or misread: expected ")
    assert referee.state is state


def test_only_a_piece_capped_by_its_own_size_can_hide():
    from companion.referee.icetowers import explains_hidden

    assert explains_hidden(["red-L"], ["yellow-L", "red-L"])
    assert not explains_hidden(["red-M"], ["yellow-L", "red-M"])  # a medium cannot hide a large
    assert not explains_hidden(["yellow-L"], ["yellow-L", "red-L"])  # the top is always seen


# --- moves read from the change since the last agreed position ----------------------------------

def _seen(state, misread=None):
    """The camera's view of `state`'s towers, with one piece (`misread`: (seen as, read as)) misread."""
    pieces = []
    for k, (tower, _) in enumerate(state.towers):
        names = [str(p) for p in tower]
        if misread:
            names = [misread[1] if n == misread[0] else n for n in names]
        pieces += _tower(k, *names) if len(names) > 1 else [_free(names[0])]
    return Observation("icetowers", tuple(pieces))


def _two_player_start():
    return get_game("icetowers").new_initial_state(2, options={"pieces_per_size": 1})


def test_a_move_is_read_from_the_change_when_a_misread_persists():
    state = _two_player_start()
    cap = next(a for a in state.legal_actions()
               if str(a).startswith("P1 cap") and "red-S" not in str(a) and "/" not in str(a).split(" on ")[1])
    misread = ("red-S", "orange-S")  # the camera takes the small red for an orange, every time
    baseline, after = _seen(state, misread), _seen(state.apply(cap), misread)
    referee = Referee(adapter_for("icetowers"), state, max_actions=1)
    assert not referee.judge(after).accepted  # the whole position never matches
    verdict = referee.update(after, baseline)
    assert verdict.accepted and verdict.by_change and verdict.actions == (cap,)
    assert verdict.persistent == ("orange-S", "red-S")  # the IceTowers adapter's items
    assert referee.state == state.apply(cap)


def test_an_unchanged_table_with_a_persistent_misread_is_no_move():
    state = _two_player_start()
    seen = _seen(state, ("red-S", "orange-S"))
    verdict = Referee(adapter_for("icetowers"), state, max_actions=1).judge(seen, baseline=seen)
    assert verdict.accepted and verdict.by_change and verdict.actions == () and verdict.text == "no move"


def test_a_change_no_action_explains_is_still_a_verdict_with_a_baseline():
    state = _two_player_start()
    baseline = _seen(state)
    # A piece appeared and nothing legal brings one in (green plays no part in a red-yellow game).
    more = Observation("icetowers", baseline.pieces + (_free("green-M"),))
    verdict = Referee(adapter_for("icetowers"), state, max_actions=1).judge(more, baseline)
    assert not verdict.accepted and not verdict.by_change and verdict.text.startswith("illegal or misread")


# --- moves read from where the picture changed (a fixed camera's second cue) -------------------------

def _icebomb_bombs_phase(*bombs):
    """The sample game's four players after their bids, with `bombs` placed in turn (P3 first)."""
    state = get_game("icebomb-arena").new_initial_state(4)
    for text in ("P1 bid -", "P2 bid SS", "P3 bid MS", "P4 bid SS", *bombs):
        state = state.apply(text)
    return state


def _beads(*cells):
    return Observation("icebomb-arena", tuple(SeenPiece(kind="bead", cell=c) for c in cells))


def _icebomb_referee(state):
    return Referee(adapter_for("icebomb-arena", [Colour.RED, Colour.YELLOW, Colour.GREEN, Colour.BLUE]), state)


def test_a_bead_the_detector_missed_is_read_from_where_the_picture_changed():
    state = _icebomb_bombs_phase("P3 bomb d4")
    seen = _beads("d4")  # P4 put a bead on h5; the detector saw nothing new
    referee = _icebomb_referee(state)
    assert referee.judge(seen, seen).text == "no move"
    verdict = referee.update(seen, seen, frozenset({"h5"}))
    assert verdict.accepted and [str(a) for a in verdict.actions] == ["P4 bomb h5"]
    assert verdict.from_picture == ("h5",) and verdict.persistent == ("bead @h5",)
    assert "picture" in verdict.text
    # The next bead is seen by the detector; the one it missed is still missed: read by the change.
    after = _beads("d4", "c1")
    verdict = referee.update(after, seen, frozenset({"c1"}))
    assert [str(a) for a in verdict.actions] == ["P1 bomb c1"] and not verdict.from_picture


def test_a_picture_change_no_single_action_explains_changes_nothing():
    state = _icebomb_bombs_phase("P3 bomb d4")
    seen = _beads("d4")
    verdict = _icebomb_referee(state).judge(seen, seen, frozenset({"h5", "a1"}))  # two bombs at once?
    assert verdict.text == "no move" and not verdict.from_picture
    # Without a baseline there is nothing the picture changed from.
    assert _icebomb_referee(state).judge(seen, None, frozenset({"h5"})).text == "no move"


def test_the_picture_never_overrules_what_the_detector_saw_change():
    state = _icebomb_bombs_phase("P3 bomb d4", "P4 bomb h5")
    baseline = _beads("d4", "h5")
    # The bead on d4 vanished to the detector (no action takes a bomb away), and the picture
    # changed there and on c1, where P1 could put a bomb: no legal action explains both.
    verdict = _icebomb_referee(state).judge(_beads("h5"), baseline, frozenset({"c1", "d4"}))
    assert not verdict.accepted and verdict.text.startswith("illegal or misread")


def test_a_piece_the_detector_loses_where_the_picture_did_not_change_is_its_misread():
    state = _icebomb_bombs_phase("P3 bomb d4", "P4 bomb h5")
    baseline = _beads("d4", "h5")
    # The detector lost d4's bead (a clear bead it finds in one frame and not the next), but d4's
    # picture did not change: the bead is there. The picture changed on c1 alone: P1's bomb.
    verdict = _icebomb_referee(state).judge(_beads("h5"), baseline, frozenset({"c1"}))
    assert verdict.accepted and [str(a) for a in verdict.actions] == ["P1 bomb c1"]
    # Without the picture (no baseline frame), the lost bead still stands against any move.
    assert not _icebomb_referee(state).judge(_beads("h5"), baseline).accepted



def test_when_no_cell_of_the_picture_changed_a_bead_the_detector_loses_is_still_there():
    state = _icebomb_bombs_phase("P3 bomb d4", "P4 bomb h5")
    baseline = _beads("d4", "h5")
    # Something changed beside the board (a seat zone), none of the board's cells did.
    verdict = _icebomb_referee(state).judge(_beads("h5"), baseline, frozenset())
    assert verdict.accepted and verdict.text == "no move" and verdict.persistent == ("bead @d4",)
    # When the picture cannot tell (the light changed), the lost bead stands against the game.
    assert not _icebomb_referee(state).judge(_beads("h5"), baseline, None).accepted

def test_a_misread_that_ends_is_not_part_of_the_next_move():
    state = _icebomb_bombs_phase("P3 bomb d4", "P4 bomb h5")
    stray = SeenPiece(kind="pawn", cell="f3")  # a pawn the camera keeps seeing: the position never matches
    # h5's bead was missed when it was placed (the game has it).
    baseline = Observation("icebomb-arena", _beads("d4").pieces + (stray,))
    # Now the detector sees it, and P1's new bead on c1: the move is c1 alone.
    after = Observation("icebomb-arena", _beads("d4", "h5", "c1").pieces + (stray,))
    verdict = _icebomb_referee(state).judge(after, baseline)
    assert verdict.accepted and verdict.by_change and [str(a) for a in verdict.actions] == ["P1 bomb c1"]
    assert verdict.persistent == ("pawn @f3",)


def _observed(items):
    """An Icebomb Arena observation of item texts ('pawn @e4', 'red-M E @P1', 'yellow-M U @P2')."""
    pieces = []
    for item in items:
        what, where = item.rsplit(" @", 1)
        place = {"zone": where} if where[:1] == "P" else {"cell": where}
        if " " not in what:
            pieces.append(SeenPiece(kind=what, **place))
            continue
        name, facing = what.split(" ")
        colour, size = name.split("-")
        pose = Pose.UPRIGHT if facing == "U" else Pose.LYING
        pieces.append(SeenPiece(kind="pyramid", colour=Colour(colour), size=Size.parse(size), pose=pose,
                                direction=None if facing == "U" else facing, **place))
    return Observation("icebomb-arena", tuple(pieces))


def test_a_piece_that_stays_put_but_is_read_another_size_is_a_misread_not_part_of_the_move():
    state = _played("P3 plan SN SW", "P2 plan MU SS", "P4 plan LN SE", "P1 plan ME MW")[0][-1]
    referee = _icebomb_referee(state)
    baseline = _observed(referee.adapter.expected(state).elements())
    moved = state.apply("P3 move SN")
    # P3 stepped north with its small; P4's small beside the board, untouched, now reads as a large
    # (as a medium, one size off, it would be a misread the move carries: see the next test).
    def misread(items):
        return [("blue-L E @P4" if item == "blue-S E @P4" else item) for item in items]

    after = misread(referee.adapter.expected(moved).elements())
    verdict = referee.judge(_observed(after), baseline)
    assert verdict.accepted and verdict.by_change and [str(a) for a in verdict.actions] == ["P3 move SN"]
    assert verdict.persistent == ("blue-L E @P4", "blue-S E @P4")
    # A piece that changes size where it lies while nothing legal moves is still no move of its own.
    flipped = misread(referee.adapter.expected(state).elements())
    assert referee.judge(_observed(flipped), baseline).text == "no move"


def _zamboni_observed(items):
    return Observation("zamboni-wars", _observed(items).pieces)


def test_a_pyramid_read_one_size_off_in_its_place_is_a_misread_the_best_explanation_carries():
    expected = Counter({"red-L N @a4": 1, "green-L S @f6": 1})
    # One size off in its place and pose: half a mismatch, not a missing piece and an extra one.
    assert distance(expected, Counter({"red-M N @a4": 1, "green-L S @f6": 1})) == 0.5
    # Two sizes off, or one off and elsewhere or facing elsewhere, is no such misread.
    for seen in ("red-S N @a4", "red-M N @a5", "red-M E @a4"):
        assert distance(expected, Counter({seen: 1, "green-L S @f6": 1})) == 2
    # A Zamboni that moved and is read a size down: the move is still the only explanation.
    state = get_game("zamboni-wars").new_initial_state(2)
    referee = Referee(adapter_for("zamboni-wars", ()), state)
    moved = state.apply("roll 3").apply("P1 move a4 N")
    seen = [item.replace("-L N @a4", "-M N @a4") for item in referee.adapter.expected(moved).elements()]
    assert any("-M N @a4" in item for item in seen)
    verdict = referee.judge(_zamboni_observed(seen))
    assert verdict.accepted and [str(a) for a in verdict.actions] == ["roll 3", "P1 move a4 N"]


def test_a_piece_that_stays_put_but_whose_direction_cannot_be_told_is_a_misread_not_part_of_the_move():
    state = _played("P3 plan SN SW", "P2 plan MU SS", "P4 plan LN SE", "P1 plan ME MW")[0][-1]
    referee = _icebomb_referee(state)
    baseline = _observed(referee.adapter.expected(state).elements())
    moved = state.apply("P3 move SN")
    # P4's small beside the board, untouched, now shows no direction the camera can tell.
    after = [("blue-S ? @P4" if item == "blue-S E @P4" else item) for item in referee.adapter.expected(moved).elements()]
    verdict = referee.judge(_observed(after), baseline)
    assert verdict.accepted and [str(a) for a in verdict.actions] == ["P3 move SN"]
    # A piece read another size and without a direction, or one turned to another direction, is
    # not taken for the same piece.
    for other in ("blue-M ? @P4", "blue-S N @P4"):
        turned = [(other if item == "blue-S E @P4" else item) for item in referee.adapter.expected(moved).elements()]
        assert not referee.judge(_observed(turned), baseline).accepted


def _played(*texts):
    """The sample game's states and actions through `texts` after the bombs and entries: (the
    states, from before the first of `texts` to after the last; the actions)."""
    state = _icebomb_bombs_phase("P3 bomb d4", "P4 bomb h5", "P1 bomb c1", "P2 bomb a6", "P3 bomb h6", "P4 bomb d2",
                                 "P1 bomb g4", "P2 bomb g6", "P3 enter e4", "P4 enter e8", "P1 enter h7", "P2 enter f5")
    states, actions = [state], []
    for text in texts:
        actions.append(state.game.parse_action(text))
        state = state.apply(text)
        states.append(state)
    return states, actions


def test_a_plan_piece_misread_at_the_reveal_is_corrected_when_the_move_made_with_it_shows_it():
    # P4 revealed LN and SE; the camera read the small as pointing south, and the game took it so.
    true_states, _ = _played("P3 plan SN SW", "P2 plan MU SS", "P4 plan LN SE", "P1 plan ME MW", "P3 move SN")
    states, actions = _played("P3 plan SN SW", "P2 plan MU SS", "P4 plan LN SS", "P1 plan ME MW", "P3 move SN")
    recent = list(zip(states[:-1], actions))
    referee = _icebomb_referee(states[-1])
    adapter = referee.adapter
    # Since P3's move the camera reads the small as it lies, pointing east; now P4 steps east with it.
    baseline = _observed(adapter.expected(true_states[-1]).elements())
    now = _observed(adapter.expected(true_states[-1].apply("P4 move SE")).elements())
    assert not referee.judge(now, baseline).accepted  # the game as it stands has no SE to move with
    verdict = referee.judge(now, baseline, None, recent)
    assert verdict.accepted and [str(a) for a in verdict.actions] == ["P4 move SE"]
    assert (verdict.revision.back, str(verdict.revision.action), str(verdict.revision.replacement)) == (
        3, "P4 plan LN SS", "P4 plan LN SE")
    assert "correcting P4 plan LN SS to P4 plan LN SE" in verdict.text
    assert verdict.state.to_json() == true_states[-1].apply("P4 move SE").to_json()
    # When the table never showed the other reading (the small was read pointing south until it was
    # played), the move stays a verdict: a correction is not made up to fit a move.
    misread = _observed(adapter.expected(states[-1]).elements())
    assert not referee.judge(now, misread, None, recent).accepted


def test_a_plan_piece_misread_at_the_reveal_is_corrected_when_the_table_shows_it_right_after_a_move():
    true_states, _ = _played("P3 plan SN SW", "P2 plan MU SS", "P4 plan LN SE", "P1 plan ME MW", "P3 move SN")
    states, actions = _played("P3 plan SN SW", "P2 plan MU SS", "P4 plan LN SS", "P1 plan ME MW", "P3 move SN")
    referee = _icebomb_referee(states[-1])
    adapter = referee.adapter
    # The small was read pointing south until P4 played the large; now it is read pointing east.
    baseline = _observed(adapter.expected(states[-1]).elements())
    now = _observed(adapter.expected(true_states[-1].apply("P4 move LN")).elements())
    assert not referee.judge(now, baseline).accepted
    verdict = referee.judge(now, baseline, None, list(zip(states[:-1], actions)))
    assert verdict.accepted and [str(a) for a in verdict.actions] == ["P4 move LN"]
    assert str(verdict.revision.replacement) == "P4 plan LN SE"


def test_a_reveal_whose_plan_piece_shows_no_direction_is_ambiguous_and_each_reading_is_a_fix():
    states, _ = _played("P3 plan SN SW", "P2 plan MU SS")
    referee = _icebomb_referee(states[-1])  # P4 and P1 still to commit: their plans are revealed together
    revealed = states[-1].apply("P4 plan LN SE").apply("P1 plan ME MW")
    # P1's medium pointing east lies in front of its seat; the camera cannot tell which way it points.
    seen = [("red-M ? @P1" if item == "red-M E @P1" else item) for item in referee.adapter.expected(revealed).elements()]
    verdict = referee.judge(_observed(seen))
    assert not verdict.accepted and verdict.text.startswith("ambiguous: (")
    fixes = verdict.fixes()
    # Each fix is the whole reveal, one reading of the medium each, the true one among them.
    assert len(fixes) == len(set(fixes)) >= 4
    for fix in fixes:
        steps = sorted(fix.split("; "))
        assert steps[0].startswith("P1 plan M") and steps[0].endswith(" MW") and steps[1] == "P4 plan LN SE"
    assert ["P1 plan ME MW", "P4 plan LN SE"] in [sorted(fix.split("; ")) for fix in fixes]
    # Read pointing east, the reveal is plain.
    assert referee.judge(_observed(referee.adapter.expected(revealed).elements())).accepted


def test_a_move_accepted_on_a_piece_the_camera_was_unsure_of_says_so():
    state = _icebomb_bombs_phase("P3 bomb d4")
    baseline = _beads("d4")
    sure, doubtful = _beads("d4", "h5"), _beads("d4", "h5")
    doubtful = Observation("icebomb-arena", tuple(
        replace(p, unsure=("found with low confidence (0.42)",)) if p.cell == "h5" else p for p in doubtful.pieces))
    verdict = _icebomb_referee(state).judge(doubtful, baseline)
    assert verdict.accepted and [str(a) for a in verdict.actions] == ["P4 bomb h5"]
    assert verdict.doubts == ("bead @h5",)
    assert doubt_texts(_icebomb_referee(state).adapter, verdict.doubts, doubtful) == [
        "bead @h5: found with low confidence (0.42)"]
    assert _icebomb_referee(state).judge(sure, baseline).doubts == ()
    # A doubt about a piece that was already there says nothing about this move.
    old_doubt = Observation("icebomb-arena", tuple(
        replace(p, unsure=("found with low confidence (0.42)",)) if p.cell == "d4" else p for p in sure.pieces))
    assert _icebomb_referee(state).judge(old_doubt, baseline).doubts == ()


def test_a_reveal_read_from_the_change_past_a_persistent_misread_is_ambiguous_when_a_direction_is_unread():
    states, _ = _played("P3 plan SN SW", "P2 plan MU SS")
    referee = _icebomb_referee(states[-1])
    revealed = states[-1].apply("P4 plan LN SE").apply("P1 plan ME MW")
    # The detector never finds the glass bead on a6: the baseline and every position since miss it.
    def without_a6(items):
        return [item for item in items if item != "bead @a6"]

    baseline = _observed(without_a6(referee.adapter.expected(states[-1]).elements()))
    seen = [("red-M ? @P1" if item == "red-M E @P1" else item) for item in without_a6(referee.adapter.expected(revealed).elements())]
    verdict = referee.judge(_observed(seen), baseline)
    assert not verdict.accepted and verdict.text.startswith("ambiguous: (") and "more); please confirm" in verdict.text
    assert len(verdict.options) >= 4 and ["P1 plan ME MW", "P4 plan LN SE"] in [sorted(f.split("; ")) for f in verdict.fixes()]
    # Read pointing east, the reveal is read from the change, the bead's absence a misread that persists.
    plain = referee.judge(_observed(without_a6(referee.adapter.expected(revealed).elements())), baseline)
    assert plain.accepted and plain.by_change and plain.persistent == ("bead @a6",)

