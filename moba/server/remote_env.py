"""``RemoteMobaEnv``: the ``MultiAgentEnv`` that plays its game on a game server (``python -m app.server``).

It has exactly the local ``MobaEnv``'s spaces and behaviour: the same agent ids, observation and action spaces (built
by the same functions from the game's spec), the same observations bit for bit, rewards, terminated/truncated, infos,
and the same errors for bad input (``ValueError`` naming the agent and field; ``RuntimeError`` for a step on a finished
game). With the same seed, the same worker index and instance number and the same actions, a remote game replays the
local one.

Config: the local environment's keys (``moba/env/config.py``) plus

- ``remote``: ``"host:port"`` or a list of them; a list spreads games over several servers (game i of a process goes
  to ``addresses[(worker_index + instance number) % len]``);
- ``timeout_s`` (30): deadline of every call;
- ``retries`` (3): extra attempts, with exponential backoff (0.25 s, 0.5 s, 1 s, ...), of creating the game (the one
  idempotent call the env makes) when the server is unavailable or slow. ``reset`` and ``step`` are never retried:
  a game whose server died is lost. ``close`` makes one short attempt and never raises.

When the chosen server is down or full (RESOURCE_EXHAUSTED, ``GameServerFullError``), the game is created on the next
address of the list. A dead or unreachable server raises ``GameServerUnavailableError`` (a ``ConnectionError`` and a
``RuntimeError``) whose message names the address and the game id; a game the server no longer knows (it restarted)
raises ``RemoteGameLostError``. RLlib's fault tolerance acts on any exception from ``step``/``reset``:
``restart_failed_sub_environments=True`` recreates the env (which creates a new game, retrying while the server comes
back), ``restart_failed_env_runners=True`` restarts the env runner when that fails too.

``action_offset: true`` is MobaEnv's option (Five app. L), applied on the server: the actions sent with step T
are applied from T+1 on, so the action taken at T+1 is the one decided from the observation at T.

``make_moba_env(config)`` returns a ``RemoteMobaEnv`` when ``config["remote"]`` is set and a local ``MobaEnv``
otherwise: it is the env creator the training code registers.
"""
from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time

import grpc
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.utils.annotations import override

from moba.env.actions import INT_TYPES, validate_actions
from moba.env.config import EnvConfig
from moba.env.moba_env import agent_spaces, next_instance_id
from moba.server import codec
from moba.server import moba_pb2 as pb
from moba.server import moba_pb2_grpc as pb_grpc

log = logging.getLogger(__name__)

CLIENT_KEYS = ("remote", "timeout_s", "retries")
_RLLIB_CONTEXT_KEYS = ("worker_index", "vector_index", "num_workers", "recreated_worker")
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_RETRIES = 3
BACKOFF_S = (0.25, 0.5, 1.0, 2.0, 4.0)
_CLOSE_TIMEOUT_S = 3.0
_RETRYABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


class RemoteEnvError(RuntimeError):
    """An error of the game server or of the connection to it."""


class GameServerUnavailableError(RemoteEnvError, ConnectionError):
    """The game server is dead, unreachable or did not answer in time."""


class RemoteGameLostError(RemoteEnvError):
    """The game no longer exists on its server (closed, reaped, or the server restarted)."""


class GameServerFullError(RemoteEnvError):
    """RESOURCE_EXHAUSTED: the server hosts as many games as it may."""


# ---- channels: one per address and process, shared by the envs (gRPC multiplexes the calls) ------------------------
_channels: dict[str, grpc.Channel] = {}
_channels_lock = threading.Lock()
_CHANNEL_OPTIONS = [
    ("grpc.max_send_message_length", 64 * 1024 * 1024),
    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
    # reconnect quickly once a restarted server is back
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 2000),
]


def _channel(address: str) -> grpc.Channel:
    with _channels_lock:
        ch = _channels.get(address)
        if ch is None:
            ch = _channels[address] = grpc.insecure_channel(address, options=_CHANNEL_OPTIONS)
        return ch


def parse_addresses(remote) -> list[str]:
    """'host:port' or a list of them -> a list; ValueError naming the key otherwise."""
    items = [remote] if isinstance(remote, str) else remote
    if not isinstance(items, (list, tuple)) or not items:
        raise ValueError(f"env config 'remote': must be 'host:port' or a non-empty list of them, got {remote!r}")
    out = []
    for a in items:
        host, sep, port = a.rpartition(":") if isinstance(a, str) else ("", "", "")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"env config 'remote': {a!r} is not a 'host:port' address")
        out.append(a)
    return out


def _split_config(config) -> tuple[dict, dict]:
    """-> (environment keys, client keys)."""
    d = dict(config)
    client = {k: d.pop(k) for k in CLIENT_KEYS if k in d}
    for k in _RLLIB_CONTEXT_KEYS:
        d.pop(k, None)
    return d, client


def _connection_error(address, what, game_id, e: grpc.RpcError, attempts: int) -> GameServerUnavailableError:
    game = f" of game {game_id}" if game_id else ""
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    consequence = ("no game was created" if not game_id else
                   "the game is lost (RLlib's restart_failed_sub_environments / restart_failed_env_runners recreate "
                   "the environment)")
    return GameServerUnavailableError(
        f"game server {address} unavailable during {what}{game}{tries}: {e.code().name}: {e.details()}. "
        f"The server is down, unreachable or overloaded; {consequence}.")


class RemoteMobaEnv(MultiAgentEnv):
    metadata = {"render_modes": []}

    def __init__(self, config=None):
        super().__init__()
        config = {} if config is None else config  # an empty EnvContext is falsy
        env_keys, client = _split_config(config)
        self.cfg = EnvConfig.from_dict(env_keys)  # the local environment's errors, before any network call
        if "remote" not in client or client["remote"] in (None, ""):
            raise ValueError("env config 'remote': RemoteMobaEnv needs a 'host:port' address (or a list of them)")
        self.addresses = parse_addresses(client["remote"])
        self.timeout_s = client.get("timeout_s", DEFAULT_TIMEOUT_S)
        if isinstance(self.timeout_s, bool) or not isinstance(self.timeout_s, (int, float)) or \
                not 0 < self.timeout_s < float("inf"):
            raise ValueError(f"env config 'timeout_s': must be a number of seconds > 0, got {self.timeout_s!r}")
        self.retries = client.get("retries", DEFAULT_RETRIES)
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or not 0 <= self.retries <= 20:
            raise ValueError(f"env config 'retries': must be an int in [0, 20], got {self.retries!r}")
        self.timeout_s = float(self.timeout_s)
        self.worker_index = int(getattr(config, "worker_index", 0) or 0)
        self.instance_id = next_instance_id()  # shared with MobaEnv: a remote game seeds like the local one
        first = (self.worker_index + self.instance_id) % len(self.addresses)
        self._use(self.addresses[first])
        self.game_id = ""
        self._closed = False
        self._obs = None

        request = pb.CreateGameRequest(
            mode=self.cfg.mode, config_json=json.dumps(env_keys, default=codec.json_default),
            worker_index=self.worker_index, instance_id=self.instance_id,
            client=f"{socket.gethostname()} pid {os.getpid()} worker {self.worker_index}")
        if self.cfg.seed is not None:
            request.seed = self.cfg.seed
        spec = self._create(request, first)
        self.game_spec = spec
        self.game_id = spec.game_id
        if spec.max_units != self.cfg.max_units or spec.mode != self.cfg.mode:
            self.close()
            raise RemoteEnvError(f"game server {self.address} created a game with mode {spec.mode} and max_units "
                                 f"{spec.max_units}, asked for {self.cfg.mode} / {self.cfg.max_units} (version skew?)")
        self.team_size = int(spec.team_size)
        self.n_heroes = len(spec.agent_ids)
        self.possible_agents = list(spec.agent_ids)
        self.agents = list(self.possible_agents)
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        self.observation_spaces, self.action_spaces = agent_spaces(self.possible_agents, self.team_size,
                                                                   self.cfg.max_units, self.cfg.observation_groups)
        self._signals = tuple(spec.reward_signals)
        log.debug("remote game %s on %s (worker %d, instance %d)", self.game_id, self.address, self.worker_index,
                  self.instance_id)

    # ---- calls -------------------------------------------------------------------------------------------------------
    def _use(self, address: str):
        self.address = address
        self._stub = pb_grpc.MobaGameStub(_channel(address))

    def _create(self, request, first: int) -> "pb.GameSpec":
        """Creates the game on addresses[first]; when that server is unavailable or full, on the next ones."""
        errors = []
        n = len(self.addresses)
        for k in range(n):
            self._use(self.addresses[(first + k) % n])
            try:
                return self._call("CreateGame", request, "create", idempotent=True).spec
            except (GameServerUnavailableError, GameServerFullError) as e:
                errors.append(e)
                if k + 1 < n:
                    log.warning("%s; trying the next game server", e)
        if n == 1:
            raise errors[0]
        raise type(errors[-1])("no game server could create the game: " + "; ".join(str(e) for e in errors))

    def _call(self, method: str, request, what: str, idempotent: bool, timeout: float | None = None):
        attempts = 1 + (self.retries if idempotent else 0)
        for k in range(attempts):
            try:
                return getattr(self._stub, method)(request, timeout=timeout or self.timeout_s)
            except grpc.RpcError as e:
                code = e.code()
                if code in _RETRYABLE and k + 1 < attempts:
                    delay = BACKOFF_S[min(k, len(BACKOFF_S) - 1)]
                    log.warning("game server %s: %s failed (%s), retrying in %.2fs (%d/%d)", self.address, what,
                                code.name, delay, k + 1, self.retries)
                    time.sleep(delay)
                    continue
                raise self._translate(e, what, k + 1) from e
        raise AssertionError("unreachable")  # pragma: no cover

    def _translate(self, e: grpc.RpcError, what: str, attempts: int) -> Exception:
        code, details = e.code(), e.details()
        if code == grpc.StatusCode.INVALID_ARGUMENT:
            return ValueError(details)
        if code == grpc.StatusCode.FAILED_PRECONDITION:
            return RuntimeError(details)
        if code == grpc.StatusCode.NOT_FOUND:
            return RemoteGameLostError(f"game server {self.address}: {what} of game {self.game_id}: {details}")
        if code in _RETRYABLE or code == grpc.StatusCode.CANCELLED:
            return _connection_error(self.address, what, self.game_id, e, attempts)
        if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
            return GameServerFullError(f"game server {self.address}: {what} failed: {code.name}: {details}")
        return RemoteEnvError(f"game server {self.address}: {what} of game {self.game_id or '(new)'} failed: "
                              f"{code.name}: {details}")

    # ---- gymnasium API -----------------------------------------------------------------------------------------------
    @override(MultiAgentEnv)
    def reset(self, *, seed=None, options=None):
        self._check_open()
        request = pb.ResetRequest(game_id=self.game_id)
        if seed is not None:
            if isinstance(seed, bool) or type(seed) not in INT_TYPES:
                raise TypeError(f"reset: seed must be an int or None, got {seed!r}")
            request.seed = int(seed)
        reply = self._call("Reset", request, "reset", idempotent=False)
        self.agents = list(self.possible_agents)
        self._obs = codec.observations_from_proto(reply.observations)
        return self._obs, codec.infos_from_proto(reply.infos, self._signals)

    @override(MultiAgentEnv)
    def step(self, action_dict):
        self._check_open()
        request = pb.StepRequest(game_id=self.game_id)
        actions = request.actions
        acts = validate_actions(action_dict, self._index, self.cfg.max_units)  # MobaEnv's checks and messages
        for agent, row in zip(self.possible_agents, acts.tolist()):
            a = actions[agent]
            a.primary, a.delay, a.target_unit, a.offset_x, a.offset_y = row
        reply = self._call("Step", request, "step", idempotent=False)
        self._obs = obs = codec.observations_from_proto(reply.observations)
        rewards = dict(reply.rewards)
        terminateds = dict(reply.terminateds)
        truncateds = dict(reply.truncateds)
        infos = codec.infos_from_proto(reply.infos, self._signals)
        # the local environment's key order (agents, then "__all__")
        order = self.possible_agents
        rewards = {a: rewards[a] for a in order if a in rewards}
        terminateds = {**{a: terminateds[a] for a in order if a in terminateds}, "__all__": terminateds["__all__"]}
        truncateds = {**{a: truncateds[a] for a in order if a in truncateds}, "__all__": truncateds["__all__"]}
        obs = {a: obs[a] for a in order if a in obs}
        infos = {a: infos[a] for a in order if a in infos}
        return obs, rewards, terminateds, truncateds, infos

    @override(MultiAgentEnv)
    def close(self):
        if self._closed:
            return
        self._closed = True
        if not self.game_id:
            return
        try:
            self._stub.CloseGame(pb.CloseGameRequest(game_id=self.game_id),
                                 timeout=min(self.timeout_s, _CLOSE_TIMEOUT_S))
        except grpc.RpcError as e:  # the server is gone or already forgot the game: nothing left to close
            log.info("game server %s: closing game %s: %s", self.address, self.game_id, e.code().name)

    def observations(self) -> dict:
        """The latest observation of every agent (as MobaEnv.observations)."""
        return self._obs

    # ---- helpers -----------------------------------------------------------------------------------------------------
    def _check_open(self):
        if self._closed:
            raise RuntimeError(f"RemoteMobaEnv: game {self.game_id} on {self.address} was closed")


def make_moba_env(config=None):
    """The environment for a config: ``RemoteMobaEnv`` if ``config["remote"]`` is set, else the local ``MobaEnv``
    (the client-only keys ``timeout_s`` / ``retries`` are then ignored). Keeps an RLlib ``EnvContext`` intact."""
    config = {} if config is None else config
    if dict(config).get("remote"):
        return RemoteMobaEnv(config)
    from moba.env.moba_env import MobaEnv
    if any(k in config for k in CLIENT_KEYS):
        d = {k: v for k, v in dict(config).items() if k not in CLIENT_KEYS}
        try:
            from ray.rllib.env.env_context import EnvContext
        except ImportError:  # pragma: no cover
            EnvContext = None
        if EnvContext is not None and isinstance(config, EnvContext):
            config = config.copy_with_overrides(env_config=d)
        else:
            config = d
    return MobaEnv(config)
