"""Model surgery (Five sec. 3.3 and app. B): operations on the weights of the OpenAI Five module
(policies/model/five_module.py) that change its shape and keep its function, so that training continues across a change
of the model or of the environment instead of starting again.

Every parameter's axes are described by *labels*, one per index (``NetworkShape.layouts``): a unit of a layer is
("widen <model key>", part, j), an observation column ("add observation features", key, name), an action embedding id
or a primary action ("add primary action", ...). A surgery maps the old shape's labels onto the new shape's: an old
entry keeps its value at its label's new place, and a new entry is filled so that no output changes:

- a new unit of a fully connected or encoder layer (eq. 6): small random incoming weights, zero bias, zero outgoing
  weights (the columns of the layers that read it);
- a new LSTM unit: small random incoming weights for its four gates, zero outgoing weights (the heads' columns and
  the recurrent columns of every gate, so the old units' gates never read it: their trajectory is unchanged);
- a new observation column (eq. 9): zero weights; its normalizer statistics start fresh (count, mean, m2 of 0);
- a new primary action: a new action embedding (small random) and a new previous-action embedding; exact while the
  action is masked, i.e. in the games where it is not yet legal (the ``new_action_share`` schedule anneals it in);
- an observation fed as a constant by the env (``constant_observations``, app. B "Removing Model Parts"): its
  normalized value's contribution is folded into the bias, its weights are set to 0 and its statistics to
  mean 0, m2 0, so the new module ignores the column and, with the env feeding 0, computes what the old one computed
  with 0 in it.

Shrinking anything is refused (an error naming the field): removing parameters is not function preserving.
``transplant`` does the work for any tensor, so the same maps carry Adam's moments (new entries start at 0,
``optimizer_state``). ``plan`` compares two shapes and names the ops; ``apply`` returns the new module state and one
row per changed tensor (name, old and new shape, op, exact).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

import numpy as np
import torch

from moba.env.actions import ACTION_KEYS, N_OFFSETS, N_PRIMARY
from moba.env.config import EnvConfig
from moba.env.observation import (MINIMAP_N, N_ACTION_IDS, N_MINIMAP_CHANNELS, UNIT_HERO_COLUMNS, column_names,
                                  table_columns)
from moba.game.constants import N_DELAYS, N_UNIT_TYPES
from moba.game.heroes import HEROES
from moba.game.items import ITEMS
from policies.model.five_module import BOOL_FIELDS, CROSS_HERO_POOL_FRACTION, OFFSET_GROUPS, FiveModelConfig
from policies.model.normalization import NORM_CLIP, NORM_EPS

# the scale of new random weights, relative to the standard deviation of the old weights of the same tensor. App. B
# sets new LSTM weights "significantly smaller" than the existing ones, "the highest scale which did not noticeably
# decrease the agent's TrueSkill"; the outputs do not depend on it (the outgoing weights are 0)
NEW_WEIGHT_SCALE = 0.1
NEW_LSTM_WEIGHT_SCALE = 0.01

WIDEN = "widen"
ADD_OBS = "add observation features"
REMOVE_OBS = "remove observation feature"
ADD_ACTION = "add primary action"
SPLIT_OFFSETS = "split offsets"  # model.offset_groups false -> true: each new group's heads a copy of the one pair
OPS = (ADD_OBS, REMOVE_OBS, WIDEN, ADD_ACTION, SPLIT_OFFSETS)  # WIDEN ops are named "widen <model key>"
# the switches surgery can turn on (false -> true) keeping the function; the others change what the network computes
SWITCHES_ON = ("offset_groups",)  # its new offset heads start as copies of the one pair (SPLIT_OFFSETS)
# the model keys surgery can widen: every width of FiveModelConfig (max_seq_len and the switches are no widths)
WIDTH_KEYS = tuple(f.name for f in fields(FiveModelConfig) if f.name != "max_seq_len" and f.name not in BOOL_FIELDS)
LSTM_GATES = ("i", "f", "g", "o")  # torch's gate order in weight_ih / weight_hh / biases
# the encoder (first layer) that reads each normalized observation key, and where its columns start there
OBS_CONSUMERS = {"global": "global_mlp.0", "units": "unit_mlp.0", "heroes": "hero_mlp.0",
                 "private_lanes": "private_mlp.0"}
MINIMAP_SIZE = N_MINIMAP_CHANNELS * MINIMAP_N * MINIMAP_N
# tensors whose new rows must stay 0 even though they are a layer's outputs: the attention keys of new action_embed
# dimensions (the gated product query * gate * key has no outgoing weight to zero; a zero key makes it 0)
ZERO_NEW_ROWS = ("unit_key.weight", "unit_key.bias", "unit_key_hero.weight")
# embeddings whose new dimensions must stay 0: the action embeddings (their dot product with the query has no outgoing
# weight either)
ZERO_NEW_DIMS = ("action_emb.weight",)


class SurgeryError(ValueError):
    """A surgery that cannot be done (a shrink, an unknown layer, nothing to do); the message names the field."""


@dataclass(frozen=True)
class NetworkShape:
    """What decides the shapes of a Five module's tensors: the model config, the observation groups, the constant
    observations (which change no shape, but a weight), and the primary actions beyond the game's."""
    model: dict = field(default_factory=dict)  # FiveModelConfig keys
    observation_groups: tuple = ()
    constant_observations: tuple = ()
    extra_actions: int = 0  # primary actions added to the game's N_PRIMARY (module level; moba.env has none to add)
    mode: str = "1v1"
    max_units: int = 0

    @classmethod
    def of(cls, model: dict | None, env: dict | None, extra_actions: int = 0) -> "NetworkShape":
        """From a run config's model and env sections (validated: an unknown key is an error naming the allowed)."""
        env_keys = {f.name for f in fields(EnvConfig)}
        env_cfg = EnvConfig.from_dict({k: v for k, v in (env or {}).items() if k in env_keys})
        model = {k: v for k, v in (model or {}).items() if k in {f.name for f in fields(FiveModelConfig)}}
        FiveModelConfig.from_dict(model)
        if isinstance(extra_actions, bool) or not isinstance(extra_actions, int) or extra_actions < 0:
            raise SurgeryError(f"extra_actions: must be an int >= 0, got {extra_actions!r}")
        return cls(model=model, observation_groups=env_cfg.observation_groups,
                   constant_observations=env_cfg.constant_observations, extra_actions=extra_actions,
                   mode=env_cfg.mode, max_units=env_cfg.max_units)

    @classmethod
    def of_module(cls, module, env: dict | None = None) -> "NetworkShape":
        """The shape of a built Five module. Without `env` (the env config it was trained with) the observation groups
        are found from the observation space's widths (constant observations change no width: none are assumed)."""
        from moba.env.observation import groups_of_space
        from moba.game.teams import TEAM_SIZE
        sp = module.observation_space
        mode = next(m for m, n in TEAM_SIZE.items() if n == sp["me"].shape[0])
        extra = int(module.action_space["primary"].n) - N_PRIMARY
        model = {k: v for k, v in asdict(module.cfg).items()}
        if env is None:
            try:
                groups = groups_of_space(sp)
            except ValueError as e:
                raise SurgeryError(f"the module's observation space: {e}") from None
            env = {"mode": mode, "max_units": sp["units"].shape[0], "observation_groups": list(groups)}
        return cls.of(model, env, extra)

    @property
    def cfg(self) -> FiveModelConfig:
        return FiveModelConfig.from_dict(self.model)

    @property
    def n_primary(self) -> int:
        return N_PRIMARY + self.extra_actions

    @property
    def n_action_ids(self) -> int:
        return N_ACTION_IDS + self.extra_actions

    def spaces(self):
        """(observation space, action space) of a hero for this shape."""
        from gymnasium import spaces

        from moba.env.actions import action_space
        from moba.env.observation import observation_space
        from moba.game.teams import TEAM_SIZE
        act = action_space(self.max_units)
        if self.extra_actions:
            act = spaces.Dict({**act.spaces, "primary": spaces.Discrete(self.n_primary)})
        return observation_space(TEAM_SIZE[self.mode], self.max_units, self.observation_groups, self.n_primary,
                                 self.n_action_ids), act

    def build_module(self, seed: int = 0):
        """A fresh FiveRLModule of this shape (torch's RNG seeded with `seed`)."""
        from ray.rllib.core.rl_module.rl_module import RLModuleSpec

        from policies.model.five_module import FiveRLModule
        torch.manual_seed(seed)
        obs_space, act_space = self.spaces()
        return RLModuleSpec(module_class=FiveRLModule, observation_space=obs_space, action_space=act_space,
                            model_config=dict(self.model)).build()

    def layouts(self) -> dict:
        """{tensor name: labels of its axes (a tuple per axis)}, for every tensor of the module's state."""
        c = self.cfg
        cols = table_columns(self.observation_groups)

        def units(key, n, part=""):
            return tuple((f"{WIDEN} {key}", part, j) for j in range(n))

        def fixed(part, n):
            return tuple(("fixed", part, j) for j in range(n))

        def obs(key):
            return tuple((ADD_OBS, key, name) for name in cols[key])

        e = lambda part: units("categorical_embed", c.categorical_embed, part)  # noqa: E731
        pool = int(c.replica_size * CROSS_HERO_POOL_FRACTION)
        lstm = tuple(x for g in LSTM_GATES for x in units("lstm_size", c.lstm_size, g))
        h = units("lstm_size", c.lstm_size)
        q = units("action_embed", c.action_embed)
        ids = fixed("id", N_ACTION_IDS) + tuple((ADD_ACTION, "id", i) for i in range(self.extra_actions))
        primary = fixed("primary", N_PRIMARY) + tuple((ADD_ACTION, "primary", i) for i in range(self.extra_actions))
        prev_sizes = (primary, fixed("delay", N_DELAYS), fixed("unit_row", self.max_units or 32),
                      fixed("offset", N_OFFSETS), fixed("offset", N_OFFSETS))
        out = {}
        for key in ("global", "units", "heroes", "private_lanes"):
            for stat in ("count", "mean", "m2"):
                out[f"norm.{key}.{stat}"] = (obs(key),)
        for stat in ("count", "mean", "m2"):
            out[f"norm.private_minimap.{stat}"] = (fixed("minimap", MINIMAP_SIZE),)
        # a team unit table (FiveModelConfig.team_unit_table): the unit MLP reads the team's columns, the target
        # head's keys and the hero's own pools the hero columns
        hero_cols = set(UNIT_HERO_COLUMNS) if c.team_unit_table else set()
        # the offset heads' rows: one pair, or one per group (FiveModelConfig.offset_groups), the first group's rows
        # those of the one pair (surgery copies them into the others)
        offsets = fixed("offset", N_OFFSETS) + (tuple((SPLIT_OFFSETS, g, j) for g in OFFSET_GROUPS[1:]
                                                      for j in range(N_OFFSETS)) if c.offset_groups else ())
        unit_team = tuple(x for j, x in enumerate(obs("units")) if j not in hero_cols)
        unit_hero = tuple(x for j, x in enumerate(obs("units")) if j in hero_cols)
        layers = {  # name: (output labels, input labels)
            "unit_mlp.0": (units("unit_hidden", c.unit_hidden), unit_team + e("unit_type")),
            "unit_mlp.2": (units("unit_embed", c.unit_embed), units("unit_hidden", c.unit_hidden)),
            "hero_mlp.0": (units("hero_hidden", c.hero_hidden), obs("heroes") + e("hero_id") + e("items")),
            "hero_mlp.2": (units("hero_embed", c.hero_embed), units("hero_hidden", c.hero_hidden)),
            "global_mlp.0": (units("global_embed", c.global_embed), obs("global")),
            "private_mlp.0": (units("private_hidden", c.private_hidden),
                              fixed("minimap", MINIMAP_SIZE) + obs("private_lanes")
                              + tuple(x for k in ACTION_KEYS for x in e(f"prev_{k}"))),
            "private_mlp.2": (units("private_embed", c.private_embed), units("private_hidden", c.private_hidden)),
            "replica_fc.0": (units("replica_size", c.replica_size),
                             units("global_embed", c.global_embed) + units("unit_embed", c.unit_embed, "all")
                             + units("unit_embed", c.unit_embed, "enemies")
                             + units("hero_embed", c.hero_embed, "allies")
                             + units("hero_embed", c.hero_embed, "enemies")
                             + units("private_embed", c.private_embed) + units("unit_embed", c.unit_embed, "own")
                             + ((units("unit_hero_pool", c.unit_hero_pool, "all")
                                 + units("unit_hero_pool", c.unit_hero_pool, "enemies")) if c.team_unit_table else ())),
            "action_query": (q, h), "unit_key": (q, units("unit_embed", c.unit_embed)), "unit_query": (q, h),
            "delay_head": (fixed("delay", N_DELAYS), h), "offset_x_head": (offsets, h),
            "offset_y_head": (offsets, h), "value_head": (fixed("value", 1), h),
            "win_head": (fixed("win", 1), h),
        }
        for name, (rows, inputs) in layers.items():
            out[f"{name}.weight"] = (rows, inputs)
            out[f"{name}.bias"] = (rows,)
        if c.team_unit_table:
            hero_pool = units("unit_hero_pool", c.unit_hero_pool)
            out["unit_key_hero.weight"] = (q, unit_hero)
            out["unit_pool_team.weight"] = (hero_pool, units("unit_embed", c.unit_embed))
            out["unit_pool_team.bias"] = (hero_pool,)
            out["unit_pool_hero.weight"] = (hero_pool, unit_hero)
        out["lstm.weight_ih_l0"] = (lstm, units("replica_size", c.replica_size) + units("replica_size", pool, "pool"))
        out["lstm.weight_hh_l0"] = (lstm, h)
        out["lstm.bias_ih_l0"] = out["lstm.bias_hh_l0"] = (lstm,)
        embeddings = {"unit_type_emb": (fixed("unit_type", N_UNIT_TYPES + 1), e("unit_type")),
                      "hero_id_emb": (fixed("hero", len(HEROES) + 1), e("hero_id")),
                      "item_emb": (fixed("item", len(ITEMS) + 1), e("items")),
                      "action_emb": (ids, q), "action_gate": (ids, q)}
        embeddings.update({f"prev_emb.{k}": (rows, e(f"prev_{key}"))
                           for k, (key, rows) in enumerate(zip(ACTION_KEYS, prev_sizes))})
        for name, axes in embeddings.items():
            out[f"{name}.weight"] = axes
        return out


# ---- the transplant of one tensor ------------------------------------------------------------------------------------
def _index(old_labels, new_labels, name: str, axis: int):
    """Where each old label sits in the new axis (a LongTensor), or a SurgeryError naming what would be lost."""
    where = {label: i for i, label in enumerate(new_labels)}
    lost = [label for label in old_labels if label not in where]
    if lost:
        raise SurgeryError(f"{name}: axis {axis} would lose {len(lost)} entries (first {lost[0]}): surgery only grows "
                           f"a network (Five app. B: removing parameters is not function preserving)")
    return torch.tensor([where[label] for label in old_labels], dtype=torch.long)


def _is_new(old_labels, new_labels) -> torch.Tensor:
    old = set(old_labels)
    return torch.tensor([label not in old for label in new_labels], dtype=torch.bool)


def transplant(name: str, old: torch.Tensor, old_axes: tuple, new_axes: tuple, fill: torch.Tensor) -> torch.Tensor:
    """`fill` (the new shape) with the old entries put at their labels' new places."""
    out = fill.clone()
    idx = [_index(o, n, name, a) for a, (o, n) in enumerate(zip(old_axes, new_axes))]
    if not idx:
        return old.clone()
    if len(idx) == 1:
        out[idx[0]] = old
    else:
        out[idx[0][:, None], idx[1][None, :]] = old
    return out


def _fill(name: str, old: torch.Tensor, old_axes: tuple, new_axes: tuple, gen: torch.Generator) -> torch.Tensor:
    """The values of a tensor's new entries (eq. 6, eq. 9): small random incoming weights of new units, zero outgoing
    weights, biases and statistics."""
    shape = tuple(len(a) for a in new_axes)
    zeros = torch.zeros(shape, dtype=old.dtype)
    if name.startswith(("offset_x_head.", "offset_y_head.")):
        # split offsets: a new group's row (SPLIT_OFFSETS, group, j) is a copy of the one pair's row j (its new
        # input columns of a widened LSTM stay 0 as in any head), so every group starts with the old logits
        out = zeros.clone()
        for i, label in enumerate(new_axes[0]):
            if label[0] == SPLIT_OFFSETS:
                row = old[label[2]]
                out[i] = row if len(new_axes) == 1 else transplant(name, row, old_axes[1:], new_axes[1:],
                                                                     zeros[i])
        return out
    if len(new_axes) == 1 or name.startswith("norm."):
        return zeros
    scale = NEW_LSTM_WEIGHT_SCALE if name.startswith("lstm.") else NEW_WEIGHT_SCALE
    std = float(old.std()) if old.numel() > 1 else 1.0
    noise = (torch.randn(shape, generator=gen, dtype=torch.float64) * scale * (std or 1.0)).to(old.dtype)
    new_rows, new_cols = _is_new(old_axes[0], new_axes[0]), _is_new(old_axes[1], new_axes[1])
    if name.endswith("_emb.weight") or name.startswith(("prev_emb", "action_gate")):
        # an embedding: rows are its ids (inputs), columns its dimensions (the units it feeds)
        random = new_cols[None, :] | new_rows[:, None]
        if name in ZERO_NEW_DIMS:
            random = random & ~new_cols[None, :]
    else:
        random = new_rows[:, None].expand(shape) if name not in ZERO_NEW_ROWS else torch.zeros(shape, dtype=torch.bool)
    return torch.where(random, noise, zeros)


# ---- a plan: what changes between two shapes -------------------------------------------------------------------------
@dataclass
class Change:
    name: str
    old_shape: tuple
    new_shape: tuple
    op: str
    exact: bool = True


def _ops_of(old_axes, new_axes) -> list[str]:
    ops = set()
    for o, n in zip(old_axes, new_axes):
        old = set(o)
        for label in n:
            if label not in old:
                ops.add(label[0] if label[0] != ADD_OBS else f"{ADD_OBS} ({label[1]})")
    return sorted(ops)


def check_growth(old: NetworkShape, new: NetworkShape) -> None:
    """Raises a SurgeryError naming the field of every change surgery cannot make: a shrink, a removed observation
    group, a constant observation taken back, another game."""
    oc, nc = asdict(old.cfg), asdict(new.cfg)
    for key in WIDTH_KEYS:
        if nc[key] < oc[key]:
            raise SurgeryError(f"model.{key}: {oc[key]} -> {nc[key]} shrinks a layer; surgery only widens (allowed: "
                               f">= {oc[key]})")
    for key in BOOL_FIELDS:  # a switch changes what the weights compute, so no surgery can keep the function
        if key in SWITCHES_ON and oc[key] <= nc[key]:
            continue
        if nc[key] != oc[key]:
            raise SurgeryError(f"model.{key}: {oc[key]} -> {nc[key]} changes what the network computes; surgery keeps "
                               f"it (allowed: {oc[key]})")
    if (old.mode, old.max_units) != (new.mode, new.max_units):
        raise SurgeryError(f"env.mode / env.max_units: {old.mode}/{old.max_units} -> {new.mode}/{new.max_units} "
                           f"changes the game; surgery keeps mode and max_units (allowed: {old.mode}/{old.max_units})")
    dropped = sorted(set(old.observation_groups) - set(new.observation_groups))
    if dropped:
        raise SurgeryError(f"env.observation_groups: {dropped} would be removed; surgery cannot remove inputs (feed "
                           f"their columns as constants instead: env.constant_observations); allowed: lists that keep "
                           f"{list(old.observation_groups)}")
    back = sorted(set(old.constant_observations) - set(new.constant_observations))
    if back:
        raise SurgeryError(f"env.constant_observations: {back} would be fed again; a deprecated observation stays "
                           f"constant (allowed: lists that keep {list(old.constant_observations)})")
    if new.extra_actions < old.extra_actions:
        raise SurgeryError(f"extra_actions: {old.extra_actions} -> {new.extra_actions} removes actions (allowed: >= "
                           f"{old.extra_actions})")


def plan(old: NetworkShape, new: NetworkShape) -> list[Change]:
    """One Change per tensor that changes, plus the constant-observation folds; a SurgeryError when the new shape
    cannot be reached or when nothing changes."""
    check_growth(old, new)
    old_l, new_l = old.layouts(), new.layouts()
    changes = []
    for name, axes in new_l.items():
        ops = _ops_of(old_l[name], axes)
        if ops:
            changes.append(Change(name, tuple(map(len, old_l[name])), tuple(map(len, axes)), ", ".join(ops)))
    columns = column_names(new.observation_groups)
    for col in new.constant_observations:
        if col not in old.constant_observations:
            for weight, _, _ in _column_readers(*columns[col], new.cfg.team_unit_table):
                changes.append(Change(weight, tuple(map(len, new_l[weight])), tuple(map(len, new_l[weight])),
                                      f"{REMOVE_OBS} ({col})"))
    if not changes:
        changed = sorted(k for k in set(old.model) | set(new.model) if old.model.get(k) != new.model.get(k))
        raise SurgeryError(f"the new config changes no weight (model keys changed: {changed or 'none'}): nothing for "
                           f"surgery to do; allowed changes: wider model.{{{','.join(WIDTH_KEYS)}}}, more "
                           f"env.observation_groups, more env.constant_observations, added actions, "
                           f"model.{{{','.join(SWITCHES_ON)}}} false -> true")
    return changes


# ---- applying a plan -------------------------------------------------------------------------------------------------
def _tensor(v) -> torch.Tensor:
    return v.detach().clone() if isinstance(v, torch.Tensor) else torch.as_tensor(np.array(v))


def _like(original, t: torch.Tensor):
    """t in the container type of the original value (numpy arrays stay numpy: RLlib's saved states)."""
    return t if isinstance(original, torch.Tensor) else t.numpy()


def apply(state: dict, old: NetworkShape, new: NetworkShape, seed: int = 0) -> tuple[dict, list[Change]]:
    """The module state of the new shape, and the changes made. `state` is a module state (tensors or arrays, as
    RLModule.get_state gives and module_state.pkl holds); it is left as it was."""
    changes = plan(old, new)
    old_l, new_l = old.layouts(), new.layouts()
    missing = sorted(set(old_l) - set(state))
    if missing:
        raise SurgeryError(f"the module state has no {missing[:3]}: not a Five module of this version")
    gen = torch.Generator().manual_seed(seed)
    out = dict(state)
    for name in new_l:
        t = _tensor(state[name])
        if t.dim() == 0 and name.endswith(".count"):  # one count for all features (older states): one per feature
            t = t.expand(len(old_l[name][0])).clone()
        if tuple(t.shape) != tuple(map(len, old_l[name])):
            raise SurgeryError(f"{name}: shape {tuple(t.shape)} is not that of the given old config "
                               f"{tuple(map(len, old_l[name]))}: give the config the checkpoint was trained with")
        if old_l[name] != new_l[name]:
            t = transplant(name, t, old_l[name], new_l[name], _fill(name, t, old_l[name], new_l[name], gen))
            if name == "item_emb.weight":
                t[0] = 0.0  # the padding id (an empty slot) embeds to 0
        out[name] = _like(state[name], t)
    for col in new.constant_observations:
        if col not in old.constant_observations:
            _fold_constant(out, *column_names(new.observation_groups)[col])
    return out, changes


def _column_readers(key: str, col: int, team_unit_table: bool) -> list[tuple[str, str, int]]:
    """[(weight, bias, input index)]: the layers that read column `col` of observation `key`, and where. With a team
    unit table a hero column of the units is read by the target head's keys (unit_key_hero, whose constant part is
    unit_key's bias) and by the hero's own pools (unit_pool_hero, whose constant part is unit_pool_team's bias), and
    the unit MLP reads the other columns."""
    if key == "units" and team_unit_table:
        if col in UNIT_HERO_COLUMNS:
            j = UNIT_HERO_COLUMNS.index(col)
            return [("unit_key_hero.weight", "unit_key.bias", j), ("unit_pool_hero.weight", "unit_pool_team.bias", j)]
        return [("unit_mlp.0.weight", "unit_mlp.0.bias", col - sum(c < col for c in UNIT_HERO_COLUMNS))]
    layer = OBS_CONSUMERS[key]
    return [(f"{layer}.weight", f"{layer}.bias", col + (MINIMAP_SIZE if key == "private_lanes" else 0))]


def _fold_constant(state: dict, key: str, col: int):
    """The column `col` of observation `key` becomes the constant 0: its normalized value's contribution moves into the
    bias of each layer that reads it, its weights become 0, and its statistics mean 0 and m2 0, so that its normalized
    value stays exactly 0 (and its weights get no gradient) however the statistics are updated."""
    readers = _column_readers(key, col, "unit_key_hero.weight" in state)
    names = [name for weight, bias, _ in readers for name in (weight, bias)]
    t = {k: _tensor(state[k]) for k in names + [f"norm.{key}.count", f"norm.{key}.mean", f"norm.{key}.m2"]}
    count, mean, m2 = (t[f"norm.{key}.{s}"][col].double() for s in ("count", "mean", "m2"))
    std = torch.sqrt(m2 / (count - 1).clamp_min(1.0)).clamp_min(NORM_EPS) if count >= 2 else torch.ones((),
                                                                                                      dtype=torch.float64)
    for weight, bias, index in readers:
        w, b = t[weight], t[bias]
        normalized = ((0.0 - mean.to(w.dtype)) * (1.0 / std).to(w.dtype)).clamp(-NORM_CLIP, NORM_CLIP)
        b += w[:, index] * normalized
        w[:, index] = 0.0
    t[f"norm.{key}.mean"][col] = 0.0
    t[f"norm.{key}.m2"][col] = 0.0
    for k, v in t.items():
        state[k] = _like(state[k], v)


# ---- the ops of the issue, one by one (each a plan between two shapes) -----------------------------------------------
def add_observation_features(state: dict, old: NetworkShape, env: dict) -> tuple[dict, list[Change]]:
    """New observation groups (env config ``observation_groups``): zero weights, fresh statistics."""
    return apply(state, old, _replace(old, env=env))


def remove_observation_feature(state: dict, old: NetworkShape, env: dict) -> tuple[dict, list[Change]]:
    """Observation columns the env now feeds as 0 (env config ``constant_observations``)."""
    return apply(state, old, _replace(old, env=env))


def widen(state: dict, old: NetworkShape, model: dict) -> tuple[dict, list[Change]]:
    """Wider fully connected or encoder layers (model config widths, the LSTM's among them)."""
    unknown = sorted(set(model) - set(WIDTH_KEYS) - {"max_seq_len"})
    if unknown:
        raise SurgeryError(f"model: unknown layer(s) {unknown}; allowed: {list(WIDTH_KEYS)}")
    return apply(state, old, _replace(old, model={**old.model, **model}))


def widen_lstm(state: dict, old: NetworkShape, lstm_size: int) -> tuple[dict, list[Change]]:
    return widen(state, old, {"lstm_size": lstm_size})


def add_primary_action(state: dict, old: NetworkShape, count: int = 1) -> tuple[dict, list[Change]]:
    """`count` primary actions after the existing ones, each with a new action embedding id."""
    return apply(state, old, _replace(old, extra_actions=old.extra_actions + count))


def split_offsets(state: dict, old: NetworkShape) -> tuple[dict, list[Change]]:
    """One pair of offset heads per group of primary actions (model.offset_groups), each a copy of the one pair."""
    return apply(state, old, _replace(old, model={**old.model, "offset_groups": True}))


def _replace(shape: NetworkShape, model: dict | None = None, env: dict | None = None,
             extra_actions: int | None = None) -> NetworkShape:
    env_now = {"mode": shape.mode, "max_units": shape.max_units, "observation_groups": list(shape.observation_groups),
               "constant_observations": list(shape.constant_observations)}
    return NetworkShape.of(shape.model if model is None else model, {**env_now, **(env or {})},
                           shape.extra_actions if extra_actions is None else extra_actions)


# ---- optimizer state -------------------------------------------------------------------------------------------------
def parameter_names(state: dict) -> list[str]:
    """The parameter names of a module state (a state_dict: its order is the modules' registration order) in
    ``module.parameters()`` order, which numbers the optimizer's params 0..n-1; the buffers (norm.*) are not
    parameters."""
    return [n for n in state if not n.startswith("norm.")]


def optimizer_state(opt_state: dict, names: list[str], old: NetworkShape, new: NetworkShape) -> dict:
    """A torch Adam state_dict (params numbered in `names` order) for the new shape: the moments of every old entry
    kept, those of new entries 0 (app. B: the learning rate is held while they settle); steps unchanged."""
    old_l, new_l = old.layouts(), new.layouts()
    out = {"state": {}, "param_groups": opt_state["param_groups"]}
    for pid, st in opt_state["state"].items():
        name = names[int(pid)]
        new_st = dict(st)
        for k in ("exp_avg", "exp_avg_sq"):
            if k in st:
                t = _tensor(st[k])
                shape = tuple(map(len, new_l[name]))
                new_st[k] = _like(st[k], transplant(name, t, old_l[name], new_l[name], torch.zeros(shape,
                                                                                                 dtype=t.dtype)))
        out["state"][pid] = new_st
    return out
