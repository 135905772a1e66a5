"""Model surgery CLI (Five sec. 3.3, app. B): a run's checkpoint made fit for a new model or env config, its
function kept.

    python -m app.surgery --checkpoint CKPT --config NEW.yaml --out NEW_CKPT [--set key=value ...]
                          [--references REFS.json] [--steps 500]

Surgery (policies/surgery/weights.py) applies to everything in the checkpoint that holds weights: every module of the
learner
("main" and the league's slots), its optimizer state (Adam's moments of new entries start at 0), every league snapshot
of the opponent pool (written next to the new checkpoint, the pool's paths pointing there, so that past versions keep
playing against the new layout), and, with ``--references``, the checkpoint references of a TrueSkill pool (written
to NEW_CKPT/references.json with the surgered modules beside it). The env runners take the learner's weights when a
run restores the checkpoint. The configs inside the checkpoint (the algorithm's, the modules') are updated, so that
``policies.league.references.load_module`` builds the new shape.

Prints a table of what changed (tensor, old and new shape, op, exact) and the measured max output difference between
the old and the new "main" on recorded games (every head's logits, the value, the win probability, LSTM state carried
through the sequences). The new checkpoint is written to a temporary directory beside NEW_CKPT and renamed when
complete: NEW_CKPT never holds half a checkpoint, and the old checkpoint is never touched. A run continues from it
with ``init.restore: NEW_CKPT`` (training/run_config.py), which holds the learning rate for ``init.lr_hold_iterations``.
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import shlex
import shutil
import sys
import tempfile
import time

from training import run_config
from training.cli import user_errors

SURGERY_FILE = "surgery.json"  # in the new checkpoint: what was done, from what, at which iteration
REFERENCES_FILE = "references.json"
LEAGUE_DIR = "league"
MODULES_DIR = os.path.join("learner_group", "learner", "rl_module")
LEARNER_STATE = os.path.join("learner_group", "learner", "state.pkl")
TOLERANCE = 1e-5  # an exact surgery must change no output by more than this


# ---- reading a checkpoint --------------------------------------------------------------------------------------------
def _load_pickle(path):
    with open(path, "rb") as f:
        return pickle.load(f)


def _dump_pickle(obj, path):
    from ray import cloudpickle  # as RLlib writes them: the pickled configs hold lambdas
    with open(path, "wb") as f:
        cloudpickle.dump(obj, f)


def algorithm_config(checkpoint: str) -> dict:
    """The algorithm config (a dict) an algorithm checkpoint was built with; a ValueError naming --checkpoint when it
    is no algorithm checkpoint."""
    path = os.path.join(checkpoint, "class_and_ctor_args.pkl")
    if not os.path.isfile(path) or not os.path.isdir(os.path.join(checkpoint, MODULES_DIR)):
        raise ValueError(f"--checkpoint {checkpoint!r}: not an algorithm checkpoint (a run's checkpoint_NNNNNN, with "
                         f"{MODULES_DIR}/)")
    return _load_pickle(path)["ctor_args_and_kwargs"][0][0]


def checkpoint_shape(checkpoint: str, module=None):
    """The NetworkShape of a checkpoint's "main": from its algorithm config (model and env), or from the module's
    spaces for a module checkpoint."""
    from policies.model.module_ids import MAIN
    from policies.surgery.weights import NetworkShape
    try:
        cfg = algorithm_config(checkpoint)
    except ValueError:
        if module is None:
            from policies.league.references import load_module
            module = load_module(checkpoint)
        return NetworkShape.of_module(module)
    spec = cfg["_rl_module_spec"].rl_module_specs[MAIN]
    return NetworkShape.of(spec.model_config or {}, cfg["env_config"])


def checkpoint_iteration(checkpoint: str) -> int:
    from ray.tune.result import TRAINING_ITERATION
    return int(_load_pickle(os.path.join(checkpoint, "algorithm_state.pkl")).get(TRAINING_ITERATION, 0))


# ---- rewriting one ---------------------------------------------------------------------------------------------------
def _retarget(obj, model: dict, env_keys: dict, spaces):
    """Points the configs pickled in a checkpoint at the new shape: model configs, observation and action spaces of the
    module specs, the algorithm's env config."""
    from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    if isinstance(obj, RLModuleSpec):
        if obj.model_config is not None:
            obj.model_config = {**obj.model_config, **model}
        if obj.observation_space is not None:
            obj.observation_space, obj.action_space = spaces
    elif isinstance(obj, MultiRLModuleSpec):
        for spec in obj.rl_module_specs.values():
            _retarget(spec, model, env_keys, spaces)
    elif isinstance(obj, AlgorithmConfig):
        obj.env_config = {**obj.env_config, **env_keys}
        _retarget(obj._rl_module_spec, model, env_keys, spaces)
    elif isinstance(obj, dict):
        if "env_config" in obj and isinstance(obj["env_config"], dict):
            obj["env_config"] = {**obj["env_config"], **env_keys}
        if obj.get("observation_space") is not None and "model_config" in obj:  # a module's ctor kwargs
            obj["observation_space"], obj["action_space"] = spaces
            if obj["model_config"] is not None:
                obj["model_config"] = {**obj["model_config"], **model}
        for v in obj.values():
            if isinstance(v, (dict, list, tuple, RLModuleSpec, MultiRLModuleSpec, AlgorithmConfig)):
                _retarget(v, model, env_keys, spaces)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _retarget(v, model, env_keys, spaces)
    return obj


def surgery_env_keys(env: dict) -> dict:
    """The env config keys that decide the observation layout (and the new actions)."""
    from dataclasses import fields

    from moba.env.config import EnvConfig
    cfg = EnvConfig.from_dict({k: v for k, v in env.items() if k in {f.name for f in fields(EnvConfig)}})
    return {"observation_groups": list(cfg.observation_groups),
            "constant_observations": list(cfg.constant_observations), "new_actions": list(cfg.new_actions)}


def operate_checkpoint(src: str, dst: str, old, new, seed: int = 0, log=print) -> dict:
    """Writes the surgered copy of algorithm checkpoint `src` to `dst` (a fresh directory): modules, optimizer states,
    the league's snapshots and pool, the pickled configs. Returns {"changes": [...], "modules": [...], "league": n}."""
    from dataclasses import asdict

    import torch  # noqa: F401  (the snapshots are torch files)

    from training.league_play import load_weights, save_weights
    from policies.learning.five_learner import LEAGUE_STATE_KEY
    from policies.surgery.weights import apply, optimizer_state, parameter_names
    shutil.copytree(src, dst)
    model = asdict(new.cfg)
    spaces = new.spaces()
    env_keys = surgery_env_keys({"mode": new.mode, "max_units": new.max_units,
                                 "observation_groups": list(new.observation_groups),
                                 "constant_observations": list(new.constant_observations)})
    modules_dir = os.path.join(dst, MODULES_DIR)
    names, changes = {}, None
    module_ids = sorted(d for d in os.listdir(modules_dir) if os.path.isdir(os.path.join(modules_dir, d)))
    for i, mid in enumerate(module_ids):
        path = os.path.join(modules_dir, mid, "module_state.pkl")
        state = _load_pickle(path)
        names[mid] = parameter_names(state)
        new_state, ch = apply(state, old, new, seed=seed + i)
        changes = changes or ch
        _dump_pickle(new_state, path)
    for root, _, files in os.walk(dst):
        for f in files:
            if f == "class_and_ctor_args.pkl":
                p = os.path.join(root, f)
                _dump_pickle(_retarget(_load_pickle(p), model, env_keys, spaces), p)
    learner = _load_pickle(os.path.join(dst, LEARNER_STATE))
    for opt in learner.get("optimizer", {}).values():
        mid = opt["module_id"]
        if len(names[mid]) != len(opt["state"]["param_groups"][0]["params"]):
            raise ValueError(f"the optimizer of {mid!r} has {len(opt['state']['param_groups'][0]['params'])} params, "
                             f"its module {len(names[mid])}: not a checkpoint of this FiveRLModule")
        opt["state"] = optimizer_state(opt["state"], names[mid], old, new)
    pool = learner.get(LEAGUE_STATE_KEY)
    n_league = 0
    if pool:
        trial = os.path.dirname(os.path.abspath(src))
        os.makedirs(os.path.join(dst, LEAGUE_DIR), exist_ok=True)
        for v in pool["versions"]:
            source = v["weights_path"] if os.path.isabs(v["weights_path"]) else os.path.join(trial, v["weights_path"])
            target = os.path.join(os.path.abspath(dst), LEAGUE_DIR, os.path.basename(source))
            snap, _ = apply(load_weights(source), old, new, seed=seed + 1000 + v["version"])
            save_weights(snap, target)
            # the final path (dst is renamed into place); absolute, so the run that restores it finds it from any trial
            v["weights_path"] = target
            n_league += 1
    _dump_pickle(learner, os.path.join(dst, LEARNER_STATE))
    return {"changes": changes, "modules": module_ids, "league": n_league}


def operate_references(path: str, out_dir: str, final_dir: str, new, seed: int = 0) -> tuple[dict, int]:
    """The references file at `path` with every checkpoint reference surgered into `out_dir`/references/<name> (an
    RLModule checkpoint; the file points at `final_dir`, where out_dir ends up). Returns (references, how many)."""
    from policies.league.references import CHECKPOINT_KIND, load_module
    from policies.surgery.weights import apply
    with open(path) as f:
        refs = json.load(f)
    n = 0
    for name, spec in refs.get("agents", {}).items():
        if spec.get("kind") != CHECKPOINT_KIND:
            continue
        module = load_module(spec["path"])
        old = checkpoint_shape(spec["path"], module)
        state, _ = apply(module.get_state(), old, new, seed=seed + 2000 + n)
        new_module = new.build_module(seed)
        new_module.set_state(state)
        new_module.save_to_path(os.path.join(out_dir, "references", name))
        spec["path"] = os.path.join(final_dir, "references", name)
        n += 1
    return refs, n


def measure(old_module, new_module, old, new, steps: int, seed: int = 0) -> dict:
    """Max output difference between the old and the new "main" on one recorded game (all heroes, `steps` steps): the
    old module sees the old layout with the new constant observations fed as constants, the new one the new layout."""
    from moba.env.observation import column_names
    from policies.surgery.output_diff import max_output_diff, record_games
    old_cols = column_names(old.observation_groups)
    old_env = {"mode": old.mode, "max_units": old.max_units, "observation_groups": list(old.observation_groups),
               "constant_observations": [c for c in new.constant_observations if c in old_cols]}
    new_env = {"mode": new.mode, "max_units": new.max_units, "observation_groups": list(new.observation_groups),
               "constant_observations": list(new.constant_observations)}
    obs_old, obs_new = record_games([old_env, new_env], steps, seed=seed)
    return max_output_diff(old_module, new_module, obs_old, obs_new)


def print_table(changes, log=print):
    rows = [(c.name, "x".join(map(str, c.old_shape)), "x".join(map(str, c.new_shape)), c.op,
             "exact" if c.exact else "approx") for c in changes]
    widths = [max(len(r[i]) for r in rows + [("tensor", "old shape", "new shape", "op", "exact")]) for i in range(5)]
    for r in [("tensor", "old shape", "new shape", "op", "exact")] + rows:
        log("  ".join(x.ljust(w) for x, w in zip(r, widths)).rstrip())


@user_errors
def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", required=True, help="a run's checkpoint (results/<run>/<trial>/checkpoint_N)")
    p.add_argument("--config", required=True, help="the run config of the new shape (its model: and env: sections)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    p.add_argument("--out", required=True, help="the new checkpoint's directory (must not exist)")
    p.add_argument("--references", help="a TrueSkill reference pool JSON: its checkpoint references are surgered too")
    p.add_argument("--steps", type=int, default=500, help="steps of the recorded game the outputs are compared on")
    p.add_argument("--seed", type=int, default=0, help="seed of the new random weights and of the recorded game")
    args = p.parse_args(argv)
    cfg = run_config.load(args.config, args.set)
    if os.path.exists(args.out):
        raise ValueError(f"--out {args.out!r} exists: surgery writes a new checkpoint, give a new path")
    if args.steps < 2:
        raise ValueError(f"--steps must be >= 2, got {args.steps}")
    if args.references and not os.path.isfile(args.references):
        raise ValueError(f"--references {args.references!r}: no such file (a rated reference pool JSON)")
    from policies.surgery.weights import NetworkShape, plan
    algorithm_config(args.checkpoint)  # a run's checkpoint (optimizer, league): refused otherwise
    old = checkpoint_shape(args.checkpoint)
    new = NetworkShape.of(cfg.model, cfg.env)
    plan(old, new)  # a surgery that cannot be done fails here, before anything is written
    import torch
    torch.set_num_threads(1)
    from policies.league.references import load_module
    t0 = time.time()
    out = os.path.abspath(args.out)
    parent = os.path.dirname(out)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(out)}.", dir=parent)
    try:
        staged = os.path.join(tmp, "checkpoint")
        res = operate_checkpoint(args.checkpoint, staged, old, new, seed=args.seed)
        _repoint_league(staged, out)  # the pool's paths point at `out`, where `staged` is moved below
        n_refs = 0
        if args.references:
            refs, n_refs = operate_references(args.references, staged, out, new, seed=args.seed)
            with open(os.path.join(staged, REFERENCES_FILE), "w") as f:
                json.dump(refs, f, indent=1)
        diff = measure(load_module(args.checkpoint), load_module(staged), old, new, args.steps, seed=args.seed)
        record = {"source": os.path.abspath(args.checkpoint), "iteration": checkpoint_iteration(args.checkpoint),
                  "old": _shape_dict(old), "new": _shape_dict(new), "max_abs_diff": diff["all"],
                  "diff": diff, "changes": [c.__dict__ for c in res["changes"]], "modules": res["modules"],
                  "league_snapshots": res["league"], "references": n_refs}
        with open(os.path.join(staged, SURGERY_FILE), "w") as f:
            json.dump(record, f, indent=1, default=list)
        os.replace(staged, out)  # atomic: `out` appears complete or not at all
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"surgery of {args.checkpoint} (iteration {record['iteration']}) -> {args.out}")
    print_table(res["changes"])
    print(f"modules: {', '.join(res['modules'])}; optimizer states: new moments 0; league snapshots: "
          f"{res['league']}; TrueSkill checkpoint references: {n_refs}")
    print(f"max output difference on {diff['observations']} recorded observations: {diff['all']:.2e} "
          f"(primary {diff['primary']:.1e}, unit {diff['unit']:.1e}, delay {diff['delay']:.1e}, "
          f"offsets {max(diff['offset_x'], diff['offset_y']):.1e}, value {diff['value']:.1e}, "
          f"win probability {diff['win_prob']:.1e}); {time.time() - t0:.1f} s")
    # the same overrides as the surgery's (the new shape's model and env keys), then the restore
    sets = "".join(f" --set {shlex.quote(kv)}" for kv in args.set)
    print(f"continue training from it: python -m app.train --config {args.config}{sets} --set init.restore={args.out}"
          + (f" --set trueskill.references={os.path.join(args.out, REFERENCES_FILE)}" if args.references else ""))
    print(json.dumps({"out": args.out, "max_abs_diff": diff["all"], "changes": len(res["changes"]),
                      "league_snapshots": res["league"], "references": n_refs,
                      "exact": bool(diff["all"] < TOLERANCE)}))
    return 0 if diff["all"] < TOLERANCE else 1


def _repoint_league(staged: str, final: str):
    """The pool's snapshot paths written inside `staged` point at `final` (where it is moved)."""
    from policies.learning.five_learner import LEAGUE_STATE_KEY
    path = os.path.join(staged, LEARNER_STATE)
    learner = _load_pickle(path)
    pool = learner.get(LEAGUE_STATE_KEY)
    if not pool:
        return
    prefix = os.path.abspath(staged) + os.sep
    for v in pool["versions"]:
        if v["weights_path"].startswith(prefix):
            v["weights_path"] = os.path.join(final, v["weights_path"][len(prefix):])
    _dump_pickle(learner, path)


def _shape_dict(shape) -> dict:
    from dataclasses import asdict
    return {"model": asdict(shape.cfg), "observation_groups": list(shape.observation_groups),
            "constant_observations": list(shape.constant_observations), "extra_actions": shape.extra_actions,
            "mode": shape.mode, "max_units": shape.max_units}


if __name__ == "__main__":
    sys.exit(main())
