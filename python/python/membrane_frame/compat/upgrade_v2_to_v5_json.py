"""``tools/upgrade_v2_to_v5_json.py``: migrate envelope dicts and JSON-lines files (SPEC 7.2).

Schema 2, 3 and 4 envelopes become v5: ``schema_version`` 5, ``tenant_id`` the default
tenant when absent, ``consistency`` ``"strong"`` and ``hlc`` 0 when absent,
``fingerprint_compat`` derived from the identity when absent. The result must pass the
v5 envelope reader, so a dict that is not a valid envelope raises ``SchemaError``
(the reference bumped the version of any dict). Files are rewritten line by line into
the v5 ``to_bytes`` text, atomically; blank and unparseable lines are kept as they are.
"""

import argparse
import json
import logging
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from .. import _native
from .._errors import MembraneError
from ._files import replace_atomically

logger = logging.getLogger(__name__)

V5_SCHEMA_VERSION: int = _native.ENVELOPE_SCHEMA_VERSION
_LEGACY_VERSIONS = (2, 3, 4)


def migrate_dict(d: Dict[str, Any], *, default_tenant: str = "public") -> Dict[str, Any]:
    """The v5 envelope dict of a schema 2-4 envelope dict (a v5 one is returned as a
    copy); the input is not changed. ``SchemaError`` when it is not a valid envelope."""
    migrated = _native.migrate_envelope(json.dumps(d), default_tenant)
    return dict(d) if migrated is None else json.loads(migrated)


def migrate_file(path: Path, *, default_tenant: str = "public", write: bool = False) -> Tuple[int, int]:
    """Migrate a JSON-lines file of envelopes; ``(rewritten, skipped)``. Lines that
    are v5 already, not envelopes of schema 2-4, or invalid ones are skipped (kept
    as they are; invalid ones logged); blank and unparseable lines are kept and not
    counted."""
    path = Path(path)
    if not path.exists():
        return (0, 0)
    rewritten = 0
    skipped = 0
    lines: List[bytes] = []
    for raw in path.read_bytes().split(b"\n"):
        line = raw.strip()
        version = _schema_version(line)
        if version not in _LEGACY_VERSIONS:
            lines.append(raw)
            if version is not None:
                skipped += 1
            continue
        try:
            migrated = _native.migrate_envelope(line, default_tenant)
        except MembraneError as error:
            logger.warning("%s: kept an envelope that cannot be migrated: %s", path, error)
            lines.append(raw)
            skipped += 1
            continue
        lines.append(raw if migrated is None else migrated)
        rewritten += 1
    if write and rewritten:
        replace_atomically(path, b"\n".join(lines))
    return (rewritten, skipped)


def _schema_version(line: bytes) -> Optional[Any]:
    """The ``schema_version`` of a line holding a JSON object (the value, or False when
    it has none); None for a blank or unparseable line."""
    if not line:
        return None
    try:
        value = json.loads(line)
    except ValueError:
        logger.warning("kept a line that is not JSON: %.60r", line)
        return None
    if not isinstance(value, dict):
        return False
    return value.get("schema_version", False)


def main(argv: Optional[List[str]] = None) -> int:
    """The command line: ``--path FILE_OR_DIR [--tenant T] [--write] [-v]``."""
    parser = argparse.ArgumentParser(
        prog="membrane-upgrade-v2-to-v5-json",
        description="Rewrite schema 2-4 envelopes (JSON lines) as v5, verified.",
    )
    parser.add_argument("--path", required=True, help="a JSON-lines file or a directory of them")
    parser.add_argument("--tenant", default="public", help="tenant_id for envelopes without one")
    parser.add_argument("--write", action="store_true", help="rewrite the files (default: a dry run)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every file")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, format="%(levelname)s %(message)s")
    target = Path(args.path)
    if not target.exists():
        logger.error("Path does not exist: %s", target)
        return 1
    paths = [target] if target.is_file() else sorted(target.rglob("*.jsonl")) + sorted(target.rglob("*.json"))
    total_rewritten = total_skipped = 0
    for path in paths:
        rewritten, skipped = migrate_file(path, default_tenant=args.tenant, write=args.write)
        if rewritten or skipped:
            logger.info("%s %s: rewritten=%d skipped=%d", "wrote" if args.write else "would write", path, rewritten, skipped)
        total_rewritten += rewritten
        total_skipped += skipped
    logger.info("Migration %s (rewritten=%d, skipped=%d)", "applied" if args.write else "dry run", total_rewritten, total_skipped)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
