"""scripts/report.py: one self-contained page per run (its figures inline, its replays as viewer pages beside it),
and app.evaluate, which plays agent against agent and keeps the games as replays."""
from __future__ import annotations

import json
import os
import re

import yaml
from test_plot_run import write

from moba.env.replay_file import read_replay
from app import evaluate
from scripts import report


def make_run(tmp_path):
    """A run directory as app.train leaves it: metrics.csv, run_config.yaml, a trial with TrueSkill and league CSVs,
    and an evaluation replay (written by app.evaluate, as training writes them)."""
    run = tmp_path / "run"
    trial = run / "PPO_openfive_574e8_00000_0_2026-01-01_00-00-00"
    write(str(run / "metrics.csv"), [{"trial": "574e8_00000", "iteration": i, "env_steps": 600 * i,
                                      "win_rate_vs_random": 0.25 * (i > 2), "vf_loss": 1.0 / i,
                                      "per_min_gold_gained": 0.5, "per_min_hero_death": -0.1 * i,
                                      "per_min_tower_t1": 0.0, "approx_kl": 0.01 * i} for i in range(1, 5)])
    write(str(trial / "trueskill.csv"), [{"version": v, "mu": v / 2, "sigma": 3.0, "games": 2, "wins": 1,
                                          "draws": 0, "losses": 1} for v in (2, 4)])
    write(str(trial / "league.csv"), [
        {"iteration": it, "version": v, "snapshot_iteration": v, "quality": -0.1 * v, "probability": 1 / (it - 1),
         "games": v, "current_wins": v // 2} for it in range(2, 5) for v in range(1, it)])
    refs = tmp_path / "refs.json"
    refs.write_text(json.dumps({"mode": "1v1", "agents": {"random": {"mu": 0.0, "sigma": 1.0},
                                                          "scripted": {"mu": 18.0, "sigma": 1.0}}}))
    (run / "run_config.yaml").write_text(yaml.safe_dump({"name": "demo", "env": {"mode": "1v1"},
                                                         "trueskill": {"references": str(refs)}}))
    args = evaluate.parse_args(["--agent", "scripted", "--opponent", "random", "--games", "2", "--time-limit", "8",
                                "--replay-dir", str(trial / "replays")])
    summary = evaluate.evaluate(args, log=lambda line: None)
    return run, summary


def test_report_holds_the_run_on_one_page_and_links_its_replays(tmp_path, capsys):
    run, summary = make_run(tmp_path)
    broken = os.path.join(os.path.dirname(summary["replays"][0]), "broken.jsonl")
    with open(broken, "w") as f:
        f.write("{}\n")
    assert report.main([str(run)]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    page = (run / "report.html").read_text()
    assert out["report"] == str(run / "report.html")
    assert out["sections"] == ["glance", "training", "update", "signals", "trueskill", "opponents", "league",
                               "ratings", "replays", "config"]
    # curves, updates, signals, TrueSkill, opponents
    assert len(re.findall(r'src="data:image/png;base64,', page)) == 5
    assert "<td>demo</td>" in page and "<td>2,400</td>" in page  # at a glance: the name, the env steps
    # the league table at the last iteration: versions 1-3, each with its games and the current agent's wins
    league = page[page.index('id="league"'):page.index('id="ratings"')]
    assert league.count("<tr>") == 4  # a header and versions 1-3; version 3: sampled with p = 1/3, 1 win in 3 games
    assert "<tr><td>3</td><td>3</td><td>-0.3</td><td>0.3333</td><td>3</td><td>1</td><td>0.3333</td></tr>" in league
    links = re.findall(r'<a href="(replays/[^"]+)">', page)
    assert links == ["replays/574e8_00000__game0_scripted_vs_random.html",
                     "replays/574e8_00000__game1_scripted_vs_random.html"]
    assert "broken.jsonl</td><td colspan=6>replay" in page and "field &#x27;format&#x27; must be" in page
    for link in links:  # each link is the viewer of its replay
        html = (run / link).read_text()
        assert '<script type="application/json" id="replay-data">' in html and "window.viewer" in html
    assert "trueskill:" in page and "references:" in page  # the config, as run


def test_report_of_a_run_without_league_trueskill_or_replays_says_so(tmp_path, capsys):
    run = tmp_path / "bare"
    write(str(run / "metrics.csv"), [{"iteration": 1, "vf_loss": 0.5}])
    assert report.main([str(run), "--out", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text()
    for missing in ("No TrueSkill ratings", "No league", "No replays in this run", "No run_config.yaml"):
        assert missing in page
    assert report.main([str(tmp_path / "nothing")]) == 2
    assert "metrics.csv" in capsys.readouterr().err


def test_evaluate_alternates_sides_and_keeps_every_game(tmp_path, capsys):
    run, summary = make_run(tmp_path)
    assert (summary["games"], summary["wins"] + summary["draws"] + summary["losses"]) == (2, 2)
    headers = [read_replay(p)[0] for p in summary["replays"]]
    assert [h["agents"] for h in headers] == [{"radiant": "scripted", "dire": "random"},
                                              {"radiant": "random", "dire": "scripted"}]
    assert [h["seed"] for h in headers] == [0, 1] and all(h["mode"] == "1v1" for h in headers)
    assert evaluate.main(["--agent", "nobody", "--games", "1"]) == 2
    err = capsys.readouterr().err
    assert "agent 'nobody'" in err and "'scripted'" in err
    assert os.path.basename(summary["replays"][0]) == "game0_scripted_vs_random.jsonl"


def test_the_replays_table_shows_each_models_last_win_probability(tmp_path, capsys):
    """A game where both sides report a win probability (radiant a constant 0.25, dire one that changes every
    step), and a scripted game: the column holds each model's last estimate as a number, and "-" without one."""
    from test_replay_file import Decider, record_game

    class Rising(Decider):
        steps = 0

        def act(self, observations):
            actions = super().act(observations)
            self.steps += 1
            self.decisions = {a: {**d, "win_prob": min(1.0, 0.003 * self.steps)} for a, d in self.decisions.items()}
            return actions

    run = tmp_path / "run"
    write(str(run / "metrics.csv"), [{"iteration": 1, "vf_loss": 0.5}])
    replays = run / "trial" / "replays"
    replays.mkdir(parents=True)
    _, _, header, records = record_game(replays / "models.jsonl", mode="1v1", time_limit_s=10.0, radiant=Decider(0),
                                        dire=Rising(1))
    record_game(replays / "scripted.jsonl", mode="1v1", time_limit_s=5.0)
    dire_last = records[-1]["model"]["dire_0"]["win_prob"]
    assert dire_last != records[1]["model"]["dire_0"]["win_prob"]  # the last one, not the first
    assert report.main([str(run)]) == 0
    page = (run / "report.html").read_text()
    table = page[page.index('id="replays"'):page.index('id="config"')]
    head = re.findall(r"<th>([^<]*)</th>", table)
    column = head.index("model&#x27;s last P(win)")
    rows = re.findall(r"<tr><td><a [^>]*>([^<]*)</a></td>(.*?)</tr>", table)
    cells = {name: re.findall(r"<td>([^<]*)</td>", rest) for name, rest in rows}
    assert cells["trial/replays/models.jsonl"][column - 1] == f"0.25 (radiant), {dire_last:.2f} (dire)"
    assert cells["trial/replays/scripted.jsonl"][column - 1] == "-"
    assert "game length (min)" in head and "True" not in table
