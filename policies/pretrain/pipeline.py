"""Pretraining: a Five module cloned from a teacher (the scripted bot by default), with DAgger.

1. Teacher games (``policies/pretrain/games.py``): the teacher against the opponents of ``TEACHER_OPPONENTS`` in
   turn (itself: both heroes recorded; the random agent: games the teacher wins, so that pushing and finishing a game
   are in the data), in the training env with its randomizations.
2. Behaviour cloning (``policies/pretrain/cloning.py``) for ``epochs`` passes, after the observation normalizers have
   seen the data.
3. DAgger rounds: the clone plays ``dagger_games`` games (sampling its actions; a step executes the teacher's action
   with probability ``beta``, which halves every round) against the opponents of ``DAGGER_OPPONENTS`` in turn, the
   teacher labelling every one of its steps in shadow; its steps join the data (aggregated) and the clone trains
   ``dagger_epochs`` passes over all of it.
4. Held-out agreement: the last ``1 / HELD_OUT_EVERY`` of each collection's games (at least one game) are never
   trained on; the clone's most likely action is compared with the teacher's on them.
5. Check games: the clone against the teacher and the random agent in evaluation-mode games with different seeds,
   sampling its actions, and (``greedy``) with its most likely ones.

``run`` returns a report dict (the figures and the timings); ``app/pretrain.py`` is the CLI.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np

from moba.env.actions import PRIMARY_NAMES
from moba.game.teams import NO_WINNER, TEAM_NAMES, enemy_side, side_of_game
from policies.league.ratings import LIMIT_POINTS, WIN, game_score, team_margin
from policies.pretrain import cloning as bc
from policies.pretrain.games import STUDENT, TEACHER, GamePlan, game_step_limit, return_scale

# ---- the pipeline's defaults -----------------------------------------------------------------------------------------
# teacher games cycle through these opponents: the teacher itself (both sides recorded) 3 games in 4, the random agent
# 1 in 4 (the teacher wins those: the data then holds pushing towers and finishing a game, which mirror games of the
# teacher rarely reach in 1v1: most end at the time limit)
TEACHER_OPPONENTS = (TEACHER, TEACHER, TEACHER, "random")
DAGGER_OPPONENTS = (TEACHER, TEACHER, TEACHER, "random")  # the clone's opponents in DAgger games, in turn
EPOCHS = 4.0  # passes over the teacher games before DAgger
DAGGER_GAMES = 16  # games per DAgger round
DAGGER_EPOCHS = 1.0  # passes over the aggregated data after each DAgger round
DAGGER_BETA = 0.5  # probability that a clone step executes the teacher's action, first round; halves every round
HELD_OUT_EVERY = 10  # 1 game in 10 of each collection is held out (agreement), at least one
CHECK_GAMES = 8  # check games per opponent (and per way of acting: sampled, greedy)
# seeds: teacher games seed + k, DAgger round r seed + r * SEED_STRIDE + k, check games CHECK_SEED + k
SEED_STRIDE = 100_000
CHECK_SEED = 7_000_000


@dataclass
class KickstartSettings:
    games: int
    epochs: float = EPOCHS
    dagger_rounds: int = 0
    dagger_games: int = DAGGER_GAMES
    dagger_epochs: float = DAGGER_EPOCHS
    beta: float = DAGGER_BETA
    lr: float = bc.LEARNING_RATE
    lanes: int = bc.BATCH_LANES
    class_weight_power: float = bc.CLASS_WEIGHT_POWER
    value_weight: float = bc.VALUE_LOSS_WEIGHT
    prev_action_noise: float = bc.PREV_ACTION_NOISE
    check_games: int = CHECK_GAMES
    greedy_check: bool = True
    minutes: float = 0.0  # wall-clock budget of games + training (0 = none); the checks come after it
    seed: int = 0


def teacher_plans(games: int, seed: int) -> list[GamePlan]:
    return [GamePlan(seed + k, *sides(TEACHER, TEACHER_OPPONENTS[k % len(TEACHER_OPPONENTS)], k), source=TEACHER)
            for k in range(games)]


def dagger_plans(games: int, seed: int, round_: int, beta: float) -> list[GamePlan]:
    return [GamePlan(seed + round_ * SEED_STRIDE + k, *sides(STUDENT, DAGGER_OPPONENTS[k % len(DAGGER_OPPONENTS)], k),
                     source=f"dagger_{round_}", beta=beta) for k in range(games)]


def check_plans(games: int, opponent: str) -> list[GamePlan]:
    return [GamePlan(CHECK_SEED + k, *sides(STUDENT, opponent, k), source=f"check_{opponent}", record=False)
            for k in range(games)]


def sides(me: str, opponent: str, k: int) -> tuple[str, str]:
    """(radiant, dire): `me` on the side of game k (alternating), the opponent on the other."""
    return (me, opponent) if side_of_game(k) == TEAM_NAMES[0] else (opponent, me)


def held_out(games: int) -> set[int]:
    """The indices of a collection's held-out games: the last 1 / HELD_OUT_EVERY, at least one (none of a single
    game)."""
    return set(range(games - max(1, games // HELD_OUT_EVERY), games)) if games > 1 else set()


def split(plans, trajectories):
    """(train, held-out) trajectories of a collection (held_out's games by seed)."""
    held = {plans[k].seed for k in held_out(len(plans))}
    return [t for t in trajectories if t.seed not in held], [t for t in trajectories if t.seed in held]


def student_results(plans, summaries) -> dict:
    """Per opponent of the student: games, win rate, draw rate, points win rate (won, or drawn at the time limit
    ahead on raw return: policies/ratings.game_score) and the mean raw-reward margin."""
    rows = {}
    for p, s in zip(plans, summaries):
        side = TEAM_NAMES[0] if p.radiant == STUDENT else TEAM_NAMES[1]
        margin = team_margin(side, s["raw_return"])
        rows.setdefault(p.side(enemy_side(side)), []).append(
            (s["winner"] == side, s["winner"] == NO_WINNER,
             game_score(side, s["winner"], margin, LIMIT_POINTS) == WIN, margin, s["game_time_s"] / 60))
    keys = ("win_rate", "draw_rate", "points_win_rate", "reward_margin", "game_minutes")
    return {o: {"games": len(r), **dict(zip(keys, np.mean(np.array(r, np.float64), axis=0).tolist()))}
            for o, r in rows.items()}


def run(module, make_env, make_check_env, make_teacher, teacher: str, settings: KickstartSettings, workers,
        gamma: float, bar=None, log=print) -> dict:
    """The whole kickstart on `module` (trained in place). `make_env()`: the training env (reward post-processing
    included, first-game-length randomization off); `make_check_env()`: the check games' env; `make_teacher(seed)`:
    the teacher (`teacher` its name, the check games' opponent); `workers`: an imitation_data.GameWorkers; `gamma`:
    the run's discount; `bar(label, total)`: a progress bar (update(done, note), close(note)), or None."""
    s = settings
    rng = np.random.default_rng(s.seed)
    t0 = time.time()
    deadline = t0 + 60 * s.minutes if s.minutes else None
    timings, report = {}, {"settings": asdict(s), "teacher": teacher, "gamma": gamma}

    def play(label, plans, student=None, explore=True):
        b = _bar(bar, label, len(plans) * _step_limit(make_env if plans[0].record else make_check_env))
        summaries, trajs = workers.play(make_env if plans[0].record else make_check_env, plans, make_teacher, student,
                                        explore, progress=lambda n: b.update(b.done + n, f"{len(plans)} games"))
        b.close(f"{len(plans)} games, {sum(len(t) for t in trajs)} hero-steps")
        return summaries, trajs

    def train(label, prepared, epochs, deadline):
        total = epochs * sum(len(p.traj) for p in prepared)
        b = _bar(bar, label, total)

        def progress(n, parts):
            b.update(n, " ".join(f"{k} {v:.3f}" for k, v in parts.items()))
        r = bc.fit(module, prepared, epochs, weights, optimizer, rng, lanes=s.lanes, value_weight=s.value_weight,
                   prev_action_noise=s.prev_action_noise, deadline=deadline, progress=progress)
        b.close(f"{r['epochs']:.2f} epochs, policy {r.get('policy', 0):.3f} value {r.get('value', 0):.3f}")
        return r

    # 1. teacher games
    t = time.time()
    plans = teacher_plans(s.games, s.seed)
    summaries, trajs = play("teacher games", plans)
    train_set, held = split(plans, trajs)
    timings["teacher_games_s"] = time.time() - t
    report["teacher_games"] = {"games": len(plans), "hero_steps": sum(len(x) for x in trajs),
                               "held_out_games": len(held_out(len(plans))), "bytes": sum(x.nbytes for x in trajs),
                               "winners": _count([x["winner"] for x in summaries])}
    # 2. clone
    t = time.time()
    scale = return_scale(train_set, gamma)
    report["reward_scale"] = scale
    bc.update_normalizers(module, train_set)
    weights = bc.class_weights(train_set, s.class_weight_power)
    report["class_weights"] = {n: float(w) for n, w in zip(PRIMARY_NAMES, weights)}
    optimizer = bc.make_optimizer(module, s.lr)
    prepared = bc.prepare(train_set, gamma, scale)
    held_teacher = bc.prepare(held, gamma, scale)
    report["clone"] = train("cloning", prepared, s.epochs, deadline)
    timings["clone_s"] = time.time() - t
    if held_teacher and s.dagger_rounds:
        report["agreement_before_dagger"] = bc.agreement(module, held_teacher)
    # 3. DAgger
    report["dagger"], held_student = [], []
    for r in range(1, s.dagger_rounds + 1):
        if deadline is not None and time.time() >= deadline:
            log(f"the {s.minutes} minute budget is spent: DAgger stops before round {r}")
            break
        t = time.time()
        beta = s.beta * 0.5 ** (r - 1)
        plans = dagger_plans(s.dagger_games, s.seed, r, beta)
        summaries, trajs = play(f"DAgger {r} games", plans, student=module)
        new, held_new = split(plans, trajs)
        t_games = time.time() - t
        bc.update_normalizers(module, new)
        prepared += bc.prepare(new, gamma, scale)
        held_student += bc.prepare(held_new, gamma, scale)
        fit = train(f"DAgger {r} training", prepared, s.dagger_epochs, deadline)
        report["dagger"].append({"round": r, "beta": beta, "games": len(plans),
                                 "hero_steps": sum(len(x) for x in trajs), "games_s": t_games,
                                 "train_s": time.time() - t - t_games, "fit": fit,
                                 "student": student_results(plans, summaries)})
    timings["dagger_s"] = sum(d["games_s"] + d["train_s"] for d in report["dagger"])
    timings["pretrain_s"] = time.time() - t0
    # 4. held-out agreement
    t = time.time()
    if held_teacher:
        report["agreement"] = bc.agreement(module, held_teacher)
    if held_student:
        report["agreement_student_states"] = bc.agreement(module, held_student)
    report["hero_steps_trained_on"] = sum(len(p.traj) for p in prepared)
    timings["agreement_s"] = time.time() - t
    # 5. check games
    t = time.time()
    report["play"] = {}
    for explore in (True, False) if s.greedy_check else (True,):
        key = "sampled" if explore else "greedy"
        plans = check_plans(s.check_games, teacher) + check_plans(s.check_games, "random")
        if s.check_games:
            summaries, _ = play(f"check games ({key})", plans, student=module, explore=explore)
            report["play"][key] = student_results(plans, summaries)
    timings["check_s"] = time.time() - t
    report["timings"] = timings
    return report


def _count(values) -> dict:
    out = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


def _step_limit(make_env) -> int:
    return game_step_limit(make_env())


class _NoBar:
    done = 0.0

    def update(self, done, note=""):
        self.done = done

    def close(self, note=""):
        pass


def _bar(bar, label, total):
    return bar(label, total) if bar is not None else _NoBar()
