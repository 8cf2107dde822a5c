"""The demo's players: what the people at the table do on the page while the demo video plays.

The bundled demo video films a recorded game (`companion/data/samples/`). A camera cannot see
everything and it misreads; at a real table the players then act on the page, and so do these,
from the record, which is what they played:

- they enter what no camera can see (Icebomb Arena's secret bids);
- when the camera's verdict offers a fix that is what they played, they click it, and otherwise
  they type in what they played, as far as the table shows it;
- when the log shows a move the camera accepted that is not theirs (a plan piece read a size up),
  they correct it, as the page's log offers.

Without them one misread left the demo's game somewhere else than the table for good. Everything
they enter says source "demo" in the log, so the camera's own share stays countable
(`scripts/bench_pipeline.py`). Used by `companion/pipeline.py` only when it plays the demo.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import MutableMapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from companion.games import GameError
from companion.games.base import TERMINAL, state_key
from companion.journal import JournalFullError
from companion.records import runs
from companion.session import SessionError
from companion.vision.observation import Observation

if TYPE_CHECKING:
    from companion.pipeline import GameContext

log = logging.getLogger(__name__)

# When the camera's verdict offers no fix that is what they played, the demo's players type in at
# most this many of the record's next actions (a reveal's plans count as one).
DEMO_REACH = 6


def _is_plan(action: str) -> bool:
    return " plan " in action


class DemoPlayers:
    """The players of the demo's record. `counts` is the feed's tally of what happened, to which
    they add `demo_fixes`, `demo_entries` and `demo_corrections`."""

    def __init__(self, record: Sequence[str], counts: MutableMapping[str, int]):
        self.record = list(record)
        self.counts = counts

    def enter_unseen_moves(self, context: GameContext) -> None:
        """Enter the record's next moves while the camera's referee has nothing to read them from
        (Icebomb Arena's secret bids). The table does not change with them, so the baseline stays
        valid."""
        session = context.session
        while True:
            snapshot = session.snapshot()
            state, done = snapshot.state, len(snapshot.actions)
            if (done >= len(self.record) or state.current_player() == TERMINAL
                    or context.adapter.candidates(state, Counter())):
                return
            before = state_key(state)
            try:
                session.apply(self.record[done], source="demo")
            except (GameError, SessionError, JournalFullError) as exc:
                log.warning("demo: the record's move %r could not be entered: %s", self.record[done], exc)
                return
            if context.baseline_state == before:
                context.baseline_state = state_key(session.snapshot().state)

    def answer_verdict(self, context: GameContext, verdict_id: int, fixes: Sequence[str],
                       observation: Observation, image: np.ndarray) -> None:
        """Click the verdict's fix that is what they played (the record's next actions; a reveal's
        plans in any order), or else type in what they played as far as the table shows it. The
        position seen then agrees with the game and becomes the baseline."""
        done = len(context.session.snapshot().actions)
        for fix in fixes:
            steps = [step.strip() for step in fix.split(";")]
            if sorted(steps) == sorted(self.record[done:done + len(steps)]):
                self._enter(context, verdict_id, self.record[done:done + len(steps)], "demo_fixes", observation, image)
                return
        shown = self._record_actions_shown(context, observation)
        if shown:
            self._enter(context, verdict_id, shown, "demo_entries", observation, image)

    def correct_camera_moves(self, context: GameContext) -> None:
        """Correct each action the camera accepted (or revised) that is not what they played to
        theirs (`GameSession.correct`), so the game goes on from what was played. The log keeps
        what the camera read (`corrected_from`)."""
        session = context.session
        entries = session.snapshot().log
        texts = list(session.snapshot().secret_text)
        # A reveal's plans are made at once and may be applied in any order: compared as a run.
        for start, end in runs(self.record, _is_plan, len(texts)):
            played_run = self.record[start:end]
            for k in range(start, min(end, len(texts))):
                if texts[k] in played_run or entries[k].source != "camera":
                    continue
                player = texts[k].split(" ", 1)[0]
                played = [a for a in played_run if a.split(" ", 1)[0] == player and a not in texts[start:end]]
                if not played:
                    continue
                try:
                    session.correct(entries[k].seq, played[0], source="demo")
                except (GameError, SessionError, JournalFullError) as exc:
                    log.warning("demo: %r could not be corrected to %r: %s", texts[k], played[0], exc)
                    return
                self._count("demo_corrections")
                texts = list(session.snapshot().secret_text)
                entries = session.snapshot().log
        context.baseline_state = state_key(session.snapshot().state)

    def _record_actions_shown(self, context: GameContext, observation: Observation) -> list[str]:
        """The record's next actions that the table shows: the fewest (up to `DEMO_REACH`, a reveal's
        plans together) after which the game's position fits what the camera sees best, when that is
        better than the position now. The camera misread the table, so the fit need not be exact:
        the players know what they did; the picture only says how far they have got."""
        snapshot = context.session.snapshot()
        state, done = snapshot.state, len(snapshot.actions)
        seen, unsure = context.adapter.seen(observation)
        best_fit = context.adapter.compare(context.adapter.expected(state), seen, unsure)
        best, end = done, done
        for _ in range(DEMO_REACH):
            if end >= len(self.record):
                break
            stop = end + 1
            while _is_plan(self.record[end]) and stop < len(self.record) and _is_plan(self.record[stop]):
                stop += 1
            try:
                for action in self.record[end:stop]:
                    state = state.apply(action)
            except GameError:
                break
            end = stop
            fit = context.adapter.compare(context.adapter.expected(state), seen, unsure)
            if fit < best_fit:
                best_fit, best = fit, end
        return self.record[done:best]

    def _enter(self, context: GameContext, verdict_id: int, actions: Sequence[str], count: str,
               observation: Observation, image: np.ndarray) -> None:
        try:
            context.session.resolve_verdict(verdict_id, "; ".join(actions), source="demo")
        except (GameError, SessionError, JournalFullError) as exc:
            log.warning("demo: %r could not be entered: %s", "; ".join(actions), exc)
            return
        self._count(count)
        context.baseline, context.baseline_picture = observation, image
        context.baseline_state = state_key(context.session.snapshot().state)

    def _count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1
