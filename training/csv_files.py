"""The CSV files of a run (metrics.csv, league.csv, opponents.csv, trueskill.csv), on a local path or a storage URI
(training/run_storage.py): rows appended as the run goes, read back, and dropped past a restored checkpoint.

Rows and resumes. The CSVs have a row (or rows) per iteration, appended as the run goes. A driver killed after a
checkpoint of iteration k has written rows of later iterations that the resumed run writes again, so restoring a
checkpoint of iteration k drops every row of an iteration after k (``drop_rows_after``; trueskill.csv: of a rated
version after k): each file then holds what the checkpoint's run had written up to it, once. An older file with other
columns is rewritten with the new header, its rows kept by name (``append_csv_rows``)."""
from __future__ import annotations

import csv
import io

from training import run_storage


ITERATION = "iteration"


_HEADERS_CHECKED: set[str] = set()  # the CSVs this process has appended to, their header matched to the columns


def append_csv_rows(location: str, columns, rows) -> None:
    """Appends dict rows to a CSV (header written when the file is new; keys outside `columns` are an error).
    A CSV written by an older version with other columns (a run resumed after an upgrade) is first rewritten with
    `columns`, its rows' values kept under their names (a column it lacked is left empty, one no longer written is
    dropped)."""
    columns = list(columns)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns)
    new = not run_storage.exists(location)
    if new:
        w.writeheader()
    w.writerows(rows)  # a key outside the columns fails here, before the file is touched
    if not new and location not in _HEADERS_CHECKED:
        old_columns, old_rows = _read(location)
        if old_columns != columns:
            _write_rows(location, columns, old_rows, extrasaction="ignore")
    _HEADERS_CHECKED.add(location)
    run_storage.append_text(location, buf.getvalue())


def _write_rows(location: str, columns: list, rows: list, extrasaction: str = "raise") -> None:
    """Writes the CSV anew: the header of `columns`, then the rows (a key outside `columns` is an error, or left out
    with extrasaction "ignore")."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, extrasaction=extrasaction)
    w.writeheader()
    w.writerows(rows)
    run_storage.write_bytes(location, buf.getvalue().encode())


def _read(location: str) -> tuple[list[str], list[dict]]:
    if not run_storage.exists(location):
        return [], []
    reader = csv.DictReader(io.StringIO(run_storage.read_bytes(location).decode()))
    rows = list(reader)
    return list(reader.fieldnames or []), rows


def read_csv_rows(location: str) -> list[dict]:
    """The rows of a CSV as dicts of strings ([] when there is no file yet)."""
    return _read(location)[1]


def drop_rows_after(location: str, iteration: int, where: dict | None = None) -> int:
    """The resume rule: drops the rows whose "iteration" is above `iteration` (only those matching `where`, a dict
    of column values, when given); returns how many were dropped."""
    columns, rows = _read(location)
    keep = [r for r in rows if not (all(r.get(k) == v for k, v in (where or {}).items())
                                    and r.get(ITERATION) not in (None, "") and float(r[ITERATION]) > iteration)]
    if len(keep) < len(rows):
        _write_rows(location, columns, keep)
    return len(rows) - len(keep)

