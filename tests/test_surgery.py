"""Model surgery (policies/surgery/weights.py, app/surgery.py): every op keeps every output on recorded games (>= 1,000
observations, LSTM state carried), the check can fail, new units get random incoming and zero outgoing weights, Adam's
moments and the league's snapshots are carried, a surgered checkpoint resumes with the learning rate held, the env's
switches (observation group, constant observation, new-action share) and bad requests."""
from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from moba.env.moba_env import MobaEnv
from moba.env.observation import (GLOBAL_TIME, N_ACTION_IDS, N_GLOBAL, N_UNIT, SCOREBOARD_OWN_TEAM_KILLS,
                                 SCOREBOARD_OWN_TEAM_LAST_HITS, UNIT_DISTANCE_TO_ME, UNIT_HERO_COLUMNS, UNIT_SHIELD)
from moba.game.state import H_KILLS, H_LH
from policies.surgery.output_diff import max_output_diff, pad_actions, record_games
from policies.surgery.weights import (NetworkShape, SurgeryError, add_observation_features, add_primary_action, apply,
                              optimizer_state, parameter_names, plan, remove_observation_feature, split_offsets, widen,
                              widen_lstm)

torch.set_num_threads(1)
TOLERANCE = 1e-5
SMALL = {"lstm_size": 32, "unit_hidden": 32, "unit_embed": 16, "hero_hidden": 32, "hero_embed": 16, "global_embed": 8,
         "private_hidden": 16, "private_embed": 16, "replica_size": 32, "action_embed": 16, "categorical_embed": 8}
BASE_ENV = {"mode": "1v1"}
GROUP_ENV = {"mode": "1v1", "observation_groups": ["scoreboard"]}
CONST_ENV = {"mode": "1v1", "constant_observations": ["global.time", "units.shield"]}


@pytest.fixture(scope="module")
def games():
    """The same scripted 1v1 game (500 steps, both heroes: 1,000 observations) in three observation layouts."""
    base, group, const = record_games([BASE_ENV, GROUP_ENV, CONST_ENV], steps=500, seed=0)
    return {"base": base, "group": group, "const": const}


@pytest.fixture(scope="module")
def old(games):
    shape = NetworkShape.of(SMALL, BASE_ENV)
    module = shape.build_module(1)
    module.update_normalizers({k: torch.as_tensor(v) for k, v in games["base"].items()}, None)
    return shape, module


def rebuilt(shape, state, seed=7):
    m = shape.build_module(seed)
    m.set_state(state)
    return m


OPS = {  # op -> (function of (state, old shape), observations of the old module, of the new one)
    "add_observation_features": (lambda st, s: add_observation_features(st, s, GROUP_ENV), "base", "group"),
    "remove_observation_feature": (lambda st, s: remove_observation_feature(st, s, CONST_ENV), "const", "const"),
    "widen_encoders_and_fc": (lambda st, s: widen(st, s, {k: 2 * v for k, v in SMALL.items() if k != "lstm_size"}),
                              "base", "base"),
    "widen_lstm": (lambda st, s: widen_lstm(st, s, 64), "base", "base"),
    "add_primary_action": (lambda st, s: add_primary_action(st, s), "base", "padded"),
    "split_offsets": (lambda st, s: split_offsets(st, s), "base", "base"),
}


@pytest.mark.parametrize("op", list(OPS))
def test_each_op_keeps_every_output(op, games, old):
    shape, module = old
    fn, old_key, new_key = OPS[op]
    state, changes = fn(module.get_state(), shape)
    new_shape = next(s for s in [NetworkShape.of(SMALL, GROUP_ENV), NetworkShape.of(SMALL, CONST_ENV),
                                 NetworkShape.of({k: 2 * v if k != "lstm_size" else v for k, v in SMALL.items()},
                                                 BASE_ENV),
                                 NetworkShape.of({**SMALL, "lstm_size": 64}, BASE_ENV),
                                 NetworkShape.of(SMALL, BASE_ENV, extra_actions=1),
                                 NetworkShape.of({**SMALL, "offset_groups": True}, BASE_ENV)]
                     if {c.name for c in plan(shape, s)} == {c.name for c in changes} and
                     [c.op for c in plan(shape, s)] == [c.op for c in changes])
    new = rebuilt(new_shape, state)
    new_obs = pad_actions(games["base"], 1, N_ACTION_IDS) if new_key == "padded" else games[new_key]
    d = max_output_diff(module, new, games[old_key], new_obs)
    assert d["observations"] >= 1000
    assert d["all"] < TOLERANCE, d
    assert all(c.exact for c in changes) and changes
    with torch.no_grad():
        out = new.forward_train({"obs": {k: torch.as_tensor(v[:, :16]) for k, v in new_obs.items()},
                                 "state_in": {k: torch.zeros(2, new.cfg.lstm_size) for k in ("h", "c")}})
    assert float(out["action_dist_inputs"].std()) > 0.01  # not a degenerate network
    if op == "split_offsets":  # every primary action reads the one pair's offsets, from its own group's heads
        assert new.n_offset_groups == 4 and [c.op for c in changes] == ["split offsets"] * 4
        with pytest.raises(SurgeryError, match=r"model.offset_groups: True -> False changes what the network "
                                               r"computes.*allowed: True"):
            apply(state, new_shape, shape)
    if op == "add_primary_action":  # the added action is masked while it is not legal
        primary = out["action_dist_inputs"][..., :new.n_primary]
        assert (primary[..., -1] <= -5e8).all() and new.n_primary == module.n_primary + 1


def test_the_check_fails_when_a_new_unit_is_read(games, old):
    """A nonzero outgoing weight of one new LSTM unit: the outputs change, and the check says so."""
    shape, module = old
    state, _ = widen_lstm(module.get_state(), shape, 64)
    state = dict(state)
    w = np.array(state["value_head.weight"])
    w[0, 40] = 0.5  # unit 40 is new
    state["value_head.weight"] = w
    d = max_output_diff(module, rebuilt(NetworkShape.of({**SMALL, "lstm_size": 64}, BASE_ENV), state), games["base"])
    assert d["value"] > 10 * TOLERANCE and d["all"] == d["value"] and d["primary"] < TOLERANCE


def test_new_units_random_in_zero_out_and_fresh_statistics(old):
    shape, module = old
    st = module.get_state()
    state, _ = widen(st, shape, {"unit_hidden": 40, "lstm_size": 40})
    w1, w2 = np.asarray(state["unit_mlp.0.weight"]), np.asarray(state["unit_mlp.2.weight"])
    assert np.array_equal(w1[:32], np.asarray(st["unit_mlp.0.weight"]))
    assert np.abs(w1[32:]).min() > 0 and np.abs(w1[32:]).max() < np.abs(w1[:32]).max()  # small random incoming
    assert np.all(w2[:, 32:] == 0)  # zero outgoing
    hh = np.asarray(state["lstm.weight_hh_l0"])
    for g in range(4):  # every gate of the old units ignores the new units' h
        assert np.all(hh[g * 40:g * 40 + 32, 32:] == 0)
        assert np.abs(hh[g * 40 + 32:(g + 1) * 40]).max() > 0
    for head in ("action_query", "unit_query", "delay_head", "value_head", "win_head"):
        assert np.all(np.asarray(state[f"{head}.weight"])[:, 32:] == 0)
    grown, _ = add_observation_features(st, shape, GROUP_ENV)
    assert np.all(np.asarray(grown["global_mlp.0.weight"])[:, N_GLOBAL:] == 0)
    for stat in ("count", "mean", "m2"):
        s = np.asarray(grown[f"norm.global.{stat}"])
        assert np.all(s[N_GLOBAL:] == 0) and np.array_equal(s[:N_GLOBAL], np.asarray(st[f"norm.global.{stat}"]))
    assert np.asarray(st["norm.global.count"])[0] >= 1000


def test_constant_observation_is_ignored_and_stays_zero(games, old):
    shape, module = old
    state, _ = remove_observation_feature(module.get_state(), shape, CONST_ENV)
    assert np.all(np.asarray(state["global_mlp.0.weight"])[:, GLOBAL_TIME] == 0)
    assert np.all(np.asarray(state["unit_mlp.0.weight"])[:, UNIT_SHIELD] == 0)
    new = rebuilt(NetworkShape.of(SMALL, CONST_ENV), state)
    new.update_normalizers({k: torch.as_tensor(v) for k, v in games["const"].items()}, None)
    assert float(new.norm["global"].mean[GLOBAL_TIME]) == 0.0 and float(new.norm["global"].m2[GLOBAL_TIME]) == 0.0
    assert games["const"]["global"][..., GLOBAL_TIME].max() == 0 and games["base"]["global"][..., GLOBAL_TIME].max() > 0


def test_adam_moments_are_carried_and_new_ones_start_at_zero(games, old):
    shape, module = old
    m = rebuilt(shape, module.get_state())
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    obs = {k: torch.as_tensor(v[:, :16]) for k, v in games["base"].items()}
    for _ in range(2):
        out = m.forward_train({"obs": obs, "state_in": {k: torch.zeros(2, 32) for k in ("h", "c")}})
        loss = out["action_dist_inputs"].clamp(-50, 50).pow(2).mean() + out["win_logit"].pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    st = m.get_state()
    names = parameter_names(st)
    assert names == [n for n, _ in m.named_parameters()]
    new_shape = NetworkShape.of({**SMALL, "lstm_size": 48}, GROUP_ENV)
    new_state, _ = apply(st, shape, new_shape)
    new_opt = optimizer_state(opt.state_dict(), names, shape, new_shape)
    i = names.index("lstm.weight_hh_l0")
    old_m, new_m = opt.state_dict()["state"][i]["exp_avg"], new_opt["state"][i]["exp_avg"]
    assert new_m.shape == (4 * 48, 48) and torch.equal(new_m[:32, :32], old_m[:32, :32])
    assert torch.equal(new_m[48:80, :32], old_m[32:64, :32])  # the forget gate's rows moved with it
    assert float(new_m[:, 32:].abs().max()) == 0 and float(new_m[32:48].abs().max()) == 0
    assert float(old_m.abs().max()) > 0
    m2 = rebuilt(new_shape, new_state)
    opt2 = torch.optim.Adam(m2.parameters(), lr=1e-3)
    opt2.load_state_dict(new_opt)  # fits the new parameters: a step runs
    opt2.step()


def test_league_snapshot_is_surgered_like_main(old, tmp_path):
    from training.league_play import load_weights, save_weights
    shape, module = old
    path = str(tmp_path / "version_00001_iter_10.pt")
    save_weights(module.get_state(), path)
    new_shape = NetworkShape.of({**SMALL, "lstm_size": 48}, GROUP_ENV)
    snap, _ = apply(load_weights(path), shape, new_shape)
    main, _ = apply(module.get_state(), shape, new_shape)
    assert all(np.array_equal(np.asarray(snap[k]), np.asarray(main[k])) for k in main)  # the same seed, same op
    rebuilt(new_shape, snap)  # loads into the new layout


# ---- bad requests ----------------------------------------------------------------------------------------------------
def test_bad_requests_name_the_field(old):
    shape, module = old
    st = module.get_state()
    with pytest.raises(SurgeryError, match=r"model.lstm_size: 32 -> 16 shrinks a layer.*allowed: >= 32"):
        widen_lstm(st, shape, 16)
    with pytest.raises(SurgeryError, match=r"unknown layer\(s\) \['lstm'\]; allowed: \["):
        widen(st, shape, {"lstm": 64})
    with pytest.raises(SurgeryError, match="changes no weight.*nothing for surgery to do"):
        apply(st, shape, NetworkShape.of({**SMALL, "max_seq_len": 8}, BASE_ENV))
    with pytest.raises(SurgeryError, match=r"model.team_frame: False -> True changes what the network computes.*"
                                           r"allowed: False"):
        apply(st, shape, NetworkShape.of({**SMALL, "team_frame": True, "lstm_size": 48}, BASE_ENV))
    with pytest.raises(SurgeryError, match=r"unknown layer\(s\) \['team_frame'\]"):
        widen(st, shape, {"team_frame": True})
    grouped = NetworkShape.of(SMALL, GROUP_ENV)
    with pytest.raises(SurgeryError, match=r"env.observation_groups: \['scoreboard'\] would be removed"):
        plan(grouped, shape)
    with pytest.raises(SurgeryError, match="give the config the checkpoint was trained with"):
        apply(st, NetworkShape.of({**SMALL, "unit_hidden": 40}, BASE_ENV),
              NetworkShape.of({**SMALL, "unit_hidden": 48}, BASE_ENV))
    with pytest.raises(ValueError, match=r"env config 'observation_groups'.*\['scoreboard', 'buildings'\]"):
        NetworkShape.of(SMALL, {"mode": "1v1", "observation_groups": ["lanes"]})
    assert np.array_equal(np.asarray(st["lstm.weight_hh_l0"]), np.asarray(module.get_state()["lstm.weight_hh_l0"]))


def test_cli_refuses_before_writing(tmp_path, capsys):
    from app.surgery import main
    cfg = tmp_path / "new.yaml"
    cfg.write_text("env: {mode: 1v1}\nmodel: {lstm_size: 8}\n")
    out = tmp_path / "out"
    assert main(["--checkpoint", str(tmp_path), "--config", str(cfg), "--out", str(out)]) == 2
    assert "not an algorithm checkpoint" in capsys.readouterr().err and not out.exists()
    out.mkdir()
    assert main(["--checkpoint", str(tmp_path), "--config", str(cfg), "--out", str(out)]) == 2
    assert "exists: surgery writes a new checkpoint" in capsys.readouterr().err


# ---- the env switches ------------------------------------------------------------------------------------------------
def test_env_switches_scoreboard_constant_and_new_action_share():
    env = MobaEnv({"mode": "1v1", "seed": 1, "observation_groups": ["scoreboard"],
                   "constant_observations": ["units.shield"], "new_actions": ["buyback", "shrine"],
                   "new_action_share": 0.0})
    from policies.agents.scripted import ScriptedAgent
    env.set_seed_stream(0, 0)  # a training env mixes a process-wide instance count into its seed: fix it
    obs, _ = env.reset(seed=1)
    bot = ScriptedAgent(1)
    bot.reset(env.possible_agents)
    for _ in range(400):
        obs, *_ = env.step(bot.act(obs))
    o = obs["radiant_0"]
    hi = env.game.s.hi
    assert hi[0, H_LH] > 0  # something to count
    assert o["global"].shape == (N_GLOBAL + 4,)
    assert o["global"][N_GLOBAL + SCOREBOARD_OWN_TEAM_KILLS] == hi[0, H_KILLS]
    assert o["global"][N_GLOBAL + SCOREBOARD_OWN_TEAM_LAST_HITS] == hi[0, H_LH]
    assert np.all(o["units"][:, UNIT_SHIELD] == 0)
    ids = env.cfg.new_action_ids()
    assert all(o["action_mask"][a] == 0 for a in ids)
    legal = 0
    env.set_new_action_share(1.0)
    for s in range(3):
        env.reset(seed=100 + s)
        legal += len(env.encoder.disabled_actions) == 0
    assert legal == 3
    with pytest.raises(ValueError, match=r"env config 'new_actions': the no-op is always legal"):
        MobaEnv({"mode": "1v1", "new_actions": ["noop"]})


def test_env_switch_buildings_group_reads_the_ancients_and_towers_of_each_side():
    from moba.env.observation import BUILDINGS_FEATURES, N_SCOREBOARD, buildings_columns
    from moba.game.constants import UT_TOWER
    from moba.game.state import F_HP, F_MAXHP, I_ALIVE, I_TEAM, I_TYPE, I_USED
    env = MobaEnv({"mode": "1v1", "seed": 1, "observation_groups": ["buildings", "scoreboard"]})
    obs, _ = env.reset(seed=1)
    first = N_GLOBAL + N_SCOREBOARD  # after the scoreboard, whatever the order the config lists them in
    assert obs["radiant_0"]["global"].shape == (first + len(BUILDINGS_FEATURES),)
    # whole buildings, both ancients guarded by their towers
    assert obs["radiant_0"]["global"][first:].tolist() == [1.0, 1.0, 0.0, 0.0, 1.0, 1.0]
    s = env.game.s
    dire_ancient = env.game.ancient_idx[1]
    s.uf[dire_ancient, F_HP] = 0.25 * s.uf[dire_ancient, F_MAXHP]
    towers = np.nonzero((s.ui[:, I_USED] == 1) & (s.ui[:, I_TYPE] == UT_TOWER) & (s.ui[:, I_TEAM] == 1))[0]
    s.ui[towers, I_ALIVE] = 0  # every Dire tower down: its ancient's guards are gone
    obs, *_ = env.step({a: {"primary": 0, "delay": 0, "target_unit": 0, "offset_x": 4, "offset_y": 4}
                        for a in env.possible_agents})
    radiant, dire = obs["radiant_0"]["global"][first:], obs["dire_0"]["global"][first:]
    assert radiant[1] == pytest.approx(0.25, abs=0.01) and radiant[3] == 1.0 and radiant[5] == 0.0
    assert radiant[0] == 1.0 and radiant[2] == 0.0 and radiant[4] == 1.0
    assert dire.tolist() == [radiant[1], radiant[0], radiant[3], radiant[2], radiant[5], radiant[4]]  # own <-> enemy
    assert np.array_equal(buildings_columns(env.game, 0), radiant)


def test_lr_hold_schedule():
    from training.schedules import schedule_values
    sched = {"lr": {"unit": "iterations", "points": [[0, 3e-4]]}}
    hold = (11, 15, 0.0)  # restored at iteration 10, held for 5
    values = {it + 1: schedule_values(sched, it, 0, 4, hold)["lr"] for it in range(8, 17)}  # value for the next one
    assert values == {9: 3e-4, 10: 3e-4, 11: 0.0, 12: 0.0, 13: 0.0, 14: 0.0, 15: 0.0, 16: 3e-4, 17: 3e-4}


# ---- end to end: a checkpoint through the CLI, then a run that restores it (one tiny RLlib test) ---------------------
def test_surgered_checkpoint_resumes_with_lr_held(ray_session, no_home_results, tmp_path, capsys):
    import yaml

    from app import surgery as cli
    from training.run_config import validate
    from policies.learning.five_learner import LEAGUE_STATE_KEY
    from policies.model.module_ids import MAIN
    from callbacks.league_play import LeagueCallback
    from test_training_e2e import SMOKE, build_algo
    with open(SMOKE) as f:
        raw = yaml.safe_load(f)
    raw["env"].update(time_limit_s=5, randomize={"first_game_length": False})
    raw["ppo"].update(train_batch_size=64, minibatch_size=64)
    raw["resources"].update(num_env_runners=0, num_envs_per_env_runner=1)
    raw["evaluation"]["interval"] = 0
    raw["league"] = {"enabled": True, "snapshot_every": 1, "slots": 1}
    raw["storage_path"] = str(tmp_path / "results")
    algo = build_algo(validate(raw))
    for _ in range(2):
        algo.train()
    ckpt = algo.save_to_path(str(tmp_path / "trial" / "checkpoint_000002"))
    # the league's snapshots live in the trial directory, relative to it
    pool = LeagueCallback.of(algo).pool.state_dict()
    trial = os.path.dirname(ckpt)
    from training.league_play import save_weights
    from callbacks.trial_files import TrialFilesCallback
    for v in pool["versions"]:
        src = TrialFilesCallback.trial_path(algo, v["weights_path"])
        os.makedirs(os.path.join(trial, "league"), exist_ok=True)
        save_weights(torch.load(src, weights_only=False), os.path.join(trial, v["weights_path"]))
    old_weights = algo.learner_group.get_weights(module_ids=[MAIN])[MAIN]
    algo.stop()

    new_raw = {**raw, "model": {**raw["model"], "lstm_size": 48},
               "env": {**raw["env"], "observation_groups": ["scoreboard"]}}
    cfg_path = tmp_path / "new.yaml"
    cfg_path.write_text(yaml.safe_dump(new_raw))
    out = tmp_path / "grown"
    assert cli.main(["--checkpoint", ckpt, "--config", str(cfg_path), "--out", str(out), "--steps", "60"]) == 0
    text = capsys.readouterr().out
    assert "lstm.weight_hh_l0" in text and "widen lstm_size" in text and "add observation features" in text
    import json
    last = json.loads(text.strip().splitlines()[-1])
    assert last["exact"] and last["max_abs_diff"] < TOLERANCE and last["league_snapshots"] == len(pool["versions"]) > 0
    learner_state = cli._load_pickle(os.path.join(out, cli.LEARNER_STATE))
    for v in learner_state[LEAGUE_STATE_KEY]["versions"]:
        assert v["weights_path"].startswith(str(out)) and os.path.isfile(v["weights_path"])
        assert np.shape(torch.load(v["weights_path"], weights_only=False)["lstm.weight_hh_l0"]) == (4 * 48, 48)
    opt = learner_state["optimizer"]["main_default_optimizer"]["state"]
    names = parameter_names(cli._load_pickle(os.path.join(out, cli.MODULES_DIR, MAIN, "module_state.pkl")))
    assert np.shape(opt["state"][names.index("lstm.weight_hh_l0")]["exp_avg"]) == (4 * 48, 48)

    new_cfg = validate({**new_raw, "init": {"restore": str(out), "lr_hold_iterations": 1}})
    algo2 = build_algo(new_cfg)
    try:
        assert algo2.iteration == 2
        before = algo2.learner_group.get_weights(module_ids=[MAIN])[MAIN]
        assert np.allclose(np.asarray(before["value_head.weight"])[:, :32],
                           np.asarray(old_weights["value_head.weight"]))
        result = algo2.train()
        assert result["training_iteration"] == 3 and result["schedule"]["lr"] == 0.0
        after = algo2.learner_group.get_weights(module_ids=[MAIN])[MAIN]
        assert np.array_equal(np.asarray(after["lstm.weight_hh_l0"]), np.asarray(before["lstm.weight_hh_l0"]))
        assert algo2.train()["schedule"]["lr"] == pytest.approx(new_cfg.schedules["lr"]["points"][0][1])
        pool2 = LeagueCallback.of(algo2).pool
        assert len(pool2) >= len(pool["versions"])
        assert all(v.weights_path.startswith(str(out)) for v in pool2.versions[:len(pool["versions"])])
    finally:
        algo2.stop()


def test_a_state_with_one_count_for_all_features_loads(old):
    """States saved before per-feature counts (one count per normalizer) load as that count for every feature."""
    shape, module = old
    state = dict(module.get_state())
    n = float(np.asarray(state["norm.units.count"])[0])
    for key in [k for k in state if k.endswith(".count")]:
        state[key] = np.asarray(n)
    m = rebuilt(shape, state)
    assert m.norm["units"].count.shape == m.norm["units"].mean.shape and bool((m.norm["units"].count == n).all())
    new_state, _ = widen_lstm(state, shape, 48)
    assert np.shape(new_state["norm.global.count"]) == (N_GLOBAL,)


def test_new_action_share_reaches_the_envs_through_the_wrapper():
    from types import SimpleNamespace

    from moba.env.reward_wrapper import PostprocessedRewardEnv
    from training.schedules import set_on_envs
    envs = [PostprocessedRewardEnv(MobaEnv({"mode": "1v1", "new_actions": ["buyback"]})) for _ in range(2)]
    runner = SimpleNamespace(env=SimpleNamespace(envs=envs))
    assert set_on_envs(runner, "set_new_action_share", 0.25) == 2
    assert all(e.env.cfg.new_action_share == 0.25 for e in envs)
    assert set_on_envs(runner, "set_team_spirit", 0.5) == 2 and envs[0].team_spirit == 0.5


def test_restore_config_errors_name_the_field(tmp_path):
    from training.run_config import validate
    from training.settings import InitSettings
    assert InitSettings().lr_hold_iterations == 5 and InitSettings().lr_hold_lr == 0.0  # Five app. B
    with pytest.raises(ValueError, match=r"config 'init.restore': must be the path of an algorithm checkpoint"):
        validate({"init": {"restore": str(tmp_path)}})
    (tmp_path / "algorithm_state.pkl").write_bytes(b"")
    with pytest.raises(ValueError, match=r"config 'init.restore': and init.checkpoint both set"):
        validate({"init": {"restore": str(tmp_path), "checkpoint": str(tmp_path)}})
    with pytest.raises(ValueError, match=r"config 'init.lr_hold_iterations': must be >= 0"):
        validate({"init": {"lr_hold_iterations": -1}})
    with pytest.raises(ValueError, match=r"config 'schedules.new_action_share': values must be in \[0.0, 1.0\]"):
        validate({"schedules": {"new_action_share": 2}})


def test_a_team_unit_table_widens_and_drops_a_column_of_either_kind_exactly():
    """A module with one unit table per team (model.team_unit_table) in 5v5: its unit MLP reads the team's unit columns,
    the target head's keys and the hero's own pools the hero columns; widening its layers and feeding a unit column of
    either kind as a constant (units.shield: the MLP's; units.distance_to_me: the keys' and the pools') keep every
    output."""
    team = {**SMALL, "team_unit_table": True}
    five, five_const = {"mode": "5v5"}, {"mode": "5v5", "constant_observations": ["units.shield",
                                                                                  "units.distance_to_me"]}
    base, const = record_games([five, five_const], steps=120, seed=0)
    shape = NetworkShape.of(team, five)
    module = shape.build_module(1)
    module.update_normalizers({k: torch.as_tensor(v) for k, v in base.items()}, None)
    grow = {"unit_hidden": 48, "action_embed": 24, "unit_embed": 24, "unit_hero_pool": 24}
    wider = {**team, **grow}
    state, changes = widen(module.get_state(), shape, grow)
    assert {"unit_key_hero.weight", "unit_pool_team.weight", "unit_pool_hero.weight"} <= {c.name for c in changes}
    d = max_output_diff(module, rebuilt(NetworkShape.of(wider, five), state), base)
    assert d["observations"] >= 1000 and d["all"] < TOLERANCE, d
    const_shape = NetworkShape.of(team, five_const)
    assert [c.name for c in plan(shape, const_shape)] == ["unit_mlp.0.weight", "unit_key_hero.weight",
                                                          "unit_pool_hero.weight"]
    state, changes = remove_observation_feature(module.get_state(), shape, five_const)
    for name in ("unit_key_hero.weight", "unit_pool_hero.weight"):
        assert np.all(np.asarray(state[name])[:, UNIT_HERO_COLUMNS.index(UNIT_DISTANCE_TO_ME)] == 0)
    team_cols = [c for c in range(N_UNIT) if c not in UNIT_HERO_COLUMNS]
    assert np.all(np.asarray(state["unit_mlp.0.weight"])[:, team_cols.index(UNIT_SHIELD)] == 0)
    d = max_output_diff(module, rebuilt(const_shape, state), const)
    assert d["all"] < TOLERANCE, d
    with pytest.raises(SurgeryError, match="model.team_unit_table: True -> False changes what the network computes"):
        plan(shape, NetworkShape.of(SMALL, five))
