"""One HTML page for a training run, to open instead of its ten files: what was run, how it went, and its games.

    python scripts/report.py results/<run> [--out FILE] [--references FILE]

The page (default ``<run>/report.html``) shows the run at a glance (iterations, steps, time, the latest evaluation
and TrueSkill), the training curves, the reward per signal, the TrueSkill per version with the reference agents as
lines (the references of the run's ``trueskill.references``, or ``--references``), the opponent distribution over
time (Five fig. 27) and the league table at the last iteration, the TrueSkill table, links to the run's replays
(each written as a viewer page, ``python -m app.replay``, under ``replays/`` next to the report; with each game's
length and, where a model played, its last estimate that its own team wins) and the run's config. The figures are
those of ``scripts/plot_run.py`` (every axis labelled with its quantity and unit), inline: the page is one file,
with the replay pages beside it. The last line printed is JSON naming what was written.
"""
from __future__ import annotations

import base64
import glob
import html
import io
import json
import numbers
import os
import re
import sys

import pandas as pd

from scripts import plot_run
from training.cli import print_error

TRIAL_DIR = re.compile(r"\w+?_([0-9a-f]{5}_\d{5})_\d+_.*")  # Tune's <trainable>_<trial id>_<index>_<params/date>
STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1180px; padding: 12px 24px 40px;
  color: #1d2430; }
h1 { font-size: 22px; margin: 10px 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #dde;
  padding-bottom: 3px; }
nav a { margin-right: 14px; } img { max-width: 100%; border: 1px solid #e4e6eb; }
table { border-collapse: collapse; font-size: 13px; } th, td { padding: 3px 10px; border-bottom: 1px solid #e4e6eb;
  text-align: right; } th { background: #f4f5f8; } td:first-child, th:first-child { text-align: left; }
pre { background: #f4f5f8; padding: 10px; overflow-x: auto; font-size: 12px; } .none { color: #7a8291; }
"""


def png_uri(fig) -> str:
    """A matplotlib figure as an inline PNG (data URI), the figure closed."""
    import matplotlib.pyplot as plt
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def cell(v) -> str:
    """A table cell's text: "-" for a missing number, whole numbers without decimals, others to 4 digits."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        return str(v)
    if v != v:
        return "-"
    return f"{int(v):,}" if float(v).is_integer() and abs(v) < 1e15 else f"{v:.4g}"


def table(df: pd.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(cell(v))}</td>" for v in row) + "</tr>"
                   for row in df.itertuples(index=False))
    return f"<table><tr>{head}</tr>{rows}</table>"


def last_value(metrics: pd.DataFrame, col: str):
    if col not in metrics:
        return None
    d = metrics[col].dropna()
    return d.iloc[-1] if len(d) else None


def at_a_glance(metrics: pd.DataFrame, config: dict) -> pd.DataFrame:
    facts = [("run", config.get("name", "")), ("mode", (config.get("env") or {}).get("mode", "")),
             ("trials", metrics["trial"].nunique() if "trial" in metrics else 1),
             ("iterations", last_value(metrics, "iteration")), ("env steps", last_value(metrics, "env_steps")),
             ("training time (s)", last_value(metrics, "time_s"))]
    for col in ("win_rate_vs_random", "points_win_rate_vs_random", "reward_margin_vs_random",
                "win_rate_vs_scripted", "trueskill_mu", "league_versions"):
        v = last_value(metrics, col)
        if v is not None:
            facts.append((f"latest {col.replace('_', ' ')}", v))
    return pd.DataFrame(facts, columns=["", "value"])


def league_table(league: pd.DataFrame) -> pd.DataFrame:
    """Every past version at the last iteration: quality, sampling probability, games and the current agent's wins."""
    last = league[league["iteration"] == league["iteration"].max()].sort_values("version").copy()
    last["current_win_rate"] = last["current_wins"] / last["games"].where(last["games"] > 0)
    return last[["version", "snapshot_iteration", "quality", "probability", "games", "current_wins",
                 "current_win_rate"]]


def short_trial(name: str) -> str:
    """A Tune trial directory's name (PPO_openfive_574e8_00000_0_2026-...) as its trial id (574e8_00000, as in
    metrics.csv); any other name as it is."""
    m = TRIAL_DIR.fullmatch(name)
    return m.group(1) if m else name


def replay_pages(run_dir: str, out_dir: str) -> list[dict]:
    """Writes a viewer page for every replay of the run (``**/replays/*.jsonl``) under ``out_dir/replays/``; one
    dict per replay: its page (relative to out_dir), agents, result, or the error that kept it from being read."""
    from moba.env.replay_file import ReplayError, read_replay
    from app.replay import write_page
    found = []
    for path in sorted(glob.glob(os.path.join(run_dir, "**", "replays", "*.jsonl"), recursive=True)):
        rel = os.path.relpath(path, run_dir)
        parts = [short_trial(p) for p in os.path.splitext(rel)[0].split(os.sep) if p != "replays"]
        page = os.path.join("replays", "__".join(parts) + ".html")
        try:
            header, records = read_replay(path)
        except ReplayError as e:
            found.append({"replay": rel, "error": str(e)})
            continue
        write_page(header, records, os.path.join(out_dir, page))
        end = records[-1].get("end") or {}
        found.append({"replay": rel, "page": page, "mode": header["mode"],
                      "radiant": header["agents"].get("radiant"), "dire": header["agents"].get("dire"),
                      "winner": end.get("winner", "(unfinished)"), "minutes": round(records[-1]["t"] / 60, 1),
                      "win probability": model_win_probability(header, records)})
    return found


def model_win_probability(header: dict, records: list) -> dict:
    """Per side whose heroes a model plays: the model's last estimate that its own team wins (the mean over its
    heroes at the last record with one, as the viewer's panel shows it); {} for a replay without a model."""
    out = {}
    for side in header["teams"]:
        agents = [h["agent_id"] for h in header["heroes"] if h["team"] == side]
        for record in reversed(records):
            decisions = [(record.get("model") or {}).get(a) for a in agents]
            ps = [d["win_prob"] for d in decisions if d and d.get("win_prob") is not None]
            if ps:
                out[side] = sum(ps) / len(ps)
                break
    return out


REPLAY_COLUMNS = (("mode", "mode"), ("radiant", "radiant"), ("dire", "dire"), ("winner", "winner"),
                  ("minutes", "game length (min)"), ("win probability", "model's last P(win)"))


def win_probability_cell(by_side: dict) -> str:
    """The model's last win probability per side, e.g. "0.62 (radiant)"; "-" when no model played."""
    return ", ".join(f"{p:.2f} ({side})" for side, p in by_side.items()) or "-"


def replays_section(replays: list[dict]) -> str:
    if not replays:
        return ("<p class=none>No replays in this run: training writes every evaluation.replay_every-th evaluation "
                "game to &lt;trial&gt;/replays/; python -m app.evaluate --replay-dir &lt;run&gt;/replays adds "
                "more.</p>")
    rows = []
    for r in replays:
        if "error" in r:
            rows.append(f"<tr><td>{html.escape(r['replay'])}</td><td colspan=6>{html.escape(r['error'])}</td></tr>")
            continue
        values = {**r, "win probability": win_probability_cell(r["win probability"])}
        cells = "".join(f"<td>{html.escape(str(values[k]))}</td>" for k, _ in REPLAY_COLUMNS)
        rows.append(f"<tr><td><a href=\"{html.escape(r['page'])}\">{html.escape(r['replay'])}</a></td>{cells}</tr>")
    head = "".join(f"<th>{html.escape(h)}</th>" for h in ("replay", *(title for _, title in REPLAY_COLUMNS)))
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def report(run_dir: str, out: str, references: str | None = None) -> dict:
    import matplotlib
    import yaml
    matplotlib.use("Agg")
    metrics = pd.read_csv(os.path.join(run_dir, "metrics.csv"))
    config_path = os.path.join(run_dir, "run_config.yaml")
    config_text = open(config_path).read() if os.path.isfile(config_path) else ""
    config = yaml.safe_load(config_text) or {}
    references = references or (config.get("trueskill") or {}).get("references")
    refs = None
    if references and os.path.isfile(references):
        with open(references) as f:
            refs = json.load(f)["agents"]
    out_dir = os.path.dirname(os.path.abspath(out))
    sections = [("glance", "At a glance", table(at_a_glance(metrics, config)))]

    def figure(key, title, fig, missing):
        body = f'<img alt="{html.escape(title)}" src="{png_uri(fig)}">' if fig is not None else \
            f"<p class=none>{missing}</p>"
        sections.append((key, title, body))

    figure("training", "Training curves", plot_run.training_figure(metrics), "Nothing to plot in metrics.csv yet.")
    figure("update", "The updates", plot_run.update_figure(metrics),
           "No update columns (approx_kl, ...) in metrics.csv: a run from before they were logged.")
    figure("signals", "Reward per signal", plot_run.signals_figure(metrics),
           "No per-signal rewards (per_min_* columns) in metrics.csv.")
    ts_path = plot_run.trial_csv(run_dir, "trueskill.csv")
    ts = pd.read_csv(ts_path) if ts_path else pd.DataFrame()
    figure("trueskill", "TrueSkill per version", plot_run.trueskill_figure(ts, refs) if len(ts) else None,
           "No TrueSkill ratings: the run's trueskill.every was 0 (or no version was rated yet).")
    league_path = plot_run.trial_csv(run_dir, "league.csv")
    league = pd.read_csv(league_path) if league_path else pd.DataFrame()
    figure("opponents", "Opponent distribution over time (fig. 27)",
           plot_run.opponents_figure(league) if len(league) else None,
           "No league: the run's league.enabled was false.")
    sections.append(("league", "League table", table(league_table(league)) if len(league) else
                     "<p class=none>No league.</p>"))
    if len(ts):
        cols = [c for c in ("version", "mu", "sigma", "games", "wins", "draws", "losses") if c in ts]
        sections.append(("ratings", "TrueSkill table", table(ts[cols])))
    replays = replay_pages(run_dir, out_dir)
    sections.append(("replays", f"Replays ({len(replays)})", replays_section(replays)))
    sections.append(("config", "Config (run_config.yaml)", f"<pre>{html.escape(config_text)}</pre>" if config_text
                     else "<p class=none>No run_config.yaml in the run directory.</p>"))
    title = f"openfive run report: {config.get('name') or os.path.basename(os.path.normpath(run_dir))}"
    nav = " ".join(f'<a href="#{k}">{html.escape(t)}</a>' for k, t, _ in sections)
    body = "".join(f'<section id="{k}"><h2>{html.escape(t)}</h2>{b}</section>' for k, t, b in sections)
    page = (f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>"
            f"<p class=none>{html.escape(os.path.abspath(run_dir))}</p><nav>{nav}</nav>{body}</body></html>")
    with open(out, "w") as f:
        f.write(page)
    return {"report": out, "replays": [os.path.join(out_dir, r["page"]) for r in replays if "page" in r],
            "sections": [k for k, _, _ in sections]}


def main(argv=None) -> int:
    args = plot_run.run_arguments(__doc__, "the page to write (default: <run_dir>/report.html)").parse_args(argv)
    error = plot_run.run_dir_error(args.run_dir)
    if error:
        return print_error(error)
    written = report(args.run_dir, args.out or os.path.join(args.run_dir, "report.html"), args.references)
    print(f"report written to {written['report']} ({len(written['replays'])} replay pages beside it)")
    print(json.dumps(written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
