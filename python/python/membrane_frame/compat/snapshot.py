"""``membrane.snapshot``: cluster snapshots in ``{state_dir}/{node_id}.json`` (SPEC 5).

The files are the library's: written atomically in the v5 form (``schema_version`` 5,
every key sorted), read strictly (schema 5 or the reference's 2, every required field
of its type). ``save`` therefore needs the snapshot's fields (``cluster_epoch``,
``captured_at`` — stamped when absent, as the reference did —, ``membership``,
``shards``, ``server``) and raises ``SchemaError`` for a dict the v5 form cannot hold
(a missing field, or a key it has no place for), where the reference wrote any dict.
``load`` and ``latest`` return the file's JSON as a dict, unknown keys included, and
None for a file that is not a valid snapshot, as the reference did for its checks.
"""

import json
import logging
import os
import time
from pathlib import Path
from typing import Any, Dict, Optional, Union

from .. import _native
from .._errors import MembraneError

logger = logging.getLogger(__name__)

SNAPSHOT_SCHEMA_VERSION: int = _native.SNAPSHOT_SCHEMA_VERSION


class Snapshot:
    """The snapshot files of one state directory (created when missing)."""

    def __init__(self, state_dir: Union[str, "os.PathLike[str]"]) -> None:
        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self._store = _native.SnapshotStore(self.state_dir)

    def path_for(self, node_id: str) -> Path:
        """``{state_dir}/{node_id}.json``."""
        return Path(self._store.path_for(node_id))

    def save(self, node_id: str, payload: Dict[str, Any]) -> Path:
        """Write ``payload`` as ``{node_id}.json`` atomically; the path written."""
        stamped = dict(payload)
        stamped.setdefault("captured_at", time.time())
        snapshot = _native.Snapshot.from_dict(stamped)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        return Path(self._store.save(node_id, snapshot))

    def load(self, node_id: str) -> Optional[Dict[str, Any]]:
        """The snapshot of ``node_id`` as a dict, or None when there is none or it is
        not a valid snapshot (the reason is logged)."""
        if not self.path_for(node_id).exists():
            return None
        try:
            snapshot = self._store.load(node_id)
        except MembraneError as error:
            logger.warning("Could not load snapshot for %s: %s", node_id, error)
            return None
        return json.loads(snapshot.source)

    def latest(self) -> Optional[Dict[str, Any]]:
        """The valid snapshot with the largest ``captured_at`` (ties to the first file
        name), with its path under ``"__path__"``; None when there is none."""
        found = self._store.latest()
        if found is None:
            return None
        path, snapshot = found
        data = json.loads(snapshot.source)
        data.setdefault("__path__", str(path))
        return data

    def remove(self, node_id: str) -> bool:
        """Delete ``{node_id}.json``; whether there was one."""
        try:
            self.path_for(node_id).unlink()
            return True
        except FileNotFoundError:
            return False

    def __len__(self) -> int:
        return sum(1 for _ in self.state_dir.glob("*.json"))


class ClusterEpochGuard:
    """The epoch guard: a snapshot two or more epochs behind the live one is stale."""

    def __init__(self, current: int = 0) -> None:
        self.current = current

    def accept(self, persisted: Optional[int]) -> bool:
        """Whether a snapshot with epoch ``persisted`` (None: without one) may be
        restored: ``persisted >= current - 1``."""
        return _native.epoch_accepted(self.current, persisted)

    def bump(self) -> int:
        """Advance the live epoch by one; the new epoch."""
        self.current += 1
        return self.current


__all__ = ["SNAPSHOT_SCHEMA_VERSION", "ClusterEpochGuard", "Snapshot"]
