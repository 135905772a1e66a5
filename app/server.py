"""``python -m app.server --port 50051 [--max-games N] [--host 127.0.0.1]``: the game server.

Logs each game created and closed; SIGTERM (or SIGINT) stops it cleanly: new calls are refused, calls in flight get
``--grace`` seconds to finish, every game is closed, exit status 0. A port already in use is refused up front with a
clear message and exit status 2.
"""
from __future__ import annotations

import argparse
import errno
import logging
import os
import signal
import socket
import sys
import threading

from moba.server.game_server import DEFAULT_MAX_GAMES, DEFAULT_WORKERS, GameServer

EXIT_PORT_IN_USE = 2


def port_in_use(host: str, port: int) -> str | None:
    """Tries to bind (host, port) the way a listening server would; returns why it cannot, or None."""
    if port == 0:
        return None
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        return f"cannot resolve host {host!r}: {e}"
    family, _, _, _, addr = infos[0]
    s = socket.socket(family, socket.SOCK_STREAM)
    try:
        # SO_REUSEADDR: a port whose old connections linger in TIME_WAIT is free; a listening socket is not
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(addr)
        s.listen(1)
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            return f"port {port} on {host} is already in use (another game server?)"
        return f"cannot bind {host}:{port}: {e.strerror or e}"
    finally:
        s.close()
    return None


def _warm_up():
    """Compiles (or loads) the kernels (numba) before the first client's call rather than inside it."""
    from moba.env.compiled import compile_ahead
    compile_ahead(log=lambda line: print(f"moba.server: {line}", flush=True))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m app.server", description="openfive gRPC game server")
    ap.add_argument("--port", type=int, default=50051, help="TCP port (default 50051; 0 = any free port)")
    ap.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; 0.0.0.0 = all)")
    ap.add_argument("--max-games", type=int, default=DEFAULT_MAX_GAMES,
                    help=f"games hosted at once (default {DEFAULT_MAX_GAMES}); more are refused (RESOURCE_EXHAUSTED)")
    ap.add_argument("--workers", type=int, default=DEFAULT_WORKERS,
                    help=f"RPC worker threads (default {DEFAULT_WORKERS})")
    ap.add_argument("--idle-timeout", type=float, default=0.0, metavar="S",
                    help="close games unused for S seconds (default 0 = never)")
    ap.add_argument("--grace", type=float, default=5.0, help="seconds calls in flight get at shutdown (default 5)")
    ap.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    args = ap.parse_args(argv)
    if not 0 <= args.port <= 65535:
        ap.error(f"--port must be in [0, 65535], got {args.port}")
    if args.max_games < 1:
        ap.error(f"--max-games must be >= 1, got {args.max_games}")
    if args.workers < 1:
        ap.error(f"--workers must be >= 1, got {args.workers}")
    if args.idle_timeout < 0 or args.grace < 0:
        ap.error("--idle-timeout and --grace must be >= 0")
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        stream=sys.stderr)
    log = logging.getLogger("moba.server")

    why = port_in_use(args.host, args.port)
    if why:
        print(f"moba.server: cannot start: {why}. Stop the other process or choose another --port.", file=sys.stderr)
        return EXIT_PORT_IN_USE

    _warm_up()

    server = GameServer(args.host, args.port, args.max_games, args.workers, args.idle_timeout)
    try:
        server.start()
    except OSError as e:  # lost a race for the port after the check
        print(f"moba.server: cannot start: {e}. Stop the other process or choose another --port.", file=sys.stderr)
        return EXIT_PORT_IN_USE
    stop = threading.Event()

    def on_signal(signum, _frame):
        log.info("received %s: shutting down", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    # the "listening" line is what scripts wait for
    log.info("listening on %s (max %d games, %d workers, pid %d)", server.address, args.max_games, args.workers,
             os.getpid())
    print(f"moba.server listening on {server.address}", flush=True)
    while not stop.wait(0.5):
        pass
    server.stop(grace=args.grace)
    log.info("bye")
    return 0


if __name__ == "__main__":
    sys.exit(main())
