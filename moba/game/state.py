"""The game state as structure-of-arrays, and its save/restore to bytes.

Every table is a plain numpy array with named columns (module-level ints, which numba treats as compile-time
constants), so the compiled kernels in ``kernels.py`` index them without Python objects:

- ``uf`` / ``ui``: float / int columns per unit (heroes, creeps, buildings, wards); MAX_UNITS rows.
- ``hf`` / ``hi``: float / int columns per hero slot (radiant 0..n-1, then dire); the hero's unit row is ``H_UNIT``.
- ``gf`` / ``gi``: game scalars.
- ``pend``: the orders decoded from the agents' actions, applied on their delay tick inside the frameskip.
- ``vis``: per team, whether each unit is visible to it (fog of war).
- ``ev``: the events (deaths) of the last frameskip.
"""
from __future__ import annotations

import io

import numpy as np

from moba.game.constants import MAX_UNITS

# ---- unit float columns ----------------------------------------------------------------------------------------------
(F_X, F_Y, F_HP, F_MAXHP, F_MANA, F_MAXMANA, F_HPREG, F_MANAREG, F_ARMOR, F_MRES, F_DMG, F_RANGE, F_BAT, F_ATK_T,
 F_SPEED, F_VIS_DAY, F_VIS_NIGHT, F_DEST_X, F_DEST_Y, F_OFF_X, F_OFF_Y, F_STUN_T, F_SLOW_T, F_SLOW, F_SHIELD,
 F_SHIELD_T, F_DOT_T, F_DOT_DPS, F_REGEN_T, F_REGEN, F_MREGEN_T, F_MREGEN, F_DBUFF_T, F_DBUFF, F_AURA_ARMOR,
 F_GOLD, F_XP, F_AGGRO_T, F_LIFE_T, F_LAST_ATK, F_TP_T, F_TP_X, F_TP_Y, F_SHRINE_CD, F_SHRINE_T,
 NUF) = range(46)

# ---- unit int columns ------------------------------------------------------------------------------------------------
(I_USED, I_ALIVE, I_TYPE, I_TEAM, I_LANE, I_WP, I_TARGET, I_TIER, I_HERO, I_LAST_DMG, I_ORDER, I_CAST_AB,
 I_CAST_LV, I_CAST_SLOT, I_INVULN, I_UID, I_PROT_MODE, I_PROT0, I_PROT1, I_PROT2, I_CREEP_KIND, I_DOT_SRC,
 I_ATTACKING, I_CAST_ITEM, NUI) = range(25)

# unit orders (I_ORDER)
ORDER_IDLE, ORDER_MOVE, ORDER_ATTACK, ORDER_CAST = 0, 1, 2, 3
# building protection modes (I_PROT_MODE): invulnerable while ...
PROT_ANY_ALIVE, PROT_ALL_ALIVE = 1, 2  # ... any of / all of the units I_PROT0..2 are alive (0: never)
# creep kinds (I_CREEP_KIND)
CREEP_NORMAL, CREEP_SUPER, CREEP_MEGA = 0, 1, 2

# ---- hero float columns ----------------------------------------------------------------------------------------------
N_ITEM_ACTIONS = 7
(G_XP, G_GOLD, G_EARNED, G_SPENT, G_RESPAWN, G_BB_CD, G_CD0, G_CD1, G_CD2, G_CD3, G_ICD0, G_ICD1, G_ICD2, G_ICD3,
 G_ICD4, G_ICD5, G_ICD6, G_LS_X, G_LS_Y, G_LS_HP, G_LS_T, G_LANE_UNTIL, G_DMGT0, G_DMGT1, G_DMGT2, G_DMGT3,
 G_DMGT4, G_DMGT5, G_DMGT6, G_DMGT7, G_DMGT8, G_DMGT9, P_HP, P_ARMOR, P_SPEED, P_HPREG, P_MANAREG, P_MRES, P_DMG,
 G_CONSUMABLES, NHF) = range(41)
# G_CONSUMABLES: the part of G_SPENT that bought consumables (the reward's "consumables" signal)
# G_LANE_UNTIL is not used (the env keeps the lane assignments); the column stays so that saved games keep their layout

# ---- hero int columns ------------------------------------------------------------------------------------------------
INVENTORY = 6
(H_UNIT, H_DEF, H_LEVEL, H_KILLS, H_DEATHS, H_ASSISTS, H_LH, H_DN, H_AB0, H_AB1, H_AB2, H_AB3, H_IT0, H_IT1, H_IT2,
 H_IT3, H_IT4, H_IT5, H_CH0, H_CH1, H_CH2, H_CH3, H_CH4, H_CH5, H_BUILD, H_LANES, H_TOWERS, H_BUYBACKS,
 H_CONSUMED, H_TP_CAST, H_TP_DONE, NHI) = range(32)
# H_LANES is not used (the env keeps the lane assignments); the column stays so that saved games keep their layout
# H_CONSUMED: consumable charges used (salves, clarities, scrolls); H_TP_CAST / H_TP_DONE: teleport channels started /
# finished (a scroll is spent at the cast, and a move, an attack, a stun or a death cancels its channel)

# ---- game scalars ----------------------------------------------------------------------------------------------------
(GF_TIME, GF_NEXT_WAVE, NGF) = range(3)
(GI_TICK, GI_EV_N, GI_WINNER, GI_NEXT_UID, GI_CRYSTAL_ATTACKS, GI_N_HEROES, GI_FIRST_FREE, NGI) = range(8)

# ---- pending orders (one per hero) -----------------------------------------------------------------------------------
(P_ACTIVE, P_TICK, P_KIND, P_ARG, P_UNIT, P_X, P_Y, NP) = range(8)  # stored as float64
# order kinds
OK_MOVE, OK_ATTACK, OK_ABILITY, OK_ITEM, OK_BUYBACK, OK_SHRINE = range(1, 7)  # 0: no order

# ---- events ----------------------------------------------------------------------------------------------------------
MAX_EVENTS = 1024
(E_KIND, E_VICTIM, E_KILLER, E_TYPE, E_TEAM, E_FLAG, NE) = range(7)
EV_DEATH = 0  # the only kind of event the engine records

ARRAY_NAMES = ("uf", "ui", "hf", "hi", "gf", "gi", "pend", "vis", "ev")


class GameState:
    """All mutable state of one game, as numpy arrays. Copying or saving it captures the game completely."""

    def __init__(self, n_heroes: int):
        self.uf = np.zeros((MAX_UNITS, NUF), np.float64)
        self.ui = np.zeros((MAX_UNITS, NUI), np.int64)
        self.ui[:, I_TARGET] = -1
        self.ui[:, I_HERO] = -1
        self.ui[:, I_LAST_DMG] = -1
        self.ui[:, I_PROT0:I_PROT2 + 1] = -1
        self.hf = np.zeros((n_heroes, NHF), np.float64)
        self.hi = np.zeros((n_heroes, NHI), np.int64)
        self.hi[:, H_IT0:H_IT5 + 1] = -1
        self.hf[:, G_LS_T] = -1.0
        self.hf[:, G_DMGT0:G_DMGT9 + 1] = -1e9
        self.gf = np.zeros(NGF, np.float64)
        self.gi = np.zeros(NGI, np.int64)
        self.gi[GI_WINNER] = -1
        self.gi[GI_N_HEROES] = n_heroes
        self.pend = np.zeros((n_heroes, NP), np.float64)
        self.vis = np.zeros((2, MAX_UNITS), np.uint8)
        self.ev = np.zeros((MAX_EVENTS, NE), np.int64)

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in ARRAY_NAMES}

    def to_bytes(self) -> bytes:
        buf = io.BytesIO()
        np.savez(buf, **self.arrays())
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> "GameState":
        with np.load(io.BytesIO(data)) as z:
            st = cls(int(z["gi"][GI_N_HEROES]))
            for name in ARRAY_NAMES:
                getattr(st, name)[...] = z[name]
        return st

    def copy(self) -> "GameState":
        st = GameState(self.hf.shape[0])
        for name in ARRAY_NAMES:
            getattr(st, name)[...] = getattr(self, name)
        return st

    def equals(self, other: "GameState") -> bool:
        """Bit-for-bit equality of every array (NaN-safe)."""
        return all(np.array_equal(a.view(np.uint8), b.view(np.uint8))
                   for a, b in zip(self.arrays().values(), other.arrays().values()))
