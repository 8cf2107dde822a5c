"""Game records: reading, judging event by event, malformed input, seeded chance."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.cli import sample_record_path
from companion.records import RecordError, RecordHeader, actions_differing, agreeing_prefix, parse_record, read_record, replay, write_record

HEADER = json.dumps({"format": "icehouse-record/1", "game": "icebomb-arena", "players": ["A", "B", "C", "D"], "seed": 5})


def lines(*actions: str) -> list[str]:
    return [HEADER] + [json.dumps({"action": a}) for a in actions]


def test_sample_record_is_a_complete_legal_game():
    header, events = read_record(sample_record_path())
    assert header.game == "icebomb-arena" and len(header.players) == 4
    verdicts = list(replay(header, events))
    assert all(v.legal for v, _ in verdicts)
    final = verdicts[-1][1]
    assert final.is_terminal() and len(final.outcome().winners) == 1
    assert sum(final.alive) == 1


def test_illegal_event_is_a_verdict_and_changes_nothing():
    header, events = parse_record(lines("P1 bid L", "P1 bid M", "P2 bid -"))
    (v1, s1), (v2, s2), (v3, s3) = replay(header, events)
    assert v1.legal and not v2.legal and v3.legal
    assert v2.line == 3 and "not P1's turn" in v2.reason
    assert s2 == s1


def test_unreadable_action_is_a_verdict_not_a_crash():
    header, events = parse_record(lines("P1 dance"))
    [(verdict, _)] = list(replay(header, events))
    assert not verdict.legal and "unknown Icebomb Arena action" in verdict.reason


def test_unresolved_chance_is_drawn_from_the_seed_deterministically():
    record = lines("P1 bid -", "P2 bid -", "P3 bid -", "P4 bid -", "P2 bomb a1")
    runs = []
    for _ in range(2):
        header, events = parse_record(record)
        runs.append([(v.line, v.action, s.edge) for v, s in replay(header, events)])
    assert runs[0] == runs[1]
    drawn = [v for v in runs[0] if v[0] is None]
    assert len(drawn) == 1 and drawn[0][1] == f"edge P{drawn[0][2] + 1}"
    assert runs[0][-1][1] == "P2 bomb a1"


def test_explicit_chance_event_is_used_as_given():
    header, events = parse_record(lines("P1 bid -", "P2 bid -", "P3 bid -", "P4 bid -", "edge P4", "P4 bomb a1"))
    results = list(replay(header, events))
    assert all(v.legal for v, _ in results) and results[-1][1].edge == 3


@pytest.mark.parametrize(("text", "line", "problem"), [
    ("", 1, "empty record"),
    ("not json", 1, "not valid JSON"),
    ("[1, 2]", 1, "expected a JSON object"),
    ('{"game": "chess", "players": ["a", "b"]}', 1, "unknown game 'chess'"),
    ('{"game": "icebomb-arena"}', 1, "players"),
    ('{"game": "icebomb-arena", "players": ["solo"]}', 1, "bad set-up: icebomb-arena is for 2-10 players"),
    ('{"game": "icebomb-arena", "players": ["a", "b"], "seed": "x"}', 1, "seed"),
    ('{"game": "icebomb-arena", "players": ["a", "b"], "colour": 1}', 1, "unknown header field"),
    (HEADER + '\n{"action": "P1 bid -"}\n{"act": "x"}', 3, "unknown event field"),
    (HEADER + '\n{"action": 3}', 2, "event needs"),
    (HEADER + '\n{"action": "P1 bid -", "time": "noon"}', 2, "time"),
    (HEADER + '\n{"action": "P1 bid -"', 2, "not valid JSON"),
])
def test_malformed_records_name_the_line_and_problem(text, line, problem):
    with pytest.raises(RecordError) as err:
        parse_record(text.splitlines())
    assert err.value.line == line and problem in str(err.value)


def test_write_then_read_round_trips(tmp_path):
    header = RecordHeader("icebomb-arena", ("A", "B"), "stash-is-life", 9)
    write_record(tmp_path / "r.jsonl", header, ["P1 bid -", "P2 bid S"])
    back, events = read_record(tmp_path / "r.jsonl")
    assert back == header and [e.action for e in events] == ["P1 bid -", "P2 bid S"]


def test_non_utf8_record_is_a_record_error(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\xff\xfe\x00junk")
    with pytest.raises(RecordError, match="line 1: not UTF-8"):
        read_record(path)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=40), st.builds(json.dumps, st.dictionaries(
    st.sampled_from(["action", "time", "comment", "game", "players", "seed", "x"]),
    st.one_of(st.text(max_size=12), st.integers(), st.none(), st.lists(st.text(max_size=4), max_size=3)),
    max_size=4))), max_size=6))
def test_fuzzed_records_raise_only_record_errors(record_lines):
    try:
        header, events = parse_record(record_lines)
    except RecordError:
        return
    for verdict, _state in replay(header, events):
        assert verdict.legal or verdict.reason


def test_actions_made_together_agree_with_the_record_in_any_order():
    played = ["P1 bomb a1", "P1 plan LN", "P2 plan SE", "P3 plan MU", "P1 move LN", "P2 move SE"]
    plan = lambda a: " plan " in a  # noqa: E731
    seen = ["P1 bomb a1", "P3 plan MU", "P1 plan LN", "P2 plan SE", "P1 move LN"]
    assert agreeing_prefix(seen, played, together=plan) == 5
    assert agreeing_prefix(seen, played, together=lambda a: False) == 1  # in strict order
    # A reveal counts whole or not at all: one plan read wrong stops the agreement before it.
    wrong = ["P1 bomb a1", "P1 plan LN", "P2 plan ME", "P3 plan MU", "P1 move LN"]
    assert agreeing_prefix(wrong, played, together=plan) == 1
    assert agreeing_prefix(played[:2], played, together=plan) == 1  # a reveal seen only in part


def test_the_actions_that_differ_from_the_record_are_found_place_by_place():
    played = ["P1 bomb a1", "P1 plan LN", "P2 plan SE", "P3 plan MU", "P1 move LN", "P2 move SE"]
    plan = lambda a: " plan " in a  # noqa: E731
    # A plan read a size off, and the move made with it (stopped by the edge where the record's was).
    seen = ["P1 bomb a1", "P3 plan MU", "P2 plan SE", "P1 plan MN", "P1 move MN", "P2 move SE"]
    assert actions_differing(seen, played, together=plan) == [3, 4]
    assert actions_differing(played, played, together=plan) == []
    assert actions_differing(seen[:2], played, together=plan) == []  # a reveal seen in part, right so far
