"""The draft: the turn order, and exact minimax over the remaining picks on a table of lineup scores (Five app. D.2:
"our drafting program would pick the one that maximizes worst-case scenario of opponent hero selection (minimax
algorithm)", fig. 12; "we apply a dynamic programming algorithm to draft the best hero available on each turn").

A draft state is who holds each hero of the pool: nobody, Radiant or Dire. Its value is Radiant's win probability
(the table's score of the final lineup) when both sides pick best from there on: Radiant maximizes it, Dire
minimizes it. ``Draft.solve`` computes the value of every state of the turn order at once, by backward induction over
the turns (the dynamic programming of app. D.2: minimax with every subtree shared, exact), on a dense array indexed
by the state's base-3 code (``3 ** len(pool)`` entries; a pool of 12 heroes has 531,441). Alpha-beta pruning would
skip subtrees, but the page and the CLI show the value of *every* remaining hero at every turn, which needs every
subtree; the whole table is solved in well under a second for the pools the lineup tables allow (lineups.MAX_POOL).

The table may be any size and order (the tests use a 2v2 draft of four heroes): ``order`` lists, per pick, whether
the side that picks first (0) or second (1) picks; each team picks ``order.count(k)`` heroes; ``lineups`` has
Radiant's heroes then Dire's, as positions in the pool. The value of a state is a float64 of Radiant's view; a side's
view is the value for Radiant or one minus it for Dire (``side_value``).
"""
from __future__ import annotations

import numpy as np

from moba.game.teams import TEAM_NAMES

RADIANT, DIRE = TEAM_NAMES
# Five fig. 12 (OpenAI Five Finals game 1): the humans' first pick, then "the drafter then makes two choices", then
# "the humans' second and third choices", ..., "the human team's last two choices": the 1-2-2-2-2-1 order of Dota 2's
# ranked all-pick of the time. 0: the side that picks first, 1: the other
PICK_ORDER = (0, 1, 1, 0, 0, 1, 1, 0, 0, 1)
PICK_ORDER_SOURCE = "Five fig. 12: 1-2-2-2-2-1"
MAX_SOLVED_POOL = 14  # 3 ** 14 states: 38 MB of float64 values


def check_side(side, flag: str = "side") -> str:
    if side not in TEAM_NAMES:
        raise ValueError(f"{flag} must be one of {list(TEAM_NAMES)}, got {side!r}")
    return side


def turn_sides(first: str, order=PICK_ORDER) -> tuple[str, ...]:
    """The side picking at each turn when `first` picks first."""
    second = TEAM_NAMES[1 - TEAM_NAMES.index(check_side(first, "first"))]
    return tuple(first if k == 0 else second for k in order)


def side_value(value: float, side: str) -> float:
    """A value of Radiant's view (a win probability) as `side` sees it."""
    return float(value) if check_side(side) == RADIANT else 1.0 - float(value)


class Draft:
    """A table of lineup scores over a pool, solved for one turn order and first side.

    ``pool``: hero names; ``lineups``: (n, 2 * team) positions in the pool, Radiant's then Dire's (each team's order
    does not matter); ``scores``: (n,) Radiant's win probability; ``first``: the side picking first; ``order``: the
    turn order (PICK_ORDER). Every lineup the draft can reach must be in the table (a ValueError otherwise)."""

    def __init__(self, pool, lineups, scores, first: str = RADIANT, order=PICK_ORDER):
        self.pool = tuple(pool)
        self.order = tuple(int(k) for k in order)
        if set(self.order) - {0, 1} or self.order.count(0) != self.order.count(1):
            raise ValueError(f"order must list 0 (first side) and 1 (second side) equally often, got {order!r}")
        self.team = self.order.count(0)
        self.first = check_side(first, "first")
        self.sides = turn_sides(first, self.order)
        if len(self.pool) < 2 * self.team:
            raise ValueError(f"pool: a draft of {2 * self.team} picks needs as many heroes, got {len(self.pool)}")
        if len(self.pool) > MAX_SOLVED_POOL:
            raise ValueError(f"pool: at most {MAX_SOLVED_POOL} heroes can be solved, got {len(self.pool)}")
        if len(set(self.pool)) != len(self.pool):
            raise ValueError(f"pool lists a hero twice: {list(self.pool)}")
        self.lineups = np.asarray(lineups, np.int64).reshape(-1, 2 * self.team)
        self.scores = np.asarray(scores, np.float64).reshape(-1)
        if len(self.scores) != len(self.lineups):
            raise ValueError(f"{len(self.lineups)} lineups but {len(self.scores)} scores")
        self.powers = 3 ** np.arange(len(self.pool), dtype=np.int64)
        self.values = self._solve()

    # ---- states ------------------------------------------------------------------------------------------------------
    def code(self, radiant, dire) -> int:
        """The base-3 code of a state: hero i of the pool counts 3**i for Radiant and 2 * 3**i for Dire."""
        return int(sum(self.powers[i] for i in radiant) + 2 * sum(self.powers[i] for i in dire))

    def _solve(self) -> np.ndarray:
        n = len(self.pool)
        values = np.full(3 ** n, np.nan)
        codes = np.arange(3 ** n, dtype=np.int64)
        n_radiant = np.zeros(len(codes), np.int8)
        n_dire = np.zeros(len(codes), np.int8)
        for p in self.powers:
            digit = (codes // p) % 3
            n_radiant += digit == 1
            n_dire += digit == 2
        team = self.team
        leaves = (self.lineups[:, :team, None] == np.arange(n)).any(1), \
                 (self.lineups[:, team:, None] == np.arange(n)).any(1)
        leaf_codes = leaves[0].astype(np.int64) @ self.powers + 2 * (leaves[1].astype(np.int64) @ self.powers)
        values[leaf_codes] = self.scores
        final = codes[(n_radiant == team) & (n_dire == team)]
        if np.isnan(values[final]).any():
            missing = final[np.isnan(values[final])][0]
            raise ValueError(f"the table has no score for the lineup {self.describe(int(missing))}")
        counts = [0, 0]  # radiant, dire picks made before each turn
        before = []
        for side in self.sides:
            before.append(tuple(counts))
            counts[TEAM_NAMES.index(side)] += 1
        for turn in reversed(range(len(self.sides))):
            r, d = before[turn]
            states = codes[(n_radiant == r) & (n_dire == d)]
            mark = 1 if self.sides[turn] == RADIANT else 2
            best = np.full(len(states), -np.inf if mark == 1 else np.inf)
            for i, p in enumerate(self.powers):
                free = (states // p) % 3 == 0
                child = np.where(free, values[np.where(free, states + mark * p, 0)], np.nan)
                with np.errstate(invalid="ignore"):
                    better = free & ((child > best) if mark == 1 else (child < best))
                best = np.where(better, child, best)
            values[states] = best
        return values

    def describe(self, code: int) -> str:
        digits = [(code // int(p)) % 3 for p in self.powers]
        return (f"radiant {[h for h, d in zip(self.pool, digits) if d == 1]}, "
                f"dire {[h for h, d in zip(self.pool, digits) if d == 2]}")

    # ---- a draft in progress -----------------------------------------------------------------------------------------
    def check_picks(self, picks, flag: str = "picks") -> list[tuple[str, str]]:
        """check_picks on this draft's pool and turns."""
        return check_picks(picks, self.pool, self.sides, flag)

    def state(self, picks, flag: str = "picks") -> dict:
        """Where a draft stands after `picks` (check_picks) and what minimax says:

        - ``turn`` (0-based; == number of turns when complete), ``on_turn`` (the side to pick, None when complete),
          ``radiant`` and ``dire`` (their heroes), ``complete``;
        - ``value``: Radiant's win probability with best play from here (the final lineup's score when complete);
        - ``options``: for each hero still free, Radiant's win probability if the side on turn picks it and both
          sides play best after (pool order), empty when complete;
        - ``recommended``: the hero that is best for the side on turn (the first in pool order among equals), None
          when complete."""
        done = self.check_picks(picks, flag)
        pos = {h: i for i, h in enumerate(self.pool)}
        radiant = [h for s, h in done if s == RADIANT]
        dire = [h for s, h in done if s == DIRE]
        code = self.code([pos[h] for h in radiant], [pos[h] for h in dire])
        turn = len(done)
        out = {"turn": turn, "turns": len(self.sides), "on_turn": None, "radiant": radiant, "dire": dire,
               "complete": turn == len(self.sides), "value": float(self.values[code]), "options": {},
               "recommended": None}
        if out["complete"]:
            return out
        side = self.sides[turn]
        mark = 1 if side == RADIANT else 2
        taken = set(radiant) | set(dire)
        options = {h: float(self.values[code + mark * int(self.powers[i])]) for i, h in enumerate(self.pool)
                   if h not in taken}
        best = (max if side == RADIANT else min)(options.values())
        out.update(on_turn=side, options=options, recommended=next(h for h, v in options.items() if v == best))
        return out


def check_picks(picks, pool, sides, flag: str = "picks") -> list[tuple[str, str]]:
    """The picks so far, in turn order, as (side, hero); `sides`: the side of each turn (turn_sides). A pick is a
    hero name (the side on turn picks it) or "side:hero" (checked against the turn). A ValueError names `flag` for a
    hero not in the pool, a hero picked twice, a pick out of turn, or more picks than turns."""
    out = []
    seen = set()
    for k, pick in enumerate(picks):
        if k >= len(sides):
            raise ValueError(f"{flag}: {len(picks)} picks, but a draft has {len(sides)} turns")
        side, _, hero = str(pick).rpartition(":")
        if side and side not in TEAM_NAMES:
            raise ValueError(f"{flag}: pick {k + 1} {pick!r}: side must be one of {list(TEAM_NAMES)}")
        if hero not in pool:
            raise ValueError(f"{flag}: pick {k + 1} {hero!r} is not in the pool; allowed: {list(pool)}")
        if hero in seen:
            raise ValueError(f"{flag}: pick {k + 1} {hero!r} was picked already")
        if side and side != sides[k]:
            raise ValueError(f"{flag}: pick {k + 1} {pick!r} is out of turn: pick {k + 1} is {sides[k]}'s "
                             f"(order: {', '.join(sides)})")
        seen.add(hero)
        out.append((sides[k], hero))
    return out


def draft_of_table(table, first: str = RADIANT, order=PICK_ORDER) -> Draft:
    """The Draft of a lineups.LineupTable (hero indices turned into pool positions)."""
    from moba.game.heroes import HERO_INDEX
    index_to_pool = {HERO_INDEX[h]: k for k, h in enumerate(table.pool)}
    lineups = np.vectorize(index_to_pool.__getitem__, otypes=[np.int64])(table.lineups)
    return Draft(table.pool, lineups, table.scores, first, order)


def side_view(state: dict, side: str) -> dict:
    """A Draft.state as `side` sees it: ``value`` and ``options`` turned into `side`'s win probability, ``side``
    added, Radiant's value kept as ``radiant_value``."""
    check_side(side)
    return {**state, "side": side, "radiant_value": state["value"], "value": side_value(state["value"], side),
            "options": {h: side_value(v, side) for h, v in state["options"].items()}}
