"""The gRPC game server and RemoteMobaEnv: identical trajectories locally and through the server, concurrency, every
bad-input case, the CLI (SIGTERM, port in use), a server killed mid-game, and the committed stubs being current.

Most tests use an in-process server on an ephemeral port; the CLI tests start ``python -m app.server`` subprocesses.
(The "2 iterations of smoke training through a server" test waits for the training code, app/train.py.)
"""
from __future__ import annotations

import itertools
import json
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import grpc
import numpy as np
import pytest
from moba_testlib import NOOP, legal_random_action

from moba.env import moba_env as moba_env_mod
from moba.env.moba_env import MobaEnv
from moba.server import moba_pb2 as pb
from moba.server import moba_pb2_grpc as pb_grpc
from moba.server.game_server import GameServer
from moba.server.remote_env import (GameServerFullError, GameServerUnavailableError, RemoteEnvError,
                                    RemoteGameLostError, RemoteMobaEnv, make_moba_env)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def server():
    srv = GameServer(port=0, max_games=64).start()
    yield srv
    srv.stop(grace=1.0)


@pytest.fixture
def stub(server):
    channel = grpc.insecure_channel(server.address)
    yield pb_grpc.MobaGameStub(channel)
    channel.close()


def local_twin(remote: RemoteMobaEnv, cfg: dict) -> MobaEnv:
    """A local MobaEnv that draws the same games as `remote` (same seed, worker index and instance number)."""
    env = MobaEnv({k: v for k, v in cfg.items() if k not in ("remote", "timeout_s", "retries")})
    env.instance_id = remote.instance_id
    env.worker_index = remote.worker_index
    return env


def assert_same_obs(a: dict, b: dict, where=""):
    assert list(a) == list(b), where
    for agent in a:
        assert list(a[agent]) == list(b[agent]), (where, agent)
        for k, v in a[agent].items():
            w = b[agent][k]
            assert v.dtype == w.dtype and v.shape == w.shape, (where, agent, k)
            assert v.tobytes() == w.tobytes(), (where, agent, k)


def assert_same_step(r, loc, where=""):
    assert_same_obs(r[0], loc[0], where)
    for i in range(1, 5):
        assert r[i] == loc[i], (where, i)
        assert list(r[i]) == list(loc[i]), (where, i)  # key order too


def noop(env) -> dict:
    return {a: dict(NOOP) for a in env.possible_agents}


def rand_actions(obs: dict, rng, max_units: int) -> dict:
    return {a: legal_random_action(o, rng, max_units) for a, o in obs.items()}


def status_of(call, *args) -> tuple:
    with pytest.raises(grpc.RpcError) as exc:
        call(*args)
    return exc.value.code(), exc.value.details()


# ---- identical trajectories ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode,offset,steps", [("1v1", False, 150), ("5v5", False, 80), ("5v5", True, 60)])
def test_same_trajectory_locally_and_through_server(server, mode, offset, steps):
    cfg = {"mode": mode, "seed": 11, "action_offset": offset, "remote": server.address}
    remote = RemoteMobaEnv(cfg)
    local = local_twin(remote, cfg)
    assert remote.possible_agents == local.possible_agents
    assert remote.observation_spaces == local.observation_spaces
    assert remote.action_spaces == local.action_spaces
    rng = np.random.default_rng(5)
    for episode in range(2):
        r_obs, r_info = remote.reset(seed=21 + episode)
        l_obs, l_info = local.reset(seed=21 + episode)
        assert_same_obs(r_obs, l_obs, f"reset {episode}")
        assert r_info == l_info
        for t in range(steps):
            acts = rand_actions(l_obs, rng, local.cfg.max_units)
            r = remote.step(acts)
            l_obs = (stepped := local.step(acts))[0]
            assert_same_step(r, stepped, f"episode {episode} step {t}")
        for o in r[0].values():  # writable, like the local env's
            assert all(v.flags.writeable for v in o.values())
        assert all(remote.observation_spaces[a].contains(o) for a, o in r[0].items())
    remote.close()


def test_unseeded_reset_replays_local_env(server, monkeypatch):
    """reset() without a seed draws from the stream seeded at construction by (seed, worker index, instance)."""
    local = MobaEnv({"mode": "1v1", "seed": 3})
    monkeypatch.setattr(moba_env_mod, "_instance_counter", itertools.count(local.instance_id))
    remote = RemoteMobaEnv({"mode": "1v1", "seed": 3, "remote": server.address})
    assert remote.instance_id == local.instance_id
    for _ in range(3):  # consecutive episodes
        (r_obs, r_info), (l_obs, l_info) = remote.reset(), local.reset()
        assert_same_obs(r_obs, l_obs)
        assert r_info == l_info
        assert_same_step(remote.step(noop(local)), local.step(noop(local)))
    remote.close()


def test_action_offset_applies_the_previous_decision(server):
    """With action_offset the actions sent at step T are taken from T+1 on (Five app. L)."""
    cfg = {"mode": "1v1", "seed": 2, "evaluation": True, "action_offset": True, "remote": server.address}
    moved, still = RemoteMobaEnv(cfg), RemoteMobaEnv(cfg)
    obs0, _ = moved.reset(seed=2)
    assert_same_obs(obs0, still.reset(seed=2)[0])
    move = {a: {**NOOP, "primary": 1, "offset_x": 8, "offset_y": 8} for a in moved.possible_agents}
    a1 = moved.step(move)[0]  # decided from obs 0: not yet taken
    b1 = still.step(noop(still))[0]
    for agent in a1:
        for k in a1[agent]:
            if k != "private_prev_action":  # which records the decision itself
                np.testing.assert_array_equal(a1[agent][k], b1[agent][k], err_msg=k)
    a2 = moved.step(noop(moved))[0]  # now the move decided at step 0 is taken
    b2 = still.step(noop(still))[0]
    assert not np.array_equal(a2["radiant_0"]["units"], b2["radiant_0"]["units"])
    moved.close()
    still.close()


def test_rllib_checker_accepts_remote_env(server):
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments
    env = RemoteMobaEnv({"mode": "1v1", "remote": server.address})
    check_multiagent_environments(env)
    assert env.get_observation_space("dire_0") is env.observation_spaces["dire_0"]
    env.close()


# ---- concurrency -----------------------------------------------------------------------------------------------------
def test_32_games_from_8_threads(server):
    n_games, n_threads, steps = 32, 8, 25
    cfgs = [{"mode": "5v5" if k % 4 == 0 else "1v1", "seed": 100 + k, "remote": server.address}
            for k in range(n_games)]
    envs = [RemoteMobaEnv(c) for c in cfgs]
    trajectories = [[] for _ in range(n_games)]  # (actions, step result) per step
    errors = []

    def play(ks):
        try:
            rngs = {k: np.random.default_rng(k) for k in ks}
            obs = {k: envs[k].reset(seed=cfgs[k]["seed"])[0] for k in ks}
            for _ in range(steps):
                for k in ks:  # interleave this thread's games
                    acts = rand_actions(obs[k], rngs[k], envs[k].cfg.max_units)
                    out = envs[k].step(acts)
                    obs[k] = out[0]
                    trajectories[k].append((acts, out))
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=play, args=(list(range(t, n_games, n_threads)),)) for t in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    listed = {g.game_id: g for g in pb_grpc.MobaGameStub(grpc.insecure_channel(server.address))
              .ListGames(pb.ListGamesRequest()).games}
    for k, env in enumerate(envs):  # every game matches its local replay
        assert listed[env.game_id].steps == steps
        local = local_twin(env, cfgs[k])
        local.reset(seed=cfgs[k]["seed"])
        for t, (acts, out) in enumerate(trajectories[k]):
            assert_same_step(out, local.step(acts), f"game {k} step {t}")
        env.close()


# ---- bad input -------------------------------------------------------------------------------------------------------
def _new_game(stub, mode="1v1", **cfg) -> pb.GameSpec:
    # instance_id pinned: two games created alike draw the same game
    spec = stub.CreateGame(pb.CreateGameRequest(mode=mode, config_json=json.dumps(cfg), instance_id=0)).spec
    stub.Reset(pb.ResetRequest(game_id=spec.game_id, seed=1))
    return spec


def _noop_request(spec, **override) -> pb.StepRequest:
    req = pb.StepRequest(game_id=spec.game_id)
    for a in spec.agent_ids:
        req.actions[a].CopyFrom(pb.Action(**NOOP))
    for a, act in override.items():
        req.actions[a].CopyFrom(act)
    return req


def test_unknown_game_id_is_not_found(stub):
    for call, req in ((stub.Step, pb.StepRequest(game_id="nope-123")),
                      (stub.Reset, pb.ResetRequest(game_id="nope-123")),
                      (stub.GetSpec, pb.GetSpecRequest(game_id="nope-123")),
                      (stub.CloseGame, pb.CloseGameRequest(game_id="nope-123"))):
        code, msg = status_of(call, req)
        assert code == grpc.StatusCode.NOT_FOUND and "nope-123" in msg


@pytest.mark.parametrize("action,words", [
    (pb.Action(primary=99, delay=0, target_unit=0, offset_x=4, offset_y=4), ["dire_0", "'primary'", "99", "range"]),
    (pb.Action(primary=0, delay=4, target_unit=0, offset_x=4, offset_y=4), ["dire_0", "'delay'", "range"]),
    (pb.Action(primary=0, delay=0, target_unit=-1, offset_x=4, offset_y=4), ["dire_0", "'target_unit'", "-1"]),
    (pb.Action(primary=0, delay=0, target_unit=32, offset_x=4, offset_y=4), ["dire_0", "'target_unit'", "31"]),
    (pb.Action(primary=0, delay=0, target_unit=0, offset_x=9, offset_y=4), ["dire_0", "'offset_x'"]),
    (pb.Action(primary=0, delay=0, target_unit=0, offset_x=4), ["dire_0", "missing", "'offset_y'"]),
    (pb.Action(), ["dire_0", "missing", "'primary'"]),
])
def test_bad_action_is_invalid_argument_and_game_intact(stub, action, words):
    spec = _new_game(stub, seed=4)
    first = stub.Step(_noop_request(spec))
    code, msg = status_of(stub.Step, _noop_request(spec, dire_0=action))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    for w in words:
        assert w in msg, (w, msg)
    # intact: the next valid step is what it would have been without the bad call
    twin = _new_game(stub, seed=4)
    assert stub.Step(_noop_request(twin)) == first
    assert stub.Step(_noop_request(spec)) == stub.Step(_noop_request(twin))
    for s in (spec, twin):
        stub.CloseGame(pb.CloseGameRequest(game_id=s.game_id))


def test_missing_and_unknown_heroes_are_invalid_argument(stub):
    spec = _new_game(stub, mode="5v5")
    req = _noop_request(spec)
    del req.actions["dire_3"]
    code, msg = status_of(stub.Step, req)
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "dire_3" in msg and "missing" in msg
    req = _noop_request(spec)
    req.actions["dire_9"].CopyFrom(pb.Action(**NOOP))
    code, msg = status_of(stub.Step, req)
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "dire_9" in msg and "unknown" in msg
    code, msg = status_of(stub.Step, pb.StepRequest(game_id=spec.game_id))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "missing" in msg
    stub.Step(_noop_request(spec))  # still fine
    stub.CloseGame(pb.CloseGameRequest(game_id=spec.game_id))


@pytest.mark.parametrize("mode,config,words", [
    ("3v3", {}, ["mode", "3v3", "1v1", "5v5"]),
    ("1v1", {"mode": "5v5"}, ["mode", "1v1", "5v5"]),
    ("", {"mode": "2v2"}, ["mode", "2v2"]),
    ("5v5", {"frameskip": 0}, ["frameskip", "[1, 30]"]),
    ("5v5", {"bogus": 1}, ["bogus", "allowed"]),
    ("1v1", {"lineup": ["blademaster", "nobody"]}, ["lineup", "nobody"]),
])
def test_bad_mode_or_config_is_invalid_argument(stub, mode, config, words):
    code, msg = status_of(stub.CreateGame, pb.CreateGameRequest(mode=mode, config_json=json.dumps(config)))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    for w in words:
        assert w in msg, (w, msg)


def test_bad_config_json_and_seed_conflict(stub):
    for cj, word in (("{not json", "JSON"), ("[1, 2]", "object")):
        code, msg = status_of(stub.CreateGame, pb.CreateGameRequest(mode="1v1", config_json=cj))
        assert code == grpc.StatusCode.INVALID_ARGUMENT and "config_json" in msg and word in msg
    code, msg = status_of(stub.CreateGame, pb.CreateGameRequest(mode="1v1", seed=1, config_json='{"seed": 2}'))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "seed" in msg


# a client value this long, quoted whole, would make the details (gRPC trailing metadata) exceed the client's 8 KiB
# metadata limit: the client would get RESOURCE_EXHAUSTED ("server full") instead of the real error
HUGE = "x" * 20_000
DETAILS_BOUND = 1_500  # game_server.MAX_DETAILS_CHARS, written out so that the tests run on a server without it


def test_huge_game_id_is_not_found_with_short_details(stub):
    for call, req in ((stub.GetSpec, pb.GetSpecRequest(game_id=HUGE)),
                      (stub.Step, pb.StepRequest(game_id=HUGE)),
                      (stub.Reset, pb.ResetRequest(game_id=HUGE)),
                      (stub.CloseGame, pb.CloseGameRequest(game_id=HUGE))):
        code, msg = status_of(call, req)
        assert code == grpc.StatusCode.NOT_FOUND, (call, code, msg[:200])
        assert "unknown game id 'xxxx" in msg and "20000 chars" in msg and len(msg) < 400, msg


@pytest.mark.parametrize("mode,config,words", [
    ("1v1", {"lineup": ["blademaster", HUGE]}, ["lineup", "unknown hero"]),  # the environment's message
    (HUGE, {}, ["'mode'", "must be one of", "characters, cut"]),  # the environment's message, cut by the server
    ("1v1", {"mode": HUGE}, ["mode", "disagrees", "20000 chars"]),
    ("", {"mode": "\u00e9" * 20_000}, ["mode"]),  # non-ASCII: percent-encoded, up to 6 bytes a character
    ("1v1", {"seed": HUGE}, ["seed"]),
], ids=["lineup", "mode", "config-mode", "non-ascii-mode", "config-seed"])
def test_huge_config_value_is_invalid_argument_with_short_details(stub, mode, config, words):
    req = pb.CreateGameRequest(mode=mode, config_json=json.dumps(config, ensure_ascii=False))
    if "seed" in config:
        req.seed = 1
    code, msg = status_of(stub.CreateGame, req)
    assert code == grpc.StatusCode.INVALID_ARGUMENT, (code, msg[:200])
    assert len(msg) <= DETAILS_BOUND and msg.isascii(), msg
    for w in words:
        assert w in msg, (w, msg)


def test_huge_agent_id_is_invalid_argument_with_short_details(stub):
    spec = _new_game(stub)
    req = _noop_request(spec)
    req.actions[HUGE].CopyFrom(pb.Action(**NOOP))
    code, msg = status_of(stub.Step, req)
    assert code == grpc.StatusCode.INVALID_ARGUMENT, (code, msg[:200])
    assert len(msg) <= DETAILS_BOUND and "unknown" in msg and spec.game_id in msg, msg  # the end is kept too
    stub.Step(_noop_request(spec))  # the game is intact
    stub.CloseGame(pb.CloseGameRequest(game_id=spec.game_id))


def test_quoted_and_capped_details():
    from moba.server import game_server as gs
    assert gs.quoted("nope-123") == "'nope-123'" and gs.quoted(7) == "7" and gs.quoted(None) == "None"
    edge = "a" * (gs.MAX_ECHO_CHARS - 2)  # quoted, exactly the limit: untouched
    assert gs.quoted(edge) == repr(edge)
    q = gs.quoted(HUGE)
    assert q.startswith("'xxxx") and q.endswith("... (20000 chars)") and len(q) <= gs.MAX_ECHO_CHARS + 20
    assert gs.quoted(["y" * 500]).startswith("['yyyy") and len(gs.quoted(["y" * 500])) <= gs.MAX_ECHO_CHARS + 30
    # the whole details: short ones untouched, long ones cut in the middle, always ASCII
    assert gs.capped_details("unknown game id 'g1'") == "unknown game id 'g1'"
    long = "start " + "z" * 10_000 + " end"
    capped = gs.capped_details(long)
    assert len(capped) <= gs.MAX_DETAILS_CHARS == DETAILS_BOUND
    assert capped.startswith("start zzz") and capped.endswith("zzz end") and "10010 characters" in capped
    assert gs.capped_details("h\u00e9ro \u2192 \U0001f600") == "h\\xe9ro \\u2192 \\U0001f600"
    assert len(gs.capped_details("\U0001f600" * 5_000)) <= gs.MAX_DETAILS_CHARS


def test_step_before_reset_and_after_end_is_failed_precondition(stub):
    spec = stub.CreateGame(pb.CreateGameRequest(mode="1v1", config_json='{"time_limit_s": 0.5}')).spec
    code, msg = status_of(stub.Step, _noop_request(spec))
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "reset" in msg
    stub.Reset(pb.ResetRequest(game_id=spec.game_id))
    while not (r := stub.Step(_noop_request(spec))).truncateds["__all__"]:
        pass
    assert all(i.winner == "none" for i in r.infos.values())
    code, msg = status_of(stub.Step, _noop_request(spec))
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "reset" in msg
    stub.Reset(pb.ResetRequest(game_id=spec.game_id))
    stub.Step(_noop_request(spec))
    stub.CloseGame(pb.CloseGameRequest(game_id=spec.game_id))


def test_too_many_games_is_resource_exhausted():
    with GameServer(port=0, max_games=2) as srv:
        stub = pb_grpc.MobaGameStub(grpc.insecure_channel(srv.address))
        a, b = (stub.CreateGame(pb.CreateGameRequest(mode="1v1")).spec for _ in range(2))
        code, msg = status_of(stub.CreateGame, pb.CreateGameRequest(mode="1v1"))
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "2" in msg and "max-games" in msg
        with pytest.raises(GameServerFullError, match="RESOURCE_EXHAUSTED"):
            RemoteMobaEnv({"mode": "1v1", "remote": srv.address})
        stub.Reset(pb.ResetRequest(game_id=a.game_id))  # the open games still work
        stub.Step(_noop_request(a))
        stub.CloseGame(pb.CloseGameRequest(game_id=b.game_id))
        stub.CreateGame(pb.CreateGameRequest(mode="1v1"))
        assert len(stub.ListGames(pb.ListGamesRequest()).games) == 2


@pytest.mark.parametrize("field,value,words", [
    ("primary", 99, ["'primary'", "99"]), ("delay", 1.5, ["'delay'", "scalar integer"]),
    ("primary", "1", ["'primary'"]), ("target_unit", -1, ["'target_unit'"]), ("offset_y", float("nan"), ["'offset_y'"]),
    ("primary", True, ["'primary'"]),
    ("delay", 2 ** 70, ["'delay'"]), ("offset_x", np.zeros(1, np.int64), ["'offset_x'"]),
])
def test_remote_env_rejects_bad_actions_like_local(server, field, value, words):
    cfg = {"mode": "1v1", "seed": 0, "remote": server.address}
    remote = RemoteMobaEnv(cfg)
    local = local_twin(remote, cfg)
    remote.reset(seed=0)
    local.reset(seed=0)
    acts = noop(local)
    acts["dire_0"] = {**NOOP, field: value}
    with pytest.raises(ValueError) as r_exc:
        remote.step(acts)
    with pytest.raises(ValueError) as l_exc:
        local.step(acts)
    assert str(r_exc.value).startswith(str(l_exc.value))
    for w in ["dire_0"] + words:
        assert w in str(r_exc.value)
    assert_same_step(remote.step(noop(local)), local.step(noop(local)))
    remote.close()


def test_remote_env_rejects_bad_action_dicts_like_local(server):
    cfg = {"mode": "1v1", "seed": 0, "remote": server.address}
    remote = RemoteMobaEnv(cfg)
    local = local_twin(remote, cfg)
    remote.reset(seed=0)
    local.reset(seed=0)
    bad = [[NOOP, NOOP], {"radiant_0": NOOP}, {**noop(local), "dire_7": NOOP}, {**noop(local), "dire_0": [0] * 5},
           {**noop(local), "dire_0": {k: v for k, v in NOOP.items() if k != "delay"}},
           {**noop(local), "dire_0": {**NOOP, "speed": 1}}]
    for acts in bad:
        with pytest.raises(ValueError) as r_exc:
            remote.step(acts)
        with pytest.raises(ValueError) as l_exc:
            local.step(acts)
        assert str(r_exc.value).startswith(str(l_exc.value))
    # numpy and float integers are accepted, as locally
    acts = noop(local)
    acts["radiant_0"] = {"primary": np.int64(1), "delay": np.int32(0), "target_unit": np.array(0), "offset_x": 6.0,
                         "offset_y": np.float32(4)}
    assert_same_step(remote.step(acts), local.step(acts))
    remote.close()
    with pytest.raises(RuntimeError, match="closed"):
        remote.step(noop(local))
    remote.close()  # idempotent


def test_remote_env_finished_game_raises_runtime_error(server):
    env = RemoteMobaEnv({"mode": "1v1", "time_limit_s": 0.3, "remote": server.address})
    with pytest.raises(RuntimeError, match="reset"):
        env.step(noop(env))
    env.reset()
    while True:
        _, _, term, trunc, infos = env.step(noop(env))
        if term["__all__"] or trunc["__all__"]:
            break
    assert trunc["__all__"] and all(i["winner"] == "none" for i in infos.values())
    with pytest.raises(RuntimeError):
        env.step(noop(env))
    env.reset()
    env.step(noop(env))
    env.close()


@pytest.mark.parametrize("cfg,words", [
    ({"remote": "localhost"}, ["remote", "host:port"]), ({"remote": []}, ["remote"]), ({"remote": 5}, ["remote"]),
    ({"remote": ["127.0.0.1:1", "x:y"]}, ["remote", "x:y"]), ({"remote": "127.0.0.1:1", "timeout_s": 0}, ["timeout_s"]),
    ({"remote": "127.0.0.1:1", "retries": -1}, ["retries"]), ({"remote": "127.0.0.1:1", "mode": "3v3"}, ["mode"]),
    ({"remote": "127.0.0.1:1", "bogus": 1}, ["bogus"]),
])
def test_remote_env_config_errors(cfg, words):
    with pytest.raises(ValueError) as exc:
        RemoteMobaEnv(cfg)
    for w in words:
        assert w in str(exc.value), (w, str(exc.value))


# ---- the rest of the service -----------------------------------------------------------------------------------------
def test_health_list_spec_close(stub, server):
    h = stub.Health(pb.HealthRequest())
    assert h.status == "SERVING" and h.max_games == 64 and h.pid == os.getpid()
    env = RemoteMobaEnv({"mode": "5v5", "seed": 9, "remote": server.address})
    spec = stub.GetSpec(pb.GetSpecRequest(game_id=env.game_id))
    assert list(spec.agent_ids) == env.possible_agents and spec.max_units == 64 and spec.team_size == 5
    assert json.loads(spec.config_json)["seed"] == 9
    env.reset()
    env.step(noop(env))
    games = {g.game_id: g for g in stub.ListGames(pb.ListGamesRequest()).games}
    g = games[env.game_id]
    assert (g.mode, g.seed, g.steps, g.episodes, g.done) == ("5v5", 9, 1, 1, False)
    env.close()
    assert env.game_id not in {g.game_id for g in stub.ListGames(pb.ListGamesRequest()).games}
    code, _ = status_of(stub.GetSpec, pb.GetSpecRequest(game_id=env.game_id))
    assert code == grpc.StatusCode.NOT_FOUND


def test_game_closed_on_server_gives_clear_error(stub, server):
    env = RemoteMobaEnv({"mode": "1v1", "remote": server.address})
    env.reset()
    stub.CloseGame(pb.CloseGameRequest(game_id=env.game_id))
    with pytest.raises(RemoteGameLostError, match=env.game_id):
        env.step(noop(env))
    env.close()  # no error: nothing left to close


def test_idle_games_are_reaped():
    with GameServer(port=0, max_games=4) as srv:
        env = RemoteMobaEnv({"mode": "1v1", "remote": srv.address})
        assert srv.servicer.reap_idle(3600) == 0
        assert srv.servicer.reap_idle(0) == 1
        with pytest.raises(RemoteGameLostError):
            env.reset()


def test_make_moba_env_and_address_spreading(monkeypatch):
    from ray.rllib.env.env_context import EnvContext
    assert type(make_moba_env({"mode": "1v1"})) is MobaEnv
    local = make_moba_env(EnvContext({"mode": "1v1", "timeout_s": 5, "remote": None}, worker_index=2))
    assert type(local) is MobaEnv and local.worker_index == 2
    with GameServer(port=0) as a, GameServer(port=0) as b:
        # in-process servers create their games' envs from this process's counter too, so the clients' instance
        # numbers are not consecutive here: vary the worker index to exercise both servers
        envs = [make_moba_env(EnvContext({"mode": "1v1", "remote": [a.address, b.address]}, worker_index=w))
                for w in (1, 2, 3, 4)]
        assert [(type(e), e.worker_index) for e in envs] == [(RemoteMobaEnv, w) for w in (1, 2, 3, 4)]
        addresses = [a.address, b.address]
        # game i of a process goes to addresses[(worker_index + instance number) % len]
        assert [e.address for e in envs] == [addresses[(e.worker_index + e.instance_id) % 2] for e in envs]
        assert len(a.servicer.games) == len(b.servicer.games) == 2
        for e in envs:
            e.close()


def test_create_fails_over_to_the_next_address(monkeypatch):
    monkeypatch.setattr(moba_env_mod, "_instance_counter", itertools.count(0))
    with GameServer(port=0, max_games=1) as full, GameServer(port=0) as free:
        keep = RemoteMobaEnv({"mode": "1v1", "remote": full.address})  # instance 0 -> full (now full)
        with socket.socket() as s:  # an address where no server listens
            s.bind(("127.0.0.1", 0))
            dead = f"127.0.0.1:{s.getsockname()[1]}"
        # instance 1 -> addresses[1] = full, then dead, then free
        env = RemoteMobaEnv({"mode": "1v1", "remote": [free.address, full.address, dead], "retries": 0})
        assert env.address == free.address and env.game_id in free.servicer.games
        env.reset()
        with pytest.raises(RemoteEnvError, match="no game server could create") as exc:
            RemoteMobaEnv({"mode": "1v1", "remote": [full.address, dead], "retries": 0})
        assert full.address in str(exc.value) and "RESOURCE_EXHAUSTED" in str(exc.value)
        assert dead in str(exc.value) and "UNAVAILABLE" in str(exc.value)
        env.close()
        keep.close()


def test_server_restart_old_game_lost_new_env_works():
    """What RLlib's restart_failed_sub_environments does after a server restart: the old env fails clearly, a new
    env (same config, same address) plays on the restarted server."""
    srv = GameServer(port=0).start()
    address, port = srv.address, srv.port
    cfg = {"mode": "1v1", "remote": address, "timeout_s": 5, "retries": 5}
    env = RemoteMobaEnv(cfg)
    env.reset()
    env.step(noop(env))
    srv.stop(grace=0)
    with pytest.raises(GameServerUnavailableError, match=env.game_id):
        env.step(noop(env))
    srv = GameServer(port=port).start()  # back on the same port
    try:
        with pytest.raises((RemoteGameLostError, GameServerUnavailableError), match=env.game_id):
            env.reset()  # the new server does not know the old game
        env.close()
        fresh = RemoteMobaEnv(cfg)  # create retries while the channel reconnects
        fresh.reset()
        fresh.step(noop(fresh))
        fresh.close()
    finally:
        srv.stop(grace=0)


# ---- the CLI, a dead server ------------------------------------------------------------------------------------------
def _start_cli(*args) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "app.server", "--port", "0", *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": ROOT})
    line = proc.stdout.readline()
    m = re.search(r"listening on (\S+)", line)
    if not m:
        proc.kill()
        raise AssertionError(f"server did not start: {line!r} {proc.stderr.read()[-2000:]}")
    return proc, m.group(1)


def test_cli_port_in_use_then_sigterm():
    proc, address = _start_cli("--max-games", "3")
    try:
        port = address.rsplit(":", 1)[1]
        # a second server on the same port refuses to start, with a clear message
        second = subprocess.run([sys.executable, "-m", "app.server", "--port", port], cwd=ROOT, capture_output=True,
                                text=True, timeout=60, env={**os.environ, "PYTHONPATH": ROOT})
        assert second.returncode == 2
        assert f"port {port}" in second.stderr and "already in use" in second.stderr
        env = RemoteMobaEnv({"mode": "1v1", "remote": address})
        env.reset()
        env.step(noop(env))
        env.close()
        env2 = RemoteMobaEnv({"mode": "1v1", "remote": address})
        t0 = time.time()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        assert time.time() - t0 < 15  # no call in flight: no grace period to wait out
        log = proc.stderr.read()
        assert f"created game {env.game_id}" in log and f"closed game {env.game_id}" in log
        assert f"closed game {env2.game_id}" in log  # closed at shutdown
        assert "SIGTERM" in log
    finally:
        if proc.poll() is None:
            proc.kill()


def test_server_killed_mid_game_gives_clear_error():
    proc, address = _start_cli()
    try:
        env = RemoteMobaEnv({"mode": "5v5", "remote": address, "timeout_s": 10, "retries": 1})
        env.reset()
        for _ in range(3):
            env.step(noop(env))
        proc.kill()
        proc.wait(timeout=10)
        t0 = time.time()
        with pytest.raises(GameServerUnavailableError) as exc:
            env.step(noop(env))
        assert time.time() - t0 < 8  # at once, not after timeout_s
        msg = str(exc.value)
        assert address in msg and env.game_id in msg and "step" in msg
        assert isinstance(exc.value, ConnectionError) and isinstance(exc.value, RuntimeError)
        env.close()  # does not raise on a dead server
        # creating a game retries (bounded), then fails clearly
        t0 = time.time()
        with pytest.raises(GameServerUnavailableError, match="after 2 attempts"):
            RemoteMobaEnv({"mode": "1v1", "remote": address, "timeout_s": 2, "retries": 1})
        assert time.time() - t0 < 12
    finally:
        if proc.poll() is None:
            proc.kill()


# ---- training through a server ---------------------------------------------------------------------------------------
def test_smoke_training_through_a_server(tmp_path, caplog):
    """2 iterations of tune_configs/smoke.yaml with env.remote pointing at a server started here."""
    with caplog.at_level(logging.INFO, logger="moba.server"), GameServer(port=0) as srv:
        out = subprocess.run(
            [sys.executable, "-m", "app.train", "--config", "tune_configs/smoke.yaml", "--set",
             f"env.remote={srv.address}", "--set", "stop.training_iteration=2", "--set", f"storage_path={tmp_path}"],
            cwd=ROOT, capture_output=True, text=True, timeout=400, env={**os.environ, "PYTHONPATH": ROOT})
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
        summary = json.loads(out.stdout.strip().splitlines()[-1])
        trial = summary["trials"][0]
        assert trial["error"] is None and trial["iteration"] == 2 and trial["env_steps"] > 0
        log = caplog.text
        created = re.findall(r"created game (\S+):", log)
        assert created  # the env runners played on this server ...
        for game_id in created:  # ... and closed their games when they stopped
            assert re.search(rf"closed game {game_id} \(closed by .*; [1-9][0-9]* steps", log), game_id
        assert not srv.servicer.games


# ---- the committed stubs ---------------------------------------------------------------------------------------------
def test_committed_stubs_match_the_proto(tmp_path):
    from grpc_tools import protoc
    os.makedirs(tmp_path / "moba" / "server")
    shutil.copy(os.path.join(ROOT, "moba", "server", "moba.proto"), tmp_path / "moba" / "server" / "moba.proto")
    rc = protoc.main(["protoc", f"-I{tmp_path}", f"--python_out={tmp_path}", f"--pyi_out={tmp_path}",
                      f"--grpc_python_out={tmp_path}", str(tmp_path / "moba" / "server" / "moba.proto")])
    assert rc == 0
    for name in ("moba_pb2.py", "moba_pb2.pyi", "moba_pb2_grpc.py"):
        with open(tmp_path / "moba" / "server" / name) as f, open(os.path.join(ROOT, "moba", "server", name)) as g:
            assert f.read() == g.read(), f"{name} is stale: run sh moba/server/gen_proto.sh"
