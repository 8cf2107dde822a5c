"""A game being refereed at the table, and the feeds that drive it.

`GameSession` is one game: its set-up, the state now, every state before it (for
undo, charts and the log), open verdicts, and the journal behind it. Each change
is journalled first and then published as a new immutable `Snapshot`; readers
(the web page, the SSE stream) take `snapshot()` without waiting on writers.

`SessionHub` holds the game in play (a new set-up or an import replaces it),
the latest camera frame, faults to show on the page, and a change counter that
streams wait on.

A *feed* (`FeedSource`) pushes into the hub what it recognises: the camera
pipeline (frames -> observations -> referee) will be one; `DemoReplaySource`,
which replays the bundled sample record on a timer as if a camera saw each move,
is another. `SourceRunner` runs a feed on its own thread and reconnects with
back-off when it fails (a camera unplugged). With no feed at all the page is
still a full referee: manual mode, where moves and rolls are chosen on the page.
"""

from __future__ import annotations

import hmac
import logging
import random
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from companion.games import GameError, IllegalActionError, State, get_game
from companion.games.base import CHANCE, SIMULTANEOUS, Action, sample_chance, seat_name
from companion.journal import Entry, Journal, JournalError, JournalFullError
from companion.records import RecordError, RecordHeader, parse_record, read_record, replay

log = logging.getLogger("companion.session")

VERDICT_KINDS = ("illegal", "misread")
#: Which corner of the board, seen from the camera, is a1 (set up on the page).
A1_CORNERS = ("near-left", "near-right", "far-left", "far-right")


class SessionError(ValueError):
    """A request the session refuses; the message says what and why."""


class SeatError(SessionError):
    """An action entered on one player's page for another player's seat."""


class NoGameError(SessionError):
    """No game has been set up yet."""


@dataclass(frozen=True, slots=True)
class LogItem:
    """One effective action of the game, as the public log shows it."""

    seq: int  # the journal entry that introduced it (stable id for corrections)
    index: int  # 1-based position in the game
    text: str  # the action's text, or a placeholder while it is a sealed secret
    seat: int | None
    sealed: bool
    effects: tuple[str, ...]
    source: str
    time: float
    round: Any = None
    corrected_from: str | None = None  # the action a correction replaced (none while sealed)
    doubts: tuple[str, ...] = ()  # what the camera was unsure of in the pieces that showed it


class _Meta(NamedTuple):
    """Where an effective action came from."""

    seq: int
    source: str
    time: float
    corrected_from: str | None = None
    doubts: tuple[str, ...] = ()


def doubts_in(observation: Any) -> tuple[str, ...]:
    """The doubts an action's observation names (the camera's record of an accepted move)."""
    doubts = observation.get("doubts") if isinstance(observation, dict) else None
    return tuple(str(d) for d in doubts) if isinstance(doubts, list) else ()


@dataclass(frozen=True, slots=True)
class VerdictItem:
    """An open verdict: something seen that the referee could not apply.

    `observation` is what the feed kept of the frame it judged (JSON data, e.g. a
    camera `Observation.to_json()`), so the page can draw the position as seen
    beside the one the engine expects; `at` is how many actions had been made
    when it was seen (the engine's position then is `states[at]`).
    """

    id: int
    kind: str  # "illegal" or "misread"
    seen: str
    reason: str
    fixes: tuple[str, ...]
    source: str
    time: float
    observation: Any = None
    at: int | None = None


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything a reader needs about one game at one moment; never changes."""

    version: int
    game_id: str
    header: RecordHeader
    extra: dict[str, Any]
    states: tuple[State, ...]  # the initial state, then the state after each effective action
    actions: tuple[Action, ...]
    log: tuple[LogItem, ...]
    secret_text: tuple[str, ...]  # the real text of each action, sealed or not (for its own seat)
    verdicts: tuple[VerdictItem, ...]
    last_error: str | None = None

    @property
    def state(self) -> State:
        return self.states[-1]

    @property
    def game(self):
        return get_game(self.header.game)


def _new_tokens(num_players: int) -> list[str]:
    return [secrets.token_urlsafe(24) for _ in range(num_players)]


def _sealed_indices(states: Sequence[State], actions: Sequence[Action]) -> set[int]:
    """Secret actions (`State.is_secret`) not yet revealed to the table.

    A group of secrets is revealed together when the game leaves the SIMULTANEOUS
    node they were committed at, or when a seat that had finished committing may
    act again (the next set of secrets began: plans after designs, say).
    """
    pending: list[int] = []
    for i, action in enumerate(actions):
        before, after = states[i], states[i + 1]
        if before.is_secret(action):
            pending.append(i)
        if (after.current_player() != SIMULTANEOUS
                or set(after.players_to_act()) - set(before.players_to_act())):
            pending = []
    return set(pending)


class GameSession:
    """One game in play, backed by its journal. Thread-safe; snapshots are immutable."""

    def __init__(self, journal: Journal, on_change: Callable[[], None] | None = None):
        self._lock = threading.RLock()
        self._journal = journal
        self._on_change = on_change or (lambda: None)
        self.header = journal.header()
        self.game = get_game(self.header.game)
        self.game_id = journal.game_id
        extra = journal.extra()
        tokens = extra.get("player_tokens")
        if not (isinstance(tokens, list) and len(tokens) == len(self.header.players)
                and all(isinstance(t, str) and len(t) >= 16 for t in tokens)):
            raise JournalError(f"{journal.path}: player tokens missing or malformed")
        self._tokens = tuple(tokens)
        self._rng = random.Random(self.header.seed)
        entries = journal.entries()
        for entry in entries:  # set-up facts changed during the game (the a1 corner)
            if entry.kind == "note" and isinstance(entry.detail.get("set"), dict):
                extra.update(entry.detail["set"])
        self._extra = extra
        self._version = len(entries)
        effective = journal.effective_actions(entries)
        self._states: list[State] = [self.header.initial_state()]
        self._actions: list[Action] = []
        self._effects: list[tuple[str, ...]] = []
        self._meta: list[_Meta] = []
        self._rounds: list[Any] = []  # the round each action was made in, for the log
        for a in effective:
            try:
                self._push(a.action, _Meta(a.seq, a.source, a.time, a.corrected_from, doubts_in(a.observation)))
            except GameError as exc:
                raise JournalError(f"{journal.path}: entry {a.seq} does not replay: {exc}") from None
        self._verdicts = [self._verdict_item(e) for e in journal.open_verdicts(entries)]
        self._last_error: str | None = None
        self._snapshot = self._build_snapshot()

    # --- construction ----------------------------------------------------------------
    @classmethod
    def create(cls, data_dir: str | Path, header: RecordHeader, extra: dict[str, Any] | None = None,
               on_change: Callable[[], None] | None = None) -> GameSession:
        """A new game with a fresh journal in `data_dir`. GameError for a bad set-up."""
        header.initial_state()  # validates the set-up before any file is made
        extra = dict(extra or {})
        extra["player_tokens"] = _new_tokens(len(header.players))
        return cls(Journal.create(data_dir, header, extra), on_change)

    @classmethod
    def resume(cls, data_dir: str | Path, game_id: str | None = None,
               on_change: Callable[[], None] | None = None) -> GameSession:
        """The game of `game_id` (default: the newest) exactly as journalled."""
        journal = Journal.open(data_dir, game_id) if game_id else Journal.latest(data_dir)
        return cls(journal, on_change)

    @classmethod
    def import_record(cls, data_dir: str | Path, lines: Iterable[str],
                      on_change: Callable[[], None] | None = None) -> GameSession:
        """A new game from a standard record; RecordError naming the first bad line."""
        header, events = parse_record(lines)
        texts = []
        for verdict, _ in replay(header, events):
            if not verdict.legal:
                raise RecordError(verdict.line or 0, f"{verdict.action!r}: {verdict.reason}")
            texts.append(verdict.action)
        session = cls.create(data_dir, header, {"imported": True}, on_change)
        for text in texts:
            session.apply(text, source="import")
        return session

    def close(self) -> None:
        with self._lock:
            self._journal.close()

    # --- reading ---------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        return self._snapshot

    @property
    def journal_path(self) -> Path:
        return self._journal.path

    def record_lines(self) -> list[str]:
        with self._lock:
            return self._journal.record_lines()

    def seat_for_token(self, token: str) -> int | None:
        """The seat whose private page `token` opens, or None (compared in constant time)."""
        found = None
        if not isinstance(token, str):
            return None
        for seat, t in enumerate(self._tokens):
            if hmac.compare_digest(t.encode(), token.encode()):
                found = seat
        return found

    def token_of(self, seat: int) -> str:
        return self._tokens[seat]

    # --- changes -----------------------------------------------------------------------
    def apply(self, text: str, *, source: str = "manual", observation: Any = None,
              seat: int | None = None) -> tuple[str, ...]:
        """Applies one action given as text; returns its effects in words.

        Raises InvalidActionError / IllegalActionError (ValueErrors naming the text and
        why), SeatError when `seat` is given and the action is not that seat's, and
        JournalFullError when it could not be saved (nothing then changes).
        """
        with self._lock:
            self._apply_unpublished(text, source, observation, seat)
            effects = self._effects[-1]
        self._changed()
        return effects

    def _apply_unpublished(self, text: str, source: str, observation: Any, seat: int | None) -> None:
        # Journals and applies without telling the pages, for changes made of several steps
        # (a verdict's fix) that must be seen whole. The caller holds the lock.
        state = self._states[-1]
        action = self.game.parse_action(text)
        if seat is not None and action.player != seat:
            raise SeatError(f"{str(action)!r} is not an action of {seat_name(seat)}, "
                            f"whose page this is")
        reason = state.illegal_reason(action)
        if reason is not None:
            raise IllegalActionError(action, reason)
        entry = self._write("action", action=str(action), source=source, observation=observation)
        self._push(str(action), _Meta(entry.seq, source, entry.time, doubts=doubts_in(observation)))

    def roll(self, source: str = "manual") -> tuple[str, ...]:
        """At a chance node, draws the outcome from the seeded random source and applies it."""
        with self._lock:
            state = self._states[-1]
            if state.current_player() != CHANCE:
                raise SessionError(f"nothing to roll: {state.turn_text()} to act")
            return self.apply(str(sample_chance(state, self._rng)), source=source,
                              observation={"rolled_by": "companion"})

    def undo(self, source: str = "manual") -> str:
        """Takes back the last effective action; returns its text."""
        with self._lock:
            if not self._actions:
                raise SessionError("nothing to undo: no action has been made")
            seq = self._meta[-1].seq
            text = str(self._actions[-1])
            self._write("undo", target=seq, source=source)
            self._states.pop()
            self._actions.pop()
            self._effects.pop()
            self._meta.pop()
            self._rounds.pop()
        self._changed()
        return text

    def correct(self, seq: int, text: str, *, source: str = "manual") -> list[str]:
        """Replaces the action of entry `seq` by `text`, keeping later actions that stay legal.

        Returns the texts of later actions dropped because the correction made them
        illegal. SessionError when `seq` is not an action in play; IllegalActionError
        when `text` is not legal where the corrected action stood.
        """
        with self._lock:
            index = next((i for i, m in enumerate(self._meta) if m.seq == seq), None)
            if index is None:
                raise SessionError(f"seq {seq} is not an action in play (see the log for ids)")
            action = self.game.parse_action(text)
            state = self._states[index]
            reason = state.illegal_reason(action)
            if reason is not None:
                raise IllegalActionError(action, reason)
            if action.player != self._actions[index].player:
                raise SessionError(f"a correction of {str(self._actions[index])!r} must be an action of "
                                   f"the same player, not {str(action)!r}")
            # Work out the replay before writing, so the journal entry says what was dropped.
            kept: list[tuple[Action, _Meta]] = []
            dropped: list[int] = []
            dropped_text: list[str] = []
            state = state.apply(action)
            for later, meta in zip(self._actions[index + 1:], self._meta[index + 1:]):
                if state.illegal_reason(later) is None:
                    state = state.apply(later)
                    kept.append((later, meta))
                else:
                    dropped.append(meta.seq)
                    dropped_text.append(str(later))
            was = str(self._actions[index])
            entry = self._write("correct", action=str(action), target=seq, source=source,
                                detail={"was": was, "dropped": dropped})
            del self._states[index + 1:], self._actions[index:], self._effects[index:], self._meta[index:]
            del self._rounds[index:]
            self._push(str(action), _Meta(seq, source, entry.time, was))
            for later, meta in kept:
                self._push(str(later), meta)
        self._changed()
        return dropped_text

    def add_verdict(self, kind: str, seen: str, reason: str, fixes: Sequence[str] = (), *,
                    source: str = "camera", observation: Any = None, supersede: bool = False) -> int:
        """Records what was seen and could not be applied; returns the verdict's id.

        `observation` (JSON data) is kept with it and shown on the page: a camera
        `Observation.to_json()`, or an object holding one under "observation" and
        optionally the referee's "expected" items ('pawn @c3', 'red-L N @d4').

        With `supersede`, the open verdicts from the same source about the same position of the
        game (no action since) are closed by this one: the camera's latest view of a table that
        does not match replaces its earlier ones, so the page shows one problem, not a pile.
        The journal keeps them all.
        """
        if kind not in VERDICT_KINDS:
            raise SessionError(f"verdict kind {kind!r} (expected one of {', '.join(VERDICT_KINDS)})")
        with self._lock:
            at = len(self._actions)
            entry = self._write("verdict", action=seen, source=source, observation=observation,
                                detail={"kind": kind, "reason": reason, "fixes": list(fixes), "at": at})
            if supersede:
                for old in [v for v in self._verdicts if v.source == source and v.at == at]:
                    self._write("resolve", target=old.id, source=source, detail={"superseded_by": entry.seq})
                    self._verdicts.remove(old)
            self._verdicts.append(self._verdict_item(entry))
        self._changed()
        return entry.seq

    def resolve_verdict(self, verdict_id: int, fix: str | None = None, *, source: str = "manual") -> None:
        """Closes a verdict: applies `fix` (one of its fixes or any legal action; several made at
        once, a reveal's plans, joined by '; ') or dismisses it. A fix is applied whole or not at all."""
        with self._lock:
            verdict = next((v for v in self._verdicts if v.id == verdict_id), None)
            if verdict is None:
                raise SessionError(f"no open verdict {verdict_id}")
            if fix is not None:
                steps = [step.strip() for step in fix.split(";")]
                state = self._states[-1]
                for step in steps:  # every step legal after the ones before it, before any is journalled
                    action = self.game.parse_action(step)
                    reason = state.illegal_reason(action)
                    if reason is not None:
                        raise IllegalActionError(action, reason)
                    state = state.apply(action)
                for step in steps:
                    self._apply_unpublished(step, source, {"fixes_verdict": verdict_id}, None)
            self._write("resolve", target=verdict_id, source=source,
                        detail={"fix": fix} if fix is not None else {"dismissed": True})
            self._verdicts = [v for v in self._verdicts if v.id != verdict_id]
        self._changed()

    def set_a1_corner(self, corner: str, *, source: str = "manual") -> None:
        """Sets which board corner, seen from the camera, is a1; kept in the journal."""
        if corner not in A1_CORNERS:
            raise SessionError(f"a1 corner {corner!r} (expected one of {', '.join(A1_CORNERS)})")
        with self._lock:
            self._write("note", source=source, detail={"message": f"a1 corner set to {corner}",
                                                       "set": {"a1_corner": corner}})
            self._extra["a1_corner"] = corner
        self._changed()

    def note(self, message: str, source: str = "companion") -> None:
        """Keeps a message (a fault, a recovery) in the journal; never raises."""
        with self._lock:
            try:
                self._journal.append("note", source=source, detail={"message": message})
            except JournalError:
                log.warning("could not journal note %r", message)

    # --- internals -------------------------------------------------------------------------
    def _write(self, kind: str, **fields: Any) -> Entry:
        try:
            entry = self._journal.append(kind, **fields)
        except JournalError as exc:
            self._last_error = str(exc)
            self._snapshot = self._build_snapshot()
            self._changed()
            raise
        self._last_error = None
        return entry

    def _push(self, text: str, meta: _Meta) -> None:
        action = self.game.parse_action(text)
        before = self._states[-1]
        state, effects = before.apply_with_effects(action)
        self._rounds.append(before.summary().get("round"))
        self._states.append(state)
        self._actions.append(action)
        self._effects.append(tuple(effects))
        self._meta.append(meta)

    def _verdict_item(self, entry: Entry) -> VerdictItem:
        d = entry.detail
        at = d.get("at")
        return VerdictItem(entry.seq, str(d.get("kind", "illegal")), entry.action or "",
                           str(d.get("reason", "")), tuple(str(f) for f in d.get("fixes", ())),
                           entry.source, entry.time, entry.observation,
                           at if isinstance(at, int) and not isinstance(at, bool) else None)

    def _changed(self) -> None:
        with self._lock:
            self._version += 1
            self._snapshot = self._build_snapshot()
        self._on_change()

    def _build_snapshot(self) -> Snapshot:
        states, actions = tuple(self._states), tuple(self._actions)
        sealed = _sealed_indices(states, actions)
        log_items = []
        for i, (action, effects, meta) in enumerate(zip(actions, self._effects, self._meta)):
            hidden = i in sealed
            log_items.append(LogItem(
                meta.seq, i + 1,
                f"{seat_name(action.player)} committed a secret choice" if hidden else str(action),
                action.player, hidden, () if hidden else effects, meta.source, meta.time, self._rounds[i],
                None if hidden else meta.corrected_from, () if hidden else meta.doubts))
        return Snapshot(self._version, self.game_id, self.header, dict(self._extra), states, actions,
                        tuple(log_items), tuple(str(a) for a in actions), tuple(self._verdicts),
                        self._last_error)


# ==== the hub: the game in play, the camera frame, faults ===================================

class SessionHub:
    """The game in play and what surrounds it; the server and the feeds share one hub."""

    def __init__(self, data_dir: str | Path, join_token: str | None = None):
        self.data_dir = Path(data_dir)
        self.join_token = join_token or secrets.token_urlsafe(24)
        self._cond = threading.Condition()
        self._version = 0
        self._session: GameSession | None = None
        self._faults: dict[str, str] = {}
        self._frame: bytes | None = None
        self._frame_time = 0.0
        self.source_description = "manual"

    # --- the game ----------------------------------------------------------------------
    @property
    def session(self) -> GameSession | None:
        return self._session

    def require_session(self) -> GameSession:
        session = self._session
        if session is None:
            raise NoGameError("no game is set up yet: choose one on the set-up page")
        return session

    def new_game(self, header: RecordHeader, extra: dict[str, Any] | None = None) -> GameSession:
        return self._replace(GameSession.create(self.data_dir, header, extra, self._changed))

    def resume(self, game_id: str | None = None) -> GameSession:
        return self._replace(GameSession.resume(self.data_dir, game_id, self._changed))

    def import_record(self, lines: Iterable[str]) -> GameSession:
        return self._replace(GameSession.import_record(self.data_dir, lines, self._changed))

    def _replace(self, session: GameSession) -> GameSession:
        old, self._session = self._session, session
        if old is not None:
            old.close()
        self._changed()
        return session

    # --- what the feed reports -----------------------------------------------------------
    def push_frame(self, jpeg: bytes) -> None:
        """The latest annotated camera frame (JPEG bytes); only the newest is kept."""
        self._frame, self._frame_time = jpeg, time.time()
        self._changed()

    def frame(self) -> tuple[bytes | None, float]:
        return self._frame, self._frame_time

    def report_fault(self, key: str, message: str) -> None:
        """Shows `message` on the page until `clear_fault(key)`; logs and journals it once."""
        if self._faults.get(key) == message:
            return
        self._faults[key] = message
        log.warning("%s: %s", key, message)
        if self._session is not None:
            self._session.note(f"{key}: {message}")
        self._changed()

    def clear_fault(self, key: str) -> None:
        if self._faults.pop(key, None) is not None:
            log.info("%s: recovered", key)
            self._changed()

    def faults(self) -> dict[str, str]:
        return dict(self._faults)

    # --- change notification ---------------------------------------------------------------
    @property
    def version(self) -> int:
        return self._version

    def _changed(self) -> None:
        with self._cond:
            self._version += 1
            self._cond.notify_all()

    def wait_for_change(self, seen_version: int, timeout: float) -> int:
        """Blocks until the hub's version differs from `seen_version` or `timeout` passes."""
        with self._cond:
            self._cond.wait_for(lambda: self._version != seen_version, timeout=timeout)
            return self._version

    def close(self) -> None:
        if self._session is not None:
            self._session.close()


# ==== feeds ===================================================================================

class SourceError(Exception):
    """A feed failed (camera unplugged, unreadable stream); the runner retries with back-off."""


class FeedSource(Protocol):
    """What pushes recognised play into a hub: the camera pipeline, or the demo replay.

    `run` works until `stop` is set or the feed ends (returns), and raises SourceError
    when the feed fails in a way worth retrying. It reports through the hub's session:
    `apply` for recognised actions, `add_verdict` for what it could not apply, and
    through the hub: `push_frame`, `report_fault` / `clear_fault`.
    """

    description: str

    def run(self, hub: SessionHub, stop: threading.Event) -> None: ...


class SourceRunner:
    """Runs one feed on a daemon thread, reconnecting with exponential back-off."""

    def __init__(self, hub: SessionHub, source: FeedSource, first_delay: float = 0.5,
                 max_delay: float = 30.0):
        self.hub, self.source = hub, source
        self.first_delay, self.max_delay = first_delay, max_delay
        self.stop_event = threading.Event()
        self.attempts = 0
        self._thread = threading.Thread(target=self._loop, name=f"feed {source.description}", daemon=True)

    def start(self) -> SourceRunner:
        self.hub.source_description = self.source.description
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self.stop_event.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _loop(self) -> None:
        delay = self.first_delay
        while not self.stop_event.is_set():
            self.attempts += 1
            started = time.monotonic()
            try:
                self.source.run(self.hub, self.stop_event)
            except SourceError as exc:
                if time.monotonic() - started > 10 * self.first_delay:
                    delay = self.first_delay  # it worked for a while: start the back-off afresh
                self.hub.report_fault("source", f"{self.source.description}: {exc}; "
                                      f"retrying in {delay:.1f} s")
                if self.stop_event.wait(delay):
                    return
                delay = min(delay * 2, self.max_delay)
                continue
            except Exception as exc:  # a bug in a feed must not take the server down
                log.exception("feed %s crashed", self.source.description)
                self.hub.report_fault("source", f"{self.source.description} stopped: {exc!r}; "
                                      "manual mode")
                return
            if not self.stop_event.is_set():
                self.hub.report_fault("source", f"{self.source.description}: the feed ended; "
                                      "manual mode")
            return


@dataclass
class DemoReplaySource:
    """Replays a game record on a timer, as if the camera recognised each move.

    Resumes where the game in play left off when it is a prefix of the record;
    otherwise starts a new game. Once, at `misread_at`, it first reports a misread
    (as the camera might) with the true move as its one-click fix, and confirms it
    itself after a few intervals if nobody clicks.
    """

    record: Path
    interval: float = 1.5
    loop: bool = True
    pause_at_end: float = 12.0
    misread_at: int | None = 30
    description: str = field(init=False)

    def __post_init__(self) -> None:
        self.description = f"demo replay of {Path(self.record).name}"

    def sequence(self) -> tuple[RecordHeader, list[str]]:
        header, events = read_record(self.record)
        texts = []
        for verdict, _ in replay(header, events):
            if verdict.legal:
                texts.append(verdict.action)
        return header, texts

    def run(self, hub: SessionHub, stop: threading.Event) -> None:
        header, texts = self.sequence()
        while not stop.is_set():
            session = hub.session
            done = list(session.snapshot().secret_text) if session is not None else None
            if session is None or session.header != header or done != texts[:len(done)]:
                session = hub.new_game(header, {"source": "demo"})
                done = []
            hub.clear_fault("source")
            misread_done = False
            for index in range(len(done), len(texts)):
                if stop.wait(self.interval):
                    return
                if hub.session is not session:
                    return  # someone set up another game: the demo steps aside
                misread = not misread_done and self.misread_at is not None and index >= self.misread_at
                misread_done |= self._push(session, texts, index, stop, misread)
            if not self.loop or stop.wait(self.pause_at_end):
                return

    def _push(self, session: GameSession, texts: list[str], index: int, stop: threading.Event,
              misread_now: bool = False) -> bool:
        """Plays event `index`; first as a misread when `misread_now` and one can be made.

        Returns whether it reported a misread. A secret choice is never misread: a
        camera cannot see one.
        """
        text = texts[index]
        observation = {"demo": {"record": Path(self.record).name, "event": index + 1}}
        if misread_now:
            misread = self._misread_of(session.snapshot().state, text)
            if misread is not None:
                vid = session.add_verdict(
                    "misread", misread, f"seen {misread!r}, but the next frames disagree "
                    f"(expected {text!r}); confirm the fix", (text, misread),
                    source="demo", observation=observation)
                for _ in range(3):
                    if stop.wait(self.interval) or all(v.id != vid for v in session.snapshot().verdicts):
                        return True
                try:
                    session.resolve_verdict(vid, text, source="demo")
                except (GameError, SessionError) as exc:
                    log.info("demo could not confirm its fix: %s", exc)
                return True
        try:
            session.apply(text, source="demo", observation=observation)
        except IllegalActionError as exc:
            session.add_verdict("illegal", text, exc.reason, (), source="demo", observation=observation)
        except GameError as exc:
            session.add_verdict("illegal", text, str(exc), (), source="demo", observation=observation)
        except JournalFullError:
            pass  # the session has reported it; the game is unchanged
        return False

    @staticmethod
    def _misread_of(state: State, text: str) -> str | None:
        """Another legal action of the same player, standing for a misread of `text`; None for a
        secret choice or where the player has no other."""
        if state.current_player() < 0:
            return None
        try:
            if state.is_secret(state.game.parse_action(text)):
                return None
        except GameError:
            return None
        others = [str(a) for a in state.legal_actions(state.current_player()) if str(a) != text]
        return others[0] if others else None


@dataclass
class CameraSource:
    """A camera, video file or image folder, read by the vision pipeline.

    The pipeline (`companion.pipeline.make_feed(spec)`) is built elsewhere; until it
    exists, or when its model file is missing or corrupt, this feed says so on the
    page and the companion stays in manual mode.
    """

    spec: str
    description: str = field(init=False)

    def __post_init__(self) -> None:
        self.description = f"camera feed {self.spec}"

    def run(self, hub: SessionHub, stop: threading.Event) -> None:
        try:
            from companion.pipeline import make_feed  # type: ignore[import-not-found]
        except ImportError:
            hub.report_fault("source", f"{self.spec}: the camera pipeline is not part of this build "
                             "yet; manual mode (choose moves on the page)")
            stop.wait()
            return
        try:
            feed = make_feed(self.spec)
        except (OSError, ValueError) as exc:
            hub.report_fault("source", f"{self.spec}: {exc}; manual mode")
            stop.wait()
            return
        feed.run(hub, stop)


def make_source(spec: str, demo_record: Path, interval: float = 1.5) -> FeedSource | None:
    """The feed for a `--source` value: 'demo', 'manual' (None), or a camera spec."""
    if spec == "demo":
        return DemoReplaySource(demo_record, interval=interval)
    if spec == "manual":
        return None
    return CameraSource(spec)


__all__ = [
    "A1_CORNERS", "CameraSource", "DemoReplaySource", "FeedSource", "GameSession", "LogItem", "NoGameError",
    "SeatError", "SessionError", "SessionHub", "Snapshot", "SourceError", "SourceRunner",
    "VerdictItem", "make_source",
]
