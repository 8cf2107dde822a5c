"""The game journal: one SQLite file per game, append-only, that survives a crash.

Every change to a game is appended as an *entry* before the game in memory
changes (write-ahead), together with the observation that caused it:

* ``action``  an action's text form, as recognised or entered;
* ``undo``    takes back the effective action whose entry is ``target``;
* ``correct`` replaces the effective action of entry ``target`` by ``action``;
  ``detail.dropped`` lists later entries that the correction made illegal;
* ``verdict`` the referee's word on something it could not apply (illegal or
  misread), with the actions that would fix it;
* ``resolve`` closes the verdict of entry ``target`` (fixed or dismissed);
* ``note``    faults and other messages worth keeping.

Nothing is ever updated or deleted (triggers refuse it), so the game after a
``kill -9`` is the fold of the entries: `Journal.effective_actions()`. The file
uses WAL mode with full synchronisation, so a committed entry survives a power
cut too. The journal knows no rules; `companion.session` replays the actions.

Files live in a data directory the user chooses, named by a game id
(``20250101-120000-icebomb-arena-3fa2``) that `check_game_id` validates, so no
name from outside reaches the file system unchecked.
"""

from __future__ import annotations

import json
import re
import secrets
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from companion.records import RecordEvent, RecordHeader, _parse_header

SUFFIX = ".sqlite"
SCHEMA_VERSION = 1
ENTRY_KINDS = ("action", "undo", "correct", "verdict", "resolve", "note")
_GAME_ID = re.compile(r"^\d{8}-\d{6}-[a-z0-9-]{1,40}-[0-9a-f]{4,16}$")

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    time REAL NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ({", ".join(repr(k) for k in ENTRY_KINDS)})),
    action TEXT,
    target INTEGER,
    source TEXT NOT NULL DEFAULT 'manual',
    observation TEXT,
    detail TEXT
);
CREATE TRIGGER IF NOT EXISTS entries_no_update BEFORE UPDATE ON entries
    BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
CREATE TRIGGER IF NOT EXISTS entries_no_delete BEFORE DELETE ON entries
    BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
"""


class JournalError(ValueError):
    """A journal that cannot be opened, read or written; the message names the file."""


class JournalFullError(JournalError):
    """The disk (or the database's size limit) is full: nothing was written."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One journal line, as stored."""

    seq: int
    time: float
    kind: str
    action: str | None = None
    target: int | None = None
    source: str = "manual"
    observation: Any = None
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class EffectiveAction:
    """An action that is part of the game now (after undos and corrections)."""

    seq: int
    action: str
    time: float
    source: str
    observation: Any = None
    corrected_from: str | None = None  # the action it replaced, when a correction put it in


def check_game_id(game_id: str) -> str:
    """Returns `game_id` when it is a well-formed game id; JournalError otherwise."""
    if not isinstance(game_id, str) or not _GAME_ID.match(game_id):
        raise JournalError(f"bad game id {game_id!r} (expected e.g. 20250101-120000-icebomb-arena-3fa2)")
    return game_id


def new_game_id(game: str, now: float | None = None) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(time.time() if now is None else now))
    return f"{stamp}-{game}-{secrets.token_hex(3)}"


def list_games(data_dir: str | Path) -> list[str]:
    """Game ids in `data_dir`, oldest first (by the time in their id, then name)."""
    folder = Path(data_dir)
    if not folder.is_dir():
        return []
    ids = [p.name[: -len(SUFFIX)] for p in folder.iterdir() if p.name.endswith(SUFFIX)]
    return sorted(i for i in ids if _GAME_ID.match(i))


def _is_full(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return "full" in text or isinstance(exc, sqlite3.OperationalError) and "disk i/o" in text


class Journal:
    """An open journal file. Not thread-safe by itself: the session serialises calls."""

    def __init__(self, path: Path, connection: sqlite3.Connection, game_id: str):
        self.path = path
        self.game_id = game_id
        self._db = connection

    # --- opening -------------------------------------------------------------------
    @classmethod
    def create(cls, data_dir: str | Path, header: RecordHeader, extra: dict[str, Any] | None = None,
               game_id: str | None = None) -> Journal:
        """A new, empty journal for a game set up as `header`, in `data_dir`."""
        folder = Path(data_dir)
        folder.mkdir(parents=True, exist_ok=True)
        game_id = check_game_id(game_id or new_game_id(header.game))
        path = folder / f"{game_id}{SUFFIX}"
        if path.exists():
            raise JournalError(f"{path}: a journal of that id already exists")
        journal = cls(path, cls._connect(path), game_id)
        try:
            with journal._db:
                journal._db.executescript(_SCHEMA)
                journal._db.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", [
                    ("schema", str(SCHEMA_VERSION)),
                    ("header", json.dumps(header.to_json())),
                    ("created", repr(time.time())),
                    ("extra", json.dumps(extra or {})),
                ])
        except sqlite3.Error as exc:
            journal.close()
            raise (JournalFullError if _is_full(exc) else JournalError)(f"{path}: {exc}") from None
        return journal

    @classmethod
    def open(cls, data_dir: str | Path, game_id: str) -> Journal:
        """Opens the journal of `game_id` in `data_dir`; JournalError when missing or unreadable."""
        path = Path(data_dir) / f"{check_game_id(game_id)}{SUFFIX}"
        if not path.is_file():
            raise JournalError(f"{path}: no such journal")
        journal = cls(path, cls._connect(path), game_id)
        try:
            schema = journal._meta("schema")
        except (sqlite3.Error, JournalError) as exc:
            journal.close()
            raise JournalError(f"{path}: not a game journal ({exc})") from None
        if schema != str(SCHEMA_VERSION):
            journal.close()
            raise JournalError(f"{path}: journal schema {schema!r}, expected {SCHEMA_VERSION}")
        return journal

    @classmethod
    def latest(cls, data_dir: str | Path) -> Journal:
        ids = list_games(data_dir)
        if not ids:
            raise JournalError(f"{data_dir}: no saved game to resume")
        return cls.open(data_dir, ids[-1])

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(path, check_same_thread=False, isolation_level="DEFERRED")
            db.execute("PRAGMA journal_mode=WAL")
            # FULL: a committed entry survives a power cut, not only a killed process.
            db.execute("PRAGMA synchronous=FULL")
            db.execute("PRAGMA busy_timeout=2000")
        except sqlite3.Error as exc:
            raise JournalError(f"{path}: cannot open the journal ({exc})") from None
        return db

    def close(self) -> None:
        self._db.close()

    # --- reading -------------------------------------------------------------------
    def _meta(self, key: str) -> str:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise JournalError(f"{self.path}: meta {key!r} missing")
        return row[0]

    def header(self) -> RecordHeader:
        """The game's set-up, validated like a record's header line."""
        try:
            data = json.loads(self._meta("header"))
            if not isinstance(data, dict):
                raise JournalError("header is not an object")
            return _parse_header(1, data)
        except (ValueError, sqlite3.Error) as exc:
            raise JournalError(f"{self.path}: bad header ({exc})") from None

    def extra(self) -> dict[str, Any]:
        """Set-up facts outside the record format (player tokens, a1 corner, ...)."""
        try:
            data = json.loads(self._meta("extra"))
        except (ValueError, sqlite3.Error) as exc:
            raise JournalError(f"{self.path}: bad extra set-up data ({exc})") from None
        return data if isinstance(data, dict) else {}

    def entries(self) -> list[Entry]:
        try:
            rows = self._db.execute(
                "SELECT seq, time, kind, action, target, source, observation, detail FROM entries ORDER BY seq"
            ).fetchall()
        except sqlite3.Error as exc:
            raise JournalError(f"{self.path}: cannot read entries ({exc})") from None
        out = []
        for seq, t, kind, action, target, source, obs, detail in rows:
            try:
                out.append(Entry(seq, t, kind, action, target, source,
                                 None if obs is None else json.loads(obs),
                                 {} if detail is None else json.loads(detail)))
            except ValueError:
                raise JournalError(f"{self.path}: entry {seq} holds unreadable JSON") from None
        return out

    def effective_actions(self, entries: Iterable[Entry] | None = None) -> list[EffectiveAction]:
        """The actions of the game now: every action, less undone ones, with corrections made."""
        actions: list[EffectiveAction] = []
        for e in self.entries() if entries is None else entries:
            if e.kind == "action":
                actions.append(EffectiveAction(e.seq, e.action or "", e.time, e.source, e.observation))
            elif e.kind == "undo":
                if not actions or actions[-1].seq != e.target:
                    raise JournalError(f"{self.path}: entry {e.seq} undoes {e.target}, not the last action")
                actions.pop()
            elif e.kind == "correct":
                index = next((i for i, a in enumerate(actions) if a.seq == e.target), None)
                if index is None:
                    raise JournalError(f"{self.path}: entry {e.seq} corrects {e.target}, not an action in play")
                dropped = set(e.detail.get("dropped", ()))
                fixed = EffectiveAction(e.target, e.action or "", e.time, e.source, e.observation,
                                        e.detail.get("was"))
                actions = actions[:index] + [fixed] + [a for a in actions[index + 1:] if a.seq not in dropped]
        return actions

    def open_verdicts(self, entries: Iterable[Entry] | None = None) -> list[Entry]:
        """Verdict entries not yet resolved, oldest first."""
        open_: dict[int, Entry] = {}
        for e in self.entries() if entries is None else entries:
            if e.kind == "verdict":
                open_[e.seq] = e
            elif e.kind == "resolve":
                open_.pop(e.target or -1, None)
        return list(open_.values())

    # --- writing -------------------------------------------------------------------
    def append(self, kind: str, *, action: str | None = None, target: int | None = None,
               source: str = "manual", observation: Any = None, detail: dict[str, Any] | None = None,
               now: float | None = None) -> Entry:
        """Appends one entry and commits it; JournalFullError when the disk is full."""
        if kind not in ENTRY_KINDS:
            raise JournalError(f"unknown journal entry kind {kind!r}")
        t = time.time() if now is None else now
        obs_text = None if observation is None else json.dumps(observation)
        detail_text = None if not detail else json.dumps(detail)
        try:
            with self._db:
                cur = self._db.execute(
                    "INSERT INTO entries (time, kind, action, target, source, observation, detail) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)", (t, kind, action, target, source, obs_text, detail_text))
        except sqlite3.Error as exc:
            raise (JournalFullError if _is_full(exc) else JournalError)(
                f"{self.path}: could not write the journal ({exc}); nothing was changed") from None
        return Entry(int(cur.lastrowid or 0), t, kind, action, target, source, observation, detail or {})

    # --- records -------------------------------------------------------------------
    def record_lines(self) -> list[str]:
        """The game as a standard record (docs/records.md): header, then each action."""
        lines = [json.dumps(self.header().to_json())]
        for a in self.effective_actions():
            lines.append(json.dumps(RecordEvent(0, a.action, a.time).to_json()))
        return lines

    def export(self, path: str | Path) -> None:
        Path(path).write_text("\n".join(self.record_lines()) + "\n", encoding="utf-8")
