"""policies/league/references.py and its CLI app/rate.py: reference pools, rating a checkpoint against them, and the
CLI's
errors."""
import json

import numpy as np
import pytest
import torch

from moba.env.moba_env import MobaEnv
from policies.league import references
from policies.model.five_module import FiveRLModule
from app import rate

TINY = {"lstm_size": 8, "unit_embed": 8, "hero_embed": 8, "global_embed": 4, "private_embed": 8, "replica_size": 16,
        "action_embed": 8, "categorical_embed": 4}


@pytest.fixture(scope="module")
def module_checkpoint(tmp_path_factory):
    torch.manual_seed(0)
    env = MobaEnv({"mode": "1v1"})
    m = FiveRLModule(observation_space=env.observation_spaces["radiant_0"],
                     action_space=env.action_spaces["radiant_0"], model_config=TINY)
    path = tmp_path_factory.mktemp("ckpt") / "module"
    m.save_to_path(str(path))
    return str(path)


def write_refs(path, agents, mode="1v1"):
    path.write_text(json.dumps({"mode": mode, "agents": agents}))
    return str(path)


def test_rating_a_checkpoint_plays_references_within_ten_points(module_checkpoint, tmp_path, capsys):
    refs = write_refs(tmp_path / "refs.json", {"random": {"kind": "random", "mu": 0.0, "sigma": 1.0},
                                               "scripted": {"kind": "scripted", "mu": 30.0, "sigma": 1.0}})
    csv = tmp_path / "games.csv"
    rc = rate.main(["--checkpoint", module_checkpoint, "--references", refs, "--games", "2", "--time-limit",
                        "20", "--csv", str(csv), "--elo"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["games"] == 2 and set(out["win_rate"]) == {"random"}  # scripted is 30 points away
    assert abs(out["mu"]) < 10 and out["sigma"] < 25 / 3
    assert csv.exists() and (tmp_path / "games_summary.csv").exists()
    assert "agent" in out["elo"]


def test_rating_a_checkpoint_trained_with_the_consumable_filters_plays_with_them(module_checkpoint, tmp_path,
                                                                                 monkeypatch):
    class Captured(Exception):
        pass

    def rater(refs, **kwargs):
        raise Captured(kwargs)

    monkeypatch.setattr(rate, "VersionRater", rater)
    refs = write_refs(tmp_path / "refs.json", {"random": {"kind": "random", "mu": 0.0, "sigma": 1.0}})
    for options, env in (([], None), (["--consumable-filters"], {"consumable_filters": True})):
        with pytest.raises(Captured) as got:
            rate.main(["--checkpoint", module_checkpoint, "--references", refs, *options])
        assert got.value.args[0]["env"] == env


def test_rating_the_reference_pool_anchors_random_at_zero(tmp_path):
    refs = str(tmp_path / "refs.json")
    assert rate.main(["--rate-references", "--references", refs, "--games", "2", "--time-limit", "20"]) == 0
    rated = json.loads(open(refs).read())
    assert rated["agents"]["random"]["mu"] == pytest.approx(0.0)
    assert set(rated["agents"]) == {"random", "scripted_1", "scripted_2", "scripted_3"}  # the whole ladder
    assert len(rated["games"]) == 6 * 2 and rated["time_limit_s"] == 20.0


def test_unrated_references_and_bad_files_are_errors(module_checkpoint, tmp_path, capsys):
    assert rate.main(["--checkpoint", module_checkpoint, "--games", "1"]) == 2
    assert "--rate-references first" in capsys.readouterr().err
    refs = write_refs(tmp_path / "r.json", {"random": {"kind": "random", "mu": 0, "sigma": 1}}, mode="5v5")
    assert rate.main(["--checkpoint", module_checkpoint, "--references", refs]) == 2
    assert "mode" in capsys.readouterr().err
    bad = write_refs(tmp_path / "b.json", {"x": {"kind": "alien"}})
    assert rate.main(["--checkpoint", module_checkpoint, "--references", bad]) == 2
    err = capsys.readouterr().err
    assert "kind must be one of" in err and "'scripted_2'" in err and "'checkpoint'" in err
    assert rate.main(["--checkpoint", str(tmp_path), "--references", write_refs(
        tmp_path / "ok.json", {"random": {"kind": "random", "mu": 0, "sigma": 1}})]) == 2
    assert "neither an algorithm checkpoint" in capsys.readouterr().err


def test_play_game_returns_each_teams_raw_return_and_evaluation_reports_margins(module_checkpoint):
    """play_game sums every step's raw rewards per team (checked against a hand-run game with the same seeds);
    evaluate_module reports win/draw rates, the reward margin and buildings per opponent."""
    from training.evaluation_games import evaluate_module
    from policies.agents.by_name import make_agent, play_game
    cfg = {"mode": "1v1", "evaluation": True, "time_limit_s": 40.0}
    summary = play_game(MobaEnv(cfg), make_agent("scripted", 1), make_agent("random", 2), seed=3)
    env, radiant, dire = MobaEnv(cfg), make_agent("scripted", 1), make_agent("random", 2)
    obs, _ = env.reset(seed=3)
    radiant.reset(["radiant_0"]), dire.reset(["dire_0"])
    total = {"radiant_0": 0.0, "dire_0": 0.0}
    while True:
        actions = {**radiant.act({"radiant_0": obs["radiant_0"]}), **dire.act({"dire_0": obs["dire_0"]})}
        obs, rewards, term, trunc, _ = env.step(actions)
        for a in total:
            total[a] += rewards[a]
        if term["__all__"] or trunc["__all__"]:
            break
    assert summary["raw_return"] == pytest.approx({"radiant": total["radiant_0"], "dire": total["dire_0"]})
    assert total["radiant_0"] != 0.0

    module = FiveRLModule.from_checkpoint(module_checkpoint)
    res = evaluate_module(module, {"mode": "1v1", "time_limit_s": 20.0}, ["noop"], games=2)
    assert res["win_rate_vs_noop"] == 0.0 and res["draw_rate_vs_noop"] == 1.0
    assert res["game_minutes_vs_noop"] == pytest.approx(20.0 / 60.0, abs=0.01)
    assert res["buildings_vs_noop"] == 0.0 and res["buildings_lost_vs_noop"] == 0.0
    assert np.isfinite(res["reward_margin_vs_noop"]) and res["reward_margin_vs_noop"] != 0.0


def test_points_win_rate_counts_outright_wins_and_time_limit_leads(monkeypatch):
    """A game is won on points when won outright, or drawn at the time limit with the higher raw return; a loss is
    never a points win, whatever the returns."""
    import training.evaluation_games as ev
    import policies.agents.by_name
    # (winner, the module's raw return, the opponent's): the module plays Radiant in even games, Dire in odd ones
    games = iter([("none", 5.0, 1.0), ("none", 1.0, 5.0), ("radiant", -3.0, 0.0), ("radiant", 9.0, 0.0),
                  ("none", 0.0, 0.0)])

    def fake_play_game(env, radiant, dire, seed=0, **kw):
        winner, mine, theirs = next(games)
        me = "radiant" if seed % 2 == 0 else "dire"
        other = "dire" if me == "radiant" else "radiant"
        none = {"towers": 0, "barracks": 0, "shrines": 0, "kills": 0}
        return {"winner": winner, "game_time_s": 60.0, "raw_return": {me: mine, other: theirs},
                "destroyed_by": {"radiant": none, "dire": none}}

    monkeypatch.setattr(policies.agents.by_name, "play_game", fake_play_game)
    monkeypatch.setattr(ev, "ModuleAgent", lambda module, explore=True, seed=None: object())
    res = ev.evaluate_module(None, {"mode": "1v1"}, ["random"], games=5)
    # game 0: draw, ahead -> point; 1: draw, behind; 2: won as Radiant (behind on return) -> point;
    # 3: Radiant won while the module was Dire -> loss; 4: draw, level
    assert res["win_rate_vs_random"] == pytest.approx(1 / 5)
    assert res["draw_rate_vs_random"] == pytest.approx(3 / 5)
    assert res["points_win_rate_vs_random"] == pytest.approx(2 / 5)
    assert res["reward_margin_vs_random"] == pytest.approx((4.0 - 4.0 - 3.0 + 9.0 + 0.0) / 5)


def test_play_scores_capped_games_by_the_rule_and_references_record_theirs(monkeypatch, tmp_path):
    """With "points" a game stopped by the time limit goes to the side ahead on raw return; the rated references file
    records the rule, and a version is only rated under the rule its references were rated with."""
    import policies.agents.by_name
    none = {"towers": 0, "barracks": 0, "shrines": 0, "kills": 0}
    monkeypatch.setattr(policies.agents.by_name, "play_game", lambda env, radiant, dire, seed=0, **kw: {
        "winner": "none", "raw_return": {"radiant": 2.0, "dire": 7.0}, "game_time_s": 10.0,
        "destroyed_by": {"radiant": none, "dire": none}})
    args = ("1v1", object(), object())
    assert references.play_rated_game(*args, "dire", 0, 10.0) == 0.5
    assert references.play_rated_game(*args, "dire", 0, 10.0, time_limit_outcome="points") == 1.0
    assert references.play_rated_game(*args, "radiant", 0, 10.0, time_limit_outcome="points") == 0.0
    refs = references.rate_reference_pool(references.load_references(None, "1v1"), games=2, time_limit_s=10.0,
                                          log=lambda *a: None, time_limit_outcome="points")
    assert refs["time_limit_outcome"] == "points"
    assert [g[2] for g in refs["games"]] == [0.0, 1.0] * 6  # each pair's first agent is radiant, then dire
    references.references_outcome_rule(refs, "points")
    with pytest.raises(ValueError, match="rated with 'points'.*--time-limit-outcome draw"):
        references.references_outcome_rule(refs, "draw")
    with pytest.raises(ValueError, match="rated with 'draw'"):
        references.references_outcome_rule({"mode": "1v1", "agents": {}}, "points")  # an older file: draws


def test_a_checkpoint_plays_in_its_own_observation_layout(module_checkpoint, tmp_path, capsys):
    """A surgered agent (here with the 'buildings' group) plays app.evaluate's games in the layout it was trained in;
    two checkpoints of different layouts cannot share a game, and the error names both flags."""
    from app import evaluate
    torch.manual_seed(0)
    env = MobaEnv({"mode": "1v1", "observation_groups": ["buildings"]})
    m = FiveRLModule(observation_space=env.observation_spaces["radiant_0"],
                     action_space=env.action_spaces["radiant_0"], model_config=TINY)
    grouped = str(tmp_path / "grouped")
    m.save_to_path(grouped)
    layout = {"max_units": 32, "observation_groups": ["buildings"]}
    assert references.agents_layout([(grouped, "--agent"), ("scripted_3", "--opponent")]) == layout
    assert references.agents_layout([("random", "--agent"), ("scripted_3", "--opponent")]) == {}
    assert references.agents_layout([(module_checkpoint, "--agent")]) == {"max_units": 32, "observation_groups": []}
    with pytest.raises(ValueError, match=r"different observation layouts.*--agent .*'buildings'.*; --opponent .*\[\]"):
        references.agents_layout([(grouped, "--agent"), (module_checkpoint, "--opponent")])
    args = evaluate.parse_args(["--agent", grouped, "--opponent", "scripted_3", "--mode", "1v1", "--games", "2",
                                "--time-limit", "8"])
    assert evaluate.evaluate(args, log=lambda line: None)["games"] == 2
    assert evaluate.main(["--agent", grouped, "--opponent", module_checkpoint, "--mode", "1v1", "--games", "1"]) == 2
    assert "different observation layouts" in capsys.readouterr().err
