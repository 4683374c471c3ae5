"""Type stubs for membrane_frame (the Rust module membrane_frame._native and write_frame)."""

import mmap
from typing import BinaryIO, Iterator, List, Optional, Sequence, Tuple, Union

from os import PathLike

Buffer = Union[bytes, bytearray, memoryview, mmap.mmap, "numpy.ndarray"]  # noqa: F821
Level = str  # "layout" | "identity" | "trailer" | "full"
Path = Union[str, "PathLike[str]"]

__version__: str

class MembraneError(Exception):
    """A format error: `code` (SPEC section 8 name), `class_`, `offset`, `field`, `reason`."""

    code: str
    class_: str
    offset: Optional[int]
    field: Optional[str]
    reason: str

class SchemaError(MembraneError):
    """Wrong format or version: do not retry; maybe migrate."""

class CorruptPayloadError(MembraneError):
    """Our format, damaged bytes."""

class UsageError(MembraneError):
    """The API was misused."""

class PayloadIdentity:
    def __init__(
        self,
        payload_hash: str,
        model_id: str,
        model_revision: str,
        tokenizer_name: str,
        tokenizer_revision: str,
        layer_range: Sequence[int],
        head_range: Sequence[int],
        token_span: Sequence[int],
        dtype: str,
        shape: Sequence[int],
    ) -> None: ...
    @staticmethod
    def from_dict(values: dict) -> "PayloadIdentity": ...
    @staticmethod
    def from_json(data: Buffer) -> "PayloadIdentity": ...
    def to_dict(self) -> dict: ...
    def canonical_json(self) -> bytes: ...
    def fingerprint(self) -> str: ...
    def with_payload_hash(self, payload_hash: str) -> "PayloadIdentity": ...
    @property
    def json(self) -> bytes: ...
    @property
    def is_canonical(self) -> bool: ...
    @property
    def payload_hash(self) -> str: ...
    @property
    def model_id(self) -> str: ...
    @property
    def model_revision(self) -> str: ...
    @property
    def tokenizer_name(self) -> str: ...
    @property
    def tokenizer_revision(self) -> str: ...
    @property
    def layer_range(self) -> Tuple[int, int]: ...
    @property
    def head_range(self) -> Tuple[int, int]: ...
    @property
    def token_span(self) -> Tuple[int, int]: ...
    @property
    def dtype(self) -> str: ...
    @property
    def shape(self) -> List[int]: ...
    @property
    def tensor_bytes(self) -> Optional[int]: ...

class Frame:
    @staticmethod
    def parse(buf: Buffer, level: Level = "trailer", prefix: bool = False) -> "Frame": ...
    identity: Optional[PayloadIdentity]
    payload: Optional[memoryview]
    frame_len: int
    payload_len: int
    identity_len: int
    payload_offset: int
    padding: int
    level: str
    @property
    def trailer(self) -> bytes: ...
    @property
    def payload_sha256(self) -> Optional[str]: ...

class StreamVerifier:
    def __init__(self, level: Level = "trailer", prefix: bool = False, identity_limit: int = 65536) -> None: ...
    def feed(self, chunk: Buffer) -> int: ...
    def finish(self) -> Frame: ...
    @property
    def received(self) -> int: ...
    @property
    def consumed(self) -> Optional[int]: ...

class FragmentMessage:
    def __init__(
        self,
        tenant_id: str,
        identity: PayloadIdentity,
        payload_ref: Optional[str] = None,
        payload_size: int = 0,
        ttl: float = 0.0,
        reuse_score: float = 0.0,
        version_id: int = 1,
        consistency: str = "strong",
        hlc: int = 0,
        fingerprint_compat: Optional[str] = None,
    ) -> None: ...
    @staticmethod
    def from_bytes(data: Union[str, Buffer]) -> "FragmentMessage": ...
    def to_bytes(self) -> bytes: ...
    @property
    def is_canonical(self) -> bool: ...
    @property
    def schema_version(self) -> int: ...
    @property
    def tenant_id(self) -> str: ...
    @property
    def identity(self) -> PayloadIdentity: ...
    @property
    def payload_ref(self) -> Optional[str]: ...
    @property
    def payload_size(self) -> int: ...
    @property
    def ttl(self) -> float: ...
    @property
    def reuse_score(self) -> float: ...
    @property
    def version_id(self) -> int: ...
    @property
    def consistency(self) -> str: ...
    @property
    def hlc(self) -> int: ...
    @property
    def fingerprint_compat(self) -> str: ...

class VerifyFiles(Iterator[Tuple[str, str, Optional[int]]]):
    def __iter__(self) -> "VerifyFiles": ...
    def __next__(self) -> Tuple[str, str, Optional[int]]: ...

def check_frame(buf: Buffer, level: Level = "trailer") -> str: ...
def parse_canonical(buf: Buffer) -> Tuple[PayloadIdentity, memoryview]: ...
def canonicalize(
    identity: PayloadIdentity, payload: Buffer, fill_payload_hash: bool = False, align: int = 1, base: int = 0
) -> bytes: ...
def frame_parts(
    identity: PayloadIdentity, payload: Buffer, fill_payload_hash: bool = False, align: int = 1, base: int = 0
) -> Tuple[bytes, bytes]: ...
def write_frame(
    dest: Union[int, BinaryIO],
    identity: PayloadIdentity,
    payload: Buffer,
    fill_payload_hash: bool = False,
    align: int = 1,
    base: Optional[int] = None,
) -> int: ...
def check_envelope(text: Union[str, Buffer]) -> str: ...
def fingerprint_compat(
    model_id: str,
    model_revision: str,
    tokenizer_name: str,
    tokenizer_revision: str,
    dtype: str,
    config_hash: str = "",
    model_layout_version: int = 0,
    tokenizer_layout_version: int = 0,
) -> str: ...
def verify_files(paths: Union[Path, Sequence[Path]], level: Level = "trailer", threads: Optional[int] = None) -> VerifyFiles: ...
