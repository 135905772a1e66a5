"""Engine constants: time, map, teams, unit types, and the game-rule numbers (creeps, buildings, gold, experience).

Units of measure: distances in map units (the map is MAP_SIZE wide), time in game seconds, 30 ticks per second.
Rule numbers follow Dota 2 where the paper relies on them (Five sec. 2, app. L) and are scaled to a map about
half Dota's width so that games finish in 15-30 game minutes.
"""
import numpy as np

# ---- time (Five app. L) -----------------------------------------------------------------------------------------
TICKS_PER_SECOND = 30
DT = 1.0 / TICKS_PER_SECOND
DEFAULT_FRAMESKIP = 4  # agents act every 4th tick: 7.5 decisions per game second
MAX_FRAMESKIP = TICKS_PER_SECOND  # at least one decision per game second
N_DELAYS = 4  # the action's delay parameter picks the tick inside the frameskip
DAY_NIGHT_PERIOD_S = 300.0  # 5 minutes of day, then 5 of night
WAVE_INTERVAL_S = 30.0  # a creep wave per lane every 30 s

# ---- map -------------------------------------------------------------------------------------------------------------
MAP_SIZE = 8000.0
GRID_CELL = 125.0  # terrain grid resolution
GRID_N = int(MAP_SIZE / GRID_CELL)  # 64 x 64 cells

# ---- teams -----------------------------------------------------------------------------------------------------------
RADIANT, DIRE = 0, 1
TEAM_NAMES = ("radiant", "dire")

# ---- lanes -----------------------------------------------------------------------------------------------------------
LANE_TOP, LANE_MID, LANE_BOT = 0, 1, 2
LANE_NAMES = ("top", "mid", "bot")
LANE_WIDTH = 600.0  # a hero within this distance of a lane's path is "in" that lane (lane assignments, app. O.2)

# ---- unit types ------------------------------------------------------------------------------------------------------
UT_HERO = 0
UT_CREEP_MELEE = 1
UT_CREEP_RANGED = 2
UT_TOWER = 3
UT_BARRACKS_MELEE = 4
UT_BARRACKS_RANGED = 5
UT_ANCIENT = 6
UT_SHRINE = 7
UT_FOUNTAIN = 8
UT_WARD = 9
N_UNIT_TYPES = 10
UNIT_TYPE_NAMES = ("hero", "creep_melee", "creep_ranged", "tower", "barracks_melee", "barracks_ranged", "ancient",
                   "shrine", "fountain", "ward")
BUILDING_TYPES = (UT_TOWER, UT_BARRACKS_MELEE, UT_BARRACKS_RANGED, UT_ANCIENT, UT_SHRINE, UT_FOUNTAIN)

MAX_UNITS = 512  # unit table capacity (heroes, creeps, buildings, wards)

# ---- creeps ----------------------------------------------------------------------------------------------------------
# columns: hp, damage, armor, attack range, attack interval, move speed, gold bounty, xp bounty, vision
CREEP_STATS = np.array([
    [550.0, 21.0, 2.0, 100.0, 1.0, 325.0, 40.0, 57.0, 750.0],  # melee
    [300.0, 23.0, 0.0, 500.0, 1.0, 325.0, 48.0, 69.0, 750.0],  # ranged
])
SUPER_CREEP_MULT = np.array([1.6, 1.6, 1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 1.0])  # enemy barracks of this kind fell
MEGA_CREEP_MULT = np.array([2.6, 2.6, 1.0, 1.0, 1.0, 1.0, 0.35, 0.35, 1.0])  # all enemy barracks fell
CREEPS_PER_WAVE = (3, 1)  # melee, ranged
CREEP_UPGRADE_EVERY_S = 450.0  # creeps gain CREEP_UPGRADE_FRAC hp and damage every 7.5 minutes
CREEP_UPGRADE_FRAC = 0.1
CREEP_AGGRO_RANGE = 500.0
CREEP_WAYPOINT_REACHED = 150.0

# ---- buildings -------------------------------------------------------------------------------------------------------
# columns: hp, armor, damage, attack range, attack interval, team gold on death, vision
TOWER_STATS = np.array([
    [1300.0, 8.0, 100.0, 700.0, 1.0, 100.0, 1800.0],  # T1
    [1600.0, 10.0, 110.0, 700.0, 1.0, 120.0, 1800.0],  # T2
    [1900.0, 12.0, 120.0, 700.0, 1.0, 140.0, 1800.0],  # T3
    [2100.0, 14.0, 120.0, 700.0, 1.0, 160.0, 1800.0],  # T4
])
BARRACKS_MELEE_STATS = (2200.0, 15.0, 0.0, 0.0, 1.0, 150.0, 900.0)
BARRACKS_RANGED_STATS = (1300.0, 9.0, 0.0, 0.0, 1.0, 100.0, 900.0)
ANCIENT_STATS = (3500.0, 13.0, 0.0, 0.0, 1.0, 0.0, 900.0)  # 5v5: the ancient does not attack
CRYSTAL_STATS = (3500.0, 13.0, 140.0, 750.0, 1.0, 0.0, 1200.0)  # 1v1 base crystal attacks (HoK app. B)
SHRINE_STATS = (1500.0, 10.0, 0.0, 0.0, 1.0, 100.0, 900.0)
FOUNTAIN_STATS = (10000.0, 100.0, 400.0, 500.0, 0.4, 0.0, 1200.0)  # invulnerable; punishes fountain dives
FOUNTAIN_HEAL_RADIUS = 1000.0
FOUNTAIN_HEAL_FRAC = 0.06  # of max hp and max mana per second
SHRINE_RADIUS = 500.0
SHRINE_HEAL_PER_S = 30.0
SHRINE_MANA_PER_S = 15.0
SHRINE_DURATION_S = 5.0
SHRINE_COOLDOWN_S = 300.0
TOWER_AGGRO_S = 2.0  # a hero that attacks an enemy hero draws towers' and creeps' fire for this long

# ---- heroes: gold, experience, death ---------------------------------------------------------------------------------
MAX_LEVEL = 25
XP_TO_LEVEL = np.array([0, 240, 640, 1160, 1760, 2440, 3200, 4000, 4900, 5900, 7000, 8200, 9500, 10900, 12400,
                        14000, 15700, 17500, 19400, 21400, 23600, 26000, 28600, 31400, 34400], dtype=np.float64)
ULTIMATE_LEVELS = (6, 12, 18)
STARTING_GOLD = 600.0
PASSIVE_GOLD_PER_S = 1.5
XP_SHARE_RADIUS = 1500.0
HERO_KILL_GOLD_BASE, HERO_KILL_GOLD_PER_LEVEL = 150.0, 8.0
HERO_ASSIST_GOLD = 60.0
HERO_KILL_XP_BASE, HERO_KILL_XP_PER_LEVEL = 100.0, 20.0
ASSIST_WINDOW_S = 10.0
RESPAWN_BASE_S, RESPAWN_PER_LEVEL_S = 4.0, 2.0
BUYBACK_BASE_GOLD, BUYBACK_PER_LEVEL2, BUYBACK_PER_MINUTE = 100.0, 1.5, 10.0
BUYBACK_COOLDOWN_S = 480.0
DENY_HP_FRAC = 0.5  # an allied creep below half health can be denied
