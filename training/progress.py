"""A training run's progress: one row per iteration (``progress_row``), the line printed for it
(``progress_line``), and the Tune callback that prints the line and appends the row to ``<run dir>/metrics.csv``.

The row is the compact view of an iteration's result: throughput, each team's raw return and win rates, the
evaluation games against reference agents, TrueSkill, the league, the opponents beyond self-play (the curriculum's
level, the win rate against fixed agents; per opponent in opponents.csv), staleness and sample reuse, the schedule
values, the losses, and the reward per hero and game minute from each raw signal of Table 6 (``per_min_<signal>``).
"""
from __future__ import annotations

from ray.rllib.utils.annotations import override
from ray.tune import Callback

from moba.env.actions import PRIMARY_NAMES
from moba.env.rewards import SIGNALS
from moba.game.teams import NO_WINNER
from policies.learning import update_diagnostics as diag
from policies.learning.five_learner import LOSS_TERMS
from policies.model.action_distribution import FiveActionDistribution
from policies.model.module_ids import MAIN
from training import run_storage
from training.csv_files import append_csv_rows, drop_rows_after
from training.game_metrics import signal_rates

METRICS_CSV = "metrics.csv"
# each head's part of the action's entropy (policies/model/action_distribution.py head_entropies) and how far an update
# moved the policy (the learner's results, last minibatch): the KL from the sampling policy (k3 estimate), PPO's clip
# fraction, the value head's explained variance, the gradient's global norm before clipping; the bounded update
# (ppo.target_kl: the minibatches applied, whether the KL stopped the update) and the update's diagnostics
# (policies/learning/update_diagnostics.py: each loss term's gradient norm and the gradient-noise cosine, every
# ppo.diagnostics_every updates; the mean advantage of each primary action; the teacher's agreement and the kickstart
# loss per head; the outcome term of ppo.win_advantage_coeff, its mean and spread before the coefficient,
# policies/learning/advantages.py; self-imitation's buffer, the won steps the update added to it, and on its replayed
# steps the share whose return passed the value and the mean (R - V)+, policies/learning/self_imitation.py)
UPDATE_COLUMNS = {**{f"entropy_{h}": f"entropy_{h}" for h in FiveActionDistribution.HEADS},
                  "approx_kl": "approx_kl", "clip_fraction": "clip_fraction", "vf_explained_var": "vf_explained_var",
                  "grad_norm": "gradients_default_optimizer_global_norm",
                  "minibatches_applied": "minibatches_applied", "kl_stopped": "kl_stopped",
                  "approx_kl_at_start": "approx_kl_at_start",
                  **{f"{diag.TERM_GRAD_PREFIX}{t}": f"{diag.TERM_GRAD_PREFIX}{t}" for t in LOSS_TERMS},
                  "gradient_noise_cosine": "gradient_noise_cosine",
                  **{f"{diag.ADVANTAGE_PREFIX}{a}": f"{diag.ADVANTAGE_PREFIX}{a}" for a in PRIMARY_NAMES},
                  **{f"{diag.AGREEMENT_PREFIX}{h}": f"{diag.AGREEMENT_PREFIX}{h}" for h in diag.AGREEMENT_HEADS},
                  **{f"{diag.KICKSTART_HEAD_PREFIX}{h}": f"{diag.KICKSTART_HEAD_PREFIX}{h}"
                     for h in FiveActionDistribution.HEADS},
                  "win_advantage_mean": "win_advantage_mean", "win_advantage_std": "win_advantage_std",
                  **{f"self_imitation_{k}": f"self_imitation_{k}"
                     for k in ("buffer_steps", "added_steps", "positive", "advantage")}}
SIGNAL_RATE_PREFIX = "per_min_"  # metrics.csv: reward per hero and game minute from each signal of Table 6
PROGRESS_COLUMNS = ("iteration", "timestamp", "time_s", "env_steps", "agent_steps", "env_steps_per_s",
                    "agent_steps_per_s",
                    "episode_return", "raw_return_radiant", "win_rate_radiant", "win_rate_dire", "draw_rate",
                    "game_minutes",
                    "win_rate_vs_random", "win_rate_vs_scripted", "points_win_rate_vs_random",
                    "points_win_rate_vs_scripted", "reward_margin_vs_random",
                    "buildings_vs_random", "reward_margin_vs_scripted", "buildings_vs_scripted", "trueskill_version",
                    "trueskill_mu", "trueskill_sigma", "league_versions", "past_games", "past_win_rate",
                    "curriculum_level", "curriculum_agent", "curriculum_window_win_rate", "fixed_games",
                    "fixed_win_rate", "fixed_outright_win_rate", "jump_start_handover_s", "jump_start_window_win_rate",
                    "start_stage", "start_stage_window_outright_rate", "staleness_mean", "sample_reuse", "reward_std",
                    "value_warmup_critic_only",
                    "value_warmup_actor_lr_factor", "team_spirit", "lr", "entropy_coeff", "gamma", "ancient_hp_scale",
                    "policy_loss", "vf_loss", "entropy", "aux_win_loss", "kickstart_coeff", "kickstart_kl",
                    *UPDATE_COLUMNS) + tuple(
                        f"{SIGNAL_RATE_PREFIX}{name}" for name in SIGNALS)


def progress_row(result: dict) -> dict:
    er = result.get("env_runners", {})
    ln = result.get("learners", {}).get(MAIN, {})
    sc = result.get("schedule", {})
    ev = result.get("evaluation_games", {})
    ts = result.get("trueskill", {})
    lg = result.get("league", {})
    op = result.get("opponents", {})
    dt = max(result.get("time_this_iter_s", 0.0), 1e-9)
    agent_steps = er.get("num_agent_steps_sampled", {})
    agent_steps = sum(agent_steps.values()) if isinstance(agent_steps, dict) else agent_steps
    lifetime = er.get("num_agent_steps_sampled_lifetime")  # per agent id, or their sum
    lifetime = sum(lifetime.values()) if isinstance(lifetime, dict) else lifetime
    return {
        "iteration": result.get("training_iteration"), "timestamp": result.get("timestamp"),  # unix time, wall
        "time_s": round(result.get("time_total_s", 0.0), 1),
        "env_steps": er.get("num_env_steps_sampled_lifetime"), "agent_steps": lifetime,
        "env_steps_per_s": round(er.get("num_env_steps_sampled", 0) / dt, 1),
        "agent_steps_per_s": round((agent_steps or 0) / dt, 1),
        "episode_return": er.get("episode_return_mean"), "raw_return_radiant": er.get("raw_return_radiant"),
        "win_rate_radiant": er.get("win_rate_radiant"), "win_rate_dire": er.get("win_rate_dire"),
        "draw_rate": er.get(f"win_rate_{NO_WINNER}"),
        "game_minutes": (er["game_time_s"] / 60.0) if er.get("game_time_s") is not None else None,
        "win_rate_vs_random": ev.get("win_rate_vs_random"), "win_rate_vs_scripted": ev.get("win_rate_vs_scripted"),
        **{f"{k}_vs_{o}": ev.get(f"{k}_vs_{o}") for o in ("random", "scripted")
           for k in ("points_win_rate", "reward_margin", "buildings")},
        "trueskill_version": ts.get("version"), "trueskill_mu": ts.get("mu"), "trueskill_sigma": ts.get("sigma"),
        "league_versions": lg.get("versions"), "past_games": lg.get("past_games"),
        "past_win_rate": lg.get("past_win_rate"), **{k: op.get(k) for k in (
            "curriculum_level", "curriculum_agent", "curriculum_window_win_rate", "fixed_games", "fixed_win_rate",
            "fixed_outright_win_rate", "jump_start_handover_s", "jump_start_window_win_rate", "start_stage",
            "start_stage_window_outright_rate")},
        "staleness_mean": ln.get("staleness_mean"),
        "sample_reuse": result.get("sample_reuse"),
        # the run's reward scale for the next round (callbacks/reward_scale.py) and the value warm-up's phase
        "reward_std": result.get("reward_scale", {}).get("std"),
        "value_warmup_critic_only": result.get("value_warmup", {}).get("critic_only"),
        "value_warmup_actor_lr_factor": result.get("value_warmup", {}).get("actor_lr_factor"),
        "team_spirit": sc.get("team_spirit"), "lr": sc.get("lr"), "entropy_coeff": sc.get("entropy_coeff"),
        "gamma": sc.get("gamma"), "ancient_hp_scale": sc.get("ancient_hp_scale"),
        "policy_loss": ln.get("policy_loss"), "vf_loss": ln.get("vf_loss"),
        "entropy": ln.get("entropy"), "aux_win_loss": ln.get("aux_win_loss"),
        "kickstart_coeff": ln.get("kickstart_coeff"), "kickstart_kl": ln.get("kickstart_kl"),
        **{column: ln.get(key) for column, key in UPDATE_COLUMNS.items()},
        **{f"{SIGNAL_RATE_PREFIX}{name}": v for name, v in signal_rates(er).items()},
    }


def _fmt(v, spec):
    """A progress value; "-" when there is none (RLlib reports NaN for an iteration in which no game ended)."""
    return "-" if v is None or v != v else format(v, spec)


def progress_line(row: dict, trial: str = "") -> str:
    return (f"{trial}iter {row['iteration']:4d}  {_fmt(row['env_steps_per_s'], '6.0f')} env steps/s "
            f"{_fmt(row['agent_steps_per_s'], '7.0f')} agent steps/s  "
            # the raw (Table 6) return of a team: the post-processed episode return is ~0 in zero-sum self-play
            f"raw return {_fmt(row['raw_return_radiant'], '7.2f')}  "
            f"win radiant/dire/draw {_fmt(row['win_rate_radiant'], '.2f')}/{_fmt(row['win_rate_dire'], '.2f')}/"
            f"{_fmt(row['draw_rate'], '.2f')}  vs random {_fmt(row['win_rate_vs_random'], '.2f')} "
            f"(points {_fmt(row['points_win_rate_vs_random'], '.2f')}, "
            f"margin {_fmt(row['reward_margin_vs_random'], '.1f')})  "
            + (f"trueskill {_fmt(row['trueskill_mu'], '.1f')}  " if row.get("trueskill_mu") is not None else "")
            + (f"league {row['league_versions']} versions, past win {_fmt(row['past_win_rate'], '.2f')} "
               f"({row['past_games']} games)  " if row.get("league_versions") is not None else "")
            + (f"curriculum {row['curriculum_agent']} (level {row['curriculum_level']}, window win "
               f"{_fmt(row['curriculum_window_win_rate'], '.2f')})  "
               if row.get("curriculum_agent") is not None else "")
            + (f"vs fixed agents {_fmt(row['fixed_win_rate'], '.2f')}, outright "
               f"{_fmt(row.get('fixed_outright_win_rate'), '.2f')} ({row['fixed_games']} games)  "
               if row.get("fixed_games") else "")
            + (f"jump start: guided to {row['jump_start_handover_s']:g} s (window win "
               f"{_fmt(row['jump_start_window_win_rate'], '.2f')})  "
               if row.get("jump_start_handover_s") is not None else "")
            + (f"late starts at stage {row['start_stage']} (window outright "
               f"{_fmt(row['start_stage_window_outright_rate'], '.2f')})  "
               if row.get("start_stage") is not None else "")
            + (f"per hero-min lane {_fmt(row[f'{SIGNAL_RATE_PREFIX}lane_assign'], '.2f')} "
               f"death {_fmt(row[f'{SIGNAL_RATE_PREFIX}hero_death'], '.2f')} "
               f"gold {_fmt(row[f'{SIGNAL_RATE_PREFIX}gold_gained'], '.2f')}  "
               if row.get(f"{SIGNAL_RATE_PREFIX}lane_assign") is not None else "")
            + f"tau {_fmt(row['team_spirit'], '.2f')} lr {_fmt(row['lr'], '.1e')} "
            f"ent {_fmt(row['entropy_coeff'], '.1e')} gamma {_fmt(row['gamma'], '.5f')}"
            + (f"  ancients' health x{row['ancient_hp_scale']:.2f}"
               if row.get("ancient_hp_scale") is not None and row["ancient_hp_scale"] < 1.0 else ""))


class ProgressCallback(Callback):
    """Prints a line per iteration and appends it to <run_dir>/metrics.csv (a local path or a storage URI).

    The resume rule (callbacks/trial_files.py): the first row of a trial in this process, or one whose iteration
    does not follow the trial's last (a trial restored from a checkpoint), first drops the trial's rows from that
    iteration on, which a driver killed after the checkpoint wrote."""

    def __init__(self, run_dir: str):
        super().__init__()
        self.run_dir = run_dir
        self._last = {}  # trial id -> the iteration of its last row written by this process

    @override(Callback)
    def on_trial_result(self, iteration, trials, trial, result, **info):
        row = progress_row(result)
        tag = f"[{trial.trial_id}] " if len(trials) > 1 else ""
        print(progress_line(row, tag), flush=True)
        path = run_storage.join(self.run_dir, METRICS_CSV)
        it = row["iteration"]
        if it is not None and self._last.get(trial.trial_id, -1) + 1 != it:
            drop_rows_after(path, it - 1, where={"trial": trial.trial_id})
        self._last[trial.trial_id] = it
        append_csv_rows(path, ("trial",) + PROGRESS_COLUMNS, [{"trial": trial.trial_id, **row}])


