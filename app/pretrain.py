"""Kickstart CLI: the OpenAI Five module cloned from a teacher's games, with DAgger-style relabeling.

    python -m app.pretrain --mode 1v1|5v5 --teacher NAME --games N --out PATH [--dagger-rounds K]
        [--dagger-games M] [--epochs E] [--minutes BUDGET] [--seed S] [--model key=value ...]

The teacher is any agent name of ``policies.agents.by_name`` (default: the scripted bot). The module is the mode's
reproduction config's (``MODE_CONFIGS``: its ``model:`` section, ``--model`` overriding keys of FiveModelConfig),
built as training builds "main" (``training.algorithm.five_module_spec``); the games are played in that config's
training
env (its randomizations and reward post-processing; the first-game-length randomization off, since every game here
is played whole), and the value head learns the returns under its discount. ``policies/pretrain/pipeline.py`` has the
pipeline (teacher games, cloning, DAgger rounds, held-out agreement, check games) and its defaults.

Progress bars on stderr; at the end the held-out agreement (primary action, all read parameters together, recall per
primary action), the check games against the teacher and the random agent (sampled actions and greedy) and a JSON
line last. PATH is an RLModule checkpoint directory (``policies.league.references.load_module``, ``agent_maker``,
``scripts/play.py --radiant PATH``, a training config's ``init.checkpoint``) with ``card.json``: the mode, teacher,
games, steps, timings, agreement figures, play results and the command line.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import shlex
import sys
import time

import yaml

from moba.game.teams import MODE_1V1, MODE_5V5, MODES
from training.cli import user_errors

MODE_CONFIGS = {MODE_1V1: "tune_configs/hok_1v1.yaml", MODE_5V5: "tune_configs/five_5v5_baseline.yaml"}
DEFAULT_TEACHER = "scripted"  # the full scripted bot (scripted_3 of the ladder)
CARD = "card.json"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args(argv=None):
    from policies.pretrain import cloning as bc
    from policies.pretrain import pipeline as ks
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", required=True, help=f"one of {list(MODES)}")
    p.add_argument("--teacher", default=DEFAULT_TEACHER,
                   help="an agent name of policies.agents.by_name (default: scripted)")
    p.add_argument("--games", required=True, help="teacher games to clone from (>= 1)")
    p.add_argument("--out", required=True, help="the RLModule checkpoint directory to write (new or empty)")
    p.add_argument("--dagger-rounds", default=0, help="DAgger rounds (>= 0; default 0)")
    p.add_argument("--dagger-games", default=ks.DAGGER_GAMES,
                   help=f"games per DAgger round (default {ks.DAGGER_GAMES})")
    p.add_argument("--epochs", default=ks.EPOCHS, help=f"passes over the teacher games (default {ks.EPOCHS})")
    p.add_argument("--dagger-epochs", default=ks.DAGGER_EPOCHS,
                   help=f"passes over all the data after each DAgger round (default {ks.DAGGER_EPOCHS})")
    p.add_argument("--beta", default=ks.DAGGER_BETA,
                   help=f"DAgger round 1's share of teacher actions, halved every round (default {ks.DAGGER_BETA})")
    p.add_argument("--class-weight-power", default=bc.CLASS_WEIGHT_POWER,
                   help=f"class weights (f_max / f_c) ** power of the primary actions (default {bc.CLASS_WEIGHT_POWER};"
                        " 0: unweighted)")
    p.add_argument("--prev-action-noise", default=bc.PREV_ACTION_NOISE,
                   help=f"share of training steps whose previous-action input is another step's (default "
                        f"{bc.PREV_ACTION_NOISE})")
    p.add_argument("--lr", default=bc.LEARNING_RATE, help=f"Adam's learning rate (default {bc.LEARNING_RATE})")
    p.add_argument("--minutes", default=0.0, help="wall-clock budget of games and training (0 = none)")
    p.add_argument("--check-games", default=ks.CHECK_GAMES,
                   help=f"check games per opponent and way of acting (default {ks.CHECK_GAMES}; 0 = none)")
    p.add_argument("--no-greedy-check", action="store_true", help="check games with sampled actions only")
    p.add_argument("--seed", default=0, help="seed of the games and the training (default 0)")
    p.add_argument("--workers", default=os.cpu_count() or 1, help="processes playing games (default: all cores)")
    p.add_argument("--threads", default=os.cpu_count() or 1, help="torch threads of training (default: all cores)")
    p.add_argument("--model", action="append", default=[], metavar="KEY=VALUE",
                   help="a FiveModelConfig key over the mode's config, a YAML value: --model lstm_size=256, "
                        "--model team_frame=true")
    return p.parse_args(argv)


def _number(args, name: str, kind, low, allowed: str):
    """args.<name> as `kind` >= low, or a ValueError naming the option and the allowed values."""
    raw = getattr(args, name)
    try:
        value = kind(raw)
    except (TypeError, ValueError):
        value = None
    if value is None or value < low or (kind is float and value != value):
        raise ValueError(f"--{name.replace('_', '-')}: must be {allowed}, got {raw!r}")
    return value


def settings_from_args(args) -> dict:
    """The validated options: mode, teacher, out, model overrides and the KickstartSettings fields."""
    from policies.agents.by_name import AGENTS
    from policies.model.five_module import FiveModelConfig
    if args.mode not in MODES:
        raise ValueError(f"--mode: must be one of {list(MODES)}, got {args.mode!r}")
    if args.teacher not in AGENTS:
        raise ValueError(f"--teacher: unknown agent {args.teacher!r}; allowed: {sorted(AGENTS)}")
    if os.path.isfile(args.out) or (os.path.isdir(args.out) and os.listdir(args.out)):
        raise ValueError(f"--out: {args.out!r} exists and is not an empty directory")
    model = {}
    for item in args.model:
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"--model {item!r}: expected key=value, e.g. lstm_size=256")
        model[key.strip()] = yaml.safe_load(value)  # a YAML value, as in a run config: 256, true
    try:
        FiveModelConfig.from_dict(model)
    except ValueError as e:
        raise ValueError(f"--model: {e}") from None
    out = {"mode": args.mode, "teacher": args.teacher, "out": args.out, "model": model,
           "workers": _number(args, "workers", int, 0, "an int >= 0 (0: play in this process)"),
           "threads": _number(args, "threads", int, 1, "an int >= 1")}
    out["settings"] = {
        "games": _number(args, "games", int, 1, "an int >= 1"),
        "dagger_rounds": _number(args, "dagger_rounds", int, 0, "an int >= 0"),
        "dagger_games": _number(args, "dagger_games", int, 1, "an int >= 1"),
        "epochs": _number(args, "epochs", float, 0.0, "a number >= 0"),
        "dagger_epochs": _number(args, "dagger_epochs", float, 0.0, "a number >= 0"),
        "beta": _number(args, "beta", float, 0.0, "a number in [0, 1]"),
        "class_weight_power": _number(args, "class_weight_power", float, 0.0, "a number >= 0"),
        "prev_action_noise": _number(args, "prev_action_noise", float, 0.0, "a number in [0, 1]"),
        "lr": _number(args, "lr", float, 1e-12, "a number > 0"),
        "minutes": _number(args, "minutes", float, 0.0, "a number >= 0 (0 = no budget)"),
        "check_games": _number(args, "check_games", int, 0, "an int >= 0"),
        "greedy_check": not args.no_greedy_check,
        "seed": _number(args, "seed", int, 0, "an int >= 0")}
    for name in ("beta", "prev_action_noise"):
        if out["settings"][name] > 1:
            raise ValueError(f"--{name.replace('_', '-')}: must be a number in [0, 1], got {getattr(args, name)!r}")
    return out


def print_agreement(a: dict, title: str, out=None):
    """An agreement dict (policies.pretrain.cloning.agreement) as text: the totals, then recall per primary action;
    to `out` (default: sys.stdout at the time of the call)."""
    out = out or sys.stdout
    print(f"\nagreement on {title} ({a['steps']} hero-steps): primary {a['primary']:.3f}, all read parameters "
          f"{a['all_read']:.3f}, value explained variance {a['value_explained_variance']}", file=out)
    # the offsets' columns: the steps on which the teacher's primary reads offsets, and the module's agreement there
    print(f"  {'primary action':24s} {'support':>8s} {'recall':>7s} {'predicted':>9s} {'offset steps':>12s} "
          f"{'offsets':>8s} {'within 1':>8s}", file=out)
    for name, r in a["per_primary"].items():
        offsets = (f" {r['offsets_support']:12d} {r['offsets_exact']:8.3f} {r['offsets_within_1']:8.3f}"
                   if "offsets_exact" in r else f" {'-':>12s} {'-':>8s} {'-':>8s}")
        print(f"  {name:24s} {r['support']:8d} {r['recall']:7.3f} {r['predicted']:9d}{offsets}", file=out)
    for name, r in a["per_primary"].items():  # the directions of the offsets, where there are some (the moves)
        n = sum(r.get("offsets_angle", {}).values())
        if n:
            shares = ", ".join(f"{k} {v / n:.3f}" for k, v in r["offsets_angle"].items())
            print(f"  {name}: the angle (degrees) between the teacher's offset direction and the agent's, {n} steps: "
                  f"{shares}", file=out)


def print_report(report: dict, out=None):
    """The held-out agreement with its recall table, and the check games, as text (default: to sys.stdout)."""
    out = out or sys.stdout
    for key, title in (("agreement_before_dagger", "held-out teacher games, before DAgger"),
                       ("agreement", "held-out teacher games"),
                       ("agreement_student_states", "held-out DAgger games (the clone's own states)")):
        if report.get(key):
            print_agreement(report[key], title, out)
    for d in report.get("dagger", []):
        games = ", ".join(f"vs {o}: win {r['win_rate']:.2f} points {r['points_win_rate']:.2f}"
                          for o, r in d["student"].items())
        print(f"\nDAgger round {d['round']} (beta {d['beta']:.2f}): {games}", file=out)
    for way, results in report.get("play", {}).items():
        print(f"\ncheck games, {way} actions:", file=out)
        for o, r in results.items():
            print(f"  vs {o:12s} games {r['games']:3d}  win {r['win_rate']:.2f}  draw {r['draw_rate']:.2f}  points "
                  f"{r['points_win_rate']:.2f}  margin {r['reward_margin']:+.1f}  minutes {r['game_minutes']:.1f}",
                  file=out)


def headline(report: dict) -> dict:
    """The figures of the JSON line and the card."""
    def agree(key):
        a = report.get(key)
        return {k: a[k] for k in ("steps", "primary", "all_read")} if a else None
    return {"hero_steps_trained_on": report["hero_steps_trained_on"],
            "teacher_games": report["teacher_games"]["games"],
            "dagger_rounds": len(report["dagger"]),
            "agreement": agree("agreement"), "agreement_student_states": agree("agreement_student_states"),
            "play": report["play"], "timings": {k: round(v, 1) for k, v in report["timings"].items()}}


def run_gamma(cfg) -> float:
    """The discount of a run's settings at its start (the gae_horizon_s schedule's first value)."""
    return cfg.initial_schedule_values()["gamma"]


def imitation_env_config(cfg, seed: int) -> dict:
    """The env config of imitation games: the run config's training env (its randomizations and reward
    post-processing; no reward normalization) with the first-game-length randomization off, since every game here
    is played whole."""
    from training.algorithm import training_env_config
    return {**training_env_config(cfg), "seed": seed, "normalize_gamma": None, "torch_threads": 1,
            "randomize": {**cfg.env.get("randomize", {}), "first_game_length": False}}


PROBE_TEACHER = "scripted_3"  # the teacher of scripts/teacher_agreement.py and scripts/teacher_override.py


def add_probe_args(p: argparse.ArgumentParser, mode: str, games: int, seed: int, games_help: str):
    """The options of a probe that plays a checkpoint against its teacher (``teacher_probe``), with the script's
    defaults of --mode, --games and --seed."""
    p.add_argument("checkpoint", help="a run's checkpoint, an RLModule checkpoint or models/X (model:PATH or PATH)")
    p.add_argument("--mode", default=mode, help=f"one of {list(MODES)} (default {mode})")
    p.add_argument("--teacher", default=PROBE_TEACHER, help=f"an agent name (default {PROBE_TEACHER})")
    p.add_argument("--games", type=int, default=games, help=f"{games_help} (default {games})")
    p.add_argument("--time-limit", type=float, default=0.0,
                   help="game time limit in seconds (default: the mode config's evaluation time limit)")
    p.add_argument("--seed", type=int, default=seed, help=f"seed of the first game (default {seed})")
    p.add_argument("--workers", type=int, default=0, help="processes playing the games (default 0: this one)")
    p.add_argument("--consumable-filters", choices=["true", "false"], default=None,
                   help="the env's consumables' need filters, for both sides, as the checkpoint trained (default: the "
                        "mode config's env.consumable_filters)")


def teacher_probe(args):
    """(module, run config, env config) of a probe that plays a checkpoint against its teacher
    (scripts/teacher_agreement.py, scripts/teacher_override.py): `args` with checkpoint, mode, teacher, games,
    time_limit, seed and workers, checked first (a ValueError naming the option); the mode config's imitation env at
    ``args.seed``, its time limit ``args.time_limit`` or the config's evaluation one, its consumables' need filters
    ``args.consumable_filters`` ("true" / "false") or the config's."""
    from policies.agents.by_name import AGENTS
    from policies.league.references import checkpoint_path
    if args.mode not in MODES:
        raise ValueError(f"--mode: must be one of {list(MODES)}, got {args.mode!r}")
    if args.teacher not in AGENTS:  # the teacher labels states: a scripted agent, by name
        raise ValueError(f"--teacher: unknown agent {args.teacher!r}; allowed: {sorted(AGENTS)}")
    if args.games < 1 or args.time_limit < 0 or args.workers < 0:
        raise ValueError("--games must be >= 1, --time-limit >= 0 and --workers >= 0")
    checkpoint_path(args.checkpoint, "CHECKPOINT")
    import torch

    from training import run_config
    from policies.league.references import load_module
    torch.set_num_threads(1)
    module = load_module(args.checkpoint, "CHECKPOINT")
    cfg = run_config.load(os.path.join(REPO, MODE_CONFIGS[args.mode]))
    env_config = imitation_env_config(cfg, args.seed)
    env_config["time_limit_s"] = args.time_limit or cfg.evaluation.time_limit_s
    if getattr(args, "consumable_filters", None) is not None:
        env_config["consumable_filters"] = args.consumable_filters == "true"
    return module, cfg, env_config


@user_errors
def main(argv=None) -> int:
    args = parse_args(argv)
    opts = settings_from_args(args)
    import torch

    from training import run_config
    from training.algorithm import five_module_spec, make_training_env
    from moba.env.compiled import compile_ahead
    from moba.env.moba_env import MobaEnv
    from training.progress_bar import ProgressBar
    from training.evaluation_games import EVAL_ENV_KEYS
    from policies.pretrain import pipeline as ks
    from policies.agents.by_name import make_agent
    from policies.pretrain.games import GameWorkers

    t0 = time.time()
    torch.set_num_threads(opts["threads"])
    cfg = run_config.load(os.path.join(REPO, MODE_CONFIGS[opts["mode"]]))
    cfg = cfg.replace(model={**cfg.model, **opts["model"]})
    compile_ahead(log=lambda line: print(line, file=sys.stderr, flush=True))
    gamma = run_gamma(cfg)
    env_config = imitation_env_config(cfg, opts["settings"]["seed"])
    check_config = {**{k: cfg.env[k] for k in EVAL_ENV_KEYS if k in cfg.env}, "evaluation": True,
                    "time_limit_s": cfg.evaluation.time_limit_s, "torch_threads": 1}
    module = five_module_spec(cfg.model, MobaEnv(cfg.env)).build()
    settings = ks.KickstartSettings(**opts["settings"])
    with GameWorkers(opts["workers"]) as workers:
        report = ks.run(module, functools.partial(make_training_env, env_config),
                        functools.partial(make_training_env, check_config),
                        functools.partial(make_agent, opts["teacher"]), opts["teacher"], settings, workers, gamma,
                        bar=ProgressBar,
                        log=lambda line: print(line, file=sys.stderr, flush=True))
    out = os.path.abspath(opts["out"])
    module.save_to_path(out)
    card = {"mode": opts["mode"], "teacher": opts["teacher"], "config": MODE_CONFIGS[opts["mode"]],
            "model": cfg.model, **headline(report), "wall_s": round(time.time() - t0, 1),
            "command": shlex.join(["python", "-m", "app.pretrain"] + list(sys.argv[1:] if argv is None else argv)),
            "report": report}
    with open(os.path.join(out, CARD), "w") as f:
        json.dump(card, f, indent=1, default=float)
    print_report(report)
    print(f"\nthe clone: {out} (card: {os.path.join(out, CARD)})")
    print(json.dumps({"out": out, "mode": opts["mode"], "teacher": opts["teacher"], **headline(report),
                      "wall_s": card["wall_s"]}, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
