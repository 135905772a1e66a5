"""Hyperparameter schedules (Five app. C, figure 7): piecewise-linear functions of training iterations or env steps
for team spirit, learning rate, entropy coefficient and the GAE horizon (gamma = 1 - T / H, T = frameskip / 30 s,
eq. 3), the weight of the kickstart loss (policies/learning/kickstart.py: annealed so that PPO can leave the teacher
behind), the share of games in which a new primary action is legal (``new_action_share``, the env config's
``new_actions``: annealed from 0 to 1 after model surgery, Five app. B), and the ancients' health in training games
(``ancient_hp_scale``: a curriculum on the goal). ``Schedule`` parses and evaluates one,
``schedule_values`` gives every value at an iteration (with a learning-rate hold after model surgery, app. B "Smooth
Training Restart"), ``set_on_envs`` sets a value on an env runner's envs. callbacks/schedules.py applies them."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from moba.game.constants import TICKS_PER_SECOND


SCHEDULED = ("team_spirit", "lr", "entropy_coeff", "gae_horizon_s", "kickstart_coeff", "new_action_share",
             "ancient_hp_scale")
ENV_SCHEDULED = {"team_spirit": "set_team_spirit", "new_action_share": "set_new_action_share",  # value -> env method
                 "ancient_hp_scale": "set_ancient_hp_scale"}
# the env-scheduled values that change the games themselves (MobaEnv's setters), which a game server's games
# (RemoteMobaEnv) do not have: only their initial value reaches them, through the env config
ENV_GAME_SCHEDULED = ("new_action_share", "ancient_hp_scale")
UNITS = ("iterations", "env_steps")


@dataclass(frozen=True)
class Schedule:
    points: tuple  # ((x0, y0), (x1, y1), ...), x increasing, x0 = 0
    unit: str = "iterations"

    @classmethod
    def parse(cls, name: str, spec) -> "Schedule":
        """A number (constant), or {"unit": "iterations"|"env_steps", "points": [[x, y], ...]}."""
        if isinstance(spec, (int, float)) and not isinstance(spec, bool):
            return cls(((0, float(spec)),))
        if not isinstance(spec, dict) or set(spec) - {"unit", "points"} or "points" not in spec:
            raise ValueError(f"schedule {name!r}: a number or a mapping with keys 'points' and optionally 'unit' "
                             f"({list(UNITS)}), got {spec!r}")
        unit = spec.get("unit", "iterations")
        if unit not in UNITS:
            raise ValueError(f"schedule {name!r}: unit must be one of {list(UNITS)}, got {unit!r}")
        pts = spec["points"]
        try:
            pts = tuple((float(x), float(y)) for x, y in pts)
        except (TypeError, ValueError):
            raise ValueError(f"schedule {name!r}: points must be a list of [x, y] number pairs, got {pts!r}") \
                from None
        if not pts or pts[0][0] != 0 or any(b[0] <= a[0] for a, b in zip(pts, pts[1:])):
            raise ValueError(f"schedule {name!r}: points must start at x = 0 and increase in x, got {pts!r}")
        return cls(pts, unit)

    def value(self, iteration: int, env_steps: int) -> float:
        x = iteration if self.unit == "iterations" else env_steps
        xs, ys = zip(*self.points)
        return float(np.interp(x, xs, ys))

    def to_dict(self):
        return {"unit": self.unit, "points": [list(p) for p in self.points]}


def gamma_from_horizon(horizon_s: float, frameskip: int) -> float:
    """Eq. 3: H = T / (1 - gamma), T the game time of one agent step."""
    return 1.0 - (frameskip / TICKS_PER_SECOND) / horizon_s


def schedule_values(schedules: dict, iteration: int, env_steps: int, frameskip: int, lr_hold=None) -> dict:
    """The scheduled values of an iteration; `lr_hold` (first, last, lr): the learning rate is lr on iterations first
    to last (the smooth restart after model surgery)."""
    vals = {name: Schedule(tuple(map(tuple, s["points"])), s["unit"]).value(iteration, env_steps)
            for name, s in schedules.items()}
    if "gae_horizon_s" in vals:
        vals["gamma"] = gamma_from_horizon(vals["gae_horizon_s"], frameskip)
    if lr_hold is not None and lr_hold[0] <= iteration + 1 <= lr_hold[1]:  # values set after iteration are for the next
        vals["lr"] = float(lr_hold[2])
        vals["lr_held"] = 1.0
    return vals


def set_on_envs(env_runner, method: str, value) -> int:
    """Calls `method(value)` on every env of a runner that has it (through wrappers: their ``env``)."""
    env = getattr(env_runner, "env", None)
    if env is None:  # the local runner has no env when there are remote runners
        return 0
    n = 0
    for e in getattr(env, "envs", [env]):
        target = getattr(e, "unwrapped", e)
        while target is not None and not hasattr(target, method):
            target = getattr(target, "env", None)
        if target is not None:
            getattr(target, method)(value)
            n += 1
    return n

