"""Ships a trained agent: its module weights go to ``models/<name>/`` with a model card.

    python scripts/ship_model.py CHECKPOINT --name hok_1v1 [--run-dir results/<run>] [--games 100] \
        [--lower-games 40] [--workers 2] [--notes TEXT] [--bench-log results/<bench>.log]

CHECKPOINT is a run's checkpoint (its "main" module is taken) or a module checkpoint (``python -m app.pretrain``).
The module is written as an RLlib RLModule checkpoint (the weights and the observation statistics, a few MB), then
evaluated against every level of the reference ladder on seeds never used in training (``--games`` against the full
scripted bot, ``--lower-games`` against each lower level, sides alternating, actions sampled as in training), and
``models/<name>/README.md`` (the model card: mode, config, training time, hardware, the measured win rates and the
command lines to watch and play it) and ``card.json`` are written. ``--bench-log`` takes the win rates of
``scripts/bench_learning.py``'s final evaluation of the same checkpoint (the JSON line its log ends with; seeds from
1,000,000, never used in training) instead of playing the games again. Any tool that takes an agent takes the result:
``scripts/play.py --radiant model:models/<name>``, ``python -m app.evaluate --agent model:models/<name>``,
``opponents.fixed`` of a run config, and the replay viewer.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import sys
import time

from policies.league.references import MODELS_DIR
from training.cli import user_errors


EVAL_SEED = 2_000_000  # the card's games: seeds far from training's and the learning benchmark's


def hardware() -> str:
    return f"{os.cpu_count()} CPU cores ({platform.processor() or platform.machine()}), no GPU"


def training_summary(run_dir: str | None) -> dict:
    """The run's config, its training time and steps (from run_config.yaml and metrics.csv)."""
    if not run_dir:
        return {}
    import csv

    import yaml
    out = {"run_dir": os.path.abspath(run_dir)}
    path = os.path.join(run_dir, "run_config.yaml")
    if os.path.exists(path):
        with open(path) as f:
            out["config"] = yaml.safe_load(f)
    path = os.path.join(run_dir, "metrics.csv")
    if os.path.exists(path):
        with open(path) as f:
            rows = list(csv.DictReader(f))
        if rows:
            last = rows[-1]
            out.update({"iterations": int(last["iteration"]), "training_seconds": float(last["time_s"]),
                        "env_steps": float(last["env_steps"] or 0)})
    return out


def bench_result(log_path: str, checkpoint: str) -> dict:
    """The JSON line a bench_learning.py log ends with, checked to be the final evaluation of `checkpoint`."""
    with open(log_path) as f:
        lines = [line for line in f.read().splitlines() if line.startswith("{")]
    if not lines:
        raise SystemExit(f"--bench-log {log_path}: no JSON line (did the benchmark finish?)")
    bench = json.loads(lines[-1])
    if not bench.get("final") or os.path.abspath(bench.get("checkpoint") or "") != os.path.abspath(checkpoint):
        raise SystemExit(f"--bench-log {log_path}: its final evaluation is of {bench.get('checkpoint')!r}, not of "
                         f"{checkpoint!r}")
    return bench


def bench_command(bench: dict) -> str:
    return f"python scripts/bench_learning.py --config {bench['config']} (final evaluation of run {bench['run']})"


def time_limit_words(seconds) -> str:
    return f"{seconds:.0f} s of game time" if seconds else "the mode's time limit"


def card_markdown(card: dict) -> str:
    lines = [f"# {card['name']}", "", f"A {card['mode']} agent of openfive: the OpenAI Five network "
             f"(policies/model/five_module.py), trained with PPO on this project's MOBA engine.", "",
             "## Use it", "", "```bash",
             f"python scripts/play.py --mode {card['mode']} --radiant model:models/{card['name']} --dire scripted "
             f"--replay /tmp/{card['name']}.jsonl && python -m app.replay /tmp/{card['name']}.jsonl",
             f"python -m app.evaluate --agent model:models/{card['name']} --opponent scripted_3 --mode "
             f"{card['mode']} --games 20 --workers 2", "```", "",
             "## Measured win rates", "",
             f"Evaluation games (no training randomization, seeded jitter), seeds from {card['eval_seed']}, sides "
             f"alternating, actions sampled as in training; a win is a destroyed ancient (crystal) within "
             f"{time_limit_words(card.get('eval_time_limit_s'))}; the objective win rate also counts a capped game in "
             f"which the agent's team destroyed more buildings (then killed more heroes), the points win rate one in "
             f"which it had the higher raw return. Measured on {card['hardware']} with "
             f"`{card['eval_command']}`.", "",
             "| opponent | games | won | drawn | lost | win rate (95% CI) | objective win rate | points win rate |",
             "|---|---|---|---|---|---|---|---|"]
    for name, r in card["win_rates"].items():
        lines.append(f"| `{name}` | {r['games']} | {r['wins']} | {r['draws']} | {r['losses']} | "
                     f"{r['win_rate']:.0%} ({r['win_rate_ci95'][0]:.2f}-{r['win_rate_ci95'][1]:.2f}) | "
                     # measured since 2026-11-26: a card of an older benchmark has none
                     + (f"{r['objective_win_rate']:.0%}" if "objective_win_rate" in r else "-")
                     + f" | {r['points_win_rate']:.0%} |")
    t = card.get("training", {})
    lines += ["", "## Training", ""]
    if t:
        run = os.path.basename(os.path.normpath(t["run_dir"])) if t.get("run_dir") else None
        lines.append(f"- run: `{run}` (a directory of the training machine, not in the repository); "
                     f"{t.get('iterations')} iterations, {t.get('env_steps', 0):,.0f} env steps, "
                     f"{t.get('training_seconds', 0) / 60:.0f} minutes of training")
    lines.append(f"- hardware: {card['hardware']}")
    if card.get("notes"):
        lines.append(f"- {card['notes']}")
    if t.get("config"):
        import yaml
        lines += ["", "Run config:", "", "```yaml", yaml.safe_dump(t["config"], sort_keys=False).rstrip(), "```"]
    return "\n".join(lines) + "\n"


@user_errors
def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint")
    p.add_argument("--name", required=True, help="the model's directory under models/")
    p.add_argument("--run-dir", help="the run that trained it (its config and training time go in the card)")
    p.add_argument("--games", type=int, default=100, help="games against the full scripted bot")
    p.add_argument("--lower-games", type=int, default=40, help="games against every lower ladder level")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--notes", default="", help="a line for the card (how it was trained)")
    p.add_argument("--time-limit", type=float, default=0.0,
                   help="game time limit in seconds (default 0: the mode's, 1200 s in 1v1, 1800 s in 5v5)")
    p.add_argument("--bench-log", help="a bench_learning.py log whose final evaluation was of this checkpoint: its "
                                       "win rates go in the card, no games are played")
    args = p.parse_args(argv)
    from policies.agents.ladder import LADDER
    from policies.league.references import load_module
    from scripts.bench_learning import FINAL_SEED, TOP_LEVEL, final_evaluation

    out = os.path.join(MODELS_DIR, args.name)
    module = load_module(args.checkpoint, "CHECKPOINT")
    mode = "5v5" if module.observation_space["me"].shape[0] == 5 else "1v1"
    module.save_to_path(out)
    t = time.time()
    command = "python scripts/ship_model.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    if args.bench_log:
        bench = bench_result(args.bench_log, args.checkpoint)
        win_rates, seed, command = bench["final"], FINAL_SEED, bench_command(bench)
    else:
        games = {level: args.games if level == TOP_LEVEL else args.lower_games for level in LADDER}
        win_rates = final_evaluation(out, mode, games, greedy=False, workers=args.workers, seed=EVAL_SEED,
                                     time_limit_s=args.time_limit)
        seed = EVAL_SEED
    card = {"name": args.name, "mode": mode, "source_checkpoint": os.path.abspath(args.checkpoint),
            "hardware": hardware(), "eval_seed": seed, "eval_time_limit_s": args.time_limit or None,
            "eval_seconds": round(time.time() - t, 1),
            "eval_command": command,
            "win_rates": win_rates, "training": training_summary(args.run_dir), "notes": args.notes}
    with open(os.path.join(out, "card.json"), "w") as f:
        json.dump(card, f, indent=1)
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write(card_markdown(card))
    print(json.dumps({k: card[k] for k in ("name", "mode", "win_rates", "eval_seconds")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
