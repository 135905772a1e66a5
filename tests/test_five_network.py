"""The OpenAI Five module computes the network of app. H with less work (policies/model/five_module.py: team inputs
encoded
once per team and step, only valid unit rows through the unit MLP, the attention keys folded into the queries). These
tests hold it to the plain per-hero computation (tests/reference_five_network.py) with the same weights: logits,
values, win probabilities, LSTM states and gradients, on observations of real games carried through sequences."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from ray.rllib.core.columns import Columns
from reference_five_network import as_training_pass, masked_logit_free, reference_forward
from test_training_model import build_module, played_game

from moba.env.observation import (N_UNIT, TEAM_SHARED_KEYS, UNIT_DISTANCE_TO_ME, UNIT_DX_TO_ME, UNIT_DY_TO_ME,
                                  UNIT_HERO_COLUMNS, UNIT_IS_ME)
from policies.model.five_module import TEAM_STEP, TEAM_STEP_CHECK_EVERY, FiveModelConfig, table_products

TOLERANCE = 1e-5
# the default widths but narrow hidden layers, so that the encoder widths are exercised as config keys
SMALL = {"unit_hidden": 48, "hero_hidden": 40, "private_hidden": 24, "replica_size": 64, "lstm_size": 32}
TEAM_TABLE = {"team_unit_table": True}


def sequences(mode, model=None, seed=1):
    """(module with fitted observation statistics, batch): every hero of a scripted game as a sequence of 150 steps,
    with a random LSTM state at its start. From step 100 on, the first Radiant hero is dead: its unit row is empty in
    its team's observations (the row of the hero itself in 1v1, so that no unit is targetable either)."""
    env, history = played_game(mode, steps=150)
    module = build_module(env, seed=seed, model=model if model is not None else {})
    agents = env.possible_agents
    obs = {k: torch.as_tensor(np.stack([np.stack([o[a][k] for o in history]) for a in agents]))
           for k in history[0][agents[0]]}
    team = slice(0, len(agents) // 2)
    for k in ("units", "unit_type", "unit_valid"):
        obs[k][team, 100:, 0] = 0
    obs["unit_masks"][team, 100:, :, 0] = 0
    module.update_normalizers(obs, None)
    g = torch.Generator().manual_seed(seed)
    state = {k: 0.1 * torch.randn(len(agents), module.cfg.lstm_size, generator=g) for k in ("h", "c")}
    return module, {Columns.OBS: obs, Columns.STATE_IN: state}


def outputs(module, batch):
    out = module.forward_train(batch)
    return {Columns.ACTION_DIST_INPUTS: out[Columns.ACTION_DIST_INPUTS],
            "value": module.compute_values(batch, embeddings=out[Columns.EMBEDDINGS]),
            "win_prob": torch.sigmoid(out["win_logit"]), "h": out[Columns.STATE_OUT]["h"],
            "c": out[Columns.STATE_OUT]["c"]}


@pytest.mark.parametrize("mode", ["1v1", "5v5"])
@pytest.mark.parametrize("model", [{}, SMALL, TEAM_TABLE, {**SMALL, **TEAM_TABLE}],
                         ids=["default", "small", "team_table", "small_team_table"])
def test_outputs_equal_the_per_hero_network(mode, model):
    module, batch = sequences(mode, model)
    with torch.no_grad():
        ref = reference_forward(module, batch)
        out = outputs(module, batch)
    logits = out[Columns.ACTION_DIST_INPUTS]
    ref_logits = as_training_pass(module, ref[Columns.ACTION_DIST_INPUTS], batch[Columns.OBS])
    assert torch.equal(logits <= -5e8, ref_logits <= -5e8)  # the same logits masked
    assert masked_logit_free(logits, ref_logits).max() < TOLERANCE
    for k in ("value", "win_prob", "h", "c"):
        assert (out[k] - ref[k]).abs().max() < TOLERANCE, k
    assert logits.std() > 0.01 and out["value"].std() > 1e-4  # not a degenerate case


def test_exploration_forward_equals_the_per_hero_network_and_gives_values():
    module, batch = sequences("5v5")
    with torch.no_grad():
        ref = reference_forward(module, batch)
        out = module.forward_exploration(batch)
    assert masked_logit_free(out[Columns.ACTION_DIST_INPUTS], ref[Columns.ACTION_DIST_INPUTS]).max() < TOLERANCE
    assert (out[Columns.VF_PREDS] - ref["value"]).abs().max() < TOLERANCE
    assert (out["win_prob"] - ref["win_prob"]).abs().max() < TOLERANCE


@pytest.mark.parametrize("mode,model", [("1v1", {}), ("5v5", TEAM_TABLE)], ids=["1v1", "5v5_team_table"])
def test_the_training_pass_gives_every_loss_what_the_acting_pass_gives(mode, model):
    """The training pass computes the target-unit logits of the primary actions that some row reads a unit with
    only (FiveRLModule._forward_train); every figure a loss reads from it is the full pass's: each head's
    log-likelihood of actions drawn from the full pass, each head's entropy, the KL between the two (0), and their
    gradients."""
    module, batch = sequences(mode, model)
    cls = module.get_train_action_dist_cls()
    p, u = module.n_primary, module.max_units

    def figures(logits, actions):
        d = cls.from_logits(logits)
        return {**{f"logp_{k}": v for k, v in d.head_logps(actions).items()},
                **{f"entropy_{k}": v for k, v in d.head_entropies().items()}}

    full = module._forward(batch)[Columns.ACTION_DIST_INPUTS]  # the acting pass, with its graph
    train = module.forward_train(batch)[Columns.ACTION_DIST_INPUTS]
    # the selection happened: a primary action no row reads a unit with has its unit logits at 0 in training only
    unit_full, unit_train = (x[..., p:p + p * u].reshape(*x.shape[:-1], p, u) for x in (full, train))
    unread = ~module.reads_unit_table[batch[Columns.OBS]["action_target_type"].long()].flatten(0, -2).any(0)
    assert unread.any() and not unread.all()
    legal = unit_train[..., unread, :] > -5e8
    assert (unit_train[..., unread, :][legal] == 0).all() and (unit_full[..., unread, :][legal] != 0).any()
    assert (unit_train[..., ~unread, :] - unit_full[..., ~unread, :]).abs().max() < 1e-5
    actions = cls.from_logits(full.detach()).sample(generator=torch.Generator().manual_seed(0))
    mine, theirs = figures(train, actions), figures(full, actions)
    for k in mine:
        assert (mine[k] - theirs[k]).abs().max() < 1e-5, k
    kl = cls.from_logits(full.detach()).head_kls(cls.from_logits(train.detach()))
    assert max(float(v.abs().max()) for v in kl.values()) < 1e-5
    grads = []
    for x in (sum(m.sum() for m in mine.values()), sum(t.sum() for t in theirs.values())):
        module.zero_grad()
        x.backward(retain_graph=True)
        grads.append({n: q.grad.clone() for n, q in module.named_parameters() if q.grad is not None})
    assert grads[0].keys() == grads[1].keys() and len(grads[0]) > 20
    for n in grads[0]:
        scale = grads[1][n].abs().max().clamp_min(1.0)
        assert ((grads[0][n] - grads[1][n]).abs().max() / scale) < 1e-4, n


@pytest.mark.parametrize("mode,model", [("1v1", {}), ("5v5", TEAM_TABLE)], ids=["1v1", "5v5_team_table"])
def test_the_training_pass_takes_a_batch_where_no_row_reads_a_unit(mode, model):
    """A minibatch of zero-padded steps only reads no unit with any primary action: its unit logits are 0 where
    legal, and the rest of the pass is the acting pass's."""
    module, batch = sequences(mode, model)
    padded = {Columns.OBS: {k: torch.zeros_like(v[:, :4]) for k, v in batch[Columns.OBS].items()},
              Columns.STATE_IN: batch[Columns.STATE_IN]}
    with torch.no_grad():
        train = module.forward_train(padded)[Columns.ACTION_DIST_INPUTS]
        full = module.forward_exploration(padded)[Columns.ACTION_DIST_INPUTS]
    p, u = module.n_primary, module.max_units
    unit = train[..., p:p + p * u]
    assert torch.isfinite(train).all() and (unit[unit > -5e8] == 0).all()
    assert torch.equal(train[..., :p], full[..., :p]) and torch.equal(train[..., p + p * u:], full[..., p + p * u:])


@pytest.mark.parametrize("model", [SMALL, {**SMALL, **TEAM_TABLE}], ids=["small", "small_team_table"])
def test_gradients_equal_the_per_hero_network(model):
    """In float64, so that the two ways of summing agree to rounding."""
    module, batch = sequences("5v5", model)
    module.double()
    batch = {Columns.OBS: {k: v.double() if v.is_floating_point() else v for k, v in batch[Columns.OBS].items()},
             Columns.STATE_IN: {k: v.double() for k, v in batch[Columns.STATE_IN].items()}}

    def loss(out):
        logits = out[Columns.ACTION_DIST_INPUTS]
        weights = torch.rand(logits.shape, generator=torch.Generator().manual_seed(3), dtype=logits.dtype)
        live = logits > -5e8  # masked logits carry no gradient in either network
        return (torch.where(live, logits, 0.0) * weights).sum() + (out["value"] * 2).sum() + out["win_prob"].sum()

    loss(outputs(module, batch)).backward()
    mine = {n: p.grad.clone() for n, p in module.named_parameters() if p.grad is not None}
    module.zero_grad()
    ref = reference_forward(module, batch)
    ref[Columns.ACTION_DIST_INPUTS] = as_training_pass(module, ref[Columns.ACTION_DIST_INPUTS], batch[Columns.OBS])
    loss(ref).backward()
    theirs = {n: p.grad for n, p in module.named_parameters() if p.grad is not None}
    assert mine.keys() == theirs.keys() and len(mine) > 20
    for n in mine:
        scale = theirs[n].abs().max().clamp_min(1.0)
        assert ((mine[n] - theirs[n]).abs().max() / scale) < 1e-9, n


def test_team_groups_are_the_teams_at_each_step():
    module, batch = sequences("5v5")
    obs = batch[Columns.OBS]
    flat = {k: v[:, :40].reshape(-1, *v.shape[2:]) for k, v in obs.items()}  # 10 heroes x 40 steps
    reps, index = module.team_groups(flat)
    assert reps is not None and len(reps) == 2 * 40  # two teams per step
    hero, step = np.divmod(np.arange(400), 40)
    team = hero // 5
    index = index.numpy()
    for i in range(0, 400, 7):  # same group <=> same team and step
        same = index == index[i]
        assert np.array_equal(same, (team == team[i]) & (step == step[i]))


def test_team_groups_fall_back_to_one_row_per_group_on_a_projection_collision():
    module, batch = sequences("5v5")
    flat = {k: v[:, :3].reshape(-1, *v.shape[2:]) for k, v in batch[Columns.OBS].items()}
    for name, buf in list(module.named_buffers()):
        if name.startswith("_fingerprint_"):
            buf.zero_()  # every row projects to 0: the exact check must refuse to share
    assert module.team_groups(flat) == (None, None)
    short = {Columns.OBS: {k: v[:, :3] for k, v in batch[Columns.OBS].items()},
             Columns.STATE_IN: batch[Columns.STATE_IN]}
    with torch.no_grad():
        ref, out = reference_forward(module, short), module.forward_train(short)
    ref_logits = as_training_pass(module, ref[Columns.ACTION_DIST_INPUTS], short[Columns.OBS])
    assert masked_logit_free(out[Columns.ACTION_DIST_INPUTS], ref_logits).max() < TOLERANCE


def numbered_steps(batch) -> torch.Tensor:
    """The TEAM_STEP column (policies/learning/team_steps.py) of a `sequences` batch: one number per team and step."""
    n, t = batch[Columns.OBS]["global"].shape[:2]
    team = np.arange(n) // (n // 2)
    return torch.as_tensor(((team[:, None] + 1) << 32) + np.arange(t)[None], dtype=torch.int64)


@pytest.mark.parametrize("model", [{}, TEAM_TABLE], ids=["default", "team_table"])
def test_step_groups_are_the_groups_of_the_inputs_and_give_the_same_outputs(model):
    """A learner batch's rows grouped by their TEAM_STEP numbers, without fingerprints or comparisons, are the rows
    grouped by equal inputs, and the forward pass gives what it gives without the numbers."""
    module, batch = sequences("5v5", model)
    numbered = {**batch, TEAM_STEP: numbered_steps(batch)}
    flat = {k: v.reshape(-1, *v.shape[2:]) for k, v in batch[Columns.OBS].items()}
    by_steps = module.step_groups(flat, numbered[TEAM_STEP].reshape(-1))
    by_inputs = module.team_groups(flat)
    assert len(by_steps[0]) == len(by_inputs[0]) == 2 * batch[Columns.OBS]["global"].shape[1]  # two teams a step
    assert torch.equal(by_steps[0][by_steps[1]], by_inputs[0][by_inputs[1]])  # each row's group's first row
    fingerprinted = []
    team_groups = module.team_groups
    module.team_groups = lambda obs: fingerprinted.append(1) or team_groups(obs)
    with torch.no_grad():
        got, plain = outputs(module, numbered), outputs(module, batch)
    assert len(fingerprinted) == 1  # the plain pass only
    for k in got:
        torch.testing.assert_close(got[k], plain[k], rtol=0, atol=1e-6)


def test_step_groups_compare_the_rows_at_their_first_call_and_every_64th():
    module, batch = sequences("5v5")
    flat = {k: v[:, :10].reshape(-1, *v.shape[2:]) for k, v in batch[Columns.OBS].items()}
    steps = numbered_steps({Columns.OBS: {"global": batch[Columns.OBS]["global"][:, :10]}}).reshape(-1)
    one_team = steps & ((1 << 32) - 1)  # both teams under one number at each step: unequal rows grouped
    assert module._step_group_calls == 0
    with pytest.raises(ValueError, match="'team_step' column groups rows whose observation key 'global' differs"):
        module.step_groups(flat, one_team)
    for calls in range(1, TEAM_STEP_CHECK_EVERY):  # unchecked in between
        assert len(module.step_groups(flat, one_team)[0]) == 10 and module._step_group_calls == calls + 1
    with pytest.raises(ValueError, match="TEAM_SHARED_KEYS"):
        module.step_groups(flat, one_team)
    assert len(module.step_groups(flat, steps)[0]) == 20


def test_encoder_widths_are_model_config_keys():
    module, _ = sequences("1v1", SMALL)
    assert module.unit_mlp[0].out_features == 48 and module.hero_mlp[0].out_features == 40
    assert module.private_mlp[0].out_features == 24
    with pytest.raises(ValueError, match="unit_width.*allowed.*unit_hidden"):
        FiveModelConfig.from_dict({"unit_width": 64})
    with pytest.raises(ValueError, match="'hero_hidden': must be a positive int"):
        FiveModelConfig.from_dict({"hero_hidden": 0})


def test_building_the_module_keeps_torchs_deterministic_algorithms_without_the_nan_fill():
    """RLlib's seeding turns on torch's deterministic algorithms on a CPU torch, whose fill of every new tensor
    cost ~9% of an update; the module turns the fill off and leaves the algorithms on."""
    was = torch.are_deterministic_algorithms_enabled(), torch.utils.deterministic.fill_uninitialized_memory
    try:
        torch.use_deterministic_algorithms(True)
        torch.utils.deterministic.fill_uninitialized_memory = True
        from moba.env.moba_env import MobaEnv
        build_module(MobaEnv({"mode": "1v1", "seed": 0}))
        assert torch.are_deterministic_algorithms_enabled()
        assert not torch.utils.deterministic.fill_uninitialized_memory
    finally:
        torch.use_deterministic_algorithms(was[0])
        torch.utils.deterministic.fill_uninitialized_memory = was[1]


def test_a_teams_heroes_see_the_same_team_keys_and_team_unit_columns():
    """The observation contract the shared encoders rely on (TEAM_SHARED_KEYS, UNIT_HERO_COLUMNS of
    moba/env/observation.py): in a 5v5 game, the five heroes of a team hold equal arrays of the team's keys and equal
    unit rows outside the hero-relative columns, and the hero-relative columns do differ between them."""
    env, history = played_game("5v5", steps=150)
    agents = env.possible_agents
    team_cols = [c for c in range(N_UNIT) if c not in UNIT_HERO_COLUMNS]
    differs = np.zeros(N_UNIT, bool)
    for obs in history[::10]:
        for team in (agents[:5], agents[5:]):
            first = obs[team[0]]
            for a in team[1:]:
                for k in TEAM_SHARED_KEYS:
                    assert np.array_equal(obs[a][k], first[k]), k
                assert np.array_equal(obs[a]["units"][:, team_cols], first["units"][:, team_cols])
                differs |= (obs[a]["units"] != first["units"]).any(0)
    assert differs[[UNIT_DX_TO_ME, UNIT_DY_TO_ME, UNIT_DISTANCE_TO_ME, UNIT_IS_ME]].all()


def test_unit_groups_are_the_teams_at_each_step():
    module, batch = sequences("5v5", TEAM_TABLE)
    flat = {k: v[:, :40].reshape(-1, *v.shape[2:]) for k, v in batch[Columns.OBS].items()}  # 10 heroes x 40 steps
    reps, index = module.unit_groups(flat)
    assert reps is not None and len(reps) == 2 * 40
    hero, step = np.divmod(np.arange(400), 40)
    team = hero // 5
    index = index.numpy()
    for i in range(0, 400, 7):
        assert np.array_equal(index == index[i], (team == team[i]) & (step == step[i]))
    table = module._encode_units(flat)
    assert table.emb.shape[0] == 80 and table.pooled.shape[0] == 400  # one table per team and step
    # the team groups are taken when their unit inputs agree (checked), else the unit rows are fingerprinted
    teams = module.team_groups(flat)
    assert module.unit_groups(flat, teams) is teams
    changed = {**flat, "units": flat["units"].clone()}
    changed["units"][3, 0, module.unit_team_columns[0]] += 1.0  # hero 0 at step 3: its team's units differ
    reps, index = module.unit_groups(changed, teams)
    assert reps is not teams[0] and len(reps) == 81 and (index == index[3]).sum() == 1
    assert module.unit_mlp[0].in_features == N_UNIT - len(UNIT_HERO_COLUMNS) + module.cfg.categorical_embed


def test_table_products_equal_one_product_per_row_with_groups_past_the_stack():
    """Groups of up to max_group rows are stacked; a larger group (a learner batch's padded steps) takes the per-row
    path for its rows past max_group; values and gradients equal the per-row products."""
    g = torch.Generator().manual_seed(0)
    tables = torch.randn(4, 6, 3, generator=g, dtype=torch.float64, requires_grad=True)
    index = torch.tensor([2, 0, 2, 2, 1, 2, 0, 2, 3, 2])  # table 2 has 6 rows, past max_group = 3
    queries = torch.randn(10, 5, 3, generator=g, dtype=torch.float64, requires_grad=True)
    weights = torch.randn(10, 5, 6, generator=g, dtype=torch.float64)
    out = table_products(tables, index, queries, max_group=3)
    ref = torch.bmm(queries, tables[index].transpose(1, 2))
    assert out.shape == (10, 5, 6) and torch.allclose(out, ref, atol=1e-12)
    mine = torch.autograd.grad((out * weights).sum(), (tables, queries))
    theirs = torch.autograd.grad((ref * weights).sum(), (tables, queries))
    for a, b in zip(mine, theirs):
        assert torch.allclose(a, b, atol=1e-12)


def test_team_unit_table_is_a_switch():
    assert FiveModelConfig.from_dict({"team_unit_table": True}).team_unit_table
    with pytest.raises(ValueError, match="'team_unit_table': must be true or false"):
        FiveModelConfig.from_dict({"team_unit_table": 1})
