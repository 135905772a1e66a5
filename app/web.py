"""Starts the local web server: play against an agent in the browser (docs/play.md).

    python -m app.web [--host 127.0.0.1] [--port 8080] [--replay-dir results/play]

Prints the address to open (``http://HOST:PORT/play``) and a JSON line with it; the server then runs until Ctrl-C
(SIGINT) or SIGTERM, which stop every game (their replays are kept) and close every page. ``--port 0`` picks a free
port. A port already in use is an ``error:`` line naming --port, and exit status 2.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys

from training.cli import print_error

DEFAULT_HOST = "127.0.0.1"  # this machine only: the server has no authentication
DEFAULT_PORT = 8080


def parse_args(argv=None):
    from web.server import DEFAULT_REPLAY_DIR
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default=DEFAULT_HOST, help=f"the address to listen on (default {DEFAULT_HOST})")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"the port (default {DEFAULT_PORT}; 0: a free one)")
    p.add_argument("--replay-dir", default=DEFAULT_REPLAY_DIR,
                   help=f"where the games' replays go (default {DEFAULT_REPLAY_DIR})")
    args = p.parse_args(argv)
    if not 0 <= args.port <= 65535:
        p.error(f"--port must be in [0, 65535], got {args.port}")
    return args


async def serve(args, ready=None) -> None:
    """Runs the server until SIGINT or SIGTERM (or the task is cancelled); `ready(url)` is called once it listens."""
    from aiohttp import web

    from web.server import make_app
    runner = web.AppRunner(make_app(replay_dir=args.replay_dir), access_log=None, handle_signals=False)
    await runner.setup()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        site = web.TCPSite(runner, args.host, args.port)
        await site.start()
        host, port = runner.addresses[0][:2]
        url = f"http://{'localhost' if host in ('127.0.0.1', '::1') else host}:{port}/play"
        print(f"openfive web server: open {url} (Ctrl-C stops it; replays go to {args.replay_dir})", flush=True)
        print(json.dumps({"url": url, "host": host, "port": port}), flush=True)
        if ready:
            ready(url)
        await stop.wait()
    finally:
        await runner.cleanup()  # the handlers stay while it stops the games: a second Ctrl-C changes nothing
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        asyncio.run(serve(args))
    except OSError as e:
        return print_error(f"--host {args.host} --port {args.port}: cannot listen there ({e.strerror})")
    except KeyboardInterrupt:  # a Ctrl-C in the instant after the server stopped listening for it
        pass
    print("openfive web server stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
