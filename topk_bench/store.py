"""The results directory: Parquet part files, a manifest and a lock.

Layout of ``DIR``::

    manifest.json        what ran: experiment, points (env kwargs), agents, base seed
    parts/part-*.parquet one file per finished chunk (rows of ROW_COLUMNS)
    .lock                pid of the run writing here (removed when it ends)

Reliability:

* a part is written to a temporary file, flushed and fsync'ed, then renamed into
  place (``os.replace`` is atomic), so a part is either complete or absent; stray
  ``*.tmp`` files of an interrupted write are ignored and removed by the next run;
* rows are keyed by ``(point, agent, run)``; :meth:`ResultStore.done` tells the
  runner which episodes to skip (resume), and :meth:`ResultStore.read` drops
  duplicate keys, which makes :meth:`ResultStore.compact` (many parts -> one) safe to
  interrupt at any moment;
* the manifest refuses to mix results of different configurations: a point or agent
  label already in the directory must have the same env kwargs / parameters, and the
  base seed must match. New points, agents and runs are added.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from topk_bench.episodes import ROW_COLUMNS

__all__ = ["ResultStore", "StoreError", "read_results", "row_schema"]

KEY = ("point", "agent", "run")
_PART_GLOB = "part-*.parquet"


class StoreError(RuntimeError):
    """A results directory that cannot be used as asked."""


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
        self._locked = False

    # ------------------------------------------------------------------ lock
    def lock(self) -> None:
        """Take the directory for this process (one writing run at a time)."""
        self.parts.mkdir(parents=True, exist_ok=True)
        for _ in range(2):
            try:
                fd = os.open(self._lock_path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                try:
                    pid = int(self._lock_path.read_text().strip() or "0")
                except (OSError, ValueError):
                    pid = 0
                if pid and pid != os.getpid() and _alive(pid):
                    raise StoreError(
                        f"{self.root}: another run (pid {pid}) is writing here; wait for it or "
                        f"remove {self._lock_path} if that process is gone"
                    ) from None
                with contextlib.suppress(FileNotFoundError):
                    self._lock_path.unlink()
                continue
            with os.fdopen(fd, "w") as fh:
                fh.write(str(os.getpid()))
            self._locked = True
            self._clean_tmp()
            return
        raise StoreError(f"{self.root}: cannot take the lock {self._lock_path}")

    def unlock(self) -> None:
        """Release the lock taken by :meth:`lock`."""
        if self._locked:
            with contextlib.suppress(FileNotFoundError):
                self._lock_path.unlink()
            self._locked = False

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
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, sort_keys=False, default=str)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)

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
        _, pq = _pa()
        self.parts.mkdir(parents=True, exist_ok=True)
        name = f"{prefix}-{time.time_ns():020d}-{uuid.uuid4().hex[:8]}.parquet"
        final = self.parts / name
        tmp = self.parts / f".{name}.tmp"
        with open(tmp, "wb") as fh:
            pq.write_table(table, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, final)
        return final

    def _table(self, columns: list[str] | None = None) -> Any:
        pa, pq = _pa()
        files = self.part_files()
        schema = row_schema()
        if columns is not None:
            schema = pa.schema([schema.field(c) for c in columns])
        if not files:
            return schema.empty_table()
        tables = [pq.read_table(f, columns=columns).cast(schema) for f in files]
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
        self._write_table(table, "part")
        for f in files:
            with contextlib.suppress(FileNotFoundError):
                f.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_results(root: str | os.PathLike[str]) -> Any:
    """The rows of a results directory as a pandas DataFrame (see :meth:`ResultStore.read`)."""
    store = ResultStore(root)
    if store.manifest() is None and not store.part_files():
        raise StoreError(f"{root}: not a results directory (no manifest.json, no parts/)")
    return store.read()
