"""Drop-in modules for the format code of the Python implementation (Membrane 3.0.x).

Each sub-module has the name, public names, signatures, defaults, return types and
exception types of the reference's module, so a node switches by changing its imports::

    from membrane.canonical import parse_canonical                        # before
    from membrane_frame.compat.canonical import parse_canonical           # after

``membrane.<name>`` becomes ``membrane_frame.compat.<name>`` for ``canonical``,
``identity``, ``serialization``, ``fragment``, ``errors``, ``compat``, ``gc``,
``snapshot`` and ``hlc``, and ``tools.upgrade_v2_to_v5`` / ``tools.upgrade_v2_to_v5_json``
become ``membrane_frame.compat.upgrade_v2_to_v5`` / ``upgrade_v2_to_v5_json``.

The checks, byte formats and file formats are the library's (SPEC.md): where the
specification deliberately differs from the reference (stricter JSON and fields,
legacy frames' own error code, verified migration, v5 snapshots, ...), these modules
follow the specification; ``python/README.md`` lists every such difference with its
SPEC section and what a node sees.
"""

__all__ = [
    "canonical",
    "compat",
    "errors",
    "fragment",
    "gc",
    "hlc",
    "identity",
    "serialization",
    "snapshot",
    "upgrade_v2_to_v5",
    "upgrade_v2_to_v5_json",
]
