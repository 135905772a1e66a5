"""Where a learner row's forward and backward go in the Five network, part by part, for a trained module.

    python scripts/bench_network_parts.py [--model models/five_5v5_kickstart] [--rows 4000] [--threads 2]
        [--rounds 3] [--seed 0] [--cpu-time] [--flops] [--model-config KEY=VALUE ... [--compare]]

The module's observations are recorded from scripted-bot games of its own mode (``policies/surgery/output_diff.py``
``record_games``: every hero of both teams), cut into sequences of the module's unroll length, as many as make
--rows rows: one learner minibatch. Each part runs forward and backward (the sum of squares of its outputs as the
loss), its inputs taken from the whole network's forward and detached, so that a part's time is its own:

- ``whole``: the module's training forward (the action logits, the LSTM state, the value) and its backward;
- ``whole_team_steps`` (5v5): ``whole`` with the learner batch's ``TEAM_STEP`` column (policies/learning/
  team_steps.py), numbered here from the rows' groups of equal team inputs: the rows grouped by number instead of
  by their fingerprints and an exact comparison;
- ``units``: the unit encoder (the unit MLP on every valid unit row, the max-pools, the per-hero unit table);
- ``team``: the team encoder and the replica layer (heroes, global, private inputs, the cross-hero pool);
- ``lstm``: the LSTM over the sequences;
- ``heads``: the action heads (the primary action's, the target unit's attention over the unit table, the delay's
  and the offsets').

``--model-config KEY=VALUE`` (repeatable) times a network the checkpoint's model config with those keys changed
(``FiveModelConfig``'s, e.g. ``team_unit_table=true``): a fresh module of the checkpoint's spaces with its observation
statistics and fresh weights, since the weights of one shape do not fit the other.

With ``--compare`` both networks are timed in this process, round by round in turn (so that both see the same
machine: a change's ratio on a shared machine), each on the same minibatch, and the table gives both and their ratio.

``--cpu-time`` counts the CPU time of the process's threads instead of wall time: steadier on a machine doing other
work, and the sum over the threads (about twice the wall time at 2 threads, the machine quiet).

``--flops`` adds each part's arithmetic: floating-point operations per row, forward and backward (torch's
``FlopCounterMode`` on one step of the part; the LSTM's, which it does not count on the CPU, from its weights' shapes:
``lstm_flops``), the rate the timing gives them (GFLOP/s), and that rate as a share of a large float32 matrix product
on the same threads (``matmul_gflops``: about what this machine's cores can do). A share far below it says the part is
bound by its small operators and memory traffic, not by arithmetic.

Microseconds per row, the median of --rounds, and each part's share of ``whole`` (the parts do not add up to it
exactly: the team's frame, the reshapes and autograd's bookkeeping between them are ``whole``'s alone). The last line
of output is a JSON object.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import fields

import numpy as np
import torch
from ray.rllib.core.columns import Columns

from policies.league.references import load_module
from policies.model.five_module import TEAM_STEP, FiveModelConfig
from policies.model.team_frame import is_dire, to_team_frame
from policies.surgery.output_diff import record_games

PARTS = ("whole", "units", "team", "lstm", "heads")
NUMBERED = "whole_team_steps"  # a 5v5 module's extra part


def minibatch(module, rows: int, seed: int, steps: int = 2000) -> dict:
    """One learner minibatch of recorded sequences: {key: tensor (B, T, ...)}, B * T >= rows (as many as games of
    `steps` steps give, up to 8 games), T the unroll length."""
    t = module.cfg.max_seq_len
    mode = "5v5" if module.team_size == 5 else "1v1"
    max_units = module.max_units
    games = 1
    while True:
        obs = record_games([{"mode": mode, "max_units": max_units}], steps=steps, seed=seed, games=games)[0]
        heroes, steps = obs["global"].shape[:2]
        per_hero = steps // t
        if heroes * per_hero * t >= rows or games >= 8:
            break
        games *= 2
    b = min(-(-rows // t), heroes * per_hero)
    # window-major: every hero's sequence of one window, then the next window's, so that a team's heroes at the same
    # steps share a minibatch as in the learner's (five_learner.shuffle_by_team)
    seqs = {k: np.swapaxes(v[:, :per_hero * t].reshape(heroes, per_hero, t, *v.shape[2:]), 0, 1)
            .reshape(heroes * per_hero, t, *v.shape[2:])[:b] for k, v in obs.items()}
    return {k: torch.as_tensor(np.ascontiguousarray(v)) for k, v in seqs.items()}


def with_model_config(module, pairs: list):
    """A fresh module of `module`'s spaces and model config with the KEY=VALUE `pairs` changed (YAML values), holding
    `module`'s observation statistics; a ValueError names a malformed pair or a bad key or value."""
    import yaml
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    config = dict(module.model_config or {})
    changed = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"{pair!r} is not KEY=VALUE")
        changed[key] = yaml.safe_load(value)
    FiveModelConfig.from_dict(changed)  # an unknown key or a bad value names the key and what is allowed
    config.update(changed)
    FiveModelConfig.from_dict({k: v for k, v in config.items() if k in {f.name for f in fields(FiveModelConfig)}})
    fresh = RLModuleSpec(module_class=type(module), observation_space=module.observation_space,
                         action_space=module.action_space, model_config=config).build()
    fresh.norm.load_state_dict(module.norm.state_dict())
    return fresh


def part_steps(module, obs: dict) -> dict:
    """{part: a function that runs its forward and backward once}; a 5v5 module's also NUMBERED."""
    b, t = obs["global"].shape[:2]
    state = {k: torch.zeros(b, *np.shape(v)) for k, v in module.get_initial_state().items()}
    batch = {Columns.OBS: obs, Columns.STATE_IN: state}
    flat = {k: v.reshape(b * t, *v.shape[2:]) for k, v in obs.items()}
    dire = is_dire(flat) if module.cfg.team_frame else None
    if module.cfg.team_frame:
        flat = to_team_frame(flat)
    with torch.no_grad():
        table = module._encode_units(flat)
        x = module._replicas(module._encode_team(flat), table, flat).reshape(b, t, -1)
        o, _ = module.lstm(x, (state["h"].unsqueeze(0), state["c"].unsqueeze(0)))
        o = o.reshape(b * t, -1)

    def whole(batch=batch):
        out = module._forward_train(batch)
        value = module.value_head(out[Columns.EMBEDDINGS])
        (out[Columns.ACTION_DIST_INPUTS].square().mean() + value.square().mean()).backward()

    parts = {"whole": whole}
    groups = module.team_groups(flat)[1] if module.team_size > 1 else None
    if groups is not None:  # the rows of a team at a step: one number each, as AddTeamStep gives them
        numbered = {**batch, TEAM_STEP: (groups + 1).reshape(b, t)}
        parts[NUMBERED] = lambda: whole(numbered)

    def units():
        fresh = module._encode_units(flat)
        (fresh.emb.square().mean() + fresh.pooled.square().mean()).backward()

    def team():
        module._replicas(module._encode_team(flat), table, flat).square().mean().backward()

    x_in = x.clone().requires_grad_(True)

    def lstm():
        out, _ = module.lstm(x_in, (state["h"].unsqueeze(0), state["c"].unsqueeze(0)))
        out.square().mean().backward()

    o_in = o.clone().requires_grad_(True)

    def heads():
        module._heads(o_in, table, flat, dire).square().mean().backward()

    return {**parts, "units": units, "team": team, "lstm": lstm, "heads": heads}


def lstm_flops(lstm: torch.nn.LSTM) -> float:
    """Floating-point operations per row (one time step of one sequence) of the LSTM's forward and backward: each
    layer's gate products, 2 x 4H x (I + H) forward, and twice that backward (the inputs' and the weights' gradients);
    the gates' elementwise arithmetic is left out."""
    per_step = sum(2 * w.shape[0] * w.shape[1] for name, w in lstm.named_parameters() if name.startswith("weight_"))
    return 3.0 * per_step


def part_flops(module, obs: dict) -> dict:
    """{part: floating-point operations per row, forward and backward}: one step of each part under torch's
    FlopCounterMode, plus lstm_flops for the parts that run the LSTM where the counter saw none of it."""
    from torch.utils.flop_counter import FlopCounterMode
    rows = obs["global"].shape[0] * obs["global"].shape[1]
    out = {}
    for name, run in part_steps(module, obs).items():
        counter = FlopCounterMode(display=False)
        with counter:
            run()
        module.zero_grad(set_to_none=True)
        lstm_counted = any("lstm" in str(op) or "rnn" in str(op) for op in counter.get_flop_counts().get("Global", {}))
        extra = lstm_flops(module.lstm) * rows if name in ("whole", "lstm") and not lstm_counted else 0.0
        out[name] = (counter.get_total_flops() + extra) / rows
    return out


def matmul_gflops(threads: int, size: int = 1024, rounds: int = 5) -> float:
    """GFLOP/s of a size x size float32 matrix product at `threads` torch threads, the best of `rounds`."""
    torch.set_num_threads(threads)
    a, b = torch.randn(size, size), torch.randn(size, size)
    a @ b
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t)
    return 2.0 * size ** 3 / best / 1e9


def measure(module, obs: dict, rounds: int, clock=time.perf_counter) -> dict:
    """{part: microseconds per row (median of `rounds`)}, after one warm-up call of each part; `clock`: wall time, or
    time.process_time for the CPU time of the process's threads."""
    rows = obs["global"].shape[0] * obs["global"].shape[1]
    steps = part_steps(module, obs)
    out = {}
    for name in steps:
        run = steps[name]
        run()
        module.zero_grad(set_to_none=True)
        times = []
        for _ in range(rounds):
            t = clock()
            run()
            times.append(clock() - t)
            module.zero_grad(set_to_none=True)
        out[name] = round(statistics.median(times) / rows * 1e6, 1)
    return out


def measure_in_turn(modules: dict, obs: dict, rounds: int, clock=time.perf_counter) -> dict:
    """{name: {part: microseconds per row}} of several modules, one round of each in turn (the median of `rounds`)."""
    times = {name: [] for name in modules}
    for _ in range(rounds):
        for name, module in modules.items():
            times[name].append(measure(module, obs, 1, clock))
    return {name: {part: round(statistics.median(r[part] for r in rs), 1) for part in rs[0]}
            for name, rs in times.items()}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="models/five_5v5_kickstart", help="a module checkpoint (PATH or model:PATH)")
    p.add_argument("--rows", type=int, default=4000, help="rows of the minibatch (the learning configs use 4,000)")
    p.add_argument("--threads", type=int, default=2, help="torch threads (the learner's on 2 cores)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seed", type=int, default=0, help="seed of the recorded games")
    p.add_argument("--model-config", action="append", default=[], metavar="KEY=VALUE",
                   help="time the checkpoint's network with this model config key changed (fresh weights)")
    p.add_argument("--cpu-time", action="store_true",
                   help="CPU time of this process's threads instead of wall time (steadier beside other work)")
    p.add_argument("--flops", action="store_true",
                   help="each part's floating-point operations per row, and the rate against a large matrix product's")
    p.add_argument("--compare", action="store_true",
                   help="with --model-config: time the checkpoint's network and the changed one in turn")
    args = p.parse_args(argv)
    if args.compare and not args.model_config:
        p.error("--compare needs --model-config: the network to compare the checkpoint's with")
    if args.compare and args.flops:
        p.error("--flops counts one network's arithmetic: leave out --compare")
    for flag in ("rows", "threads", "rounds"):
        if getattr(args, flag) < 1:
            p.error(f"--{flag} must be >= 1, got {getattr(args, flag)}")
    torch.set_num_threads(args.threads)
    clock = time.process_time if args.cpu_time else time.perf_counter
    checkpoint = load_module(args.model, "--model")
    module = checkpoint
    if args.model_config:
        try:
            module = with_model_config(checkpoint, args.model_config)
        except ValueError as e:
            p.error(f"--model-config: {e}")
    checkpoint.train()
    module.train()
    obs = minibatch(module, args.rows, args.seed)
    rows = obs["global"].shape[0] * obs["global"].shape[1]
    valid = float(obs["unit_valid"].float().sum(-1).mean())
    print(f"{args.model}: {rows} rows ({obs['global'].shape[0]} sequences of {obs['global'].shape[1]}), "
          f"{valid:.1f} valid unit rows a row, {args.threads} torch threads; forward and backward:")
    result = {"model": args.model, "model_config": args.model_config, "rows": rows,
              "valid_units_per_row": round(valid, 1), "threads": args.threads, "cpu_time": args.cpu_time}
    if args.compare:
        both = measure_in_turn({"checkpoint": checkpoint, "changed": module}, obs, args.rounds, clock)
        print(f"| part | checkpoint's network: us per row | {' '.join(args.model_config)}: us per row | ratio |")
        print("|---|---|---|---|")
        for name in both["changed"]:
            a, b = both["checkpoint"][name], both["changed"][name]
            print(f"| {name} | {a} | {b} | {a / b:.2f}x |")
        result.update(us_per_row=both["changed"], checkpoint_us_per_row=both["checkpoint"])
    else:
        per_row = measure(module, obs, args.rounds, clock)
        header = "| part | us per row | share of whole |"
        if args.flops:
            flops = part_flops(module, obs)
            peak = matmul_gflops(args.threads)
            rates = {name: flops[name] / per_row[name] / 1e3 for name in per_row}  # flop/row over us/row, in GFLOP/s
            print(f"a 1,024 x 1,024 float32 matrix product: {peak:.1f} GFLOP/s at {args.threads} threads")
            header += " MFLOP per row | GFLOP/s | share of the matrix product's |"
            result.update(mflop_per_row={k: round(v / 1e6, 4) for k, v in flops.items()},
                          gflop_per_s={k: round(v, 2) for k, v in rates.items()}, matmul_gflop_per_s=round(peak, 1))
        print(header)
        print("|---" * header.count(" |") + "|")
        for name in per_row:
            cells = f"| {name} | {per_row[name]} | {per_row[name] / per_row['whole']:.0%} |"
            if args.flops:
                cells += f" {flops[name] / 1e6:.3f} | {rates[name]:.1f} | {rates[name] / peak:.0%} |"
            print(cells)
        result["us_per_row"] = per_row
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
