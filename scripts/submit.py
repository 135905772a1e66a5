"""Submits a training run to a Ray cluster as a job: ``ray job submit --working-dir .`` around ``python -m app.train``.

    python scripts/submit.py --address http://HEAD:8265 --config tune_configs/five_5v5_cluster.yaml \\
        --storage-path s3://bucket/openfive [--set key=value ...] [--resume] [--no-wait]

- ``--address``: the head node's dashboard (``RAY_ADDRESS`` when it is an http address, else
  http://127.0.0.1:8265, the default of ``ray start --head``);
- ``--config`` and ``--set``: as for ``python -m app.train``; the config is validated here first, so a malformed one
  fails before anything is uploaded. The config must be inside the repository (the job runs in a copy of it);
- ``--storage-path``: where the results land, ``<storage path>/<name>/`` (metrics.csv, checkpoints, the league's
  weights, TensorBoard files): an absolute path on the head node (one that every node mounts, on a multi-node
  cluster) or a URI every node reaches (s3://, gs://, file://). Default: the config's, made absolute here.

Authentication: clusters that Ray 2.60's ``ray start`` creates require a token (``~/.ray/auth_token`` of the machine
that started the head node, or ``RAY_AUTH_TOKEN`` / ``RAY_AUTH_TOKEN_PATH``), and ``ray job submit`` sends it only
with ``RAY_AUTH_MODE=token``: this script sets that when a token is there and ``RAY_AUTH_MODE`` is unset.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from moba.game import numba_cache  # noqa: E402
from training import cluster_checks, run_config  # noqa: E402
from training import run_storage  # noqa: E402
from training.cli import print_error, user_errors  # noqa: E402

DEFAULT_ADDRESS = "http://127.0.0.1:8265"
# not uploaded with the working directory (Ray's limit is 512 MiB; results stay where they are)
EXCLUDES = [".git/", "results/", "**/__pycache__/", ".whl/", ".gl/"]


def job_env(environ: dict) -> dict:
    """The environment of `ray job submit`: RAY_AUTH_MODE=token when a token is available and the mode is unset."""
    env = dict(environ)
    has_token = env.get("RAY_AUTH_TOKEN") or os.path.isfile(
        env.get("RAY_AUTH_TOKEN_PATH") or os.path.join(Path.home(), ".ray", "auth_token"))
    if "RAY_AUTH_MODE" not in env and has_token:
        env["RAY_AUTH_MODE"] = "token"
    return env


def submit_command(address: str, config: str, sets: list[str], storage: str, resume: bool, wait: bool) -> list:
    entry = ["python", "-m", "app.train", "--config", config, *[a for s in sets for a in ("--set", s)],
             "--set", f"storage_path={storage}"] + (["--resume"] if resume else [])
    # the job's processes share one numba cache per node, across jobs (moba/game/numba_cache.py): the engine is
    # compiled by the first job on a node, not by every job
    runtime_env = {"excludes": EXCLUDES, "env_vars": numba_cache.job_env_vars()}
    return (["ray", "job", "submit", "--address", address, "--working-dir", ROOT,
             "--runtime-env-json", json.dumps(runtime_env)] + ([] if wait else ["--no-wait"])
            + ["--", *entry])


@user_errors
def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    env_address = os.environ.get("RAY_ADDRESS", "")
    p.add_argument("--address", default=env_address if env_address.startswith("http") else DEFAULT_ADDRESS,
                   help=f"the head node's dashboard address (default: RAY_ADDRESS if http, else {DEFAULT_ADDRESS})")
    p.add_argument("--config", required=True, help="a YAML run config inside the repository (tune_configs/)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    p.add_argument("--storage-path", default=None, help="an absolute path or a URI for the results")
    p.add_argument("--resume", action="store_true", help="continue the stopped run of the same name")
    p.add_argument("--no-wait", action="store_true", help="return once the job is submitted")
    args = p.parse_args(argv)
    config = os.path.relpath(os.path.abspath(args.config), ROOT)
    if config.startswith(".."):
        return print_error(f"--config {args.config!r} is outside the repository {ROOT}: the job runs in a copy of it")
    sets = list(args.set) + ([f"storage_path={args.storage_path}"] if args.storage_path else [])
    cfg = run_config.load(os.path.join(ROOT, config), sets)
    storage = run_storage.absolute(cfg.storage_path)
    url = urlparse(args.address)
    if url.scheme not in ("http", "https") or not url.hostname:
        return print_error(f"--address {args.address!r}: expected the dashboard's http://HOST:PORT "
                           f"(e.g. {DEFAULT_ADDRESS})")
    try:  # fail fast, not after ray's own retries
        cluster_checks.check_ray_address(f"{url.hostname}:{url.port or 80}")
    except ValueError as e:
        raise ValueError(f"--address {args.address!r}: {e}") from None
    if shutil.which("ray") is None:
        print("error: the `ray` command is missing: pip install -r requirements.txt (ray[default])", file=sys.stderr)
        return 2
    print(f"submitting {cfg.name!r} to {args.address}; results in {run_storage.join(storage, cfg.name)} "
          f"(tensorboard --logdir {run_storage.join(storage, cfg.name)})", flush=True)
    cmd = submit_command(args.address, config, args.set, storage, args.resume, not args.no_wait)
    return subprocess.run(cmd, cwd=ROOT, env=job_env(os.environ)).returncode


if __name__ == "__main__":
    sys.exit(main())
