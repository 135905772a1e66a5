"""Conversions between the environment's Python values and the messages of ``moba.proto``.

Observations travel as raw numpy bytes, batched over agents (one ``Tensor`` per observation key, leading axis = agent):
the client rebuilds them with ``np.frombuffer`` (one copy, so that the arrays are writable like the local env's), never
element by element. Everything here is shared by the server and the client, so both sides agree by construction.
"""
from __future__ import annotations

import json
import math

import numpy as np

from moba.env.actions import ACTION_KEYS
from moba.server import moba_pb2 as pb

# wire dtype name -> little-endian numpy dtype
_WIRE_DTYPES = {np.dtype(t).name: np.dtype(t).newbyteorder("<")
                for t in (np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8,
                          np.uint16, np.uint32, np.uint64, np.bool_)}


_DTYPE_NAMES: dict = {}


def _dtype_name(dt: np.dtype) -> str:
    name = _DTYPE_NAMES.get(dt)  # dtype.name costs ~2 us: cached
    if name is None:
        name = _DTYPE_NAMES[dt] = dt.name
    return name


# ---- tensors / observations ------------------------------------------------------------------------------------------
def fill_tensor(t: "pb.Tensor", name: str, arr: np.ndarray) -> None:
    arr = np.ascontiguousarray(arr)
    if arr.dtype.byteorder == ">":  # the wire format is little-endian
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    t.name = name
    t.dtype = arr.dtype.name
    t.shape.extend(arr.shape)
    t.data = arr.tobytes()


def tensor_to_array(t: "pb.Tensor") -> np.ndarray:
    dt = _WIRE_DTYPES.get(t.dtype)
    if dt is None:
        raise ValueError(f"tensor {t.name!r}: unsupported dtype {t.dtype!r}; allowed: {sorted(_WIRE_DTYPES)}")
    shape = tuple(t.shape)
    data = t.data
    if len(data) != math.prod(shape) * dt.itemsize:
        raise ValueError(f"tensor {t.name!r}: {len(data)} bytes for shape {shape} of {t.dtype} "
                         f"({math.prod(shape) * dt.itemsize} expected)")
    # bytearray: one copy that makes the array writable, as the local environment's observations are
    return np.frombuffer(bytearray(data), dt).reshape(shape)


def fill_observations(msg: "pb.Observations", obs: dict, agent_ids) -> None:
    """obs: agent id -> {key: array}; every agent has the same keys, shapes and dtypes (one observation space).
    One tensor per key, the agents' rows concatenated (bytes joined: cheaper than np.stack)."""
    agent_ids = [a for a in agent_ids if a in obs]
    msg.agent_ids.extend(agent_ids)
    if not agent_ids:
        return
    rows = [obs[a] for a in agent_ids]
    for key, first in rows[0].items():
        data = b"".join([r[key].tobytes() for r in rows])
        if first.dtype.byteorder == ">" or len(data) != len(rows) * first.nbytes:
            fill_tensor(msg.tensors.add(), key, np.stack([r[key] for r in rows]))  # general path (raises on ragged)
            continue
        t = msg.tensors.add()
        t.name = key
        t.dtype = _dtype_name(first.dtype)
        t.shape.append(len(rows))
        t.shape.extend(first.shape)
        t.data = data


def observations_from_proto(msg: "pb.Observations") -> dict:
    ids = list(msg.agent_ids)
    arrays = {}
    for t in msg.tensors:
        arr = tensor_to_array(t)
        if arr.ndim == 0 or arr.shape[0] != len(ids):
            raise ValueError(f"observation tensor {t.name!r}: leading axis {arr.shape[:1]} != {len(ids)} agents")
        arrays[t.name] = arr
    return {a: {k: v[i] for k, v in arrays.items()} for i, a in enumerate(ids)}


# ---- infos -----------------------------------------------------------------------------------------------------------
def json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (set, tuple)):
        return list(o)
    raise TypeError(f"infos value of type {type(o).__name__} is not JSON serializable")


def fill_infos(infos_map, infos: dict) -> None:
    """Writes the infos into a reply's map: reward_signals, game_time_s and winner have typed proto fields; any other
    key travels in AgentInfo.extra_json."""
    for agent, info in infos.items():
        m = infos_map[agent]
        extra = {}
        for k, v in info.items():
            if k == "reward_signals":
                m.reward_signals.update(v)
            elif k == "game_time_s":
                m.game_time_s = v
            elif k == "winner":
                m.winner = v
            else:
                extra[k] = v
        if extra:
            m.extra_json = json.dumps(extra, default=json_default)


def infos_from_proto(infos_map, signal_order=()) -> dict:
    out = {}
    for agent, m in infos_map.items():
        info = {}
        if m.extra_json:
            info.update(json.loads(m.extra_json))
        if m.reward_signals:
            rs = m.reward_signals
            if len(signal_order) == len(rs):  # the environment's key order
                try:
                    info["reward_signals"] = {k: rs[k] for k in signal_order}
                except KeyError:
                    info["reward_signals"] = dict(rs)
            else:
                info["reward_signals"] = dict(rs)
        if m.HasField("game_time_s"):
            info["game_time_s"] = m.game_time_s
        if m.HasField("winner"):
            info["winner"] = m.winner
        out[agent] = info
    return out


# ---- actions ---------------------------------------------------------------------------------------------------------
def actions_from_proto(actions_map) -> dict:
    """agent id -> {field: int} with only the fields that were set (the environment names a missing one)."""
    out = {}
    for agent, a in actions_map.items():
        out[agent] = {f: getattr(a, f) for f in ACTION_KEYS if a.HasField(f)}
    return out
