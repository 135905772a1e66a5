"""``EnvConfig``: the environment's settings, validated with errors that name the key and the allowed values."""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

from moba.env.actions import PRIMARY_NAMES
from moba.env.observation import OBSERVATION_GROUPS, column_names
from moba.env.rewards import DEFAULT_PRESET, REWARD_PRESETS, SIGNALS
from moba.env.start_state import checked_start_state
from moba.game.constants import DEFAULT_FRAMESKIP, MAX_FRAMESKIP
from moba.game.heroes import HERO_INDEX
from moba.game.teams import MODE_1V1, MODE_5V5, MODES, n_heroes

DEFAULT_MAX_UNITS = {MODE_5V5: 64, MODE_1V1: 32}  # observation rows: the team's heroes, then the nearest units
MAX_OBSERVED_UNITS = 256  # the most observation rows max_units may ask for
RANDOMIZATION_KEYS = ("hero_state", "lane_assignments", "lineup", "item_builds", "first_game_length")
# keys RLlib puts into an EnvContext, which the env ignores
_RLLIB_CONTEXT_KEYS = {"worker_index", "vector_index", "num_workers", "remote", "recreated_worker"}


@dataclass
class EnvConfig:
    mode: str = MODE_5V5
    seed: int | None = None
    frameskip: int = DEFAULT_FRAMESKIP  # app. L: act every 4th tick
    time_limit_s: float = 0.0  # 0 = the mode's default (teams.DEFAULT_TIME_LIMIT_S)
    max_units: int = 0  # 0 = DEFAULT_MAX_UNITS[mode]
    action_offset: bool = False  # app. L: the action applied at T+1 is the one decided from the observation at T
    evaluation: bool = False  # evaluation mode: every randomization off (app. O.2)
    # evaluation mode only: seeded jitter of the heroes' spawn points and of the first creep wave
    # (moba/env/randomization.py), so that games between deterministic agents differ by seed; training ignores it
    evaluation_jitter: bool = True
    randomize: dict = field(default_factory=lambda: {k: True for k in RANDOMIZATION_KEYS})
    lineup: tuple = ()  # hero names, Radiant's then Dire's; used when lineup randomization is off
    reward_preset: str = DEFAULT_PRESET
    reward_weights: dict = field(default_factory=dict)  # overrides of single weights
    # model surgery (policies/surgery/weights.py, Five app. B): optional observation feature groups
    # (observation.OBSERVATION_GROUPS), columns fed as the constant 0 ("table.column", observation.column_names:
    # deprecated observations), and primary actions (actions.PRIMARY_NAMES) legal in only a share of games
    # (new_action_share, annealed from 0 to 1 by the schedule of that name while a new action comes in)
    observation_groups: tuple = ()
    constant_observations: tuple = ()
    new_actions: tuple = ()
    new_action_share: float = 1.0
    # both ancients' (1v1: crystals') health as a share of the game's, from the next game on: a training curriculum
    # on the goal (the ancient_hp_scale schedule, docs/training.md); 1 = the game as it is
    ancient_hp_scale: float = 1.0
    # the consumables' need filters (moba/env/actions.py need_filters): a healing salve or clarity only when it can do
    # its work, a town portal scroll only toward a far building and, while it channels, only the no-op; for every hero
    # of the game
    consumable_filters: bool = False
    # a share of games that start late around one side (moba/env/start_state.py): {share, destroyed, distance, level}
    start_state: dict = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d) -> "EnvConfig":
        d = {k: v for k, v in dict(d).items() if k not in _RLLIB_CONTEXT_KEYS}
        allowed = [f.name for f in fields(cls)]
        unknown = sorted(set(d) - set(allowed))
        if unknown:
            raise ValueError(f"env config: unknown key(s) {unknown}; allowed: {allowed}")
        cfg = cls(**d)
        cfg.validate()
        return cfg

    def validate(self):
        def bad(key, msg):
            raise ValueError(f"env config {key!r}: {msg}")
        if not isinstance(self.mode, str) or self.mode not in MODES:
            bad("mode", f"must be one of {list(MODES)}, got {self.mode!r}")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)):
            bad("seed", f"must be an int or None, got {self.seed!r}")
        if isinstance(self.frameskip, bool) or not isinstance(self.frameskip, int) \
                or not 1 <= self.frameskip <= MAX_FRAMESKIP:
            bad("frameskip", f"must be an int in [1, {MAX_FRAMESKIP}], got {self.frameskip!r}")
        if isinstance(self.time_limit_s, bool) or not isinstance(self.time_limit_s, (int, float)) \
                or not math.isfinite(self.time_limit_s) or self.time_limit_s < 0:
            bad("time_limit_s", f"must be a number >= 0 (0 = default), got {self.time_limit_s!r}")
        heroes = n_heroes(self.mode)
        if isinstance(self.max_units, bool) or not isinstance(self.max_units, int) or \
                (self.max_units != 0 and not heroes + 1 <= self.max_units <= MAX_OBSERVED_UNITS):
            bad("max_units", f"must be 0 (default) or an int in [{heroes + 1}, {MAX_OBSERVED_UNITS}], "
                             f"got {self.max_units!r}")
        for key in ("action_offset", "evaluation", "evaluation_jitter", "consumable_filters"):
            if not isinstance(getattr(self, key), bool):
                bad(key, f"must be true or false, got {getattr(self, key)!r}")
        if not isinstance(self.randomize, dict):
            bad("randomize", f"must be a mapping with keys {list(RANDOMIZATION_KEYS)}")
        for k, v in self.randomize.items():
            if k not in RANDOMIZATION_KEYS:
                bad("randomize", f"unknown key {k!r}; allowed: {list(RANDOMIZATION_KEYS)}")
            if not isinstance(v, bool):
                bad(f"randomize.{k}", f"must be true or false, got {v!r}")
        self.randomize = {**{k: True for k in RANDOMIZATION_KEYS}, **self.randomize}
        if not isinstance(self.lineup, (list, tuple)):
            bad("lineup", f"must be a list of {heroes} hero names, got {self.lineup!r}")
        self.lineup = tuple(self.lineup)
        if self.lineup:
            if len(self.lineup) != heroes:
                bad("lineup", f"mode {self.mode} needs {heroes} hero names, got {len(self.lineup)}")
            for name in self.lineup:
                if not isinstance(name, str) or name not in HERO_INDEX:
                    bad("lineup", f"unknown hero {name!r}; allowed: {sorted(HERO_INDEX)}")
        if not isinstance(self.reward_preset, str) or self.reward_preset not in REWARD_PRESETS:
            bad("reward_preset", f"must be one of {sorted(REWARD_PRESETS)}, got {self.reward_preset!r}")
        if not isinstance(self.reward_weights, dict):
            bad("reward_weights", f"must be a mapping of signal -> weight; signals: {list(SIGNALS)}")
        for k, v in self.reward_weights.items():
            if k not in SIGNALS:
                bad("reward_weights", f"unknown signal {k!r}; allowed: {list(SIGNALS)}")
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                bad(f"reward_weights.{k}", f"must be a finite number, got {v!r}")
        self._validate_surgery_keys(bad)
        if not self.max_units:
            self.max_units = DEFAULT_MAX_UNITS[self.mode]

    def _validate_surgery_keys(self, bad):
        for key, allowed in (("observation_groups", list(OBSERVATION_GROUPS)), ("new_actions", list(PRIMARY_NAMES))):
            value = getattr(self, key)
            if not isinstance(value, (list, tuple)) or any(v not in allowed for v in value):
                bad(key, f"must be a list of names from {allowed}, got {value!r}")
            if len(set(value)) != len(value):
                bad(key, f"lists a name twice: {list(value)!r}")
            setattr(self, key, tuple(value))
        if "noop" in self.new_actions:
            bad("new_actions", "the no-op is always legal; it cannot be annealed in")
        columns = column_names(self.observation_groups)
        value = self.constant_observations
        if not isinstance(value, (list, tuple)) or any(v not in columns for v in value):
            bad("constant_observations", f"must be a list of observation columns (table.column), got {value!r}; "
                                         f"allowed: {sorted(columns)}")
        self.constant_observations = tuple(value)
        share = self.new_action_share
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0.0 <= share <= 1.0:
            bad("new_action_share", f"must be a number in [0, 1], got {share!r}")
        scale = self.ancient_hp_scale
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0.0 < scale <= 1.0:
            bad("ancient_hp_scale", f"must be a number in (0, 1], got {scale!r}")
        self.start_state = checked_start_state(self.start_state, self.mode, bad)

    def constant_columns(self) -> tuple:
        """(observation key, column) of every constant observation."""
        columns = column_names(self.observation_groups)
        return tuple(columns[name] for name in self.constant_observations)

    def new_action_ids(self) -> tuple:
        return tuple(PRIMARY_NAMES.index(a) for a in self.new_actions)

    def randomized(self, key: str) -> bool:
        return not self.evaluation and self.randomize[key]

    def jittered(self) -> bool:
        """Whether games get the evaluation jitter (evaluation mode with evaluation_jitter on)."""
        return self.evaluation and self.evaluation_jitter
