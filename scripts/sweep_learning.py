"""A learning sweep: the arms of a sweep file, each trained by the learning benchmark (scripts/bench_learning.py) for
the same wall-time budget on the same seeds, one after the other; then the table of wall minutes and agent steps to
each ladder level, and the curves.

    python scripts/sweep_learning.py tune_configs/sweeps/batch_size.yaml [--out DIR] [--only ARM ...] [--again]
        [--minutes M] [--env-steps N] [--final-games N] [--set KEY=VALUE ...] [--report-only]

A sweep file (YAML) names the base run config, the budget and the benchmark's options, the overrides every arm
shares and each arm's own (``--set`` lines of app.train):

    config: tune_configs/hok_1v1_kickstart.yaml
    minutes: 20                 # wall-time budget per arm (the benchmark's --minutes)
    env_steps: 3000000          # optional: each arm also stops at this many env steps (--env-steps), for a paired
                                # check whose arms must end at the same data whatever their speed
    final_games: 20             # the benchmark's final games against the full bot (--final-games)
    lower_games: 0              # ... and against every lower level (--lower-games; default: final_games)
    final_against: {random: 20} # or these final games instead of the two above (--final-against; runs from scratch)
    final_time_limit_s: 600     # the final games' length (--final-time-limit; default: the mode's, 1,200 s in 1v1)
    workers: 2                  # processes for those games (--workers; training has stopped by then)
    set: [evaluation.interval=0]
    arms:
      batch_8k: [ppo.train_batch_size=8000]
      batch_16k: [ppo.train_batch_size=16000]

Each finished arm adds its benchmark's JSON line to ``<out>/arms.jsonl`` (default out: ``results/sweeps/<file's
name>``), so a sweep can be run a few arms at a time (``--only``) and an arm already there is skipped unless
``--again``. ``--report-only`` writes the table and the plot from what is there. Arms are compared by the ladder levels
they reached: a level is reached when the agent won >= 80% of its last >= 20 training games against it
(bench_learning.first_reached), at that wall minute and agent step count (metrics.csv), plus the final games; where
the curriculum promoted the agent past a level before that (at its ``promote_at``, after which it no longer plays the
level), the promotion's, marked "promoted". Where no arm reaches a level, the table's progress columns still separate
them: agent and gradient steps, and over the last 5 minutes the window win rate against the current level and the
kickstart KL. Writes ``table.md`` and ``curves.png`` (the curriculum level against wall minutes and agent steps; the
window win rate and the kickstart KL against agent steps) and prints a JSON line last. Compare arms measured on one
machine: wall minutes differ between machines and loads.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import yaml

from policies.league.start_stages import is_late_start
from training import run_config
from training.cli import user_errors
from training.opponents import AS_RADIANT, OUTRIGHT, OUTRIGHT_AS_RADIANT

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SWEEP_KEYS = {"config", "minutes", "env_steps", "final_games", "lower_games", "final_against", "final_time_limit_s",
              "workers", "set", "arms"}


def load_sweep(path: str) -> dict:
    """The sweep file, checked: its keys, the config's existence, and each arm a list of KEY=VALUE strings."""
    with open(path) as f:
        sweep = yaml.safe_load(f) or {}
    if not isinstance(sweep, dict):
        raise ValueError(f"{path}: a sweep file is a mapping with keys {sorted(SWEEP_KEYS)}")
    unknown = sorted(set(sweep) - SWEEP_KEYS)
    if unknown:
        raise ValueError(f"{path}: unknown key {unknown[0]!r}; allowed: {sorted(SWEEP_KEYS)}")
    for key in ("config", "arms"):
        if key not in sweep:
            raise ValueError(f"{path}: {key!r} is missing")
    if not os.path.isfile(os.path.join(REPO, sweep["config"])):
        raise ValueError(f"{path}: config {sweep['config']!r} does not exist")
    arms = sweep["arms"]
    if not isinstance(arms, dict) or not arms:
        raise ValueError(f"{path}: 'arms' must map arm names to lists of KEY=VALUE overrides")
    for name, sets in {"set": sweep.get("set", []), **{f"arms.{a}": s for a, s in arms.items()}}.items():
        if not isinstance(sets, list) or not all(isinstance(s, str) and "=" in s for s in sets):
            raise ValueError(f"{path}: {name!r} must be a list of KEY=VALUE strings, got {sets!r}")
    for key, least in (("final_games", 0), ("lower_games", 0), ("env_steps", 1)):
        if key in sweep and (isinstance(sweep[key], bool) or not isinstance(sweep[key], int) or sweep[key] < least):
            raise ValueError(f"{path}: {key!r} must be a whole number >= {least}, got {sweep[key]!r}")
    limit = sweep.get("final_time_limit_s", 0)
    if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not limit >= 0:
        raise ValueError(f"{path}: 'final_time_limit_s' must be a number of seconds >= 0 (0: the mode's game length), "
                         f"got {limit!r}")
    against = sweep.get("final_against", {})
    if not isinstance(against, dict) or not all(isinstance(g, int) and not isinstance(g, bool) and g >= 0
                                                for g in against.values()):
        raise ValueError(f"{path}: 'final_against' must map agent names to whole numbers of games >= 0, "
                         f"got {against!r}")
    from policies.agents.by_name import AGENTS
    unknown = sorted(set(against) - set(AGENTS))
    if unknown:  # before any arm trains, not when the first one's final games start
        raise ValueError(f"{path}: final_against: unknown agent {unknown[0]!r}; allowed: {sorted(AGENTS)}")
    return {"minutes": 20.0, "final_games": 20, "workers": 2, "set": [], **sweep}


def bench_command(sweep: dict, arm: str, minutes: float) -> list[str]:
    sets = list(sweep["set"]) + list(sweep["arms"][arm])
    return ([sys.executable, os.path.join(REPO, "scripts", "bench_learning.py"), "--config", sweep["config"],
             "--minutes", str(minutes), "--final-games", str(sweep["final_games"]),
             "--lower-games", str(sweep.get("lower_games", sweep["final_games"])), "--workers", str(sweep["workers"])]
            + (["--env-steps", str(sweep["env_steps"])] if sweep.get("env_steps") else [])
            + (["--final-time-limit", str(sweep["final_time_limit_s"])] if sweep.get("final_time_limit_s") else [])
            + sum((["--final-against", f"{a}={g}"] for a, g in sweep.get("final_against", {}).items()), [])
            + sum((["--set", s] for s in sets), []))


def read_arms(path: str) -> dict:
    """Arm name -> its last benchmark result in arms.jsonl. A run trained in a worktree since removed (or copied from
    another machine) is looked for by its trailing parts under arms.jsonl's folders and the working directory
    (``run_config.relocate``: ``/tmp/wt/results/RUN`` -> ``results/RUN``), and its ``run_dir`` is where it is now."""
    out = {}
    if os.path.exists(path):
        roots = [os.getcwd()] + run_config.ancestors(os.path.dirname(os.path.abspath(path)))
        with open(path) as f:
            for line in f:
                if line.strip():
                    row = json.loads(line)
                    recorded = row.get("run_dir")
                    if recorded and not os.path.exists(recorded):
                        row["run_dir"] = run_config.relocate(recorded, roots) or recorded
                    out[row["arm"]] = row
    return out


def run_arm(sweep: dict, arm: str, minutes: float, log=print) -> dict:
    """Runs the benchmark of one arm (its output streamed) and returns its JSON line, the arm's name added."""
    cmd = bench_command(sweep, arm, minutes)
    log(f"arm {arm}: {' '.join(cmd)}")
    p = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, text=True)
    last = None
    for line in p.stdout:
        sys.stdout.write(line)
        if line.startswith("{"):
            last = line
    rc = p.wait()
    if rc != 0 or last is None:
        raise RuntimeError(f"arm {arm}: the benchmark failed (exit code {rc})")
    return {"arm": arm, "sets": sweep["arms"][arm], **json.loads(last)}


CURVE_COLUMNS = ("iteration", "time_s", "agent_steps", "curriculum_level", "curriculum_window_win_rate",
                 "kickstart_kl", "minibatches_applied", "fixed_games", "fixed_win_rate", "jump_start_handover_s",
                 "start_stage", "vf_explained_var")
LAST_MINUTES = 5.0  # the table's "lately" figures: means over the arm's last minutes of training


def curriculum_curve(run_dir: str):
    """A run's metrics.csv columns that the table and curves read (CURVE_COLUMNS, those it has), or None."""
    import pandas as pd
    path = os.path.join(run_dir, "metrics.csv")
    if not os.path.exists(path):
        return None
    m = pd.read_csv(path)
    return m[[c for c in CURVE_COLUMNS if c in m]]


def progress(run_dir: str) -> dict:
    """What an arm did, whether or not it reached a level: the agent steps it sampled, the gradient steps it took,
    and over its last LAST_MINUTES minutes the mean window win rate against its curriculum's current level and the
    mean kickstart KL (each None where metrics.csv lacks it)."""
    m = curriculum_curve(run_dir) if run_dir else None
    if m is None or m.empty:
        return {}
    late = m[m["time_s"] >= m["time_s"].max() - 60 * LAST_MINUTES] if "time_s" in m else m

    def mean(col):
        return float(late[col].mean()) if col in late and late[col].notna().any() else None
    fixed_win = None
    if {"fixed_games", "fixed_win_rate"} <= set(late) and late["fixed_games"].fillna(0).sum() > 0:
        games = late["fixed_games"].fillna(0)
        fixed_win = float((late["fixed_win_rate"].fillna(0) * games).sum() / games.sum())
    handover = m["jump_start_handover_s"].dropna() if "jump_start_handover_s" in m else []
    stage = m["start_stage"].dropna() if "start_stage" in m else []
    return {"agent_steps": int(m["agent_steps"].max()) if "agent_steps" in m else None,
            "gradient_steps": int(m["minibatches_applied"].sum()) if "minibatches_applied" in m else None,
            "window_win_late": mean("curriculum_window_win_rate"), "kickstart_kl_late": mean("kickstart_kl"),
            "level_late": int(late["curriculum_level"].max()) if "curriculum_level" in late
            and late["curriculum_level"].notna().any() else None,
            # the games against fixed agents won (the config's time-limit rule) over the last minutes, the last
            # hand-over time of Jump-Start RL and the last stage of the late starts (opponents.start_stages)
            "fixed_win_late": fixed_win, "handover_last": float(handover.iloc[-1]) if len(handover) else None,
            "start_stage_last": int(stage.iloc[-1]) if len(stage) else None}


def opponents_rows(run_dir: str):
    """The run's trial opponents.csv as a DataFrame, or None where there is none."""
    import glob
    import pandas as pd
    path = next(iter(glob.glob(os.path.join(run_dir, "*", "opponents.csv"))), None) if run_dir else None
    return None if path is None else pd.read_csv(path)


def outright_wins(run_dir: str) -> dict:
    """The training games against fixed agents won outright (the enemy ancient destroyed) over the whole run, in all
    and by side (the trial's opponents.csv; {} for a run without the columns, measured before 2026-11-28): the full
    games, and under ``late_`` keys those that started late (the env's start_state; policies.league.start_stages
    .late_start_label)."""
    rows = opponents_rows(run_dir)
    if rows is None or OUTRIGHT not in rows:
        return {}
    late = rows["opponent"].astype(str).map(is_late_start)
    out = {}
    for prefix, part in (("", rows[~late]), ("late_", rows[late])):
        out.update({f"{prefix}{k}": v for k, v in _outright_counts(part).items()})
    return out


def outright_by_opponent(run_dir: str) -> dict:
    """outright_wins' counts of the full games (no late starts) per opponent: {opponent: counts}; {} for a run
    without the columns."""
    rows = opponents_rows(run_dir)
    if rows is None or OUTRIGHT not in rows:
        return {}
    rows = rows[~rows["opponent"].astype(str).map(is_late_start)]
    return {str(name): _outright_counts(part) for name, part in rows.groupby("opponent", sort=True)
            if part["games"].sum() > 0}


def _outright_counts(part) -> dict:
    games, won = int(part["games"].sum()), int(part[OUTRIGHT].sum())
    radiant, won_radiant = int(part[AS_RADIANT].sum()), int(part[OUTRIGHT_AS_RADIANT].sum())
    return {"games": games, "outright": won, "radiant_games": radiant, "radiant_outright": won_radiant,
            "dire_games": games - radiant, "dire_outright": won - won_radiant}


def outright_by_side(run_dir: str, m, late: bool = False):
    """Per iteration of metrics.csv `m`: the agent steps, and the share of the last ~20 training games against fixed
    agents won outright as Radiant and as Dire (rolling sums over iterations, from the trial's opponents.csv; the full
    games, or with `late` those that started late); None for a run without the columns."""
    import pandas as pd
    rows = opponents_rows(run_dir)
    if rows is None or OUTRIGHT_AS_RADIANT not in rows or "iteration" not in m or "agent_steps" not in m:
        return None
    started_late = rows["opponent"].astype(str).map(is_late_start)
    rows = rows[started_late if late else ~started_late]
    if rows.empty:
        return None
    it = rows.groupby("iteration")[["games", AS_RADIANT, OUTRIGHT, OUTRIGHT_AS_RADIANT]].sum()
    it = it.join(m.set_index("iteration")["agent_steps"], how="inner")
    out = pd.DataFrame({"agent_steps": it["agent_steps"]})
    by_side = {"radiant": (it[AS_RADIANT], it[OUTRIGHT_AS_RADIANT]),
               "dire": (it["games"] - it[AS_RADIANT], it[OUTRIGHT] - it[OUTRIGHT_AS_RADIANT])}
    for side, (games, won) in by_side.items():
        span = max(1, int(round(20 / max(games.mean(), 1e-9))))  # iterations holding about 20 of the side's games
        out[side] = won.rolling(span, min_periods=1).sum() / games.rolling(span, min_periods=1).sum()
    return out


def outright_cell(o: dict) -> str:
    if not o or not o["games"]:
        return "-"
    late = (f"; late start {o['late_outright']}/{o['late_games']} (radiant {o['late_radiant_outright']}/"
            f"{o['late_radiant_games']}, dire {o['late_dire_outright']}/{o['late_dire_games']})"
            if o.get("late_games") else "")
    return (f"{o['outright']}/{o['games']} (radiant {o['radiant_outright']}/{o['radiant_games']}, "
            f"dire {o['dire_outright']}/{o['dire_games']})" + late)


def _fmt(v, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def table(arms: dict, levels: list) -> str:
    """The markdown table: per arm, its overrides, the wall minutes and agent steps at which it reached each level,
    its progress (agent and gradient steps, the late window win rate and kickstart KL: ``progress``), the training
    games won outright by side (``outright_wins``), and its final
    wins: against the full bot, or against the sweep's final_against agents."""
    head = ["arm", "overrides", *[f"{lv}: min / agent steps" for lv in levels], "agent steps", "gradient steps",
            f"window win, last {LAST_MINUTES:g} min (level)", f"fixed agents' games won, last {LAST_MINUTES:g} min",
            "hand-over (s) or late-start stage at the end", f"kickstart KL, last {LAST_MINUTES:g} min",
            "fixed agents' games won outright (by main's side)",
            "final wins (vs the full bot unless named; objective; kills)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, r in arms.items():
        cells = [name, ", ".join(f"`{s}`" for s in r["sets"])]
        cells += [level_cell(r, lv) for lv in levels]
        pr = progress(r.get("run_dir", ""))
        win = _fmt(pr.get("window_win_late"), ".2f")
        cells += [_fmt(pr.get("agent_steps"), ","), _fmt(pr.get("gradient_steps"), ","),
                  win if pr.get("level_late") is None or win == "-" else f"{win} ({pr['level_late']})",
                  _fmt(pr.get("fixed_win_late"), ".2f"), end_stage_cell(pr),
                  _fmt(pr.get("kickstart_kl_late"), ".2f"), outright_cell(outright_wins(r.get("run_dir", "")))]
        cells.append(final_cell(r.get("final") or {}))
        lines.append("| " + " | ".join(cells) + " |")
    by_opponent = {name: outright_by_opponent(r.get("run_dir", "")) for name, r in arms.items()}
    by_opponent = {name: o for name, o in by_opponent.items() if len(o) > 1}
    if by_opponent:  # arms that trained against several agents: each one's games apart
        lines += ["", "| arm | opponent | training games won outright (by main's side) |", "|---|---|---|"]
        lines += [f"| {name} | {opponent} | {outright_cell(o)} |"
                  for name, per in by_opponent.items() for opponent, o in per.items()]
    return "\n".join(lines) + "\n"


def end_stage_cell(pr: dict) -> str:
    """Where the arm's stages ended: Jump-Start RL's hand-over time, or the late starts' stage ("stage 3")."""
    if pr.get("handover_last") is not None:
        return format(pr["handover_last"], "g")
    return "-" if pr.get("start_stage_last") is None else f"stage {pr['start_stage_last']}"


def level_cell(r: dict, level: str) -> str:
    """A level's cell: the wall minutes / agent steps at which the arm reached it (80% of >= 20 games); where the
    curriculum promoted the arm past it first (its promote_at is lower, and a promoted arm stops playing the level),
    those of the promotion, marked "promoted"; "-" for neither."""
    for key, mark in (("reached_80pct", ""), ("promoted", ", promoted")):
        m = (r.get(f"{key}_minutes") or {}).get(level)
        if m is not None:
            s = (r.get(f"{key}_agent_steps") or {}).get(level)
            return f"{m:.1f} / {'?' if s is None else format(s, ',')}{mark}"
    return "-"


def final_cell(final: dict) -> str:
    """The final games' cell: wins/games (by side, and the objective's win rate) against the full bot, or against
    each agent played when the full bot was not."""
    def one(f):
        objective = f"; {f['objective_win_rate']:.0%}" if "objective_win_rate" in f else ""
        if "kills" in f:  # arms measured before 2026-11-28 lack it
            objective += f"; kills {f['kills']}-{f['kills_lost']}"
        sides = (f" (radiant {f['wins_as_radiant']}/{f['games_as_radiant']}, dire {f['wins_as_dire']}/"
                 f"{f['games_as_dire']})" if "wins_as_dire" in f else "")  # arms measured before 2026-11-26 lack it
        return f"{f['wins']}/{f['games']}{sides}{objective}"
    if "scripted_3" in final:
        return one(final["scripted_3"])
    return ", ".join(f"vs {agent}: {one(f)}" for agent, f in final.items()) or "-"


def trained_against_win_rate(m):
    """Per iteration, the win rate against what the arm trains on: the curriculum's window win rate, or, without a
    curriculum, the games against fixed agents won over the last ~20 games (a rolling sum over iterations)."""
    if "curriculum_window_win_rate" in m and m["curriculum_window_win_rate"].notna().any():
        return m["curriculum_window_win_rate"]
    if {"fixed_games", "fixed_win_rate"} <= set(m):
        games = m["fixed_games"].fillna(0)
        wins = (m["fixed_win_rate"].fillna(0) * games)
        span = max(1, int(round(20 / max(games.mean(), 1e-9))))  # iterations holding about 20 games
        return wins.rolling(span, min_periods=1).sum() / games.rolling(span, min_periods=1).sum()
    return None


def curves_figure(arms: dict):
    """Per arm: the curriculum level against wall minutes and agent steps (Jump-Start RL's hand-over time or the late
    starts' stage instead, for arms without a curriculum that have one; where neither, the win rate against wall
    minutes and the explained variance against agent steps), the win rate against what it trains on
    (trained_against_win_rate; with late-start stages, the late games won outright by side), and the
    kickstart KL (the explained variance where no arm has a teacher; where nothing climbs either, the training games
    won outright by side), against agent steps (None without data)."""
    import matplotlib.pyplot as plt
    data = {name: curriculum_curve(r["run_dir"]) for name, r in arms.items()}
    data = {k: v for k, v in data.items() if v is not None and not v.empty}
    if not data:
        return None
    def has(col):
        return any(col in m and m[col].notna().any() for m in data.values())
    climbing = has("curriculum_level")
    win_label = "window win rate vs the current level" if climbing else "win rate vs the fixed agents (~20 games)"
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.2))
    if climbing or has("jump_start_handover_s") or has("start_stage"):
        level, level_label = (("curriculum_level", "curriculum level") if climbing else
                              ("jump_start_handover_s", "Jump-Start hand-over (game s)")
                              if has("jump_start_handover_s") else ("start_stage", "late-start stage"))
        top = [(axes[0, 0], "time_s", level, "training wall time (minutes)", level_label),
               (axes[0, 1], "agent_steps", level, "agent steps sampled", level_label)]
    else:  # nothing climbs: the win rate against wall time, and the value function's explained variance
        level = None
        top = [(axes[0, 0], "time_s", "win", "training wall time (minutes)", win_label),
               (axes[0, 1], "agent_steps", "vf_explained_var", "agent steps sampled", "explained variance (value)")]
    sides = ({name: outright_by_side(arms[name].get("run_dir", ""), m) for name, m in data.items()}
             if not has("kickstart_kl") and level is None else {})  # read only where the panel may show them
    by_side = any(v is not None for v in sides.values())
    last, last_label = (("outright", "won outright (~20 games; -: Radiant, --: Dire)") if by_side
                        else ("kickstart_kl", "kickstart KL (to the teacher)") if has("kickstart_kl") or level is None
                        else ("vf_explained_var", "explained variance (value)"))  # no teacher: the value function
    staged = level == "start_stage"  # late-start stages: their finish by side, in place of the full games' wins
    if staged:
        win_label = "late games won outright (~20 games; -: Radiant, --: Dire)"
    panels = top + [(axes[1, 0], "agent_steps", "win", "agent steps sampled", win_label),
                    (axes[1, 1], "agent_steps", last, "agent steps sampled", last_label)]
    for i, (name, m) in enumerate(data.items()):
        win = trained_against_win_rate(m)
        late = outright_by_side(arms[name].get("run_dir", ""), m, late=True) if staged else None
        if late is not None:
            for side, style in (("radiant", "-"), ("dire", "--")):
                axes[1, 0].plot(late["agent_steps"], late[side], style, color=f"C{i}")
            win = None
        if last == "outright" and sides[name] is not None:  # nothing climbs and no teacher: the finish, by side
            for side, style in (("radiant", "-"), ("dire", "--")):
                axes[1, 1].plot(sides[name]["agent_steps"], sides[name][side], style, color=f"C{i}")
        for ax, x, y, _, _ in panels:
            ys = win if y == "win" else m[y] if y in m else None
            if x not in m or ys is None or not ys.notna().any():
                continue
            xs = m[x] / 60.0 if x == "time_s" else m[x]
            ax.plot(xs, ys if y in (level, "win") else ys.rolling(10, min_periods=1).mean(), label=name,
                    color=f"C{i}")  # an arm's colour in every panel, where it has data or not
    for ax, _, _, xlabel, ylabel in panels:
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=8)  # every arm has a line there
    fig.tight_layout()
    return fig


def write_report(out: str, arms: dict) -> dict:
    import matplotlib
    matplotlib.use("Agg")
    levels = []
    for r in arms.values():
        levels += [lv for lv in (r.get("reached_80pct_minutes") or {}) if lv not in levels]
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(table(arms, levels))
    written = {"table": os.path.join(out, "table.md")}
    fig = curves_figure(arms)
    if fig is not None:
        written["curves"] = os.path.join(out, "curves.png")
        fig.savefig(written["curves"], dpi=110)
    return written


@user_errors
def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sweep", help="a sweep file (tune_configs/sweeps/*.yaml)")
    p.add_argument("--out", help="folder of arms.jsonl, table.md and curves.png (default results/sweeps/<name>)")
    p.add_argument("--only", nargs="+", default=None, metavar="ARM", help="run these arms only")
    p.add_argument("--again", action="store_true", help="run arms that already have a result again")
    p.add_argument("--minutes", type=float, default=None, help="override the sweep file's budget per arm")
    p.add_argument("--env-steps", type=int, default=None,
                   help="override the sweep file's env steps per arm (each arm stops at them or its minutes)")
    p.add_argument("--final-games", type=int, default=None,
                   help="override the sweep file's final games against the full bot (and against every lower level "
                        "unless the file sets lower_games)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="an override for every arm, after the sweep file's shared ones and before each arm's own "
                        "(repeatable), such as the checkpoint a sweep of continued runs starts from")
    p.add_argument("--report-only", action="store_true", help="write the table and plot from arms.jsonl")
    args = p.parse_args(argv)
    sweep = load_sweep(args.sweep)
    bad = [s for s in args.set if "=" not in s]
    if bad:
        raise ValueError(f"--set: {bad[0]!r} must be KEY=VALUE")
    sweep["set"] = list(sweep["set"]) + args.set
    if args.env_steps is not None:
        if args.env_steps < 1:
            raise ValueError(f"--env-steps must be >= 1, got {args.env_steps}")
        sweep["env_steps"] = args.env_steps
    if args.final_games is not None:
        if args.final_games < 0:
            raise ValueError(f"--final-games must be >= 0, got {args.final_games}")
        sweep["final_games"] = args.final_games
    unknown = sorted(set(args.only or []) - set(sweep["arms"]))
    if unknown:
        raise ValueError(f"--only: unknown arm {unknown[0]!r}; allowed: {sorted(sweep['arms'])}")
    name = os.path.splitext(os.path.basename(args.sweep))[0]
    out = args.out or os.path.join(REPO, "results", "sweeps", name)
    os.makedirs(out, exist_ok=True)
    jsonl = os.path.join(out, "arms.jsonl")
    done = read_arms(jsonl)
    if not args.report_only:
        for arm in args.only or list(sweep["arms"]):
            if arm in done and not args.again:
                print(f"arm {arm}: done before ({jsonl}); --again runs it again")
                continue
            result = run_arm(sweep, arm, args.minutes or float(sweep["minutes"]))
            with open(jsonl, "a") as f:
                f.write(json.dumps(result) + "\n")
            done[arm] = result
    arms = {a: done[a] for a in sweep["arms"] if a in done}
    written = write_report(out, arms) if arms else {}
    if arms:
        print(open(written["table"]).read())
    print(json.dumps({"sweep": args.sweep, "out": out, "arms": list(arms), "written": written}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
