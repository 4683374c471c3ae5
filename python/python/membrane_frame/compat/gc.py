"""``membrane.gc``: ref counts, tombstones and the sweeper (SPEC section 6).

``RefCount`` and ``TombstoneTable`` keep their state in the library's tables
(``membrane_frame.RefCount`` / ``TombstoneTable``, which grow as needed and hold up to
128 distinct node ids at once), so a tombstone's expiry (``now >= until``), the merge
of a refreshed one (the later ``until``, the union of the nodes) and the gossip map's
text are the library's. Hashes and node ids are 1-128 characters (else ``SchemaError``
or ``UsageError``, both ``ValueError``\\ s). ``Sweeper`` is scheduling, plain Python.
"""

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import FrozenSet, List, Optional, Protocol, Set

from .. import _native


@dataclass(frozen=True)
class Tombstone:
    """A soft delete: ``content_hash`` is gone once ``until`` (Unix seconds) passes."""

    content_hash: str
    until: float
    nodes: FrozenSet[str] = field(default_factory=frozenset)


class RefCount:
    """Per content hash, the node ids holding it. Thread-safe."""

    def __init__(self) -> None:
        self._refs = _native.RefCount()
        #: Held around compound updates by callers, as the reference's lock was.
        self.lock = threading.RLock()

    def acquire(self, content_hash: str, node_id: str) -> None:
        """Record that ``node_id`` holds ``content_hash``."""
        self._refs.acquire(content_hash, node_id)

    def release(self, content_hash: str, node_id: str) -> bool:
        """Drop ``node_id``'s hold; True when the hash is unknown or now unheld."""
        return self._refs.release(content_hash, node_id)

    def holders(self, content_hash: str) -> Set[str]:
        """A copy of the holders of ``content_hash``."""
        return self._refs.holders(content_hash)

    def is_active(self, content_hash: str) -> bool:
        """Whether ``content_hash`` has a holder."""
        return self._refs.is_active(content_hash)

    def forget(self, content_hash: str) -> None:
        """Drop every holder of ``content_hash`` (idempotent)."""
        self._refs.forget(content_hash)

    def total(self) -> int:
        """The number of hashes held."""
        return len(self._refs)

    def __len__(self) -> int:
        return len(self._refs)


class TombstoneTable:
    """Tombstones by content hash; one is active while ``time.time() < until``."""

    def __init__(self) -> None:
        self._table = _native.TombstoneTable()
        #: Held around compound updates by callers, as the reference's lock was.
        self.lock = threading.RLock()

    def record(self, content_hash: str, until: float, node_ids: Optional[Set[str]] = None) -> Tombstone:
        """Record a tombstone or refresh one (the later ``until``, the union of the
        node ids); the stored record."""
        self._table.record(content_hash, until, sorted(node_ids or ()))
        until, nodes = self._table.get(content_hash)
        return Tombstone(content_hash=content_hash, until=until, nodes=nodes)

    def get(self, content_hash: str) -> Optional[Tombstone]:
        """The active tombstone of ``content_hash``; an expired one is removed and
        None returned."""
        now = time.time()
        found = self._table.get(content_hash)
        if found is None:
            return None
        if not self._table.is_active(content_hash, now):
            self._table.remove(content_hash)
            return None
        until, nodes = found
        return Tombstone(content_hash=content_hash, until=until, nodes=nodes)

    def is_active(self, content_hash: str) -> bool:
        """Whether ``content_hash`` has an active tombstone."""
        return self.get(content_hash) is not None

    def sweep_expired(self) -> List[str]:
        """Remove the expired tombstones; their hashes."""
        return self._table.sweep(time.time())

    def merge_gossip(self, text: bytes, now: Optional[float] = None) -> int:
        """Merge a peer's gossip map (``{"<hash>": <until>, ...}``); entries changed."""
        return self._table.merge_gossip(text, now)

    def gossip(self, now: Optional[float] = None) -> bytes:
        """The gossip map of the active tombstones."""
        return self._table.gossip(now)

    def total(self) -> int:
        """The number of tombstones recorded, active or not."""
        return len(self._table)

    def clear(self) -> None:
        """Drop every tombstone."""
        self._table.clear()


class _EvictCallback(Protocol):
    def __call__(self) -> List[str]: ...


#: Observer of the hashes a sweep removed.
SweepHook = Callable[[List[str]], None]


@dataclass
class Sweeper:
    """A daemon thread that runs ``run_once`` every ``interval_sec`` seconds over the
    ``evict_expired`` callback and the ``tombstones`` table it is given (either may be
    None); ``run_once`` may also be called directly with others."""

    interval_sec: float
    stop_event: threading.Event = field(default_factory=threading.Event)
    thread: Optional[threading.Thread] = None
    on_evict_expired: Optional[SweepHook] = None
    on_tombstones_expired: Optional[SweepHook] = None
    on_post_sweep: Optional[SweepHook] = None
    evict_expired: Optional[_EvictCallback] = None
    tombstones: Optional[TombstoneTable] = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if not self.interval_sec > 0:
            raise ValueError(f"Sweeper interval_sec must be > 0, got {self.interval_sec}")

    def start(self) -> None:
        """Start the daemon thread (once)."""
        with self._lock:
            if self.thread is not None and self.thread.is_alive():
                return
            self.stop_event.clear()
            self.thread = threading.Thread(target=self._run, daemon=True, name="membrane-sweeper")
            self.thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the daemon thread and wait up to ``timeout`` seconds for it."""
        self.stop_event.set()
        with self._lock:
            if self.thread is not None:
                self.thread.join(timeout=timeout)
                self.thread = None

    def run_once(
        self,
        evict_expired: Optional[_EvictCallback] = None,
        tombstones: Optional[TombstoneTable] = None,
    ) -> None:
        """One pass: TTL eviction first, then the tombstone sweep; the hooks see what
        each removed, and ``on_post_sweep`` every hash once, sorted."""
        removed: List[str] = []
        if evict_expired is not None:
            evicted = evict_expired()
            if self.on_evict_expired is not None and evicted:
                self.on_evict_expired(evicted)
            removed.extend(evicted)
        if tombstones is not None:
            expired = tombstones.sweep_expired()
            if self.on_tombstones_expired is not None and expired:
                self.on_tombstones_expired(expired)
            removed.extend(expired)
        if self.on_post_sweep is not None and removed:
            self.on_post_sweep(sorted(set(removed)))

    def _run(self) -> None:
        while not self.stop_event.wait(self.interval_sec):
            self.run_once(self.evict_expired, self.tombstones)


__all__ = ["RefCount", "Sweeper", "Tombstone", "TombstoneTable"]
