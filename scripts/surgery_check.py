"""Model surgery's exactness check: loads a checkpoint's "main" module (or builds a fresh one), applies every exact op
of policies/surgery/weights.py in turn, each to the result of the one before, and prints the largest difference of any
output
(every head's logits, the value, the win probability; LSTM state carried through the sequences) between the module
before and after each op, on the same recorded games (>= 1,000 observations). The last line is JSON:
{"ops": [...], "max_abs_diff": x, ...}.

    python scripts/surgery_check.py [--checkpoint CKPT] [--steps 500] [--games 1]

The ops: add an observation group (env observation_groups: scoreboard), feed an observation as a constant (env
constant_observations: global.time; compared on observations where the env feeds it), widen every encoder and fully
connected layer, widen the LSTM, add a primary action (compared with the action masked, as it is in the games where
it is not legal yet).
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from training.cli import user_errors


TOLERANCE = 1e-5  # the bound on max |diff| for an exact op


def stages(shape):
    """The chain of (op name, new shape) from `shape`, each op applied to the previous result."""
    from policies.surgery.weights import WIDTH_KEYS, NetworkShape
    env = {"mode": shape.mode, "max_units": shape.max_units, "observation_groups": list(shape.observation_groups),
           "constant_observations": list(shape.constant_observations)}
    out = []
    if "scoreboard" not in env["observation_groups"]:
        env = {**env, "observation_groups": env["observation_groups"] + ["scoreboard"]}
        out.append(("add_observation_features", NetworkShape.of(shape.model, env, shape.extra_actions)))
    const = next(c for c in ("global.time", "global.is_night", "units.shield")
                 if c not in env["constant_observations"])
    env = {**env, "constant_observations": env["constant_observations"] + [const]}
    out.append(("remove_observation_feature", NetworkShape.of(shape.model, env, shape.extra_actions)))
    cfg = shape.cfg
    wider = {k: getattr(cfg, k) + max(4, getattr(cfg, k) // 4) for k in WIDTH_KEYS if k != "lstm_size"}
    out.append(("widen_layers", NetworkShape.of({**shape.model, **wider}, env, shape.extra_actions)))
    out.append(("widen_lstm", NetworkShape.of({**shape.model, **wider, "lstm_size": cfg.lstm_size * 2}, env,
                                              shape.extra_actions)))
    out.append(("add_primary_action", NetworkShape.of({**shape.model, **wider, "lstm_size": cfg.lstm_size * 2}, env,
                                                      shape.extra_actions + 1)))
    return out


def env_of(shape) -> dict:
    return {"mode": shape.mode, "max_units": shape.max_units, "observation_groups": list(shape.observation_groups),
            "constant_observations": list(shape.constant_observations)}


@user_errors
def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", help="an algorithm or module checkpoint (default: a fresh 1v1 module)")
    p.add_argument("--mode", default="1v1", help="the fresh module's mode (without --checkpoint)")
    p.add_argument("--steps", type=int, default=500, help="steps per recorded game (every hero's observations)")
    p.add_argument("--games", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.steps < 2 or args.games < 1:
        raise SystemExit("--steps must be >= 2 and --games >= 1")

    import torch

    from moba.env.observation import N_ACTION_IDS
    from policies.surgery.output_diff import max_output_diff, pad_actions, record_games
    from policies.surgery.weights import NetworkShape, apply
    torch.set_num_threads(1)
    t0 = time.time()
    if args.checkpoint:
        from app.surgery import checkpoint_shape
        from policies.league.references import load_module
        module = load_module(args.checkpoint, "--checkpoint")
        shape = checkpoint_shape(args.checkpoint, module)
        source = args.checkpoint
    else:
        shape = NetworkShape.of({}, {"mode": args.mode})
        module = shape.build_module(args.seed)
        source = f"a fresh {args.mode} module"
    chain = stages(shape)
    envs = [env_of(shape)] + [env_of(s) for _, s in chain]
    recorded = record_games(envs, args.steps, seed=args.seed, games=args.games)
    if not args.checkpoint:  # a fresh module: fit its observation statistics, so normalization is not the identity
        module.update_normalizers({k: torch.as_tensor(v) for k, v in recorded[0].items()}, None)
    n_obs = recorded[0]["global"].shape[0] * recorded[0]["global"].shape[1]
    print(f"surgery check of {source}: {len(chain)} ops in turn, on {n_obs} recorded observations "
          f"({args.games} game(s) x {args.steps} steps x {recorded[0]['global'].shape[0] // args.games} heroes)")
    print(f"{'op':<28} {'tensors':>7} {'primary':>9} {'unit':>9} {'delay':>9} {'offsets':>9} {'value':>9} "
          f"{'win_prob':>9} {'max':>9}")
    state, old_shape, old_module = module.get_state(), shape, module
    rows = []
    for i, (op, new_shape) in enumerate(chain):
        state, changes = apply(state, old_shape, new_shape, seed=args.seed + i)
        new_module = new_shape.build_module(args.seed + 100 + i)
        new_module.set_state(state)
        old_obs = recorded[i + 1] if op == "remove_observation_feature" else recorded[i]
        new_obs = recorded[i + 1]
        if new_shape.extra_actions:
            new_obs = pad_actions(new_obs, new_shape.extra_actions, N_ACTION_IDS)
            if old_shape.extra_actions:
                old_obs = pad_actions(old_obs, old_shape.extra_actions, N_ACTION_IDS)
        d = max_output_diff(old_module, new_module, old_obs, new_obs)
        rows.append({"op": op, "tensors": len(changes), **{k: d[k] for k in d if k != "observations"}})
        print(f"{op:<28} {len(changes):>7} {d['primary']:>9.2e} {d['unit']:>9.2e} {d['delay']:>9.2e} "
              f"{max(d['offset_x'], d['offset_y']):>9.2e} {d['value']:>9.2e} {d['win_prob']:>9.2e} {d['all']:>9.2e}",
              flush=True)
        old_shape, old_module = new_shape, new_module
    worst = max(r["all"] for r in rows)
    print(f"max |diff| over all ops: {worst:.2e} ({'within' if worst < TOLERANCE else 'ABOVE'} {TOLERANCE:g}); "
          f"{time.time() - t0:.1f} s")
    print(json.dumps({"ops": [r["op"] for r in rows], "max_abs_diff": worst, "observations": int(n_obs),
                      "per_op": rows, "source": source}))
    return 0 if worst < TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
