"""Pretraining (policies/pretrain/games.py, imitation.py, kickstart.py, app/pretrain.py): the loss
counts only the read parameters, sequences carry the LSTM state as a full forward pass does, the teacher labels the
student's steps in shadow, the workers play the same games as one process, and the CLI writes a clone that loads and
plays, or fails naming the option. Tiny games (a few game seconds) and a tiny network; no Ray session."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import yaml
from ray.rllib.core.columns import Columns
from test_training_model import TINY_MODEL, build_module, played_game

from moba.env.actions import A_ATTACK, A_BUYBACK, A_MOVE, ACTION_KEYS, N_PRIMARY, NOOP_ACTION
from moba.env.moba_env import MobaEnv
from moba.env.reward_wrapper import PostprocessedRewardEnv
from moba.game.abilities import UK_ATTACK
from moba.game.teams import TEAM_NAMES
from policies.agents.by_name import make_agent, play_game
from policies.league.references import agent_maker, load_module
from policies.pretrain import cloning as bc
from policies.learning.advantages import discounted_returns
from policies.pretrain.games import STUDENT, TEACHER, GamePlan, GameWorkers, Trajectory, play_games

torch.set_num_threads(1)
TIME_LIMIT_S = 4.0  # 30 agent steps a game


def tiny_env():
    return PostprocessedRewardEnv(MobaEnv({"mode": "1v1", "time_limit_s": TIME_LIMIT_S,
                                           "randomize": {"first_game_length": False}}))


def scripted(seed):
    return make_agent("scripted", seed)


def teacher_games(n=2):
    return play_games(tiny_env, [GamePlan(10 + k, TEACHER, TEACHER) for k in range(n)], scripted)


class ShadowSpy:
    """A stateful teacher: its k-th call since reset answers delay k % 4 (and a move with offset k % 9), and it keeps
    the observations it was shown."""

    def __init__(self, seed=0):
        self.calls, self.seen, self.resets = 0, [], 0

    def reset(self, agent_ids=None):
        self.calls, self.resets = 0, self.resets + 1

    def act(self, observations):
        out = {}
        for a, o in observations.items():
            self.seen.append(o)
            out[a] = {**NOOP_ACTION, "primary": A_MOVE, "delay": self.calls % 4, "offset_x": self.calls % 9}
        self.calls += 1
        return out


# ---- the loss --------------------------------------------------------------------------------------------------------
def test_the_loss_counts_only_the_parameters_the_teachers_primary_reads():
    env, history = played_game("1v1")  # a scripted game long enough for attacks to be legal
    a0 = env.possible_agents[0]
    obs = {k: np.stack([o[a0][k] for o in history]) for k in history[0][a0]}
    n = len(history)
    module = build_module(env)
    state = {k: torch.zeros(1, *np.shape(v)) for k, v in module.get_initial_state().items()}
    attackable = (obs["action_mask"][:, A_ATTACK] > 0) & (obs["unit_masks"][:, UK_ATTACK].sum(-1) >= 2)
    assert attackable.sum() > 10
    column = {k: ACTION_KEYS.index(k) for k in ACTION_KEYS}

    def loss(actions):
        t = Trajectory(obs=obs, actions=actions, rewards=np.zeros(n, np.float32), truncated=False, win=1.0,
                       source=TEACHER, seed=0)
        batch = bc.gather(bc.prepare([t], 0.99, 1.0), [bc.Chunk(0, 0, n, True, False)], n, module.observation_space)
        return bc.bc_loss(module, batch, state, torch.ones(N_PRIMARY), value_weight=0.0)[0].item()

    def changed(actions, key, rows, value):
        out = actions.copy()
        out[rows, column[key]] = value(out[rows]) if callable(value) else value
        return out

    labels = np.tile(np.array([list(NOOP_ACTION.values())], np.int16), (n, 1))
    labels[:, 0] = np.where(attackable, A_ATTACK, A_MOVE)
    first_two = np.argsort(-obs["unit_masks"][:, UK_ATTACK], axis=-1, kind="stable")[:, :2]  # two legal rows
    labels[:, column["target_unit"]] = np.where(attackable, first_two[:, 0], 0)
    base = loss(labels)
    moves, attacks = ~attackable, attackable
    assert loss(changed(labels, "target_unit", moves, 3)) == pytest.approx(base, abs=1e-6)  # a move reads no unit
    assert loss(changed(labels, "offset_x", attacks, 0)) == pytest.approx(base, abs=1e-6)  # an attack no offset
    assert loss(changed(labels, "offset_x", moves, 0)) != pytest.approx(base, abs=1e-4)  # a move reads its offsets
    other_row = changed(labels, "target_unit", attacks, lambda rows: first_two[attackable, 1])
    assert loss(other_row) != pytest.approx(base, abs=1e-4)  # an attack reads its unit
    assert loss(changed(labels, "delay", moves, 2)) != pytest.approx(base, abs=1e-4)  # every action reads its delay


def test_class_weights_favour_rare_primary_actions_up_to_the_cap():
    t = Trajectory(obs={}, actions=np.array([[0] + [0] * 4] * 99 + [[A_ATTACK] + [0] * 4], np.int16),
                   rewards=np.zeros(100, np.float32), truncated=False, win=1.0, source=TEACHER, seed=0)
    w = bc.class_weights([t], power=0.5, cap=5.0)
    assert w[0] == 1.0 and w[A_ATTACK] == 5.0 and w[A_MOVE] == 1.0  # sqrt(99) capped at 5; absent: 1
    assert bc.class_weights([t], power=0.0)[A_ATTACK] == 1.0
    assert bc.class_weights([t], power=1.0)[A_ATTACK] == bc.MAX_CLASS_WEIGHT  # 99, capped at 20 by default


def test_value_targets_are_discounted_returns_masked_before_a_time_limit():
    r = np.array([1.0, 0.0, 2.0, 0.0], np.float32)
    np.testing.assert_allclose(discounted_returns(r, 0.5), [1.5, 1.0, 2.0, 0.0])
    t = Trajectory(obs={}, actions=np.zeros((4, 5), np.int16), rewards=r, truncated=True, win=0.5, source=TEACHER,
                   seed=0)
    g, mask = bc.value_targets(t, 0.5, scale=2.0)
    np.testing.assert_allclose(g, [0.75, 0.5, 1.0, 0.0])
    assert mask.tolist() == [True, True, False, False]  # 1 / (1 - gamma) = 2 steps before the cut


# ---- sequences -------------------------------------------------------------------------------------------------------
def test_segments_cover_every_step_once_and_chunks_carry_the_state():
    rng = np.random.default_rng(0)
    lengths = [37, 5, 64]
    segments = bc.epoch_segments(lengths, segment_steps=16, seq_len=4, rng=rng)
    seen = {i: np.zeros(n, int) for i, n in enumerate(lengths)}
    for step in bc.lane_chunks(segments, lanes=3, seq_len=4):
        for c in step.values():
            assert 0 < c.stop - c.start <= 4
            seen[c.index][c.start:c.stop] += 1
            assert c.warm_up == (c.fresh and c.start > 0)
    assert all((v == 1).all() for v in seen.values())


def test_a_game_stepped_chunk_by_chunk_gives_the_full_sequence_forward():
    _, trajs = teacher_games(1)
    module = build_module(tiny_env())
    bc.update_normalizers(module, trajs)
    prepared = bc.prepare(trajs, 0.99, 1.0)
    lengths = [len(t) for t in trajs]
    seq_len = module.cfg.max_seq_len
    assert max(lengths) > 3 * seq_len
    chunked = {i: [] for i in range(len(trajs))}

    def record(batch, state_in):
        out, _ = bc.forward(module, batch, state_in)
        for j, (c, logits) in enumerate(zip(record.chunks, out[Columns.ACTION_DIST_INPUTS])):
            chunked[c.index].append(logits[:c.stop - c.start])
        return out[Columns.STATE_OUT]

    stream = bc.full_game_chunks(lengths, lanes=1, seq_len=seq_len)

    def with_chunks():
        for step in stream:
            record.chunks = list(step.values())
            yield step
    with torch.no_grad():
        bc.run_sequences(module, prepared, with_chunks(), seq_len, 1, record)
        for i, n in enumerate(lengths):
            batch = bc.gather(prepared, [bc.Chunk(i, 0, n, True, False)], n, module.observation_space)
            state = {k: torch.zeros(1, *np.shape(v)) for k, v in module.get_initial_state().items()}
            full, _ = bc.forward(module, batch, state)
            torch.testing.assert_close(torch.cat(chunked[i]), full[Columns.ACTION_DIST_INPUTS][0], atol=1e-5,
                                       rtol=1e-5)


# ---- the teacher in shadow -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("beta", [0.0, 1.0])
def test_the_teacher_labels_the_students_steps_in_shadow_from_the_games_start(beta):
    env = tiny_env()
    module = build_module(env)
    spies = []

    def make_spy(seed):
        spies.append(ShadowSpy(seed))
        return spies[-1]

    plans = [GamePlan(5, STUDENT, "noop", source="dagger_1", beta=beta)]
    summaries, trajs = play_games(tiny_env, plans, make_spy, student=module)
    (t,) = trajs
    (spy,) = spies
    assert t.agent_id == "radiant_0" and spy.resets == 1 and spy.calls == len(t) == summaries[0]["steps"]
    assert t.actions[:, ACTION_KEYS.index("delay")].tolist() == [k % 4 for k in range(len(t))]
    for k, seen in enumerate(spy.seen):  # the shadow saw the student's own observations, step by step
        for key, v in seen.items():
            np.testing.assert_array_equal(t.obs[key][k], v.astype(t.obs[key].dtype))
    # the next observation's previous action is the executed one: the teacher's with beta 1, the student's with 0
    executed = t.obs["private_prev_action"][1:, 0]
    labels = t.actions[:-1].astype(executed.dtype)
    assert (executed == labels).all(axis=1).all() == (beta == 1.0)


def test_a_teacher_action_the_mask_rules_out_is_recorded_as_the_noop_the_env_plays():
    class MasklessTeacher:  # buys back while alive every other step (the scripted bot attacks while stunned)
        def __init__(self, seed=0):
            self.calls = 0

        def reset(self, agent_ids=None):
            pass

        def act(self, observations):
            self.calls += 1
            return {a: {**NOOP_ACTION, "primary": A_BUYBACK if self.calls % 2 else A_MOVE, "offset_x": 2}
                    for a in observations}

    _, (t,) = play_games(tiny_env, [GamePlan(5, STUDENT, "noop")], MasklessTeacher,
                         student=build_module(tiny_env()))
    assert (t.obs["action_mask"][:, A_BUYBACK] == 0).all() and (t.obs["action_mask"][:, A_MOVE] > 0).all()
    expected = np.tile([NOOP_ACTION[k] for k in ACTION_KEYS], (len(t), 1))
    expected[1::2, 0], expected[1::2, ACTION_KEYS.index("offset_x")] = A_MOVE, 2
    np.testing.assert_array_equal(t.actions, expected)


def test_workers_play_the_same_games_as_one_process():
    plans = [GamePlan(20 + k, TEACHER, TEACHER if k % 2 else "random") for k in range(3)]
    one = play_games(tiny_env, plans, scripted)
    with GameWorkers(2) as workers:
        steps = []
        two = workers.play(tiny_env, plans, scripted, progress=steps.append)
    assert [s["seed"] for s in two[0]] == [20, 21, 22] and two[0] == one[0]
    assert [(t.seed, t.agent_id) for t in two[1]] == [(t.seed, t.agent_id) for t in one[1]]
    for a, b in zip(one[1], two[1]):
        np.testing.assert_array_equal(a.actions, b.actions)
        np.testing.assert_array_equal(a.obs["units"], b.obs["units"])
    assert sum(steps) == 3 * 30  # every game counts its whole length


# ---- the CLI ---------------------------------------------------------------------------------------------------------
@pytest.fixture
def tiny_config(tmp_path, monkeypatch):
    from app import pretrain
    path = tmp_path / "tiny_1v1.yaml"
    path.write_text(yaml.safe_dump({"name": "tiny", "env": {"mode": "1v1", "time_limit_s": TIME_LIMIT_S},
                                    "model": {k: v for k, v in TINY_MODEL.items()},
                                    "evaluation": {"time_limit_s": TIME_LIMIT_S}}))
    monkeypatch.setitem(pretrain.MODE_CONFIGS, "1v1", str(path))
    return tmp_path


def test_the_cli_writes_a_clone_that_loads_and_plays(tiny_config, capsys):
    from app import pretrain
    out = tiny_config / "clone"
    rc = pretrain.main(["--mode", "1v1", "--games", "3", "--out", str(out), "--epochs", "1", "--dagger-rounds", "1",
                        "--dagger-games", "2", "--check-games", "1", "--workers", "0", "--threads", "1"])
    assert rc == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert last["teacher_games"] == 3 and last["dagger_rounds"] == 1 and 0 <= last["agreement"]["primary"] <= 1
    assert set(last["play"]) == {"sampled", "greedy"} and set(last["play"]["sampled"]) == {"scripted", "random"}
    card = json.loads((out / "card.json").read_text())
    assert card["mode"] == "1v1" and card["teacher"] == "scripted" and "--games 3" in card["command"]
    assert card["timings"]["pretrain_s"] > 0 and card["agreement"]["steps"] > 0
    module = load_module(str(out))
    assert module.cfg.lstm_size == TINY_MODEL["lstm_size"]
    env = MobaEnv({"mode": "1v1", "time_limit_s": TIME_LIMIT_S, "evaluation": True})
    clone = agent_maker(str(out), env=env)(0)
    summary = play_game(env, clone, make_agent("random"), seed=1)
    assert summary["winner"] in TEAM_NAMES + ("none",)


@pytest.mark.parametrize("args, message", [
    (["--mode", "3v3", "--games", "2"], "--mode: must be one of ['5v5', '1v1'], got '3v3'"),
    (["--mode", "1v1", "--games", "2", "--teacher", "wizard"], "--teacher: unknown agent 'wizard'; allowed: ["),
    (["--mode", "1v1", "--games", "0"], "--games: must be an int >= 1, got '0'"),
    (["--mode", "1v1", "--games", "two"], "--games: must be an int >= 1, got 'two'"),
    (["--mode", "1v1", "--games", "2", "--beta", "2"], "--beta: must be a number in [0, 1], got '2'"),
    (["--mode", "1v1", "--games", "2", "--model", "lstm=8"], "--model: model config: unknown key(s) ['lstm']"),
    (["--mode", "1v1", "--games", "2", "--model", "lstm_size=big"],
     "--model: model config 'lstm_size': must be a positive int, got 'big'"),
    (["--mode", "1v1", "--games", "2", "--model", "team_frame=yes please"],
     "--model: model config 'team_frame': must be true or false, got 'yes please'"),
])
def test_cli_errors_name_the_option_and_the_allowed_values(tmp_path, capsys, args, message):
    from app import pretrain
    assert pretrain.main(args + ["--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert message in err


def test_teacher_agreement_compares_the_agent_with_its_teacher_on_the_agents_own_states(tiny_config, capsys):
    from scripts import teacher_agreement
    path = tiny_config / "agent"
    build_module(MobaEnv({"mode": "1v1"})).save_to_path(str(path))
    assert teacher_agreement.main([str(path), "--games", "2", "--teacher", "scripted", "--workers", "0"]) == 0
    text = capsys.readouterr().out
    last = json.loads(text.strip().splitlines()[-1])
    assert last["games"]["games"] == 2 and last["teacher"] == "scripted"
    a = last["agreement"]
    assert a["steps"] == 2 * 30  # one recorded hero per game, every step of a 4-second game
    assert sum(r["support"] for r in a["per_primary"].values()) == a["steps"]
    assert sum(r["predicted"] for r in a["per_primary"].values()) <= a["steps"]
    assert 0.0 <= a["all_read"] <= a["primary"] <= 1.0
    # the offsets' agreement under the teacher's primary, for the primaries that read offsets (the bot walks)
    assert "offsets_exact" in a["per_primary"]["move"] and "offsets_exact" not in a["per_primary"].get("noop", {})
    for r in a["per_primary"].values():
        if "offsets_exact" in r:
            assert 0.0 <= r["offsets_exact"] <= r["offsets_within_1"] <= 1.0
            assert 0 < r["offsets_support"] <= r["support"]
            assert sum(r["offsets_angle"].values()) <= r["offsets_support"]
            assert list(r["offsets_angle"]) == ["0-1", "1-30", "30-60", "60-90", "90-180"]
    assert "offset steps" in text and "within 1" in text and "move: the angle (degrees)" in text


# ---- the teacher taking over one kind of decision (policies/pretrain/overrides.py, scripts/teacher_override.py) ----
def test_override_rules_replace_one_kind_of_decision():
    from moba.env.actions import A_ABILITY0, A_SALVE
    from policies.pretrain.overrides import RULES, override
    move = {**NOOP_ACTION, "primary": A_MOVE, "offset_x": 0, "offset_y": 8}
    walk_back = {**NOOP_ACTION, "primary": A_MOVE, "offset_x": 8, "offset_y": 0}
    cast = {**NOOP_ACTION, "primary": A_ABILITY0, "target_unit": 3}
    salve = {**NOOP_ACTION, "primary": A_SALVE}
    hit = {**NOOP_ACTION, "primary": A_ATTACK, "target_unit": 5}
    assert override("none", move, cast) is move and override("all", move, cast) is cast
    assert override("rare_teacher", move, cast) is cast and override("rare_teacher", salve, move) is salve
    assert override("rare_student", salve, move) is move and override("rare_student", move, cast) is move
    assert override("rare", salve, move) is move and override("rare", move, cast) is cast
    assert override("rare", move, walk_back) is move
    assert override("attack", move, hit) is hit and override("attack", hit, move) is move
    assert override("move_offsets", move, walk_back) == {**move, "offset_x": 8, "offset_y": 0}
    assert override("move_offsets", hit, walk_back) is hit
    assert override("primary", move, walk_back) is move and override("primary", move, hit) is hit
    assert set(RULES) == {"none", "all", "rare", "rare_teacher", "rare_student", "attack", "move_offsets", "primary"}
    with pytest.raises(ValueError, match=r"GamePlan.override: unknown override rule 'casts'; allowed: \['none'"):
        GamePlan(1, STUDENT, TEACHER, override="casts")
    with pytest.raises(ValueError, match="beta .* and override .* each choose the executed actions; give one"):
        GamePlan(1, STUDENT, TEACHER, beta=0.5, override="rare")


def test_an_override_executes_the_teachers_action_and_counts_it():
    module = build_module(tiny_env())
    plans = [GamePlan(5, STUDENT, "noop", override="all"), GamePlan(5, STUDENT, "noop", override="none")]
    summaries, trajs = play_games(tiny_env, plans, ShadowSpy, student=module)
    taken, alone = summaries
    assert taken["overridden"] == taken["steps"] and alone["overridden"] == 0
    # the next observation's previous action is the executed one: the teacher's where it took over
    executed = trajs[0].obs["private_prev_action"][1:, 0]
    assert (executed == trajs[0].actions[:-1].astype(executed.dtype)).all()
    assert not (trajs[1].obs["private_prev_action"][1:, 0] == trajs[1].actions[:-1]).all(axis=1).all()
    for s in summaries:  # what each side destroyed, for the games' objective
        assert set(s["objective"]) == set(TEAM_NAMES) and set(s["objective"]["radiant"]) == {"buildings", "kills"}


def test_teacher_override_plays_each_rule_on_the_same_games(tiny_config, capsys):
    from scripts import teacher_override
    path = tiny_config / "agent"
    build_module(MobaEnv({"mode": "1v1"})).save_to_path(str(path))
    assert teacher_override.main([str(path), "--mode", "1v1", "--games", "2", "--teacher", "scripted",
                                  "--rules", "none", "all", "rare_teacher", "--primary-bias", "rare=-0.7"]) == 0
    text = capsys.readouterr().out
    last = json.loads(text.strip().splitlines()[-1])
    assert list(last["rules"]) == ["none", "all", "rare_teacher"] and last["greedy"] is False
    assert last["primary_bias"] == ["rare=-0.7"]
    for row in last["rules"].values():
        assert row["won"] + row["drawn"] + row["lost"] == row["games"] == 2
        assert len(row["kills"]) == len(row["buildings"]) == 2
    assert last["rules"]["none"]["overridden_share"] == 0.0 and last["rules"]["all"]["overridden_share"] == 1.0
    assert 0.0 <= last["rules"]["rare_teacher"]["overridden_share"] < 1.0
    assert "rare_teacher: won" in text


def test_the_teacher_probes_play_under_the_configs_consumable_filters_or_the_options(tiny_config):
    """A probe's games keep the rules of play the checkpoint trained with: the mode config's consumables' need filters,
    or --consumable-filters true / false for a checkpoint trained otherwise."""
    import argparse

    from app import pretrain
    path = tiny_config / "agent"
    build_module(MobaEnv({"mode": "1v1"})).save_to_path(str(path))

    def filters(*options):
        p = argparse.ArgumentParser()
        pretrain.add_probe_args(p, "1v1", 2, 0, "games")
        return pretrain.teacher_probe(p.parse_args([str(path), *options]))[2].get("consumable_filters")

    assert filters() is None  # the tiny config's env leaves them at the env's default (off)
    assert filters("--consumable-filters", "true") is True and filters("--consumable-filters", "false") is False
    cfg = yaml.safe_load((tiny_config / "tiny_1v1.yaml").read_text())
    (tiny_config / "tiny_1v1.yaml").write_text(yaml.safe_dump({**cfg, "env": {**cfg["env"],
                                                                             "consumable_filters": True}}))
    assert filters() is True and filters("--consumable-filters", "false") is False


@pytest.mark.parametrize("script, args, message", [
    ("teacher_agreement", ["--mode", "3v3"], "--mode: must be one of"),
    ("teacher_agreement", ["--teacher", "wizard"], "--teacher: unknown agent 'wizard'; allowed: ["),
    ("teacher_agreement", ["--games", "0"], "--games must be >= 1"),
    ("teacher_override", ["--rules", "none", "casts"],
     "--rules: unknown override rule 'casts'; allowed: ['none', 'all'"),
    ("teacher_override", ["--mode", "3v3"], "--mode: must be one of"),
    ("teacher_override", ["--games", "0"], "--games must be >= 1"),
    ("teacher_override", ["--primary-bias", "cast=-1"],
     "--primary-bias: unknown primary action 'cast'; allowed: rare, noop, move"),
    ("teacher_override", ["--primary-bias", "rare"], "--primary-bias: 'rare' must be NAME=LOGIT with a number"),
])
def test_the_teacher_probes_errors_name_the_option(tmp_path, capsys, script, args, message):
    """scripts/teacher_agreement.py and scripts/teacher_override.py (shared options: app.pretrain.add_probe_args)."""
    import importlib
    probe = importlib.import_module(f"scripts.{script}")
    assert probe.main([str(tmp_path)] + args) == 2
    assert message in capsys.readouterr().err


def test_primary_bias_items_become_logits_per_primary_action():
    from moba.env.actions import A_ABILITY0, A_ATTACK, A_MOVE, N_PRIMARY
    from policies.pretrain.overrides import RARE_PRIMARIES
    from scripts.teacher_override import primary_bias
    assert primary_bias([]) is None
    bias = primary_bias(["rare=-0.5", "move=1", "ability_1=-0.25"])
    expected = np.zeros(N_PRIMARY, np.float32)
    expected[sorted(RARE_PRIMARIES)] = -0.5
    expected[A_MOVE], expected[A_ABILITY0] = 1.0, -0.75  # ability_1 is a rare action: both items add
    np.testing.assert_allclose(bias, expected)
    assert bias[A_ATTACK] == 0.0
