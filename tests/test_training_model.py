"""The OpenAI Five network, its action distribution, observation normalization and the dual-clip surrogate
(policies/model/five_module.py, action_distribution.py, normalization.py, five_learner.py). No Ray session needed."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from moba.env.actions import A_NOOP, N_PRIMARY
from moba.env.moba_env import MobaEnv
from moba.game.abilities import TARGET_TYPE_READS_UNIT
from policies.agents.scripted import ScriptedAgent
from policies.learning.five_learner import dual_clip_surrogate
from policies.model.action_distribution import FiveActionDistribution
from policies.model.five_module import FiveModelConfig, FiveRLModule, gated_unit_logits
from policies.model.normalization import NORM_CLIP, RunningNorm

torch.set_num_threads(1)

TINY_MODEL = {"lstm_size": 16, "unit_embed": 16, "hero_embed": 16, "global_embed": 8, "private_embed": 16,
              "replica_size": 32, "action_embed": 16, "categorical_embed": 4, "max_seq_len": 4}
READS_UNIT_TYPES = {tt for tt, reads in enumerate(TARGET_TYPE_READS_UNIT) if reads}


# ---- helpers ---------------------------------------------------------------------------------------------------------
def build_module(env, seed=0, model=None):
    torch.manual_seed(seed)
    a0 = env.possible_agents[0]
    return RLModuleSpec(module_class=FiveRLModule, observation_space=env.observation_spaces[a0],
                        action_space=env.action_spaces[a0], model_config=dict(model or TINY_MODEL)).build()


_GAMES = {}


def played_game(mode, steps=150, seed=3):
    """(env, list of observation dicts, one per step): a game played by the scripted bot on both sides, so that
    attacks, spells and items (the unit-reading actions) become legal."""
    key = (mode, steps, seed)  # a shorter game cached first must not stand in for a longer one
    if key not in _GAMES:
        env = MobaEnv({"mode": mode, "seed": seed})
        obs, _ = env.reset(seed=seed)
        bot = ScriptedAgent(seed)
        bot.reset(env.possible_agents)
        history = [obs]
        for _ in range(steps):
            obs, _, term, trunc, _ = env.step(bot.act(obs))
            history.append(obs)
            assert not term["__all__"] and not trunc["__all__"]
        _GAMES[key] = (env, history)
    return _GAMES[key]


def stack_obs(obs_list):
    """A list (B) of per-agent observations -> the module's OBS dict of (B, T=1, ...) tensors."""
    return {k: torch.as_tensor(np.stack([o[k] for o in obs_list]))[:, None] for k in obs_list[0]}


def zero_state(module, b):
    return {k: torch.zeros(b, *np.shape(v)) for k, v in module.get_initial_state().items()}


def dist_of(module, obs_list):
    batch = {Columns.OBS: stack_obs(obs_list), Columns.STATE_IN: zero_state(module, len(obs_list))}
    with torch.no_grad():
        out = module.forward_exploration(batch)
    return module.get_exploration_action_dist_cls().from_logits(out[Columns.ACTION_DIST_INPUTS][:, 0])


def assert_samples_legal(dist, obs_list, n=200):
    """Samples n actions for every row; returns how many sampled a unit-reading primary action."""
    unit_reads = 0
    for _ in range(n):
        act = {k: v.numpy() for k, v in dist.sample().items()}
        for i, o in enumerate(obs_list):
            p = int(act["primary"][i])
            assert o["action_mask"][p] == 1, f"row {i}: masked primary action {p} sampled"
            if o["action_target_type"][p] in READS_UNIT_TYPES:
                unit_reads += 1
                kind = o["action_unit_kind"][p]
                u = int(act["target_unit"][i])
                assert o["unit_masks"][kind, u] == 1, f"row {i}: masked unit {u} sampled for primary action {p}"
    return unit_reads


def everything_legal(obs_list, seed=0):
    """Doctored observations: random sparse unit masks (subsets of the valid rows) and every primary action legal
    whose target (if it reads one) has at least one legal unit."""
    rng = np.random.default_rng(seed)
    out = []
    for o in obs_list:
        o = {k: np.array(v) for k, v in o.items()}
        valid = o["unit_valid"] > 0
        o["unit_masks"] = ((rng.random(o["unit_masks"].shape) < 0.3) & valid[None]).astype(o["unit_masks"].dtype)
        reads = np.isin(o["action_target_type"], list(READS_UNIT_TYPES))
        has_unit = o["unit_masks"][o["action_unit_kind"]].any(-1)
        o["action_mask"] = (~reads | has_unit).astype(o["action_mask"].dtype)
        out.append(o)
    return out


# ---- masking ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["1v1", "5v5"])
def test_masked_actions_are_never_sampled(mode):
    env, history = played_game(mode)
    module = build_module(env)
    reads = 0
    for obs in history[-3:]:
        obs_list = [obs[a] for a in env.possible_agents]
        reads += assert_samples_legal(dist_of(module, obs_list), obs_list)
    assert reads > 0, "the game never offered a unit-reading action: the unit mask was not exercised"


@pytest.mark.parametrize("mode", ["1v1", "5v5"])
def test_masked_units_are_never_sampled_when_every_action_is_legal(mode):
    env, history = played_game(mode)
    module = build_module(env)
    obs_list = everything_legal([history[-1][a] for a in env.possible_agents])
    assert sum(o["action_mask"].sum() for o in obs_list) > 3 * len(obs_list)
    assert assert_samples_legal(dist_of(module, obs_list), obs_list) > 20


@pytest.mark.parametrize("mode", ["1v1", "5v5"])
def test_noop_only_mask_samples_only_noop(mode):
    env, history = played_game(mode)
    module = build_module(env)
    obs_list = []
    for a in env.possible_agents:
        o = {k: np.array(v) for k, v in history[-1][a].items()}
        o["action_mask"][:] = 0
        o["action_mask"][A_NOOP] = 1
        obs_list.append(o)
    dist = dist_of(module, obs_list)
    for _ in range(200):
        assert (dist.sample()["primary"] == A_NOOP).all()
    # an all-zero mask (no-op not even marked): no-op stays legal, never NaN
    for o in obs_list:
        o["action_mask"][:] = 0
    dist = dist_of(module, obs_list)
    assert torch.isfinite(dist.primary).all()
    for _ in range(50):
        assert (dist.sample()["primary"] == A_NOOP).all()


def test_module_forward_shapes_and_values():
    env, history = played_game("1v1")
    module = build_module(env)
    obs_list = [history[-1][a] for a in env.possible_agents]
    batch = {Columns.OBS: stack_obs(obs_list), Columns.STATE_IN: zero_state(module, len(obs_list))}
    out = module.forward_train(batch)
    b = len(obs_list)
    assert out[Columns.ACTION_DIST_INPUTS].shape == (b, 1, module.action_dist_cls.required_input_dim())
    assert out[Columns.STATE_OUT]["h"].shape == (b, TINY_MODEL["lstm_size"])
    values = module.compute_values(batch, embeddings=out[Columns.EMBEDDINGS])
    assert values.shape == (b, 1) and torch.isfinite(values).all()
    assert torch.allclose(values, module.compute_values(batch), atol=1e-6)


# ---- the action distribution ----------------------------------------------------------------------------------------
P, U = 3, 2
# primary 0 reads nothing (no target), 1 reads unit and offsets (unit + offset), 2 reads the unit only
READS_UNIT = torch.tensor([False, True, True])
READS_OFFSET = torch.tensor([False, True, False])


def tiny_dist(seed=0, scale=1.0, cls=None):
    g = torch.Generator().manual_seed(seed)
    cls = cls or FiveActionDistribution.make(P, U)
    r = lambda *s: scale * torch.randn(1, *s, generator=g, dtype=torch.float64)  # noqa: E731
    logits = FiveActionDistribution.pack(r(P), r(P, U), r(4), r(9), r(9), READS_UNIT[None], READS_OFFSET[None])
    return cls.from_logits(logits)


def action(p, d=0, u=0, x=4, y=4):
    return {"primary": torch.tensor([p]), "delay": torch.tensor([d]), "target_unit": torch.tensor([u]),
            "offset_x": torch.tensor([x]), "offset_y": torch.tensor([y])}


def effective_actions(reads_unit=READS_UNIT, reads_offset=READS_OFFSET):
    """Every distinct action: parameters a primary action does not read are fixed (they are ignored)."""
    for p in range(len(reads_unit)):
        units = range(U) if reads_unit[p] else [0]
        offs = range(9) if reads_offset[p] else [4]
        for d, u, x, y in itertools.product(range(4), units, offs, offs):
            yield action(p, d, u, x, y)


def test_pack_and_from_logits_round_trip():
    d = tiny_dist()
    cls = type(d)
    assert cls.required_input_dim() == P + P * U + 4 + 9 + 9 + P + P
    again = cls.from_logits(FiveActionDistribution.pack(d.primary, d.unit, d.delay, d.offset_x, d.offset_y,
                                                        d.reads_unit, d.reads_offset))
    for k in ("primary", "unit", "delay", "offset_x", "offset_y", "reads_unit", "reads_offset"):
        assert torch.equal(getattr(again, k), getattr(d, k)), k


def test_logp_ignores_parameters_the_primary_action_does_not_read():
    d = tiny_dist()
    # primary 0 reads neither the unit nor the offsets
    assert torch.equal(d.logp(action(0, 1, 0, 2, 3)), d.logp(action(0, 1, 1, 7, 0)))
    # primary 2 reads the unit, not the offsets
    assert torch.equal(d.logp(action(2, 1, 1, 2, 3)), d.logp(action(2, 1, 1, 8, 8)))
    assert not torch.allclose(d.logp(action(2, 1, 0)), d.logp(action(2, 1, 1)))
    # primary 1 reads unit and offsets; every action reads the delay
    assert not torch.allclose(d.logp(action(1, 1, 1, 2, 3)), d.logp(action(1, 1, 1, 2, 4)))
    assert not torch.allclose(d.logp(action(1, 1, 1, 2, 3)), d.logp(action(1, 1, 1, 5, 3)))
    assert not torch.allclose(d.logp(action(1, 1, 0, 2, 3)), d.logp(action(1, 1, 1, 2, 3)))
    assert not torch.allclose(d.logp(action(0, 0)), d.logp(action(0, 3)))


def test_logp_is_the_sum_of_the_read_components():
    d = tiny_dist(seed=1)
    lsm = lambda t: F.log_softmax(t[0], -1).numpy()  # noqa: E731
    for p, dl, u, x, y in [(0, 2, 1, 0, 8), (1, 3, 1, 6, 2), (2, 0, 0, 1, 1)]:
        expected = lsm(d.primary)[p] + lsm(d.delay)[dl]
        if READS_UNIT[p]:
            expected += F.log_softmax(d.unit[0, p], -1).numpy()[u]
        if READS_OFFSET[p]:
            expected += lsm(d.offset_x)[x] + lsm(d.offset_y)[y]
        assert d.logp(action(p, dl, u, x, y)).item() == pytest.approx(expected, abs=1e-12)


def test_unit_logits_follow_the_sampled_primary_action():
    d = tiny_dist(seed=2)
    d.unit[0, 1] = torch.tensor([50.0, -50.0], dtype=torch.float64)  # primary 1 always picks unit 0
    d.unit[0, 2] = torch.tensor([-50.0, 50.0], dtype=torch.float64)  # primary 2 always picks unit 1
    for _ in range(100):
        a = d.sample()
        p = int(a["primary"])
        if p in (1, 2):
            assert int(a["target_unit"]) == p - 1


def test_effective_action_probabilities_sum_to_one_and_entropy_is_exact():
    d = tiny_dist(seed=3)
    logps = torch.cat([d.logp(a) for a in effective_actions()])
    probs = logps.exp()
    assert probs.sum().item() == pytest.approx(1.0, abs=1e-9)
    h_exact = -(probs * logps).sum().item()
    assert d.entropy().item() == pytest.approx(h_exact, abs=1e-9)


def test_entropy_matches_monte_carlo():
    d = tiny_dist(seed=4)
    torch.manual_seed(0)
    n = 20000
    big = type(d).from_logits(FiveActionDistribution.pack(
        d.primary.expand(n, -1), d.unit.expand(n, -1, -1), d.delay.expand(n, -1), d.offset_x.expand(n, -1),
        d.offset_y.expand(n, -1), d.reads_unit.expand(n, -1), d.reads_offset.expand(n, -1)))
    neg_logp = -big.logp(big.sample())
    stderr = neg_logp.std().item() / np.sqrt(n)
    assert neg_logp.mean().item() == pytest.approx(d.entropy().item(), abs=4 * stderr)


def test_unit_entropy_on_the_reading_primaries_equals_the_sum_over_all_of_them():
    """The unit head's entropy term is computed on the primary actions that read a unit and have a probability above
    0 only; value and gradient equal the sum over every primary action, with masked primaries (probability 0),
    primaries that read no unit, masked units and two leading axes (the learner's sequences)."""
    g = torch.Generator().manual_seed(11)
    b, t, p, u = 3, 5, 6, 7
    cls = FiveActionDistribution.make(p, u)
    primary = torch.randn(b, t, p, generator=g, dtype=torch.float64)
    primary = torch.where(torch.rand(b, t, p, generator=g) < 0.4, torch.full_like(primary, -1e9), primary)
    unit = torch.randn(b, t, p, u, generator=g, dtype=torch.float64)
    unit = torch.where(torch.rand(b, t, p, u, generator=g) < 0.3, torch.full_like(unit, -1e9), unit)
    reads = torch.rand(b, t, p, generator=g) < 0.5
    logits = cls.pack(primary, unit, torch.randn(b, t, 4, dtype=torch.float64),
                      torch.randn(b, t, 9, dtype=torch.float64), torch.randn(b, t, 9, dtype=torch.float64), reads,
                      torch.rand(b, t, p, generator=g) < 0.5).requires_grad_(True)
    d = cls.from_logits(logits)
    prob = F.softmax(d.primary, -1)
    logp = F.log_softmax(d.unit, -1)
    everywhere = (prob * d.reads_unit * -(logp.exp() * logp).sum(-1)).sum(-1)
    chosen = d.head_entropies()["unit"]
    assert chosen.shape == (b, t) and torch.allclose(chosen, everywhere, rtol=0, atol=1e-12)
    assert (everywhere > 0).any() and ((prob > 0) & ~d.reads_unit).any() and ((prob == 0) & d.reads_unit).any()
    (g_all,) = torch.autograd.grad(everywhere.sum(), logits)
    (g_chosen,) = torch.autograd.grad(chosen.sum(), logits)
    assert torch.allclose(g_chosen, g_all, rtol=0, atol=1e-12) and g_all.abs().sum() > 0


def test_head_entropy_has_the_action_entropy_value_without_its_pull_on_the_primary_action():
    """ppo.entropy_bonus "heads": the same value as the action's entropy; its gradient on the primary logits is
    that of H(primary) alone, while the action's pushes toward the primary that reads the offsets (2 ln 9 nats)."""
    d = tiny_dist(seed=7)
    d.primary = torch.zeros_like(d.primary).requires_grad_(True)  # a uniform primary: H(primary)'s gradient is 0
    d.offset_x, d.offset_y = torch.zeros_like(d.offset_x), torch.zeros_like(d.offset_y)  # uniform offsets
    assert sum(d.head_entropies(constant_reads=True).values()).item() == pytest.approx(d.entropy().item(), abs=1e-12)
    heads = d.head_entropies()
    assert sorted(heads) == ["delay", "offsets", "primary", "unit"]
    assert heads["offsets"].item() == pytest.approx(2 * np.log(9) / 3, abs=1e-12)  # uniform: 1 primary of 3 reads them
    (g_action,) = torch.autograd.grad(d.entropy().sum(), d.primary)
    (g_heads,) = torch.autograd.grad(sum(d.head_entropies(constant_reads=True).values()).sum(), d.primary)
    assert torch.allclose(g_heads, torch.zeros_like(g_heads), atol=1e-12)
    assert int(g_action.argmax()) == 1 and g_action[0, 1] > 0.5  # primary 1 reads the offsets
    # the parameter heads keep their entropy's gradient
    d.offset_x = torch.randn_like(d.offset_x).requires_grad_(True)
    (gx_action,) = torch.autograd.grad(d.entropy().sum(), d.offset_x)
    (gx_heads,) = torch.autograd.grad(sum(d.head_entropies(constant_reads=True).values()).sum(), d.offset_x)
    assert torch.allclose(gx_heads, gx_action, atol=1e-12) and gx_heads.abs().sum() > 0


def test_the_heads_parts_of_logp_and_kl_add_up_and_count_only_the_read_parameters():
    """head_logps and head_kls (the kickstart's split, policies/learning/kickstart.py) sum to logp and kl; a parameter
    head's part is 0 where the primary does not read it, and the KL weights it by the probability that it is read."""
    p, q = tiny_dist(seed=8), tiny_dist(seed=9)
    for a in (action(0, d=1, u=1, x=1, y=7), action(1, d=2, u=1, x=3, y=5), action(2, d=3, u=0, x=0, y=8)):
        parts = p.head_logps(a)
        assert sorted(parts) == sorted(FiveActionDistribution.HEADS)
        assert sum(parts.values()).item() == pytest.approx(p.logp(a).item(), abs=1e-12)
        pr = int(a["primary"])
        assert (parts["unit"].item() == 0.0) == (not READS_UNIT[pr])
        assert (parts["offsets"].item() == 0.0) == (not READS_OFFSET[pr])
    kls = p.head_kls(q)
    assert sum(kls.values()).item() == pytest.approx(p.kl(q).item(), abs=1e-12)
    assert all(v.item() > 0 for v in kls.values())
    read = (torch.softmax(p.primary, -1) * READS_OFFSET).sum().item()
    whole = sum(torch.distributions.kl_divergence(torch.distributions.Categorical(logits=a),
                                                  torch.distributions.Categorical(logits=b)).item()
                for a, b in ((p.offset_x, q.offset_x), (p.offset_y, q.offset_y)))
    assert kls["offsets"].item() == pytest.approx(read * whole, abs=1e-12)


def test_kl_is_zero_for_itself_positive_otherwise_and_exact():
    p, q = tiny_dist(seed=5), tiny_dist(seed=6)
    assert p.kl(p).item() == pytest.approx(0.0, abs=1e-12)
    kl = p.kl(q).item()
    assert kl > 0
    lp = torch.cat([p.logp(a) for a in effective_actions()])
    lq = torch.cat([q.logp(a) for a in effective_actions()])
    assert kl == pytest.approx((lp.exp() * (lp - lq)).sum().item(), abs=1e-9)
    # a difference in a parameter that no primary action reads with probability > 0 would not count: make the unit
    # logits differ only for primary 0, which never reads a unit
    r = tiny_dist(seed=5)
    r.unit = r.unit.clone()
    r.unit[0, 0] += torch.tensor([3.0, -3.0], dtype=torch.float64)
    assert p.kl(r).item() == pytest.approx(0.0, abs=1e-12)


def test_to_deterministic_picks_the_argmaxes():
    d = tiny_dist(seed=7, scale=3.0)
    det = d.to_deterministic()
    a = det.sample()
    p = int(d.primary[0].argmax())
    assert int(a["primary"]) == p
    assert int(a["delay"]) == int(d.delay[0].argmax())
    assert int(a["target_unit"]) == int(d.unit[0, p].argmax())
    assert int(a["offset_x"]) == int(d.offset_x[0].argmax())
    assert int(a["offset_y"]) == int(d.offset_y[0].argmax())
    for _ in range(5):
        assert {k: int(v) for k, v in det.sample().items()} == {k: int(v) for k, v in a.items()}
    assert torch.equal(det.logp(a), d.logp(a))


# ---- the offsets by group (FiveModelConfig.offset_groups) ------------------------------------------------------------
GP = 4  # primary 0 reads nothing, 1 the offsets of group 0, 2 the unit only, 3 the unit and the offsets of group 1
G_READS_UNIT = torch.tensor([False, False, True, True])
G_READS_OFFSET = torch.tensor([False, True, False, True])
G_GROUP = torch.tensor([2, 0, 2, 1])  # primaries 0 and 2 read no offsets: their group is never read


def grouped_dist(seed=0, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    cls = FiveActionDistribution.make(GP, U, 3)
    r = lambda *s: scale * torch.randn(1, *s, generator=g, dtype=torch.float64)  # noqa: E731
    return cls.from_logits(cls.pack(r(GP), r(GP, U), r(4), r(3, 9), r(3, 9), G_READS_UNIT[None],
                                    G_READS_OFFSET[None], G_GROUP[None]))


def test_grouped_offsets_round_trip_and_each_primary_reads_its_groups_logits():
    d = grouped_dist(seed=1)
    cls = type(d)
    assert cls.required_input_dim() == GP + GP * U + 4 + 2 * 3 * 9 + 3 * GP
    assert d.offset_x.shape == (1, 3, 9) and torch.equal(d.offset_group, G_GROUP[None])
    again = cls.from_logits(cls.pack(d.primary, d.unit, d.delay, d.offset_x, d.offset_y, d.reads_unit,
                                     d.reads_offset, d.offset_group))
    for k in ("primary", "unit", "delay", "offset_x", "offset_y", "reads_unit", "reads_offset", "offset_group"):
        assert torch.equal(getattr(again, k), getattr(d, k)), k
    lsm = lambda t: F.log_softmax(t, -1).numpy()  # noqa: E731
    for p, x, y in [(1, 2, 7), (3, 6, 0)]:
        a = action(p, 1, 1, x, y)
        g = int(G_GROUP[p])
        expected = (lsm(d.primary[0])[p] + lsm(d.delay[0])[1] + lsm(d.offset_x[0, g])[x]
                    + lsm(d.offset_y[0, g])[y] + (lsm(d.unit[0, p])[1] if G_READS_UNIT[p] else 0.0))
        assert d.logp(a).item() == pytest.approx(expected, abs=1e-12)
    bx, by = d.offsets_by_primary()
    assert bx.shape == (1, GP, 9) and torch.equal(bx[0, 3], d.offset_x[0, 1])
    assert torch.equal(by[0, 1], d.offset_y[0, 0])


def test_grouped_offsets_entropy_and_kl_are_exact():
    """The entropy and the KL over every distinct action, with two groups of offsets read by two primary actions."""
    p, q = grouped_dist(seed=2), grouped_dist(seed=3)
    lp = torch.cat([p.logp(a) for a in effective_actions(G_READS_UNIT, G_READS_OFFSET)])
    lq = torch.cat([q.logp(a) for a in effective_actions(G_READS_UNIT, G_READS_OFFSET)])
    assert lp.exp().sum().item() == pytest.approx(1.0, abs=1e-9)
    assert p.entropy().item() == pytest.approx(-(lp.exp() * lp).sum().item(), abs=1e-9)
    assert p.kl(q).item() == pytest.approx((lp.exp() * (lp - lq)).sum().item(), abs=1e-9)
    # the logits of the group no primary action reads (2) change nothing
    r = grouped_dist(seed=2)
    r.offset_x = r.offset_x.clone()
    r.offset_x[0, 2] += 5.0
    assert p.kl(r).item() == pytest.approx(0.0, abs=1e-12)
    assert r.entropy().item() == pytest.approx(p.entropy().item(), abs=1e-12)


def test_a_module_with_offset_groups_gives_each_primary_action_its_kinds_offsets():
    """model.offset_groups: move reads group "move", a point spell "caster", a spell offset from a unit or a teleport
    "regular", a ward "ward" (Five app. F, Table 5); the heads hold one pair of 9 logits per group."""
    from moba.env.actions import A_MOVE
    from moba.game.abilities import TT_POINT, TT_TELEPORT, TT_UNIT_OFFSET, TT_WARD
    from policies.model.five_module import OFFSET_GROUPS
    env, history = played_game("5v5")
    module = build_module(env, model={**TINY_MODEL, "offset_groups": True})
    assert module.offset_x_head.out_features == len(OFFSET_GROUPS) * 9 == 36
    obs_list = [history[-1][a] for a in env.possible_agents]
    d = dist_of(module, obs_list)
    tt = torch.as_tensor(np.stack([o["action_target_type"] for o in obs_list])).long()
    want = {TT_POINT: "caster", TT_UNIT_OFFSET: "regular", TT_TELEPORT: "regular", TT_WARD: "ward"}
    checked = set()
    for row in range(len(obs_list)):
        for p in range(module.n_primary):
            name = "move" if p == A_MOVE else want.get(int(tt[row, p]))
            if name is not None:
                assert OFFSET_GROUPS[int(d.offset_group[row, p])] == name, (row, p, name)
                checked.add(name)
    assert checked >= {"move", "caster", "regular"}
    with pytest.raises(ValueError, match="model config 'offset_groups': must be true or false"):
        FiveModelConfig.from_dict({"offset_groups": "yes"})


def test_grouped_offsets_follow_the_sampled_primary_action():
    d = grouped_dist(seed=4)
    d.offset_x = torch.full_like(d.offset_x, -50.0)
    d.offset_x[0, 0, 0] = 50.0  # group 0 (primary 1) always picks x = 0
    d.offset_x[0, 1, 8] = 50.0  # group 1 (primary 3) always picks x = 8
    seen = set()
    for _ in range(200):
        a = d.sample()
        p = int(a["primary"])
        if p in (1, 3):
            assert int(a["offset_x"]) == (0 if p == 1 else 8)
            seen.add(p)
    assert seen == {1, 3}
    det = d.to_deterministic().sample()
    assert int(det["offset_x"]) == {1: 0, 3: 8}.get(int(det["primary"]), int(det["offset_x"]))


# ---- normalization ---------------------------------------------------------------------------------------------------
def test_running_norm_chunked_updates_equal_numpy_statistics():
    rng = np.random.default_rng(0)
    x = rng.normal([3.0, -200.0, 0.01], [2.0, 50.0, 0.001], size=(97, 3))
    one, chunked = RunningNorm(3), RunningNorm(3)
    one.update(torch.as_tensor(x))
    for a, b in [(0, 7), (7, 8), (8, 60), (60, 62), (62, 97)]:
        chunked.update(torch.as_tensor(x[a:b], dtype=torch.float32))
    for norm in (one, chunked):
        assert bool((norm.count == 97).all())  # one count per feature
        np.testing.assert_allclose(norm.mean.numpy(), x.mean(0), rtol=1e-6)
        np.testing.assert_allclose(norm.std.numpy(), x.std(0, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(chunked.mean.numpy(), one.mean.numpy(), rtol=1e-6)
    y = one(torch.as_tensor(x[:5], dtype=torch.float32)).numpy()
    np.testing.assert_allclose(y, np.clip((x[:5] - x.mean(0)) / x.std(0, ddof=1), -5, 5), rtol=1e-4, atol=1e-5)


def test_running_norm_ignores_masked_rows_and_clips():
    rng = np.random.default_rng(1)
    x = rng.normal(10.0, 3.0, size=(4, 6, 2))
    mask = rng.random((4, 6)) < 0.5
    x[~mask] = 1e6  # garbage in masked rows must not leak into the statistics
    norm = RunningNorm(2)
    norm.update(torch.as_tensor(x), torch.as_tensor(mask))
    norm.update(torch.as_tensor(x[:0]))  # an empty batch changes nothing
    assert bool((norm.count == mask.sum()).all())  # one count per feature
    np.testing.assert_allclose(norm.mean.numpy(), x[mask].mean(0), rtol=1e-9)
    np.testing.assert_allclose(norm.std.numpy(), x[mask].std(0, ddof=1), rtol=1e-9)
    y = norm(torch.tensor([[1e9, -1e9], [10.0, 10.0]]))
    assert y.abs().max().item() <= NORM_CLIP
    assert y[0].tolist() == [NORM_CLIP, -NORM_CLIP]
    # before two rows have been seen the std is 1
    fresh = RunningNorm(2)
    assert torch.equal(fresh(torch.tensor([[1.0, -2.0]])), torch.tensor([[1.0, -2.0]]))


def test_running_norm_follows_its_statistics_through_updates_loads_and_inference_mode():
    """The normalization's (mean, 1/std) is kept between calls; every change of the statistics (an update, a loaded
    state, in inference mode or not) is seen by the next call, and what inference mode made never enters a graph."""
    x = torch.tensor([[1.0, 2.0], [3.0, 6.0], [5.0, 4.0]])
    norm = RunningNorm(2)

    def expected(n):
        return ((x - n.mean.float()) / n.std.float()).clamp(-NORM_CLIP, NORM_CLIP)
    assert torch.equal(norm(x), x.clamp(-NORM_CLIP, NORM_CLIP))  # fresh: mean 0, std 1
    norm.update(x)
    assert torch.allclose(norm(x), expected(norm))
    with torch.inference_mode():
        first = norm(x)
        norm.update(x * 10.0)
        assert not torch.allclose(norm(x), first) and torch.allclose(norm(x), expected(norm))
    other = RunningNorm(2)
    other.update(x + 100.0)
    with torch.inference_mode():
        norm.load_state_dict(other.state_dict())  # a weight sync on an env runner
        assert torch.allclose(norm(x), expected(other))
    w = torch.ones(2, requires_grad=True)
    (norm(x * w) ** 2).sum().backward()  # made in grad mode again, not from the inference-mode cache
    assert w.grad is not None and torch.isfinite(w.grad).all()


def test_norm_statistics_are_in_the_module_state():
    env, history = played_game("1v1")
    module = build_module(env)
    obs_list = [history[t][a] for t in (10, 60, 120) for a in env.possible_agents]
    obs = stack_obs(obs_list)
    module.update_normalizers(obs, None)
    for state in (module.get_state(), module.get_state(inference_only=True)):
        for name in ("global", "units", "heroes", "private_minimap", "private_lanes"):
            for buf in ("count", "mean", "m2"):
                assert f"norm.{name}.{buf}" in state, f"norm.{name}.{buf} does not travel with the module state"
    assert np.all(np.asarray(module.get_state()["norm.global.count"]) == len(obs_list))  # one count per feature
    # a fresh module (an env runner) receiving the state normalizes alike
    other = build_module(env, seed=1)
    assert not torch.equal(other.norm["global"].mean, module.norm["global"].mean)
    other.set_state(module.get_state(inference_only=True))
    for name in module.norm:
        for buf in ("count", "mean", "m2"):
            # RLlib's set_state passes float64 through float32 (convert_to_torch_tensor): equal to ~1e-7
            torch.testing.assert_close(getattr(other.norm[name], buf), getattr(module.norm[name], buf),
                                       rtol=1e-6, atol=1e-6)
    batch = {Columns.OBS: obs, Columns.STATE_IN: zero_state(module, len(obs_list))}
    with torch.no_grad():
        assert torch.allclose(other.forward_inference(batch)[Columns.ACTION_DIST_INPUTS],
                              module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS], atol=1e-5)


def test_update_normalizers_counts_only_valid_steps_and_units():
    env, history = played_game("5v5")
    module = build_module(env)
    agents = env.possible_agents[:3]
    steps = (20, 70, 120, 150)
    obs = {k: torch.as_tensor(np.stack([np.stack([history[t][a][k] for t in steps]) for a in agents]))
           for k in history[0][agents[0]]}  # (B=3, T=4, ...)
    mask = torch.tensor([[True, True, False, False], [True, False, True, False], [False, False, False, False]])
    module.update_normalizers(obs, mask)
    m = mask.numpy()
    n_valid = int(m.sum())
    assert bool((module.norm["global"].count == n_valid).all())  # one count per feature
    np.testing.assert_allclose(module.norm["global"].mean.numpy(), obs["global"].numpy()[m].astype(np.float64).mean(0),
                               rtol=1e-6)
    valid_units = m[..., None] & (obs["unit_valid"].numpy() > 0)
    assert bool((module.norm["units"].count == valid_units.sum()).all())  # one count per feature
    assert valid_units.sum() < m.sum() * obs["units"].shape[2]  # the padding rows were really skipped
    np.testing.assert_allclose(module.norm["units"].mean.numpy(),
                               obs["units"].numpy()[valid_units].astype(np.float64).mean(0),
                               rtol=1e-5, atol=1e-6)
    assert bool((module.norm["heroes"].count == n_valid * obs["heroes"].shape[2]).all())  # one count per feature
    n_team = obs["private_lanes"].shape[2]
    assert bool((module.norm["private_lanes"].count == n_valid * n_team).all())  # one count per feature
    assert bool((module.norm["private_minimap"].count == n_valid * n_team).all())  # one count per feature


def test_batch_moments_in_blocks_equal_float64_statistics_and_merge_exactly(monkeypatch):
    """The moments' pass in blocks (with masked rows, a block with no valid row, float32 data far from 0) equals the
    float64 statistics, and two batches' moments merged equal those of both together."""
    import policies.model.normalization as normalization
    monkeypatch.setattr(normalization, "MOMENT_BLOCK_ROWS", 7)
    rng = np.random.default_rng(4)
    x = rng.normal([1000.0, -3.0, 0.01], [5.0, 40.0, 0.001], size=(60, 3)).astype(np.float32)
    mask = rng.random(60) < 0.6
    mask[7:14] = False  # the second block holds no valid row
    moments = normalization.batch_moments(torch.as_tensor(x), torch.as_tensor(mask))
    valid = x[mask].astype(np.float64)
    assert moments.count == int(mask.sum())
    np.testing.assert_allclose(moments.mean.numpy(), valid.mean(0), rtol=1e-7)
    np.testing.assert_allclose(moments.m2.numpy(), ((valid - valid.mean(0)) ** 2).sum(0), rtol=1e-4)
    both = normalization.merge_moments(normalization.batch_moments(torch.as_tensor(valid[:11])),
                                       normalization.batch_moments(torch.as_tensor(valid[11:])))
    np.testing.assert_allclose(both.mean.numpy(), valid.mean(0), rtol=1e-12)
    np.testing.assert_allclose(both.m2.numpy(), ((valid - valid.mean(0)) ** 2).sum(0), rtol=1e-9)
    assert normalization.batch_moments(torch.as_tensor(x), torch.zeros(60, dtype=torch.bool)) is None
    assert normalization.merge_moments(None, both) is both


def test_update_normalizers_in_blocks_equal_one_pass_and_a_bad_value_changes_nothing(monkeypatch):
    """Steps in blocks of 3 (the team's frame turned per block) give the statistics of one block of all steps; a NaN
    in the last block's units raises, naming them, before any statistic changes (the global ones included)."""
    import policies.model.five_module as five_module
    env, history = played_game("5v5")
    agents = [env.possible_agents[i] for i in (0, 1, 5, 6)]  # two Radiant heroes, two Dire: both frames
    steps = (20, 70, 120, 150)
    obs = {k: torch.as_tensor(np.stack([np.stack([history[t][a][k] for t in steps]) for a in agents]))
           for k in history[0][agents[0]]}  # (B=4, T=4, ...)
    mask = torch.ones(4, 4, dtype=torch.bool)
    mask[1, 2:] = False
    one, blocks = build_module(env), build_module(env)
    one.update_normalizers(obs, mask)
    monkeypatch.setattr(five_module, "NORM_BLOCK_STEPS", 3)
    blocks.update_normalizers(obs, mask)
    for name in one.norm:
        for buf in ("count", "mean", "m2"):
            torch.testing.assert_close(getattr(blocks.norm[name], buf), getattr(one.norm[name], buf),
                                       rtol=1e-6, atol=1e-6)
    before = {k: v.clone() for k, v in blocks.state_dict().items() if k.startswith("norm.")}
    bad = dict(obs, units=obs["units"].clone())
    valid = bad["unit_valid"][3, 3] > 0
    bad["units"][3, 3, valid.nonzero()[0, 0], 0] = float("nan")
    with pytest.raises(FloatingPointError, match=r"units: 1 of \d+ rows hold non-finite values"):
        blocks.update_normalizers(bad, None)
    assert all(torch.equal(v, blocks.state_dict()[k]) for k, v in before.items())

# ---- dual clip -------------------------------------------------------------------------------------------------------
def test_dual_clip_bounds_negative_advantages():
    adv = torch.tensor([-1.0, -2.0, -1.0])
    ratio = torch.tensor([10.0, 100.0, 0.5])
    ppo = dual_clip_surrogate(adv, ratio, 0.2, None)
    assert ppo.tolist() == pytest.approx([-10.0, -200.0, -0.8])
    dual = dual_clip_surrogate(adv, ratio, 0.2, 3.0)
    assert dual.tolist() == pytest.approx([-3.0, -6.0, -0.8])  # c * A for large ratios, PPO otherwise


def test_dual_clip_is_plain_ppo_for_positive_advantages():
    adv = torch.tensor([1.0, 2.0, 0.5, 0.0])
    ratio = torch.tensor([10.0, 0.5, 1.1, 7.0])
    expected = torch.min(adv * ratio, adv * ratio.clamp(0.8, 1.2))
    assert torch.equal(dual_clip_surrogate(adv, ratio, 0.2, 3.0), expected)
    assert torch.equal(dual_clip_surrogate(adv, ratio, 0.2, None), expected)
    assert dual_clip_surrogate(adv, ratio, 0.2, 3.0).tolist() == pytest.approx([1.2, 1.0, 0.55, 0.0])


def test_primary_count_matches_env():
    assert FiveActionDistribution.make(N_PRIMARY, 32).required_input_dim() == \
        N_PRIMARY + N_PRIMARY * 32 + 4 + 9 + 9 + 2 * N_PRIMARY


def test_gated_unit_logits_equal_the_attention_formula():
    g = torch.Generator().manual_seed(0)
    emb, w, bias = torch.randn(3, 7, 6, generator=g), torch.randn(5, 6, generator=g), torch.randn(5, generator=g)
    gate, query = torch.rand(3, 4, 5, generator=g), torch.randn(3, 5, generator=g)
    keys = emb @ w.T + bias  # (N, U, K): the unit keys
    expected = torch.einsum("nuk,npk,nk->npu", keys, gate, query)
    out = gated_unit_logits(emb, w, bias, gate, query)
    assert out.shape == (3, 4, 7)
    assert torch.allclose(out, expected, atol=1e-5)


def test_running_norm_refuses_non_finite_observations_and_names_the_feature():
    """One inf merged into the statistics would make every normalized observation NaN, in the learner and in every
    env runner that receives the statistics: the update raises, naming the feature, and leaves them unchanged."""
    from policies.model.normalization import RunningNorm
    norm = RunningNorm(3)
    norm.update(torch.tensor([[1.0, 2.0, 3.0], [2.0, 2.0, 5.0]]))
    before = {k: v.clone() for k, v in norm.state_dict().items()}
    bad = torch.tensor([[1.0, float("inf"), 3.0], [2.0, 2.0, float("nan")]])
    with pytest.raises(FloatingPointError, match=r"heroes: 2 of 2 rows .* features \['b', 'c'\]"):
        norm.update(bad, name="heroes", features=("a", "b", "c"))
    assert all(torch.equal(before[k], v) for k, v in norm.state_dict().items())
    # a constant feature keeps M2 >= 0 and a finite std, whatever the rounding of its mean
    const = torch.full((1000, 3), 0.1, dtype=torch.float32)
    const[::7, 0] += 1e-7
    for _ in range(5):
        norm.update(const)
    assert bool((norm.m2 >= 0).all()) and bool(torch.isfinite(norm.std).all())
