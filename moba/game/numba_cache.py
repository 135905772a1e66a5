"""Where numba caches the engine's compiled kernels when ``NUMBA_CACHE_DIR`` is set: one cache per machine, shared by
every copy of the repository (the Ray jobs of ``scripts/submit.py``).

Numba caches an ``@njit(cache=True)`` function in ``__pycache__`` beside its source or, with ``NUMBA_CACHE_DIR``, in
``<NUMBA_CACHE_DIR>/<directory name>_<sha1 of the source directory's absolute path>``. A Ray job runs in its own copy of
the working directory (``.../runtime_resources/working_dir_files/_ray_pkg_<hash of its content>/``, a new path whenever
a file changed) without the ``__pycache__`` folders (``scripts/submit.py`` excludes them), so each job found an empty
cache either way and compiled the engine again in every process (about 22 s).

``RepoCacheLocator`` is a numba cache locator for the files of the ``moba`` package: it keeps them in
``<NUMBA_CACHE_DIR>/<the source's directory inside the repository>`` (``moba/game``, ``moba/env``), the same for every
copy of the tree. Its freshness stamp hashes every source file of the package, not only the function's own (numba's
stamp): a kernel compiled against another version of a constant or of a kernel in another file is never loaded, which
matters once versions share a cache. Numba still keys each entry by the function's bytecode, its signature and the CPU.
``job_env_vars`` gives the environment variables that turn it on (numba reads ``NUMBA_CACHE_LOCATOR_CLASSES`` when the
first cached function is defined); without them nothing changes.
"""
from __future__ import annotations

import functools
import hashlib
import os

from numba.core import caching, config

PACKAGE = "moba"  # the package whose kernels this locator caches (and whose sources make the stamp)
JOB_CACHE_DIR = "/tmp/openfive_numba_cache"  # the cache of a submitted job: one per node, kept across jobs
LOCATOR = f"{__name__}.RepoCacheLocator"


def repository_root(py_file: str) -> str | None:
    """The directory that holds the ``moba`` package a source file belongs to, or None for a file outside it."""
    d = os.path.dirname(os.path.abspath(py_file))
    while True:
        parent, name = os.path.split(d)
        if name == PACKAGE and os.path.isfile(os.path.join(d, "__init__.py")):
            return parent
        if parent == d:
            return None
        d = parent


def source_stamp(root: str) -> str:
    """A hash of the names and contents of every .py file of the package under `root`."""
    files = []
    for d, dirs, names in os.walk(os.path.join(root, PACKAGE)):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py"):
                st = os.stat(os.path.join(d, name))
                files.append((os.path.join(d, name), st.st_mtime_ns, st.st_size))
    return _hash_files(root, tuple(files))


@functools.lru_cache(maxsize=None)
def _hash_files(root: str, files: tuple) -> str:
    # keyed by mtime and size too, so that a file changed while the process runs is hashed again
    h = hashlib.sha256()
    for path, _, _ in files:
        with open(path, "rb") as f:
            data = f.read()
        h.update(f"{os.path.relpath(path, root)}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


class RepoCacheLocator(caching.UserProvidedCacheLocator):
    """Caches a function of the moba package in ``<NUMBA_CACHE_DIR>/<its directory inside the repository>``, stamped
    with ``source_stamp``; other functions, or no ``NUMBA_CACHE_DIR``: not this locator (numba's next one)."""

    def __init__(self, py_func, py_file):
        super().__init__(py_func, py_file)
        self._root = repository_root(py_file)
        inside = os.path.relpath(os.path.dirname(os.path.abspath(py_file)), self._root)
        self._cache_path = os.path.join(config.CACHE_DIR, inside)

    def get_source_stamp(self):
        return source_stamp(self._root)

    @classmethod
    def from_function(cls, py_func, py_file):
        if not config.CACHE_DIR or repository_root(py_file) is None:
            return None
        return super().from_function(py_func, py_file)


def job_env_vars(cache_dir: str = JOB_CACHE_DIR) -> dict[str, str]:
    """The environment variables that cache the kernels in `cache_dir` with ``RepoCacheLocator``: numba's cache
    directory, and its list of locators with this one first (numba's own after it, for other packages' functions)."""
    numba_locators = [c.__name__ for c in caching.CacheImpl._locator_classes]
    return {"NUMBA_CACHE_DIR": cache_dir, "NUMBA_CACHE_LOCATOR_CLASSES": ",".join([LOCATOR, *numba_locators])}
