"""Pure rules engines, one module per game, found by name through a registry.

Each game module calls `register(SomeGame())` at import. Modules are discovered
by scanning this package, so adding a game means adding one module and nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil

from companion.games.base import (
    CHANCE,
    SIMULTANEOUS,
    TERMINAL,
    Action,
    Game,
    GameError,
    IllegalActionError,
    InvalidActionError,
    Outcome,
    State,
)

_REGISTRY: dict[str, Game] = {}
_NOT_GAMES = {"base"}
_discovered = False


def register(game: Game) -> Game:
    if game.name in _REGISTRY and type(_REGISTRY[game.name]) is not type(game):
        raise ValueError(f"two games registered as {game.name!r}")
    _REGISTRY[game.name] = game
    return game


def _discover() -> None:
    global _discovered
    if _discovered:
        return
    for module in pkgutil.iter_modules(__path__):
        if module.name not in _NOT_GAMES and not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")
    _discovered = True


def get_game(name: str) -> Game:
    """The registered game called `name`; GameError listing the known names otherwise."""
    _discover()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise GameError(f"unknown game {name!r} (known: {', '.join(sorted(_REGISTRY))})") from None


def game_names() -> list[str]:
    _discover()
    return sorted(_REGISTRY)


__all__ = [
    "CHANCE", "SIMULTANEOUS", "TERMINAL", "Action", "Game", "GameError", "IllegalActionError",
    "InvalidActionError", "Outcome", "State", "game_names", "get_game", "register",
]
