"""The numba cache of a submitted job (moba/game/numba_cache.py): copies of the repository at different paths share
one cache directory, a kernel compiled in one copy is loaded in another, and a change to any source of the package
makes the cache stale."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from numba.core import caching, config

from moba.game import kernels, numba_cache

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def copy_package(dest) -> str:
    """A copy of the moba package (no caches) under `dest`; returns the copy's root."""
    shutil.copytree(os.path.join(ROOT, "moba"), os.path.join(dest, "moba"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    return str(dest)


def locator(root: str):
    return numba_cache.RepoCacheLocator.from_function(kernels.dist.py_func,
                                                     os.path.join(root, "moba", "game", "kernels.py"))


def test_copies_share_a_cache_directory_and_stamp_until_a_source_changes(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "cache"))
    a, b = copy_package(tmp_path / "a"), copy_package(tmp_path / "b")
    la, lb = locator(a), locator(b)
    assert la.get_cache_path() == lb.get_cache_path() == os.path.join(tmp_path, "cache", "moba", "game")
    assert la.get_source_stamp() == lb.get_source_stamp()
    # numba's own locator keys the directory by the absolute path: every copy had its own (empty) cache
    numba_paths = {caching.UserProvidedCacheLocator.from_function(kernels.dist.py_func,
                                                                  os.path.join(root, "moba", "game", "kernels.py"))
                   .get_cache_path() for root in (a, b)}
    assert len(numba_paths) == 2
    # a constant changed in another file than the kernel's: the kernel's cache is stale
    with open(os.path.join(b, "moba", "game", "constants.py"), "a") as f:
        f.write("# changed\n")
    assert locator(b).get_source_stamp() != la.get_source_stamp()


def test_other_files_and_no_cache_dir_are_left_to_numba(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "cache"))
    other = tmp_path / "elsewhere" / "kernels.py"
    other.parent.mkdir()
    other.write_text("")
    assert numba_cache.RepoCacheLocator.from_function(kernels.dist.py_func, str(other)) is None
    monkeypatch.setattr(config, "CACHE_DIR", "")
    assert locator(ROOT) is None


def test_job_env_vars_name_this_locator_then_numbas_own():
    env = numba_cache.job_env_vars("/some/dir")
    assert env["NUMBA_CACHE_DIR"] == "/some/dir"
    first, *rest = env["NUMBA_CACHE_LOCATOR_CLASSES"].split(",")
    assert first == "moba.game.numba_cache.RepoCacheLocator"
    assert rest and all(isinstance(getattr(caching, name), type) for name in rest)  # numba looks these up by name


def test_submit_sends_the_cache_variables_with_the_job():
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    try:
        import submit
    finally:
        sys.path.pop(0)
    cmd = submit.submit_command("http://head:8265", "tune_configs/x.yaml", [], "/results", False, True)
    runtime_env = json.loads(cmd[cmd.index("--runtime-env-json") + 1])
    assert runtime_env["env_vars"] == numba_cache.job_env_vars()


COMPILE_DIST = """
import numpy as np
from moba.game import kernels
assert kernels.__file__.startswith({root!r}), kernels.__file__
kernels.dist(np.zeros((2, 64)), 0, 1)
print(sum(kernels.dist.stats.cache_hits.values()), sum(kernels.dist.stats.cache_misses.values()))
"""


def test_a_kernel_compiled_in_one_copy_is_loaded_in_another(tmp_path):
    env = {**os.environ, **numba_cache.job_env_vars(str(tmp_path / "cache"))}
    hits_misses = []
    for name in ("a", "b"):
        root = copy_package(tmp_path / name)
        out = subprocess.run([sys.executable, "-c", COMPILE_DIST.format(root=root)], cwd=root, env=env,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        hits_misses.append(tuple(int(n) for n in out.stdout.split()))
    assert hits_misses == [(0, 1), (1, 0)]  # compiled in the first copy, loaded in the second
    assert os.listdir(tmp_path / "cache" / "moba" / "game")
