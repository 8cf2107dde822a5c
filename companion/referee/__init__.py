"""The referee: where observations meet rules.

`Referee(adapter, state)` judges each stable observation against the engine's legal actions
(`core.py`); one adapter per game says what its states look like on the table.
"""

from __future__ import annotations

from collections.abc import Sequence

from companion.pieces import Colour
from companion.referee.core import Adapter, Explanation, Referee, Verdict, distance

ADAPTED_GAMES = ("icebomb-arena", "icetowers", "zamboni-wars", "space-arena", "ice-arena")


def adapter_for(game: str, colours: Sequence[Colour] = ()) -> Adapter:
    """The adapter of `game`; `colours` are the seats' colours where the game needs them
    (Icebomb Arena and ARENA; the other games' states know their colours).

    Raises:
        ValueError: for a game without an adapter yet.
    """
    if game == "icebomb-arena":
        from companion.referee.icebomb_arena import IcebombAdapter

        return IcebombAdapter(colours)
    if game == "icetowers":
        from companion.referee.icetowers import IceTowersAdapter

        return IceTowersAdapter()
    if game == "zamboni-wars":
        from companion.referee.zamboni_wars import ZamboniAdapter

        return ZamboniAdapter()
    if game == "space-arena":
        from companion.referee.space_arena import ArenaAdapter

        if not colours:
            raise ValueError("ARENA's referee needs each seat's ship colour (ships are told apart by colour)")
        return ArenaAdapter(colours)
    if game == "ice-arena":
        from companion.referee.ice_arena import IceArenaAdapter

        return IceArenaAdapter()
    raise ValueError(f"no referee adapter for {game!r} yet (adapted: {', '.join(ADAPTED_GAMES)})")


__all__ = ["Adapter", "Explanation", "Referee", "Verdict", "adapter_for", "distance", "ADAPTED_GAMES"]
