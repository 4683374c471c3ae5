"""``membrane.identity``: ``PayloadIdentity``, the ten identity fields (SPEC section 2).

The class is ``membrane_frame.PayloadIdentity``: the reference's constructor (the ten
fields by name or position, ranges and shape as tuples or lists), ``to_dict``,
``from_dict``, ``fingerprint``, equality and hashing. Field errors raise ``SchemaError``
(``identity_field``), which is a ``ValueError`` as the reference's errors were; values
the reference coerced (``"3"`` for 3, a 3-element range) are refused (SPEC 2.2).
"""

from .._native import PayloadIdentity

__all__ = ["PayloadIdentity"]
