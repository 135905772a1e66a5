"""The training run's configuration file: a YAML run config (tune_configs/*.yaml) read, its ``--set key=value``
overrides applied, and validated into a ``training.settings.RunSettings`` (one typed dataclass per section, the
defaults the paper's numbers, cited there); and the run's stop criteria as a Tune stopper.

A run config has these sections; every key is optional and falls back to the defaults of training/settings.py::

    name: smoke                      # run name (results/<name>)
    seed: 0
    env: {...}                       # moba.env.config.EnvConfig keys (+ "remote": "host:port" or a list)
    reward: {zero_sum, time_decay, normalize}   # RewardSettings (Five app. G, Table 2 footnote c); team spirit is a
                                     # schedule
    model: {...}                     # policies.model.five_module.FiveModelConfig (network sizes)
    ppo: {...}                       # PPOSettings
    schedules: {team_spirit, lr, entropy_coeff, gae_horizon_s, kickstart_coeff, new_action_share, ancient_hp_scale}
                                     # SCHEDULE_DEFAULTS
    resources: {...}                 # ResourceSettings
    evaluation: {...}                # EvaluationSettings (win rates against reference agents, in the driver)
    trueskill: {...}                 # TrueSkillSettings (the in-training TrueSkill evaluator, Five app. J)
    league: {...}                    # LeagueSettings (past opponents, Five app. N)
    opponents: {fixed, curriculum, time_limit_outcome}   # OpponentSettings (fixed agents, a ladder curriculum)
    init: {checkpoint, teacher, restore, lr_hold_iterations, lr_hold_lr}   # InitSettings (start from pretrained
                                     # weights; the kickstart loss's teacher; continue after model surgery)
    stop: {...}                      # any of training_iteration, time_total_s, num_env_steps_sampled_lifetime,
                                     # timestamp (a wall-clock deadline)
    checkpoint: {frequency, num_to_keep, at_end}   # CheckpointSettings
    storage_path: results          # a local path, or a URI every node of a cluster reaches (s3://, gs://, file://)
    sweep: {"section.key": [values, ...]}   # a Tune grid search

A malformed config fails here, before Ray starts, with a message that names the key.
"""
from __future__ import annotations

import os

import yaml
from ray.rllib.utils.annotations import override
from ray.tune.stopper import Stopper  # Tune is imported anyway (through RLlib); Ray is not started

from training.settings import STOP_KEYS, TOP_KEYS, RunSettings, set_key  # noqa: F401 (the config file's keys)


def validate(raw: dict) -> RunSettings:
    """The settings of a raw run config (defaults filled in), or a ValueError naming the key."""
    return RunSettings.from_dict(raw)


def _parse_value(text: str):
    """A --set value as YAML; a number YAML 1.1 leaves as a string ("1e-4") becomes a float."""
    v = yaml.safe_load(text)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            pass
    return v


def _read(path: str) -> dict:
    """A YAML run config file as a raw dict, or a ValueError naming the file (missing, or where the YAML broke)."""
    if not os.path.isfile(path):
        raise ValueError(f"config file {path!r} not found")
    with open(path) as f:
        try:
            return yaml.safe_load(f) or {}
        except yaml.YAMLError as e:
            raise ValueError(f"config file {path!r}: not valid YAML, {_yaml_error(e)}") from None


def load(path: str, overrides: list[str] = ()) -> RunSettings:
    """Reads a YAML run config, applies "--set key=value" overrides (values parsed as YAML) and validates."""
    raw = _read(path)
    for item in overrides:
        if "=" not in item:
            raise ValueError(f"--set {item!r}: expected key=value, e.g. ppo.num_epochs=2")
        k, v = item.split("=", 1)
        try:
            value = _parse_value(v)
        except yaml.YAMLError as e:
            raise ValueError(f"--set {item!r}: the value is not valid YAML, {_yaml_error(e)}") from None
        set_key(raw, k.strip(), value)
    return validate(raw)


# the keys of a run config that name files on the machine that trained
PATH_KEYS = ("init.checkpoint", "init.teacher", "init.restore", "trueskill.references")


def load_record(run_dir: str) -> tuple[RunSettings, dict]:
    """The config a run trained with (its run_config.yaml), read on this machine: ``(settings, moved)``.

    A run directory copied from another machine (a GPU box, a cluster's storage), or trained in a worktree since
    removed, names files this machine lacks (``PATH_KEYS``). Each such path is looked for under the run directory's
    ancestors and the working directory by its trailing parts (``/tmp/wt/tune_configs/references_1v1.json`` ->
    ``tune_configs/references_1v1.json``, two parts at least); one found there is used, one not found is left out
    (null: the default).
    ``moved`` maps each key whose path changed to ``(the recorded path, the one used or None)``."""
    raw = _read(os.path.join(run_dir, "run_config.yaml"))
    roots = [os.getcwd()] + ancestors(os.path.abspath(run_dir))
    moved = {}
    for key in PATH_KEYS:
        section, name = key.split(".")
        recorded = (raw.get(section) or {}).get(name)
        if not isinstance(recorded, str) or os.sep not in recorded or os.path.exists(recorded):
            continue  # unset, an agent's name, or there
        found = relocate(recorded, roots)
        raw[section][name] = found
        moved[key] = (recorded, found)
    return validate(raw), moved


def relocate(recorded: str, roots: list, min_parts: int = 2) -> str | None:
    """Where a recorded path that is not there now is: its trailing parts (the longest trail first, ``min_parts`` at
    least) joined to each of ``roots`` in turn, the first that exists; None when none does."""
    parts = recorded.strip(os.sep).split(os.sep)
    return next((c for i in range(1, len(parts) - min_parts + 1) for root in roots
                 if os.path.exists(c := os.path.join(root, *parts[i:]))), None)


def ancestors(path: str) -> list:
    """path, its parent, ... up to the filesystem's root."""
    out = [path]
    while os.path.dirname(out[-1]) != out[-1]:
        out.append(os.path.dirname(out[-1]))
    return out


def _yaml_error(e: yaml.YAMLError) -> str:
    """Where PyYAML stopped (line and column, from 1), what it found there and what it was reading."""
    def at(mark):
        return f"line {mark.line + 1}, column {mark.column + 1}"
    mark, context, context_mark = (getattr(e, k, None) for k in ("problem_mark", "context", "context_mark"))
    text = (f"{at(mark)}: " if mark is not None else "") + (getattr(e, "problem", None) or str(e))
    if context:
        text += f" ({context}{' that starts at ' + at(context_mark) if context_mark is not None else ''})"
    return text


class RunStopper(Stopper):
    """The run's stop criteria as a Tune stopper: a trial stops when any flattened result key reaches its value.

    A plain dict ``stop`` is frozen into each trial's saved state, so ``--resume`` could never raise it (e.g.
    ``--set stop.training_iteration=20`` after a 10-iteration run). Tune calls this stopper in the driver process;
    ``app.train.main`` sets ``RunStopper.current`` to the criteria of the current launch, which win over the
    pickled ones. It lives here, not in app/train.py, because ``python -m app.train`` runs that file as
    ``__main__``: a class from there would be pickled by value, detached from the one ``main`` updates."""

    current = None  # the criteria of this process's latest launch (set by app.train.main)

    def __init__(self, criteria: dict):
        self.criteria = dict(criteria)

    @override(Stopper)
    def __call__(self, trial_id, result) -> bool:
        from ray.tune.utils import flatten_dict
        flat = flatten_dict(result)
        crit = RunStopper.current if RunStopper.current is not None else self.criteria
        return any(k in flat and flat[k] >= v for k, v in crit.items())

    @override(Stopper)
    def stop_all(self) -> bool:
        return False
