"""Self-imitation of won games (policies/learning/self_imitation.py; ppo.self_imitation_coeff): which steps it keeps,
the returns it gives them, the buffer's bound, and what its loss does to the policy."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from ray.rllib.core.columns import Columns
from test_five_learner import load_pinned_episodes, pinned_learner, result_value
from test_training_e2e import tiny_smoke

from policies.learning.advantages import discounted_returns
from policies.learning.self_imitation import (SIL_RETURN, SIL_STEP, SelfImitationBuffer, self_imitation_loss,
                                              won_outright)
from policies.model.module_ids import MAIN

PLAIN = {"resources__learner_threads": 1, "ppo__target_kl": 0.0, "ppo__diagnostics_every": 0}


def test_discounted_returns_sum_to_the_games_end():
    r = np.array([1.0, 0.0, -2.0, 4.0], np.float32)
    g = 0.5
    want = [1 + g * 0 + g * g * -2 + g ** 3 * 4, 0 + g * -2 + g * g * 4, -2 + g * 4, 4.0]
    np.testing.assert_allclose(discounted_returns(r, g), want, rtol=1e-6)


def winning(episodes, index: int, winner: str | None = None):
    """`episodes` with the chunk at `index` made the end of a game its agent's side won (or `winner`'s)."""
    from moba.game.teams import side_of_agent
    episodes = copy.deepcopy(episodes)
    e = episodes[index]
    e.is_terminated = True
    info = dict(e.get_infos(-1) or {})
    info["winner"] = winner or side_of_agent(str(e.agent_id))
    e.infos[-1] = info
    return episodes


def test_only_a_chunk_that_ends_a_game_its_side_won_outright_counts():
    episodes = load_pinned_episodes()
    assert not any(won_outright(e) for e in episodes)
    assert won_outright(winning(episodes, 0)[0])
    from moba.game.teams import TEAM_NAMES, side_of_agent
    other = next(s for s in TEAM_NAMES if s != side_of_agent(str(episodes[0].agent_id)))
    assert not won_outright(winning(episodes, 0, winner=other)[0])
    capped = winning(episodes, 0)
    capped[0].is_terminated, capped[0].is_truncated = False, True  # the time limit: not an outright win
    assert not won_outright(capped[0])


def sil_learner(**changes):
    return pinned_learner(tiny_smoke(ppo__self_imitation_coeff=1.0, **PLAIN, **changes))


def test_the_learner_keeps_the_won_chunks_steps_with_their_returns_and_trains_on_them():
    episodes = load_pinned_episodes()
    won = winning(episodes, 0)
    learner = sil_learner()
    compute_losses, seen = learner.compute_losses, []

    def recording(**kwargs):
        seen.append(set(kwargs["batch"][MAIN].keys()))
        return compute_losses(**kwargs)
    learner.compute_losses = recording
    np.random.seed(2)
    main = learner.update(episodes=copy.deepcopy(won), minibatch_size=32, num_epochs=1)[MAIN]
    # every real step of the won chunk, no other: their returns are the chunk's discounted rewards to its end
    assert learner._sil.steps == len(won[0])
    assert result_value(main["self_imitation_added_steps"]) == len(won[0])
    rows, _ = learner._sil._chunks[0]
    kept = rows[SIL_RETURN][rows[Columns.LOSS_MASK]].numpy()
    gamma = learner.get_schedule_values()["gamma"]
    np.testing.assert_allclose(kept, discounted_returns(np.asarray(won[0].get_rewards(), np.float32), gamma),
                               rtol=1e-5, atol=1e-6)
    # PPO's minibatches do not carry the marking columns; each one had the self-imitation term
    assert seen and all(SIL_RETURN not in s and SIL_STEP not in s for s in seen)
    assert result_value(main["self_imitation_steps"]) > 0
    # off (the default): no buffer; on, with no won game in the batch: nothing kept
    plain = pinned_learner(tiny_smoke(**PLAIN))
    assert plain._sil is None
    on_no_win = sil_learner()
    np.random.seed(2)
    on_no_win.update(episodes=copy.deepcopy(episodes), minibatch_size=32, num_epochs=1)
    assert on_no_win._sil.steps == 0


def test_the_buffer_drops_its_oldest_sequences_past_its_capacity():
    def block(n_rows, steps_per_row, value):
        mask = torch.zeros(n_rows, 4, dtype=torch.bool)
        mask[:, :steps_per_row] = True
        return {Columns.OBS: {"x": torch.full((n_rows, 4, 2), value)}, Columns.STATE_IN: {"h": torch.zeros(n_rows, 3)},
                Columns.ACTIONS: {"primary": torch.zeros(n_rows, 4, dtype=torch.long)}, Columns.LOSS_MASK: mask,
                SIL_RETURN: torch.full((n_rows, 4), value), SIL_STEP: mask.float()}
    buf = SelfImitationBuffer(capacity=10)
    assert buf.add(block(2, 3, 1.0)) == 6
    unmarked = block(2, 3, 9.0)
    unmarked[SIL_STEP] = torch.zeros(2, 4)
    assert buf.add(unmarked) == 0 and buf.steps == 6
    assert buf.add(block(1, 4, 2.0)) == 4 and buf.steps == 10
    assert buf.add(block(1, 2, 3.0)) == 2 and buf.steps == 6  # the first block (6 steps) went
    rng = np.random.default_rng(0)
    out = buf.sample(100, rng)  # more than it holds: every sequence once
    assert sorted(out[SIL_RETURN][:, 0].tolist()) == [2.0, 3.0]
    assert sorted(out[Columns.OBS]["x"][:, 0, 0].tolist()) == [2.0, 3.0]
    buf.scale_returns(0.5)
    assert sorted(buf.sample(100, rng)[SIL_RETURN][:, 0].tolist()) == [1.0, 1.5]
    with pytest.raises(ValueError, match="capacity"):
        SelfImitationBuffer(0)


def test_the_loss_raises_the_likelihood_of_actions_whose_return_passed_the_value_and_ignores_the_rest():
    learner = sil_learner()
    won = winning(load_pinned_episodes(), 0)
    np.random.seed(2)
    learner.update(episodes=copy.deepcopy(won), minibatch_size=32, num_epochs=1)
    module = learner.module[MAIN].unwrapped()
    replay = learner._sil.sample(10_000, np.random.default_rng(0))
    mask = replay[Columns.LOSS_MASK]

    def logp():
        with torch.no_grad():
            out = module.forward_train(replay)
            dist = module.get_train_action_dist_cls().from_logits(out[Columns.ACTION_DIST_INPUTS])
            return dist.logp(replay[Columns.ACTIONS])[mask]

    params = [p for p in module.parameters() if p.requires_grad]
    # returns below every value: no loss, no gradient
    below = {**replay, SIL_RETURN: torch.full_like(replay[SIL_RETURN], -1e6)}
    loss, figures = self_imitation_loss(module, below, 1.0, 0.01)
    assert float(loss.detach()) == 0.0 and figures["positive"] == 0.0
    # returns above every value: a step on the loss makes the stored actions more likely
    above = {**replay, SIL_RETURN: torch.full_like(replay[SIL_RETURN], 5.0)}
    before = logp()
    loss, figures = self_imitation_loss(module, above, 1.0, 0.0)
    assert figures["positive"] == 1.0 and float(loss.detach()) > 0
    grads = torch.autograd.grad(loss, params, allow_unused=True)
    with torch.no_grad():
        for p, g in zip(params, grads):
            if g is not None:
                p -= 1e-3 * g
    assert float(logp().mean()) > float(before.mean())


def test_bad_self_imitation_settings_name_the_field():
    with pytest.raises(ValueError, match="ppo.self_imitation_coeff"):
        tiny_smoke(ppo__self_imitation_coeff=-1.0)
    with pytest.raises(ValueError, match="ppo.self_imitation_buffer_steps"):
        tiny_smoke(ppo__self_imitation_buffer_steps=0)
    with pytest.raises(ValueError, match="ppo.self_imitation_steps"):
        tiny_smoke(ppo__self_imitation_steps=0)
