"""``membrane.errors``: the reference's exception hierarchy, shared with ``membrane_frame``.

``SchemaError`` and ``CorruptPayloadError`` are the very classes ``membrane_frame``
raises (``membrane_frame.MembraneError`` subclasses with the SPEC section 8 ``code``,
``class_``, ``offset``, ``field`` and ``reason``); ``SchemaError`` is also a
``ValueError``, as the reference raised ``ValueError`` for the identity and field checks
it now reports.
"""

from .._errors import (
    AuthError,
    BackendError,
    CapacityError,
    ConfigError,
    ConnectionError,
    CorruptPayloadError,
    Error,
    MigrationError,
    NetworkError,
    PersistenceError,
    SchemaError,
    TenantScopeError,
    TimeoutError,
)

__all__ = [
    name for name in sorted(globals()) if isinstance(globals()[name], type) and issubclass(globals()[name], Exception)
]
