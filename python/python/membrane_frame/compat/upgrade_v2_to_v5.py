"""``tools/upgrade_v2_to_v5.py``: migrate stored frames to v5 (SPEC 7.1).

v2 and v4 frames get the v5 magic *and* schema field (bytes 0..6); the rest is kept.
Every result is proved to pass the v5 reader at the trailer level before it is
written, so a file that is not a valid frame is reported and left untouched (the
reference rewrote the magic of any bytes, and left the schema field, so its own v5
reader refused its output). Frames the reference tool half migrated (v5 magic, schema
2 or 4) are completed. Rewrites are atomic; a dry run is the default.
"""

import argparse
import logging
from pathlib import Path
from typing import Dict, Iterator, List, Optional

from .. import _native
from .._errors import MembraneError
from ._files import FileBuffer, replace_atomically

logger = logging.getLogger(__name__)

V5_MAGIC: bytes = _native.MAGIC
V4_MAGIC: bytes = _native.MAGIC_V4
V2_MAGIC: bytes = _native.MAGIC_V2
HEADER_LEN: int = _native.HEADER_LEN


def detect_magic(buf: bytes) -> int:
    """5, 4 or 2 for the frame magic ``buf`` starts with; 0 for anything else."""
    return _native.frame_magic_version(buf)


def migrate_v4_to_v5(buf: bytes) -> bytes:
    """The v5 frame of a v4 frame (a v5 frame is returned as it is). Raises
    ``SchemaError`` / ``CorruptPayloadError`` when the result would not be a valid v5
    frame."""
    migrated = _native.migrate_frame(buf)
    return bytes(buf) if migrated is None else migrated


def migrate_v2_to_v5(buf: bytes, *, v2_tenant: str, v3_tenant: str) -> bytes:
    """The v5 frame of a v2 frame, as ``migrate_v4_to_v5``. Frames hold no tenant, so
    the two tenant ids are informational, as in the reference."""
    del v2_tenant, v3_tenant
    return migrate_v4_to_v5(buf)


def walk_blobs(root: Path) -> Iterator[Path]:
    """Every ``*.blob`` file under ``root``."""
    for path in sorted(Path(root).rglob("*.blob")):
        if path.is_file():
            yield path


def migrate(
    root: Path,
    *,
    v2_tenant: str = "public",
    v3_tenant: str = "public",
    dry_run: bool = True,
) -> Dict[str, int]:
    """Migrate every ``*.blob`` under ``root``. Returns counts: ``"v4"`` and ``"v2"``
    (migrated, or to be migrated in a dry run), ``"v5_noop"``, and ``"failed"`` (not a
    valid frame once migrated, or unreadable: left untouched and logged) and
    ``"unknown"`` (not a Membrane frame: skipped and logged)."""
    del v2_tenant, v3_tenant
    counts = {"v4": 0, "v2": 0, "v5_noop": 0, "failed": 0, "unknown": 0}
    files = FileBuffer()
    for path in walk_blobs(root):
        try:
            with files.read(path) as buf:
                magic = detect_magic(buf)
                if magic == 0:
                    counts["unknown"] += 1
                    logger.warning("Skipping %s (not a Membrane frame)", path)
                    continue
                # Either call proves the v5 result valid (one pass over the payload);
                # the migration rewrites bytes 0..6 of the buffer, nothing is copied.
                if dry_run:
                    rewrites = _native.plan_migration(buf)[0] != "v5"
                else:
                    rewrites = _native.migrate_frame_in_place(buf)[0] != "v5"
                    if rewrites:
                        replace_atomically(path, buf)
            if not rewrites:
                counts["v5_noop"] += 1
                continue
            # A frame the reference tool half migrated already has the v5 magic.
            key = f"v{magic}"
            counts[key] = counts.get(key, 0) + 1
            logger.info("%s %s (%s -> v5)", "[dry-run] would rewrite" if dry_run else "Rewrote", path, key)
        except (MembraneError, OSError) as error:
            counts["failed"] += 1
            logger.warning("Left %s untouched: %s", path, error)
    return counts


def main(argv: Optional[List[str]] = None) -> int:
    """The command line: ``--root DIR [--write] [-v]``; 1 when a file failed."""
    parser = argparse.ArgumentParser(
        prog="membrane-upgrade-v2-to-v5",
        description="Migrate stored frames from the v2 / v4 format to v5 (verified, atomic).",
    )
    parser.add_argument("--root", required=True, type=Path, help="directory to walk for *.blob files")
    parser.add_argument("--v2-tenant", default="public", help="source tenant (informational)")
    parser.add_argument("--v3-tenant", default="public", help="target tenant (informational)")
    parser.add_argument("--write", action="store_true", help="rewrite the files (default: a dry run)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every file")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, format="%(levelname)s %(message)s")
    if not args.root.exists():
        logger.error("Root does not exist: %s", args.root)
        return 1
    counts = migrate(args.root, v2_tenant=args.v2_tenant, v3_tenant=args.v3_tenant, dry_run=not args.write)
    logger.info("Migration %s: %s", "applied" if args.write else "planned (dry run)", counts)
    return 1 if counts["failed"] else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
