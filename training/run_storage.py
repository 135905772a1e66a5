"""The files of a run's storage, on one machine or a cluster: a *location* is a local path or a URI
(``s3://bucket/runs``, ``gs://bucket/runs``, ``file:///mnt/shared/runs``), as Tune's ``storage_path`` is.

Local paths go through the os functions, so that a run on one machine writes exactly the files it always did. URIs go
through pyarrow's filesystems (``pyarrow.fs.FileSystem.from_uri``, what Tune uses for checkpoints), so that a process
on any node of a cluster reaches the same files: the driver writes the league's weights there and the env runners on
other nodes read them back from there. Whole files are written atomically where the filesystem allows it (a local
file is written aside and renamed; an object store's put is atomic), so a reader never sees half a file. Object
stores cannot append: a file at a URI grows by being rewritten (the run's CSVs are small).
"""
from __future__ import annotations

import functools
import os
import posixpath

SCHEME_SEP = "://"


def is_uri(location: str) -> bool:
    return SCHEME_SEP in str(location)


def join(location: str, *parts: str) -> str:
    return posixpath.join(location, *parts) if is_uri(location) else os.path.join(location, *parts)


def absolute(location: str) -> str:
    """A URI as it is, a local path made absolute (a job runs in a copy of the working directory)."""
    return location if is_uri(location) else os.path.abspath(location)


def check_uri(location: str) -> None:
    """ValueError naming the location when pyarrow has no filesystem for its URI (an unknown scheme, a missing
    optional package)."""
    if is_uri(location):
        try:
            _fs_path(location)
        except Exception as e:
            raise ValueError(f"{location!r}: {type(e).__name__}: {e}") from None


@functools.lru_cache(maxsize=4096)
def _fs_path(uri: str):
    """(pyarrow filesystem, path on it) of a URI."""
    import pyarrow.fs
    return pyarrow.fs.FileSystem.from_uri(uri)


def exists(location: str) -> bool:
    if not is_uri(location):
        return os.path.exists(location)
    import pyarrow.fs
    fs, path = _fs_path(location)
    return fs.get_file_info(path).type != pyarrow.fs.FileType.NotFound


def makedirs(location: str) -> None:
    if is_uri(location):
        fs, path = _fs_path(location)
        fs.create_dir(path, recursive=True)
    else:
        os.makedirs(location, exist_ok=True)


def remove(location: str) -> None:
    if is_uri(location):
        fs, path = _fs_path(location)
        fs.delete_file(path)
    else:
        os.remove(location)


def read_bytes(location: str) -> bytes:
    if not is_uri(location):
        with open(location, "rb") as f:
            return f.read()
    fs, path = _fs_path(location)
    with fs.open_input_stream(path) as f:
        return f.read()


def write_bytes(location: str, data: bytes) -> None:
    """Writes a whole file (creating its directory); a reader sees the old file or the new one, never half of one."""
    if not is_uri(location):
        os.makedirs(os.path.dirname(location) or ".", exist_ok=True)
        tmp = f"{location}.tmp{os.getpid()}"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, location)
        return
    fs, path = _fs_path(location)
    fs.create_dir(posixpath.dirname(path), recursive=True)
    local = fs.type_name == "local"  # a rename is atomic there; an object store's put is atomic by itself
    target = f"{path}.tmp{os.getpid()}" if local else path
    with fs.open_output_stream(target) as f:
        f.write(data)
    if local:
        fs.move(target, path)


def append_text(location: str, text: str) -> None:
    """Appends to a text file (created when missing)."""
    if not is_uri(location):
        os.makedirs(os.path.dirname(location) or ".", exist_ok=True)
        with open(location, "a", newline="") as f:
            f.write(text)
        return
    old = read_bytes(location) if exists(location) else b""
    write_bytes(location, old + text.encode())


def upload_file(local_path: str, location: str) -> None:
    """Copies a local file to a location (a no-op when the location is that same local file)."""
    if not is_uri(location) and os.path.abspath(local_path) == os.path.abspath(location):
        return
    with open(local_path, "rb") as f:
        write_bytes(location, f.read())

