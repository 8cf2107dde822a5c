"""The `serve`, `demo` and `export` sub-commands (wired into companion/cli.py)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from pathlib import Path

from companion.games import GameError, get_game
from companion.journal import Journal, JournalError, list_games
from companion.records import RecordError, RecordHeader
from companion.session import SessionHub, make_source

DEFAULT_PORT = 8765


def default_data_dir() -> Path:
    """Where journals go unless --data-dir says otherwise.

    $COMPANION_DATA when set; else, under the project's scripts (which set
    $COMPANION_CACHE to the checkout's .cache/), $COMPANION_CACHE/games, so a run
    from a checkout leaves the user's home alone; else the XDG data folder.
    """
    if os.environ.get("COMPANION_DATA"):
        return Path(os.environ["COMPANION_DATA"])
    if os.environ.get("COMPANION_CACHE"):
        return Path(os.environ["COMPANION_CACHE"]) / "games"
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "icehouse-companion" / "games"


def add_server_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run the companion page (the demo when no camera or game is given)")
    p.add_argument("--game", help="start a new game of this kind, played on the page (manual mode)")
    p.add_argument("--variant", default="standard")
    p.add_argument("--players", help="names in seat order, comma-separated (default: Player 1..n)")
    p.add_argument("--source", help="webcam:N, a video file, an image folder, 'demo' or 'manual' "
                                    "(default: demo, or manual with --game/--resume/--record)")
    p.add_argument("--record", type=Path, help="start from a game record (import it)")
    p.add_argument("--resume", nargs="?", const=True, metavar="GAME_ID",
                   help="continue the newest saved game (or GAME_ID) exactly where it stopped")
    p.add_argument("--host", default="127.0.0.1", help="address to serve on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT)
    p.add_argument("--data-dir", type=Path, default=None, help="folder for game journals")
    p.add_argument("--interval", type=float, default=1.5, help="seconds between demo moves")
    p.add_argument("--duration", type=float, default=None, help="stop after this many seconds (for scripts)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("export", help="write a saved game as a standard game record")
    p.add_argument("game", help="a game id (see --list) or 'latest'")
    p.add_argument("-o", "--output", type=Path, help="file to write (default: standard output)")
    p.add_argument("--data-dir", type=Path, default=None)
    p.set_defaults(func=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    data_dir = args.data_dir or default_data_dir()
    try:
        journal = Journal.latest(data_dir) if args.game == "latest" else Journal.open(data_dir, args.game)
        lines = journal.record_lines()
        journal.close()
    except JournalError as exc:
        known = ", ".join(list_games(data_dir)[-5:]) or "none"
        print(f"companion export: {exc} (recent games: {known})", file=sys.stderr)
        return 2
    text = "\n".join(lines) + "\n"
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from werkzeug.serving import make_server

    from companion.cli import sample_record_path
    from companion.server import create_app, is_loopback_host

    data_dir = args.data_dir or default_data_dir()
    spec = args.source or ("manual" if (args.game or args.resume or args.record) else "demo")
    hub = SessionHub(data_dir)
    try:
        if args.resume:
            hub.resume(None if args.resume is True else args.resume)
        elif args.record:
            hub.import_record(Path(args.record).read_text(encoding="utf-8").splitlines())
        elif args.game:
            game = get_game(args.game)
            names = [n.strip() for n in args.players.split(",")] if args.players else \
                [f"Player {i + 1}" for i in range(game.min_players)]
            hub.new_game(RecordHeader(game.name, tuple(names), args.variant))
    except (JournalError, RecordError, GameError) as exc:
        print(f"companion serve: {exc}", file=sys.stderr)
        return 2
    source = make_source(spec, sample_record_path(), args.interval)
    app = create_app({"HUB": hub, "HOST": args.host, "DATA_DIR": str(data_dir), "SOURCE": source})
    try:
        server = make_server(args.host, args.port, app, threaded=True)
    except OSError as exc:
        print(f"companion serve: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    shown_host = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
    print(f"Icehouse Companion on http://{shown_host}:{args.port}/  (feed: {spec}; journals in {data_dir})",
          flush=True)
    if not is_loopback_host(args.host):
        print("Serving on the network: other devices need the join link shown as a QR code on the host's "
              f"page (open http://127.0.0.1:{args.port}/ on this machine).", flush=True)

    def shut_down(*_: object) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, shut_down)
    if args.duration is not None:
        threading.Timer(args.duration, shut_down).start()
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        app.extensions["companion_stop_feed"]()
        time.sleep(0.05)
        hub.close()
    session = hub.session
    if session is not None:
        print(f"Saved as {session.game_id}; continue with: companion serve --resume --data-dir {data_dir}")
    return 0


def camera_attached() -> bool:
    """Whether a webcam is plugged in (Linux video devices; elsewhere we cannot tell cheaply)."""
    return any(Path("/dev").glob("video[0-9]*"))


def cmd_demo(args: argparse.Namespace) -> int:
    """Serves the page: on the webcam when one is attached, else on the bundled demo; opens nothing."""
    source = "webcam:0" if camera_attached() else "demo"
    defaults = {"game": None, "variant": "standard", "players": None, "source": source, "record": None,
                "resume": None, "host": "127.0.0.1", "port": DEFAULT_PORT, "data_dir": None,
                "interval": 1.5, "duration": None}
    for key, value in defaults.items():
        if not hasattr(args, key):
            setattr(args, key, value)
    return cmd_serve(args)
