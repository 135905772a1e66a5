"""The checks at the cluster boundary, made by the training CLI before Tune starts: the Ray address, the storage path
and the resources a run asks for. Each fails fast (seconds, never a hang) with a ``ValueError`` whose message names
what is wrong (``RAY_ADDRESS``, ``storage_path``, ``resources.*``) and what is allowed.

Without them, an unreachable address makes ``ray.init`` retry for a minute or more, an unwritable storage path fails
deep inside Tune, and a run that asks for more CPUs or GPUs than the cluster has waits for them forever.
"""
from __future__ import annotations

import os
import socket
from urllib.parse import urlparse

from training import run_storage

CONNECT_TIMEOUT_S = 5.0
ADDRESS_HELP = ("allowed: unset (a local Ray started by the run), 'auto' (the cluster started on this machine with "
                "`ray start`), or the address of a running cluster's head node, 'HOST:PORT' (its GCS port, 6379 by "
                "default) or 'ray://HOST:PORT' (Ray client)")
STORAGE_HELP = ("allowed: a writable directory (an absolute path; on a multi-node cluster one that every node mounts "
                "at the same path) or a URI every node reaches (s3://bucket/path, gs://bucket/path, "
                "file:///mnt/shared/path)")


def ray_address_host_port(address: str) -> tuple[str, int] | None:
    """(host, port) of a RAY_ADDRESS to connect to, None for "auto"; ValueError for a malformed one."""
    if address == "auto":
        return None
    if address.startswith(("http://", "https://")):
        raise ValueError(f"RAY_ADDRESS={address!r}: an http address is the dashboard's, for `ray job submit` "
                         f"(scripts/submit.py); the training CLI connects to the cluster itself: {ADDRESS_HELP}")
    parsed = urlparse(address if "://" in address else f"tcp://{address}")
    try:
        port = parsed.port
    except ValueError:
        port = None
    if not parsed.hostname or port is None or parsed.scheme not in ("tcp", "ray"):
        raise ValueError(f"RAY_ADDRESS={address!r} is not an address; {ADDRESS_HELP}")
    return parsed.hostname, port


def check_ray_address(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """Fails unless something listens at the address (a TCP connection within `timeout_s`)."""
    target = ray_address_host_port(address)
    if target is None:
        return
    try:
        socket.create_connection(target, timeout=timeout_s).close()
    except OSError as e:
        why = f"no answer within {timeout_s:g} s" if isinstance(e, socket.timeout) else (e.strerror or str(e))
        raise ValueError(f"RAY_ADDRESS={address!r}: cannot reach {target[0]}:{target[1]} ({why}): is the cluster "
                         f"up (`ray status`)? {ADDRESS_HELP}") from None


def check_storage(location: str) -> None:
    """Fails unless a file can be written (and removed) under the storage location."""
    probe = run_storage.join(location, f".openfive_write_check_{socket.gethostname()}_{os.getpid()}")
    try:
        run_storage.check_uri(location)
        run_storage.makedirs(location)
        run_storage.write_bytes(probe, b"ok")
        run_storage.remove(probe)
    except (OSError, ValueError) as e:
        raise ValueError(f"storage_path {location!r}: cannot write there ({type(e).__name__}: {e}); "
                         f"{STORAGE_HELP}") from None


def local_env_runner_limit(cores: int) -> int:
    """The most env runners a run on an embedded local Ray may ask for on a machine with `cores` cores: one per
    core (the driver and learner share them; 2 runners on 2 cores is the fastest layout, docs/rllib_notes.md
    section 6). More only make the cores take turns, each runner a process of its own."""
    return max(1, int(cores))


def check_local_resources(resources: dict, cores: int) -> None:
    """Fails when a run on an embedded local Ray asks for more env runners than the machine has cores, unless
    `resources.num_cpus` says how many CPUs Ray advertises (then check_resources holds the run to that). Without this,
    the local Ray advertises as many CPUs as asked for (app.train.local_num_cpus), starts every runner, and the
    machine spends its time switching between them (64 runners on 2 cores never finished an iteration)."""
    if resources.get("num_cpus"):
        return
    runners, limit = resources["num_env_runners"], local_env_runner_limit(cores)
    if runners > limit:
        raise ValueError(
            f"resources.num_env_runners={runners}: this machine has {cores} cores, a local run allows at most "
            f"{limit} env runners (allowed: 0..{limit}; more would take turns on the cores, each in a process of its "
            f"own). Set resources.num_env_runners at most {limit}, or set resources.num_cpus to advertise more CPUs "
            f"anyway, or run on a cluster (RAY_ADDRESS, scripts/submit.py)")


def check_resources(needed: dict, available: dict, resources: dict) -> None:
    """Fails when one trial needs more CPUs or GPUs than the cluster has (`needed` and `available` map "CPU" and
    "GPU" to counts; `resources` is the run config's section), unless `resources.autoscaling` says that the cluster
    adds nodes on demand."""
    if resources.get("autoscaling"):
        return
    short = [k for k in ("CPU", "GPU") if needed.get(k, 0) > available.get(k, 0) + 1e-9]
    if not short:
        return
    runners, gpus = resources["num_env_runners"], resources["num_gpus_per_learner"]
    fits = max(0, int(available.get("CPU", 0)) - (int(needed.get("CPU", 0)) - runners))
    fixes = []
    if "CPU" in short:
        fixes.append(f"resources.num_env_runners at most {fits} (allowed: 0..{fits} on this cluster)")
    if "GPU" in short:
        fixes.append(f"resources.num_gpus_per_learner at most {available.get('GPU', 0):g} (allowed on this cluster)")
    raise ValueError(
        f"resources: a trial needs {needed.get('CPU', 0):g} CPUs and {needed.get('GPU', 0):g} GPUs (one CPU for the "
        f"trainer with its learner, resources.num_env_runners={runners} env runners, "
        f"resources.num_gpus_per_learner={gpus}), the cluster has {available.get('CPU', 0):g} CPUs and "
        f"{available.get('GPU', 0):g} GPUs: it would wait for them forever. Set " + " and ".join(fixes)
        + ", add nodes, or set resources.autoscaling: true when the cluster's autoscaler adds them on demand")
