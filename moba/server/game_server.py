"""The gRPC game server: one process hosts many games, each an environment instance (``MobaEnv`` by default).

The protocol (``moba.proto``) speaks in the environment's observations and actions, so another engine can be plugged
in by passing a different ``env_factory`` (a callable ``config dict -> MultiAgentEnv`` with MobaEnv's contract).

Concurrency: a ``ThreadPoolExecutor`` serves the RPCs; the table of games has one lock, each game its own, so calls
on one game are serialized while different games proceed concurrently (the engine holds the GIL, so in practice the
server uses one core for game work and the gRPC core threads for I/O).

Bad input never corrupts a game: ``MobaEnv.step`` validates every action before it changes anything, and a
``ValueError`` becomes INVALID_ARGUMENT with the environment's message (which names the agent and the field).

Error details stay small whatever the client sent: they travel as gRPC trailing metadata, and details over the
client's metadata limit (8 KiB by default) reach it as RESOURCE_EXHAUSTED (which ``RemoteMobaEnv`` reports as "server
full") instead of the real error. So a client value quoted in a message goes through ``quoted`` (cut to
``MAX_ECHO_CHARS``), and every abort through ``_abort``, which makes the details ASCII and cuts them to
``MAX_DETAILS_CHARS`` (bounding the environment's messages too, which quote hero names, agent ids, ...).

Action offset (Five app. L): ``action_offset: true`` in the game's config turns on MobaEnv's offset on the
server: the actions a client sends with step T are queued and the game advances from T to T+1 with the actions sent
at step T-1 (none at the first step). So the action taken at T+1 is the one decided from the observation at T, and
the game engine never waits for the policy's latest decision, which is what lets a rollout worker overlap the
policy's compute with the game's. See ``RemoteMobaEnv`` for the client side (nothing to do there but set the flag).
"""
from __future__ import annotations

import dataclasses
import itertools
import json
import logging
import os
import secrets
import threading
import time
from concurrent import futures

import grpc

from moba.server import codec
from moba.server import moba_pb2 as pb
from moba.server import moba_pb2_grpc as pb_grpc

log = logging.getLogger("moba.server")

VERSION = "openfive.v1"
DEFAULT_MAX_GAMES = 64
DEFAULT_WORKERS = 16
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
GRPC_OPTIONS = [
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.so_reuseport", 0),  # a second server on the same port must fail, not share it
]
# A client-supplied value quoted in an error message is cut to this many characters (its repr's).
MAX_ECHO_CHARS = 80
# The whole details string of an error is cut to this many characters. gRPC percent-encodes the details' UTF-8 (3
# bytes for '%' or a byte outside printable ASCII, so up to 12 for a character): made ASCII first (backslash
# escapes), 1,500 characters are at most 4.5 KB on the wire, well under the client's default 8 KiB metadata limit.
MAX_DETAILS_CHARS = 1_500


def quoted(value, limit: int = MAX_ECHO_CHARS) -> str:
    """``repr(value)`` for an error message, or, when longer than `limit`, its start, ``...`` and the value's length.
    For every value the server echoes back to a client (game ids, mode, seed, config values)."""
    # slice a long string before repr: a client may send megabytes
    text = repr(value[:limit + 1]) if isinstance(value, str) else repr(value)
    if len(text) <= limit:
        return text
    size = f"{len(value)} chars" if isinstance(value, str) else f"{len(repr(value))} chars as text"
    return f"{text[:limit]}... ({size})"


def capped_details(message: str, limit: int = MAX_DETAILS_CHARS) -> str:
    """`message` made ASCII (backslash escapes) and cut in the middle to at most `limit` characters: the start names
    the field and the end the game, the middle is what a long client value makes long."""
    text = message.encode("ascii", "backslashreplace").decode("ascii")
    if len(text) <= limit:
        return text
    marker = f" ... [{len(text)} characters, cut] ... "
    head = (limit - len(marker)) * 2 // 3
    tail = limit - len(marker) - head
    return f"{text[:head]}{marker}{text[-tail:]}"


def _abort(context, code: grpc.StatusCode, message: str):
    """``context.abort`` with the details capped (``capped_details``); every error reply goes through here."""
    context.abort(code, capped_details(message))


def default_env_factory(config: dict):
    from moba.env.moba_env import MobaEnv
    return MobaEnv(config)


def _spec_fields(env) -> dict:
    """What a client needs to build the spaces with the same functions as the local environment."""
    from moba.env.actions import ACTION_KEYS
    from moba.env.rewards import SIGNALS
    cfg = env.cfg
    return {"mode": cfg.mode, "agent_ids": list(env.possible_agents), "team_size": int(env.team_size),
            "max_units": int(cfg.max_units), "config_json": json.dumps(dataclasses.asdict(cfg)),
            "reward_signals": list(SIGNALS), "action_keys": list(ACTION_KEYS)}


def _set_seed_stream(env, worker_index: int, instance_id) -> None:
    """Seeds the game's random stream by (seed, worker_index, instance_id) as a local MobaEnv created by the client
    would be seeded (MobaEnv.set_seed_stream)."""
    env.set_seed_stream(worker_index, env.instance_id if instance_id is None else instance_id)


class _Game:
    __slots__ = ("game_id", "env", "lock", "spec", "seed", "client", "created", "last_used", "steps", "episodes",
                 "closed", "broken")

    def __init__(self, game_id, env, spec, seed, client):
        self.game_id, self.env, self.spec, self.seed, self.client = game_id, env, spec, seed, client
        self.lock = threading.Lock()
        self.created = self.last_used = time.time()
        self.steps = self.episodes = 0
        self.closed = False
        self.broken = ""  # set when the environment raised an unexpected error: the game needs a reset


class MobaGameServicer(pb_grpc.MobaGameServicer):
    def __init__(self, max_games: int = DEFAULT_MAX_GAMES, env_factory=default_env_factory):
        if max_games < 1:
            raise ValueError(f"max_games must be >= 1, got {max_games}")
        self.max_games = max_games
        self.env_factory = env_factory
        self.games: dict[str, _Game] = {}
        self._lock = threading.Lock()
        self._pending = 0  # games being created (counted against max_games)
        self._seq = itertools.count(1)
        self._started = time.time()
        self.stopping = False

    # ---- helpers -----------------------------------------------------------------------------------------------------
    def _get(self, game_id: str, context) -> _Game:
        with self._lock:
            g = self.games.get(game_id)
        if g is None:
            _abort(context, grpc.StatusCode.NOT_FOUND,
                   f"unknown game id {quoted(game_id)}: no such game on this server (closed, never created, or the "
                   f"server restarted); {len(self.games)} game(s) open")
        return g

    def _check_serving(self, context):
        if self.stopping:
            _abort(context, grpc.StatusCode.UNAVAILABLE, "server is shutting down")

    def _run_env(self, g: _Game, fn):
        """Runs fn() under the game's lock; returns (result, None) or (None, (status, message))."""
        with g.lock:
            if g.closed:
                return None, (grpc.StatusCode.NOT_FOUND, f"game {g.game_id!r} was closed")
            g.last_used = time.time()
            try:
                return fn(), None
            except ValueError as e:
                return None, (grpc.StatusCode.INVALID_ARGUMENT, f"{e} (game {g.game_id})")
            except RuntimeError as e:
                return None, (grpc.StatusCode.FAILED_PRECONDITION, f"{e} (game {g.game_id})")
            except Exception as e:  # an engine/environment bug: keep serving, flag the game
                log.exception("game %s: unexpected error", g.game_id)
                g.broken = f"{type(e).__name__}: {e}"
                return None, (grpc.StatusCode.INTERNAL,
                              f"game {g.game_id}: internal error {type(e).__name__}: {e}; reset or close the game")

    def close_all(self) -> int:
        with self._lock:
            games = list(self.games.values())
            self.games.clear()
        for g in games:
            self._close(g, "server shutdown")
        return len(games)

    def _close(self, g: _Game, why: str):
        with g.lock:
            g.closed = True
            try:
                g.env.close()
            except Exception:  # pragma: no cover - MobaEnv.close is the base class no-op
                log.exception("game %s: error while closing", g.game_id)
        log.info("closed game %s (%s; %d steps, %d episodes; %d game(s) open)", g.game_id, why, g.steps,
                 g.episodes, len(self.games))

    def reap_idle(self, idle_s: float) -> int:
        now = time.time()
        with self._lock:
            idle = [g for g in self.games.values() if now - g.last_used > idle_s and not g.lock.locked()]
            for g in idle:
                del self.games[g.game_id]
        for g in idle:
            self._close(g, f"idle for more than {idle_s:g} s")
        return len(idle)

    # ---- RPCs --------------------------------------------------------------------------------------------------------
    def Health(self, request, context):
        return pb.HealthReply(status="STOPPING" if self.stopping else "SERVING", games=len(self.games),
                              max_games=self.max_games, uptime_s=time.time() - self._started, pid=os.getpid(),
                              version=VERSION)

    def CreateGame(self, request, context):
        self._check_serving(context)
        # the config: a JSON object of environment keys; mode and seed fields must agree with it
        try:
            cfg = json.loads(request.config_json) if request.config_json else {}
        except json.JSONDecodeError as e:
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"config_json: not valid JSON ({e})")
        if not isinstance(cfg, dict):
            _abort(context, grpc.StatusCode.INVALID_ARGUMENT,
                   f"config_json: must be a JSON object of env config keys, got {type(cfg).__name__}")
        if request.mode:
            if "mode" in cfg and cfg["mode"] != request.mode:
                _abort(context, grpc.StatusCode.INVALID_ARGUMENT,
                       f"mode: {quoted(request.mode)} disagrees with the config's 'mode' {quoted(cfg['mode'])}")
            cfg["mode"] = request.mode
        if request.HasField("seed"):
            if cfg.get("seed") is not None and cfg["seed"] != request.seed:
                _abort(context, grpc.StatusCode.INVALID_ARGUMENT,
                       f"seed: {request.seed} disagrees with the config's 'seed' {quoted(cfg['seed'])}")
            cfg["seed"] = request.seed
        with self._lock:
            if len(self.games) + self._pending >= self.max_games:
                _abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED,
                       f"too many games: this server hosts at most {self.max_games} (--max-games) and "
                       f"{len(self.games)} are open; close one or use another server")
            self._pending += 1
        try:
            try:
                env = self.env_factory(cfg)
                _set_seed_stream(env, request.worker_index,
                                 request.instance_id if request.HasField("instance_id") else None)
                fields = _spec_fields(env)
            except (ValueError, TypeError) as e:
                _abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(e))
            except Exception as e:  # an environment bug: say so, keep serving
                log.exception("creating a game failed")
                _abort(context, grpc.StatusCode.INTERNAL, f"creating the game failed: {type(e).__name__}: {e}")
            game_id = f"g{next(self._seq)}-{secrets.token_hex(4)}"
            spec = pb.GameSpec(game_id=game_id, **fields)
            g = _Game(game_id, env, spec, env.cfg.seed, request.client or context.peer())
            with self._lock:
                self.games[game_id] = g
                n = len(self.games)
        finally:
            with self._lock:
                self._pending -= 1
        log.info("created game %s: mode %s, seed %s, worker %d, client %s (%d/%d games)", game_id, fields["mode"],
                 env.cfg.seed, request.worker_index, g.client, n, self.max_games)
        return pb.CreateGameReply(spec=spec)

    def GetSpec(self, request, context):
        return self._get(request.game_id, context).spec

    def Reset(self, request, context):
        self._check_serving(context)
        g = self._get(request.game_id, context)
        seed = request.seed if request.HasField("seed") else None

        def do():
            out = g.env.reset(seed=seed)
            g.episodes += 1
            g.broken = ""
            return out

        result, err = self._run_env(g, do)
        if err:
            _abort(context, *err)
        obs, infos = result
        reply = pb.ResetReply()
        codec.fill_observations(reply.observations, obs, g.env.possible_agents)
        codec.fill_infos(reply.infos, infos)
        return reply

    def Step(self, request, context):
        self._check_serving(context)
        g = self._get(request.game_id, context)
        actions = codec.actions_from_proto(request.actions)

        def do():
            if g.broken:
                raise RuntimeError(f"game is broken by an earlier internal error ({g.broken}): reset it")
            out = g.env.step(actions)
            g.steps += 1
            return out

        result, err = self._run_env(g, do)
        if err:
            _abort(context, *err)
        obs, rewards, terminateds, truncateds, infos = result
        reply = pb.StepReply()
        codec.fill_observations(reply.observations, obs, g.env.possible_agents)
        reply.rewards.update(rewards)
        reply.terminateds.update({k: bool(v) for k, v in terminateds.items()})
        reply.truncateds.update({k: bool(v) for k, v in truncateds.items()})
        codec.fill_infos(reply.infos, infos)
        return reply

    def CloseGame(self, request, context):
        with self._lock:
            g = self.games.pop(request.game_id, None)
        if g is None:
            _abort(context, grpc.StatusCode.NOT_FOUND, f"unknown game id {quoted(request.game_id)}: nothing to close")
        self._close(g, f"closed by {context.peer()}")
        return pb.CloseGameReply(closed=True)

    def ListGames(self, request, context):
        with self._lock:
            games = list(self.games.values())
        reply = pb.ListGamesReply(max_games=self.max_games)
        for g in games:
            st = reply.games.add(game_id=g.game_id, mode=g.spec.mode, steps=g.steps, episodes=g.episodes,
                                 done=bool(getattr(g.env, "_done", False)), created_unix=g.created,
                                 last_used_unix=g.last_used, client=g.client)
            if g.seed is not None:
                st.seed = g.seed
        return reply


class GameServer:
    """A running server: ``GameServer(port=0).start()`` binds an ephemeral port (``.port``)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, max_games: int = DEFAULT_MAX_GAMES,
                 workers: int = DEFAULT_WORKERS, idle_timeout_s: float = 0.0, env_factory=default_env_factory):
        self.host, self.requested_port = host, port
        self.servicer = MobaGameServicer(max_games, env_factory)
        self.workers = workers
        self.idle_timeout_s = idle_timeout_s
        self.server = None
        self.port = None
        self._reaper = None
        self._stop_reaper = threading.Event()

    @property
    def address(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def start(self) -> "GameServer":
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="moba-rpc"),
                                  options=GRPC_OPTIONS)
        pb_grpc.add_MobaGameServicer_to_server(self.servicer, self.server)
        host = f"[{self.host}]" if ":" in self.host else self.host
        try:
            port = self.server.add_insecure_port(f"{host}:{self.requested_port}")
        except RuntimeError as e:  # grpcio raises on a failed bind in recent versions
            raise OSError(f"cannot bind {host}:{self.requested_port}: {e}") from e
        if not port:
            raise OSError(f"cannot bind {host}:{self.requested_port} (port in use or address not available)")
        self.port = port
        self.server.start()
        if self.idle_timeout_s > 0:
            self._reaper = threading.Thread(target=self._reap_loop, name="moba-reaper", daemon=True)
            self._reaper.start()
        return self

    def _reap_loop(self):
        period = max(1.0, min(60.0, self.idle_timeout_s / 4))
        while not self._stop_reaper.wait(period):
            self.servicer.reap_idle(self.idle_timeout_s)

    def stop(self, grace: float | None = 5.0) -> None:
        """Refuses new calls, lets the ones in flight finish (up to `grace` seconds), closes every game."""
        if self.server is None:
            return
        self.servicer.stopping = True
        self._stop_reaper.set()
        self.server.stop(grace).wait()
        n = self.servicer.close_all()
        log.info("server on %s stopped (%d game(s) closed)", self.address, n)
        self.server = None

    def wait(self, timeout=None) -> bool:
        return self.server.wait_for_termination(timeout)

    def __enter__(self):
        return self.start() if self.server is None else self

    def __exit__(self, *exc):
        self.stop(grace=1.0)
