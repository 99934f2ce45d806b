"""The results directory: Parquet part files, a manifest and a lock.

Layout of ``DIR``::

    manifest.json        what ran: experiment, points (env kwargs), agents (with where
                         each class came from), base seed
    parts/part-*.parquet one file per flush of finished chunks (rows of ROW_COLUMNS)
    parts/*.corrupt      unreadable parts found on resume, moved aside (never read)
    .lock                the lock of the run writing here (holds its pid)

Reliability:

* one run at a time: :meth:`ResultStore.lock` takes an exclusive ``flock`` on
  ``DIR/.lock`` (released when the run ends, and by the kernel when its process dies,
  so a lock left by a killed run is never stale); a second run fails at once with a
  :class:`StoreError` naming the directory and the pid holding it;
* before anything runs, :meth:`ResultStore.lock` checks that ``DIR`` is writable (a
  probe file is created, fsync'ed and removed) and has some free space, so a bad
  ``--out`` fails before any work is done; a write that fails later (``ENOSPC``, ...)
  raises a :class:`StoreError` naming the directory, and every part written before
  stays;
* a part is written to a temporary file (with page checksums), flushed and fsync'ed,
  then renamed into place (``os.replace`` is atomic), so a part is either complete
  or absent; stray ``*.tmp`` files of an interrupted write are ignored and removed by
  the next run;
* a part that cannot be read in full (truncated, bad checksum, wrong columns) is
  never read as data: :meth:`ResultStore.quarantine` (run at the start of every run)
  warns with its name and renames it to ``*.corrupt``, so its episodes are run again;
  readers (:func:`read_results`) skip it with the same warning;
* rows are keyed by ``(point, agent, run)``; :meth:`ResultStore.done` tells the
  runner which episodes to skip (resume), and :meth:`ResultStore.read` drops
  duplicate keys, which makes :meth:`ResultStore.compact` (many parts -> one) safe to
  interrupt at any moment;
* the manifest refuses to mix results of different configurations: a point or agent
  label already in the directory must have the same env kwargs / parameters, and the
  base seed must match. New points, agents and runs are added. The manifest records
  where each agent's class came from (``source``: module, file and its SHA-256,
  distribution and version, or a local module; :func:`agents.registry.agent_source`);
  if that changed since earlier episodes, a :class:`StoreWarning` says what changed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
import uuid
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from topk_bench.episodes import OPTIONAL_COLUMNS, ROW_COLUMNS

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

__all__ = ["ResultStore", "StoreError", "StoreWarning", "read_results", "row_schema"]

KEY = ("point", "agent", "run")
_PART_GLOB = "part-*.parquet"
MIN_FREE_BYTES = 1 << 20
"""A run does not start with less free space than this in the results directory."""


class StoreError(RuntimeError):
    """A results directory that cannot be used as asked."""


class StoreWarning(UserWarning):
    """Something found in a results directory and dealt with (an unreadable part)."""


def _why(err: OSError) -> str:
    return err.strerror or str(err) or type(err).__name__


def _pa():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ModuleNotFoundError as err:  # pragma: no cover - depends on the install
        raise StoreError(
            "the results store needs pyarrow: pip install 'topk-bandit-envs[bench]'"
        ) from err
    return pa, pq


def row_schema():
    """The Arrow schema of a result row."""
    pa, _ = _pa()
    types = {
        "x_value": pa.float64(),
        "run": pa.int64(),
        "seed": pa.int64(),
        "agent_seed": pa.int64(),
        "pulls": pa.int64(),
        "batches": pa.int64(),
        "terminated": pa.bool_(),
        "truncated": pa.bool_(),
        "warmup": pa.bool_(),
    }
    floats = {
        "aggregate_regret",
        "misidentified",
        "precision",
        "fnr",
        "failure",
        "max_pulls_per_arm",
        "reward",
        "wall_time",
        "normalized_pulls",
    }
    fields = []
    for col in ROW_COLUMNS:
        if col in types:
            fields.append(pa.field(col, types[col]))
        elif col in floats:
            fields.append(pa.field(col, pa.float64()))
        else:
            fields.append(pa.field(col, pa.string()))
    return pa.schema(fields)


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


class ResultStore:
    """One results directory (created on first write)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.parts = self.root / "parts"
        self.manifest_path = self.root / "manifest.json"
        self._lock_path = self.root / ".lock"
        self._lock_fd: int | None = None

    # ------------------------------------------------------------------ lock
    def lock(self) -> None:
        """Take the directory for this process, after checking that it is writable.

        Raises :class:`StoreError` if another run holds the lock (naming its pid), or
        if the directory cannot be created or written, or is (nearly) full.
        """
        if self._lock_fd is not None:
            raise StoreError(f"{self.root}: this store is already locked")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise StoreError(
                f"cannot create the results directory {self.root}: {_why(err)}; use another --out"
            ) from err
        for _ in range(10):
            try:
                fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as err:
                raise StoreError(
                    f"{self.root} is not writable ({self._lock_path}: {_why(err)}); "
                    f"use another --out"
                ) from err
            if not _try_lock(fd):
                holder = _read_pid(fd)
                os.close(fd)
                who = f"pid {holder}" if holder else "another process"
                raise StoreError(
                    f"{self.root} is in use by another 'topk-bench run' ({who} holds "
                    f"{self._lock_path}); wait for it to finish or use another --out"
                )
            try:  # the holder before us may have removed the file: lock the current one
                same = os.stat(self._lock_path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        else:  # pragma: no cover - ten runs ending between our open and our lock
            raise StoreError(f"{self.root}: cannot take the lock {self._lock_path}")
        self._lock_fd = fd
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            self._check_writable()
        except BaseException as err:
            self.unlock()
            if isinstance(err, OSError):
                raise StoreError(
                    f"{self.root} is not writable ({_why(err)}); use another --out"
                ) from err
            raise
        self._clean_tmp()

    def unlock(self) -> None:
        """Release the lock taken by :meth:`lock` (and remove the lock file)."""
        fd, self._lock_fd = self._lock_fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                self._lock_path.unlink()  # still locked: nobody can take this file now
            os.close(fd)

    @property
    def locked(self) -> bool:
        """Whether this object holds the directory's lock."""
        return self._lock_fd is not None

    def _check_writable(self) -> None:
        """Fail now, not after hours of work, if parts cannot be written."""
        self.parts.mkdir(parents=True, exist_ok=True)
        probe = self.parts / f".probe-{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp"
        try:
            with open(probe, "wb") as fh:
                fh.write(b"\0" * 4096)
                fh.flush()
                os.fsync(fh.fileno())
        finally:
            with contextlib.suppress(FileNotFoundError):
                probe.unlink()
        free = shutil.disk_usage(self.parts).free
        if free < MIN_FREE_BYTES:
            raise StoreError(
                f"{self.root}: only {free} bytes free on its disk; free some space "
                f"or use another --out"
            )

    def _clean_tmp(self) -> None:
        for tmp in list(self.parts.glob("*.tmp")) + list(self.root.glob("*.tmp")):
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()

    # -------------------------------------------------------------- manifest
    def manifest(self) -> dict[str, Any] | None:
        """The manifest, or ``None`` for a new directory."""
        if not self.manifest_path.exists():
            return None
        return json.loads(self.manifest_path.read_text(encoding="utf-8"))

    def merge_manifest(self, description: Mapping[str, Any], base_seed: int) -> dict[str, Any]:
        """Check ``description`` (``Experiment.describe()``) against DIR; store the union."""
        new = dict(description)
        new["base_seed"] = int(base_seed)
        old = self.manifest()
        if old is None:
            self._write_json(self.manifest_path, new)
            return new
        where = f"{self.root}"
        if old.get("name") != new["name"]:
            raise StoreError(
                f"{where} holds results of experiment {old.get('name')!r}, not {new['name']!r}; "
                f"use another --out"
            )
        if old.get("base_seed") != new["base_seed"]:
            raise StoreError(
                f"{where} was run with --seed {old.get('base_seed')}, not {new['base_seed']}; "
                f"use another --out"
            )
        if bool(old.get("reduced")) != bool(new.get("reduced")):
            mode = "reduced" if old.get("reduced") else "full"
            raise StoreError(f"{where} holds {mode}-mode results; use another --out")
        old_points = {p["label"]: p for p in old.get("points", [])}
        for p in new["points"]:
            q = old_points.get(p["label"])
            if q is not None and (
                _canon(q["env"]) != _canon(p["env"]) or q["env_id"] != p["env_id"]
            ):
                raise StoreError(
                    f"{where}: point {p['label']!r} was run with other env settings "
                    f"({_canon(q['env'])} vs {_canon(p['env'])}); use another --out"
                )
        old_agents = {a["label"]: a for a in old.get("agents", [])}
        for a in new["agents"]:
            b = old_agents.get(a["label"])
            if b is not None and (
                b["name"] != a["name"] or _canon(b["params"]) != _canon(a["params"])
            ):
                raise StoreError(
                    f"{where}: agent {a['label']!r} was run with other parameters "
                    f"({b['name']} {_canon(b['params'])}); use another --out"
                )
            changed = b is not None and _source_change(b.get("source"), a.get("source"))
            if changed:
                warnings.warn(
                    f"{where}: the class of agent {a['label']!r} changed since its earlier "
                    f"episodes ({changed}); the results mix both (the manifest records the "
                    f"new one)",
                    StoreWarning,
                    stacklevel=2,
                )
        old_models = {t["model"]: t for t in old.get("train", [])}
        for t in new.get("train", []):
            u = old_models.get(t["model"])
            if u is not None and _canon(u) != _canon(t):
                raise StoreError(
                    f"{where}: model {t['model']!r} was trained with other settings "
                    f"({_canon(u)}); use another --out"
                )
        merged = dict(new)
        new_models = {t["model"] for t in new.get("train", [])}
        merged["train"] = [
            *new.get("train", []),
            *[t for t in old.get("train", []) if t["model"] not in new_models],
        ]
        new_point_labels = {p["label"] for p in new["points"]}
        merged["points"] = [
            *new["points"],
            *[p for p in old.get("points", []) if p["label"] not in new_point_labels],
        ]
        new_agent_labels = {a["label"] for a in new["agents"]}
        merged["agents"] = [
            *new["agents"],
            *[a for a in old.get("agents", []) if a["label"] not in new_agent_labels],
        ]
        self._write_json(self.manifest_path, merged)
        return merged

    def _write_json(self, path: Path, data: Mapping[str, Any]) -> None:
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(data, fh, indent=1, sort_keys=False, default=str)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except OSError as err:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise StoreError(f"cannot write {path}: {_why(err)}") from err

    # ----------------------------------------------------------------- parts
    def part_files(self) -> list[Path]:
        """Finished part files, oldest first."""
        if not self.parts.exists():
            return []
        return sorted(self.parts.glob(_PART_GLOB))

    def write(self, rows: Iterable[Mapping[str, Any]], prefix: str = "part") -> Path | None:
        """Write ``rows`` as one new part file, atomically; return its path."""
        pa, pq = _pa()
        rows = list(rows)
        if not rows:
            return None
        table = pa.Table.from_pylist(rows, schema=row_schema())
        return self._write_table(table, prefix)

    def _write_table(self, table: Any, prefix: str) -> Path:
        """Write ``table`` as a new part; a failed write leaves no file behind.

        Raises :class:`StoreError` (naming the directory and the OS error, e.g. no
        space left on device) if the part cannot be written.
        """
        _, pq = _pa()
        name = f"{prefix}-{time.time_ns():020d}-{uuid.uuid4().hex[:8]}.parquet"
        final = self.parts / name
        tmp = self.parts / f".{name}.tmp"
        try:
            self.parts.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as fh:
                pq.write_table(table, fh, write_page_checksum=True)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, final)
        except OSError as err:
            with contextlib.suppress(OSError):
                tmp.unlink()  # a partial file only takes space
            raise StoreError(
                f"cannot write results to {self.parts}: {_why(err)}"
                + (f" (errno {err.errno})" if err.errno else "")
            ) from err
        return final

    def _read_part(self, path: Path, columns: list[str] | None = None) -> Any:
        """One part as a table of :func:`row_schema` (``columns`` only, if given).

        Raises ``ValueError`` (or an ``OSError`` / Arrow error) if the file is not a
        complete part: truncated, failed page checksum, missing columns, null keys.
        """
        pa, pq = _pa()
        schema = row_schema()
        if columns is not None:
            schema = pa.schema([schema.field(c) for c in columns])
        present = None
        if columns is not None:
            present = [c for c in columns if c not in OPTIONAL_COLUMNS]
            present += [c for c in columns if c in OPTIONAL_COLUMNS and c in _part_columns(path)]
        table = pq.read_table(path, columns=present, page_checksum_verification=True)
        for col in OPTIONAL_COLUMNS:  # written before the column existed: NaN
            if col in schema.names and col not in table.column_names:
                table = table.append_column(
                    schema.field(col), pa.nulls(table.num_rows, schema.field(col).type)
                )
        missing = [c for c in schema.names if c not in table.column_names]
        if missing:
            raise ValueError(f"missing columns {missing}")
        table = table.select(schema.names).cast(schema)
        for col in KEY:
            if col in schema.names and table.column(col).null_count:
                raise ValueError(f"null values in key column {col!r}")
        return table

    def _readable_parts(self, columns: list[str] | None = None) -> list[Any]:
        tables = []
        for f in self.part_files():
            try:
                tables.append(self._read_part(f, columns))
            except FileNotFoundError:  # compacted away by the run writing here
                continue
            except Exception as err:  # noqa: BLE001 - any failure means "not data"
                warnings.warn(
                    f"{f}: unreadable part file ({type(err).__name__}: {err}); skipped",
                    StoreWarning,
                    stacklevel=3,
                )
        return tables

    def quarantine(self) -> list[Path]:
        """Move every part that cannot be read in full to ``*.corrupt``, with a warning.

        Reads each part completely (all columns, page checksums verified). Call it
        under :meth:`lock`; the runner does at the start of every run, so the episodes
        of a damaged part are run again. Returns the new paths of the moved files.
        """
        moved = []
        for f in self.part_files():
            try:
                self._read_part(f)
            except Exception as err:  # noqa: BLE001 - any failure means "not data"
                dest = f.with_name(f.name + ".corrupt")
                try:
                    os.replace(f, dest)
                except OSError as move_err:
                    raise StoreError(
                        f"{f} is unreadable ({type(err).__name__}: {err}) and cannot be "
                        f"moved aside ({_why(move_err)}); remove it and rerun"
                    ) from move_err
                warnings.warn(
                    f"{f}: unreadable part file ({type(err).__name__}: {err}); moved to "
                    f"{dest.name}, its episodes will be run again",
                    StoreWarning,
                    stacklevel=2,
                )
                moved.append(dest)
        return moved

    def _table(self, columns: list[str] | None = None) -> Any:
        pa, _ = _pa()
        schema = row_schema()
        if columns is not None:
            schema = pa.schema([schema.field(c) for c in columns])
        tables = self._readable_parts(columns)
        if not tables:
            return schema.empty_table()
        return pa.concat_tables(tables)

    def done(self) -> set[tuple[str, str, int]]:
        """Keys ``(point, agent, run)`` of the finished episodes."""
        table = self._table(list(KEY))
        cols = [table.column(c).to_pylist() for c in KEY]
        return set(zip(*cols, strict=True))

    def read(self) -> Any:
        """All rows as a pandas DataFrame, one per key, sorted by (point, agent, run)."""
        df = self._table().to_pandas()
        df = df.drop_duplicates(list(KEY), keep="first")
        return df.sort_values(list(KEY), kind="stable").reset_index(drop=True)

    def compact(self) -> None:
        """Merge all parts into one (safe to interrupt: duplicates are dropped on read)."""
        pa, _ = _pa()
        files = self.part_files()
        if len(files) < 2:
            return
        df = self.read()
        table = pa.Table.from_pandas(df, schema=row_schema(), preserve_index=False)
        try:
            self._write_table(table, "part")
        except StoreError as err:  # nothing is lost: the parts stay as they are
            warnings.warn(f"could not merge the parts: {err}", StoreWarning, stacklevel=2)
            return
        for f in files:
            with contextlib.suppress(FileNotFoundError):
                f.unlink()


def _source_change(old: Any, new: Any) -> str:
    """What differs between two recorded agent sources (``""``: nothing that matters)."""
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return ""
    changes = [
        f"{key} {old.get(key)} -> {new.get(key)}"
        for key in ("class", "distribution", "version", "sha256")
        if old.get(key) != new.get(key)
    ]
    return "; ".join(changes)


def _part_columns(path: Path) -> list[str]:
    """The column names of a part file (from its footer)."""
    _, pq = _pa()
    return pq.read_schema(path).names


def _try_lock(fd: int) -> bool:
    """An exclusive, non-blocking lock on ``fd``; False if another holds it."""
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
    import msvcrt  # pragma: no cover - Windows

    try:  # pragma: no cover
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    except OSError:  # pragma: no cover
        return False
    return True  # pragma: no cover


def _read_pid(fd: int) -> int | None:
    """The pid written in a lock file by its holder (None if not written yet)."""
    try:
        text = os.pread(fd, 64, 0).decode(errors="replace").strip()
        return int(text) if text else None
    except (OSError, ValueError, AttributeError):
        return None


def read_results(root: str | os.PathLike[str]) -> Any:
    """The rows of a results directory as a pandas DataFrame (see :meth:`ResultStore.read`)."""
    store = ResultStore(root)
    if store.manifest() is None and not store.part_files():
        raise StoreError(f"{root}: not a results directory (no manifest.json, no parts/)")
    return store.read()
