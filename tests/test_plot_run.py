"""scripts/plot_run.py: the run's plots from its CSVs, and a clear error for a directory that is not a run."""
from __future__ import annotations

import csv
import os

from scripts import plot_run


def write(path, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def test_writes_training_trueskill_and_opponent_plots(tmp_path, capsys):
    run = tmp_path / "run"
    write(str(run / "metrics.csv"), [{"iteration": i, "episode_return": 0.1 * i, "win_rate_vs_random": "",
                                      "vf_loss": 1.0 / i, "team_spirit": 0.3} for i in range(1, 6)])
    write(str(run / "PPO_x" / "trueskill.csv"), [{"version": v, "mu": v / 2, "sigma": 3.0} for v in (5, 10)])
    write(str(run / "PPO_x" / "league.csv"), [
        {"iteration": it, "version": v, "snapshot_iteration": 3 * v, "quality": -0.1 * v, "probability": 1 / it,
         "games": 1, "current_wins": 0} for it in range(3, 6) for v in range(1, it - 1)])
    assert plot_run.main([str(run)]) == 0
    for name in ("training.png", "trueskill.png", "opponents.png"):
        with open(run / name, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    # no league or TrueSkill CSV: only the training plot
    bare = tmp_path / "bare"
    write(str(bare / "metrics.csv"), [{"iteration": 1, "vf_loss": 0.5}])
    assert plot_run.main([str(bare)]) == 0
    assert sorted(os.listdir(bare)) == ["metrics.csv", "training.png"]
    # nothing plottable (the zero-sum episode return is not plotted): no training plot, no error
    empty = tmp_path / "empty"
    write(str(empty / "metrics.csv"), [{"iteration": 1, "episode_return": 0.0}])
    assert plot_run.main([str(empty)]) == 0
    assert sorted(os.listdir(empty)) == ["metrics.csv"]


def test_iteration_and_version_axes_have_whole_ticks_only():
    """Three iterations would get ticks at 1.0, 1.5, 2.0, ... by default: iterations and versions are whole."""
    import matplotlib
    import pandas as pd
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    metrics = pd.DataFrame({"iteration": [1, 2, 3], "vf_loss": [1.0, 0.5, 0.2], "team_spirit": [0.3, 0.4, 0.5]})
    league = pd.DataFrame([{"iteration": it, "version": v, "snapshot_iteration": v, "quality": -0.1 * v,
                            "probability": 1 / it, "games": 1, "current_wins": 0}
                           for it in (2, 3) for v in range(1, it)])
    trueskill = pd.DataFrame({"version": [1, 2, 3], "mu": [0.0, 1.0, 2.0], "sigma": [3.0, 3.0, 3.0]})
    figures = [plot_run.training_figure(metrics), plot_run.trueskill_figure(trueskill),
               plot_run.opponents_figure(league)]
    def shown(ticks, limits):
        return [t for t in ticks if min(limits) <= t <= max(limits)]

    for fig in figures:
        fig.canvas.draw()
        for ax in fig.axes:
            if ax.get_label() == "<colorbar>":  # the opponents' colorbar is a probability
                continue
            axes = [(ax.get_xticks(), ax.get_xlim())] + (
                [(ax.get_yticks(), ax.get_ylim())] if ax.get_ylabel() == "past version" else [])
            for ticks, limits in axes:
                visible = shown(ticks, limits)
                assert visible and all(float(t).is_integer() for t in visible), (ax.get_title(), visible)
        plt.close(fig)


def test_a_directory_without_metrics_is_an_error(tmp_path, capsys):
    assert plot_run.main([str(tmp_path)]) == 2
    assert "metrics.csv" in capsys.readouterr().err


def all_figures(flat_value=0.54):
    """Every figure of plot_run, from CSV-like tables with every plotted column; the gold signal flat at
    `flat_value` but for float noise (what metrics.csv holds for a reward that does not change)."""
    import pandas as pd
    n = 4
    metrics = pd.DataFrame({"iteration": range(1, n + 1), "win_rate_vs_random": [0.0, 0.25, 0.5, 0.5],
                            "points_win_rate_vs_random": [0.5] * n, "reward_margin_vs_random": [-3.0, 1.0, 2.0, 4.0],
                            "per_min_lane_assign": [0.0] * n, "per_min_hero_death": [-0.2, -0.1, -0.1, 0.0],
                            "per_min_gold_gained": [flat_value, flat_value + 1e-12, flat_value - 1e-12, flat_value],
                            "per_min_xp": [0.1, 0.2, 0.3, 0.4], "per_min_tower_t1": [0.0, 0.0, 0.1, 0.2],
                            "vf_loss": [1.0, 0.5, 0.3, 0.2], "entropy": [5.1, 5.0, 4.9, 4.8],
                            "team_spirit": [0.3, 0.4, 0.5, 0.6], "approx_kl": [0.01, 0.02, 0.015, 0.03],
                            "vf_explained_var": [0.0, 0.1, 0.3, 0.5], "grad_norm_policy": [0.5, None, 0.4, None],
                            "grad_norm_value": [2.0, None, 1.0, None], "advantage_ability_1": [-0.3, -0.2, 0.1, 0.0],
                            "teacher_agreement_primary": [0.9, 0.8, 0.85, 0.9]})
    league = pd.DataFrame([{"iteration": it, "version": v, "snapshot_iteration": v, "quality": -0.1 * v,
                            "probability": 1 / it, "games": 1, "current_wins": 0}
                           for it in (2, 3, 4) for v in range(1, it)])
    trueskill = pd.DataFrame({"version": [1, 2, 3], "mu": [25.0001, 25.0002, 25.0003], "sigma": [3.0, 3.0, 3.0]})
    return [plot_run.training_figure(metrics), plot_run.update_figure(metrics), plot_run.signals_figure(metrics),
            plot_run.trueskill_figure(trueskill, {"random": {"mu": 0.0}}), plot_run.opponents_figure(league)]


def test_every_axis_says_what_and_its_unit_with_plain_numbers():
    """Every plotted axis has a y label (the colorbar too) and the lowest one of a column an x label; no axis shows
    matplotlib's offset or scale text ("1e-12+5.4e-1" over a flat line), and a flat line's ticks are around its
    value."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    for fig in all_figures():
        fig.canvas.draw()
        plotted = [ax for ax in fig.axes if ax.axison]
        assert plotted
        for ax in plotted:
            title = ax.get_title() or ax.get_label()
            assert ax.get_ylabel().strip(), title
            for axis in (ax.xaxis, ax.yaxis):
                assert axis.get_offset_text().get_text() == "", (title, axis.get_offset_text().get_text())
                for tick in axis.get_ticklabels():
                    assert "e" not in tick.get_text().lower(), (title, tick.get_text())
            if ax.get_label() != "<colorbar>" and not any(
                    o is not ax and o.axison and o.get_position().x0 == ax.get_position().x0
                    and o.get_position().y0 < ax.get_position().y0 for o in fig.axes):
                assert ax.get_xlabel().strip(), title  # the lowest panel of its column
        if fig.axes[0].get_title() == "evaluation win rate vs random":
            units = [ax.get_ylabel() for ax in fig.axes]
            assert "win rate (fraction of games)" in units and "entropy (nats)" in units
            gold = next(ax for ax in fig.axes if ax.get_title() == "gold reward")
            low, high = gold.get_ylim()
            assert low < 0.54 < high and high - low > 0.01  # around the value, not zoomed in on the noise
            assert all(abs(float(t.get_text().replace("\u2212", "-")) - 0.54) < 0.2
                       for t in gold.yaxis.get_ticklabels() if t.get_text())
        plt.close(fig)
