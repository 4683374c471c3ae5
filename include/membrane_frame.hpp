/*
 * membrane_frame.hpp: a header-only C++17 wrapper over the C ABI in membrane_frame.h.
 *
 * Hand-written (not generated). Same rules as the C ABI (docs/c-abi.md):
 *  - nothing here allocates except the helpers that return std::string, std::vector or
 *    OwnedIdentity (marked "allocates");
 *  - views (Bytes, Span, FrameView, Identity, Envelope) point into buffers the caller
 *    keeps alive. Where a view of a temporary would dangle (a digest's hex(), parsing an
 *    owning container returned by value, an owned identity's view) the overload is
 *    deleted, and clang's lifetimebound analysis marks the rest;
 *  - errors are values: Result<T> holds a T or a 16-byte Error (code, field, offset),
 *    and a success costs nothing beyond the C call: no library call, no message. The
 *    message is built when asked for. Result::value() on an error throws
 *    membrane::Exception (a std::system_error) when exceptions are enabled and calls
 *    std::abort() when they are not (-fno-exceptions); check ok() first to never need
 *    either;
 *  - levels, modes, fields, dtypes and codes are enum classes: a mode where a level is
 *    expected does not compile. Code is a std::error_code enum.
 *
 *   auto frame = membrane::FrameView::parse(buf, membrane::ReadOptions().level(membrane::Level::full));
 *   if (!frame) { std::fprintf(stderr, "%s\n", frame.error().message().c_str()); return 1; }
 *   auto model = frame->identity()->view(membrane::Field::model_id);
 */
/*
 * The C functions without a wrapper here, and why (CI checks that every function of
 * membrane_frame.h is either called below or named in this list):
 * BEGIN C-ONLY
 *   mbr_frame_encode mbr_frame_write_head mbr_chunked_writer_begin
 *       encode(), write_head() and ChunkedWriter::begin() call the _with forms, which
 *       with default options are these
 *   mbr_snapshot_parse mbr_snapshot_parse_guarded mbr_snapshot_parse_indexed
 *   mbr_snapshot_info_get
 *   mbr_snapshot_member mbr_snapshot_replica_len mbr_snapshot_string
 *   mbr_snapshot_set_cluster_epoch mbr_snapshot_is_canonical mbr_snapshot_write
 *   mbr_snapshot_cursor_init mbr_snapshot_cursor_next mbr_snapshot_cursor_member
 *   mbr_snapshot_cursor_replica_len mbr_snapshot_cursor_string mbr_snapshot_cursor_text
 *   mbr_snapshot_cursor_replica_texts mbr_snapshot_cursor_read_primary
 *   mbr_snapshot_cursor_read_replica
 *   mbr_tombstone_table_init mbr_tombstone_table_stats mbr_tombstone_record
 *   mbr_tombstone_get mbr_tombstone_is_active mbr_tombstone_remove mbr_tombstone_sweep
 *   mbr_tombstone_merge_gossip mbr_tombstone_merge_table mbr_tombstone_write_gossip
 *   mbr_tombstone_apply_op_tombstone mbr_tombstone_apply_op_delete
 *   mbr_op_tombstone_parse mbr_op_delete_parse mbr_op_tombstone_write mbr_op_delete_write
 *   mbr_refcounts_init mbr_refcounts_stats mbr_refcounts_acquire mbr_refcounts_release
 *   mbr_refcounts_holders mbr_refcounts_forget
 *       cluster metadata (membrane_frame_cluster.h): storage agents' tooling, not an
 *       engine's frame path; the C calls are used from C++ as they are (the header is
 *       C++-clean), and check_snapshot(), check_epoch(), check_gossip() and
 *       gossip_merge() wrap the checks
 * END C-ONLY
 */
#ifndef MEMBRANE_FRAME_HPP
#define MEMBRANE_FRAME_HPP

#include "membrane_frame.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <new>
#include <optional>
#if __cplusplus >= 202002L && __has_include(<span>)
#include <span>
#endif
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
#define MEMBRANE_FRAME_HPP_EXCEPTIONS 1
#endif

/// The C++ wrapper's version: the C header's (MBR_VERSION_*), which it ships with.
#define MEMBRANE_FRAME_HPP_VERSION MBR_VERSION_NUMBER

/// Marks a parameter whose referent the returned view points into, so that clang warns
/// (-Wdangling) when it is a temporary. Empty where the compiler has no such analysis.
#if defined(__has_cpp_attribute)
#if __has_cpp_attribute(clang::lifetimebound)
#define MBR_LIFETIMEBOUND [[clang::lifetimebound]]
#endif
#endif
#ifndef MBR_LIFETIMEBOUND
#define MBR_LIFETIMEBOUND
#endif

#if defined(__GNUC__) || defined(__clang__)
#define MEMBRANE_FRAME_HPP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define MEMBRANE_FRAME_HPP_UNLIKELY(x) (x)
#endif

namespace membrane {

static_assert(sizeof(mbr_identity) == MBR_IDENTITY_SIZE && alignof(mbr_identity) == MBR_IDENTITY_ALIGN,
              "mbr_identity storage");
static_assert(sizeof(mbr_stream_verifier) == MBR_STREAM_VERIFIER_SIZE &&
                  alignof(mbr_stream_verifier) == MBR_STREAM_VERIFIER_ALIGN,
              "mbr_stream_verifier storage");
static_assert(sizeof(mbr_chunked_writer) == MBR_CHUNKED_WRITER_SIZE &&
                  alignof(mbr_chunked_writer) == MBR_CHUNKED_WRITER_ALIGN,
              "mbr_chunked_writer storage");
static_assert(sizeof(mbr_envelope) == MBR_ENVELOPE_SIZE && alignof(mbr_envelope) == MBR_ENVELOPE_ALIGN,
              "mbr_envelope storage");
static_assert(sizeof(mbr_sha256_state) == MBR_SHA256_STATE_SIZE && alignof(mbr_sha256_state) == MBR_SHA256_STATE_ALIGN,
              "mbr_sha256_state storage");

/* ---------------------------------------------------------------------------------- */
/* Typed numbers: the C header's MBR_* constants as enum classes                       */

/// A status: MBR_OK, a SPEC §8 code, a usage code (100..107) or MBR_PANIC.
enum class Code : std::uint32_t {
    ok = MBR_OK,
    too_short = MBR_TOO_SHORT,
    bad_magic = MBR_BAD_MAGIC,
    legacy_frame = MBR_LEGACY_FRAME,
    schema_mismatch = MBR_SCHEMA_MISMATCH,
    reserved_nonzero = MBR_RESERVED_NONZERO,
    identity_overrun = MBR_IDENTITY_OVERRUN,
    identity_too_large = MBR_IDENTITY_TOO_LARGE,
    identity_json = MBR_IDENTITY_JSON,
    identity_field = MBR_IDENTITY_FIELD,
    payload_overrun = MBR_PAYLOAD_OVERRUN,
    trailing_bytes = MBR_TRAILING_BYTES,
    trailer_mismatch = MBR_TRAILER_MISMATCH,
    payload_hash_mismatch = MBR_PAYLOAD_HASH_MISMATCH,
    envelope_json = MBR_ENVELOPE_JSON,
    envelope_version = MBR_ENVELOPE_VERSION,
    envelope_missing_field = MBR_ENVELOPE_MISSING_FIELD,
    envelope_field = MBR_ENVELOPE_FIELD,
    snapshot_json = MBR_SNAPSHOT_JSON,
    snapshot_version = MBR_SNAPSHOT_VERSION,
    snapshot_field = MBR_SNAPSHOT_FIELD,
    stale_epoch = MBR_STALE_EPOCH,
    tombstone_json = MBR_TOMBSTONE_JSON,
    tombstone_field = MBR_TOMBSTONE_FIELD,
    proto_decode = MBR_PROTO_DECODE,
    proto_field = MBR_PROTO_FIELD,
    chunk_sequence = MBR_CHUNK_SEQUENCE,
    chunk_digest = MBR_CHUNK_DIGEST,
    null_pointer = MBR_NULL_POINTER,
    buffer_too_small = MBR_BUFFER_TOO_SMALL,
    length_mismatch = MBR_LENGTH_MISMATCH,
    table_full = MBR_TABLE_FULL,
    io = MBR_IO,
    invalid_argument = MBR_INVALID_ARGUMENT,
    invalid_state = MBR_INVALID_STATE,
    misaligned = MBR_MISALIGNED,
    panic = MBR_PANIC,
};

/// What a caller does about an error: schema (do not retry; maybe migrate), corrupt
/// (damaged bytes), usage (a bug in the call), io.
enum class ErrorClass : std::uint32_t {
    none = MBR_CLASS_NONE,
    schema = MBR_CLASS_SCHEMA,
    corrupt = MBR_CLASS_CORRUPT,
    usage = MBR_CLASS_USAGE,
    io = MBR_CLASS_IO,
};

/// How much a reader checks (SPEC §1.2).
enum class Level : std::uint32_t {
    layout = MBR_LEVEL_LAYOUT,
    identity = MBR_LEVEL_IDENTITY,
    trailer = MBR_LEVEL_TRAILER,
    full = MBR_LEVEL_FULL,
};

/// Exactly one frame in the buffer, or a frame at its start followed by more bytes.
enum class Mode : std::uint32_t {
    exact = MBR_MODE_EXACT,
    prefix = MBR_MODE_PREFIX,
};

/// An identity field (SPEC §2.1). `none`: an error about no field, or about one that is
/// not an identity field (an argument, an envelope field: the C call's mbr_error names it).
enum class Field : std::uint32_t {
    payload_hash = MBR_FIELD_PAYLOAD_HASH,
    model_id = MBR_FIELD_MODEL_ID,
    model_revision = MBR_FIELD_MODEL_REVISION,
    tokenizer_name = MBR_FIELD_TOKENIZER_NAME,
    tokenizer_revision = MBR_FIELD_TOKENIZER_REVISION,
    layer_range = MBR_FIELD_LAYER_RANGE,
    head_range = MBR_FIELD_HEAD_RANGE,
    token_span = MBR_FIELD_TOKEN_SPAN,
    dtype = MBR_FIELD_DTYPE,
    shape = MBR_FIELD_SHAPE,
    none = 0xffffffffu,
};

/// A set of identity fields (bit `1 << field`), for Identity::differences.
class FieldSet {
  public:
    constexpr FieldSet() noexcept = default;
    constexpr FieldSet(Field field) noexcept : bits_(field == Field::none ? 0 : 1u << static_cast<std::uint32_t>(field)) {}
    static constexpr FieldSet all() noexcept { return from_bits(MBR_FIELDS_ALL); }
    /// model_id, model_revision, tokenizer_name, tokenizer_revision, dtype: what decides
    /// whether a cached tensor fits a loaded model.
    static constexpr FieldSet model() noexcept { return from_bits(MBR_FIELDS_MODEL); }
    static constexpr FieldSet from_bits(std::uint32_t bits) noexcept { return FieldSet(bits, 0); }
    constexpr std::uint32_t bits() const noexcept { return bits_; }
    constexpr bool empty() const noexcept { return bits_ == 0; }
    constexpr bool contains(Field field) const noexcept { return (bits_ & FieldSet(field).bits_) != 0; }
    /// The first field in the set (declaration order), or Field::none.
    constexpr Field first() const noexcept {
        for (std::uint32_t f = 0; f < 32; f++)
            if (bits_ & (1u << f)) return static_cast<Field>(f);
        return Field::none;
    }
    friend constexpr FieldSet operator|(FieldSet a, FieldSet b) noexcept { return FieldSet(a.bits_ | b.bits_, 0); }
    friend constexpr bool operator==(FieldSet a, FieldSet b) noexcept { return a.bits_ == b.bits_; }
    friend constexpr bool operator!=(FieldSet a, FieldSet b) noexcept { return a.bits_ != b.bits_; }

  private:
    constexpr FieldSet(std::uint32_t bits, int) noexcept : bits_(bits) {}
    std::uint32_t bits_ = 0;
};
constexpr FieldSet operator|(Field a, Field b) noexcept { return FieldSet(a) | FieldSet(b); }

/// A tensor element type (SPEC §2.2).
enum class Dtype : std::uint32_t {
    float16 = MBR_DTYPE_FLOAT16,
    bfloat16 = MBR_DTYPE_BFLOAT16,
    float32 = MBR_DTYPE_FLOAT32,
    float64 = MBR_DTYPE_FLOAT64,
    int8 = MBR_DTYPE_INT8,
    int16 = MBR_DTYPE_INT16,
    int32 = MBR_DTYPE_INT32,
    int64 = MBR_DTYPE_INT64,
    uint8 = MBR_DTYPE_UINT8,
    fp8_e4m3 = MBR_DTYPE_FP8_E4M3,
    fp8_e5m2 = MBR_DTYPE_FP8_E5M2,
    nf4 = MBR_DTYPE_NF4,
};

/// An envelope's consistency (SPEC §3.1).
enum class Consistency : std::uint32_t {
    strong = MBR_CONSISTENCY_STRONG,
    quorum = MBR_CONSISTENCY_QUORUM,
    eventual = MBR_CONSISTENCY_EVENTUAL,
};

/// An envelope's string fields.
enum class EnvelopeField : std::uint32_t {
    tenant_id = MBR_ENVELOPE_FIELD_TENANT_ID,
    payload_ref = MBR_ENVELOPE_FIELD_PAYLOAD_REF,
    consistency = MBR_ENVELOPE_FIELD_CONSISTENCY,
    fingerprint_compat = MBR_ENVELOPE_FIELD_FINGERPRINT_COMPAT,
};

/// What a migration found (SPEC §7).
enum class MigrationKind : std::uint32_t {
    already_v5 = MBR_MIGRATION_ALREADY_V5,
    legacy = MBR_MIGRATION_LEGACY,
    half_migrated = MBR_MIGRATION_HALF_MIGRATED,
};

/// The C number of a typed value (for the C functions).
template <class E, class = std::enable_if_t<std::is_enum<E>::value>>
constexpr std::uint32_t to_c(E value) noexcept {
    return static_cast<std::uint32_t>(value);
}

/// "trailer_mismatch", ... (static).
inline std::string_view name(Code code) noexcept { return mbr_status_name(to_c(code)); }
/// "float16", ... (static).
inline std::string_view name(Dtype dtype) noexcept { return mbr_dtype_name(to_c(dtype)); }
/// "layer_range", ... ("unknown" for Field::none; static).
inline std::string_view name(Field field) noexcept { return mbr_field_name(to_c(field)); }
/// "strong", ... (static).
inline std::string_view name(Consistency consistency) noexcept { return mbr_consistency_name(to_c(consistency)); }
/// "schema", "corrupt", ... (static).
inline std::string_view name(ErrorClass error_class) noexcept { return mbr_class_name(to_c(error_class)); }
/// One-line description of a status (static).
inline std::string_view description(Code code) noexcept { return mbr_status_str(to_c(code)); }
/// Bits per element of a dtype (16 for float16, 4 for nf4).
inline std::uint32_t bits(Dtype dtype) noexcept {
    std::uint32_t out = 0;
    std::uint32_t status = mbr_dtype_bits(to_c(dtype), &out);
    (void)status; // MBR_OK for every Dtype value
    return out;
}
/// The dtype of a name ("float16", ...: exact, case-sensitive); std::nullopt for none.
inline std::optional<Dtype> dtype_from_name(std::string_view name) noexcept {
    std::uint32_t out = 0;
    if (mbr_dtype_from_name(name.data(), name.size(), &out) != MBR_OK) return std::nullopt;
    return static_cast<Dtype>(out);
}

/* ---------------------------------------------------------------------------------- */
/* Byte ranges                                                                        */

namespace detail {
template <class R>
using data_t = decltype(std::data(std::declval<R &>()));

/// A contiguous range: std::data and std::size work on it and std::data is a pointer.
template <class R, class = void>
struct is_contiguous : std::false_type {};
template <class R>
struct is_contiguous<R, std::void_t<data_t<R>, decltype(std::size(std::declval<R &>()))>>
    : std::is_pointer<data_t<R>> {};

template <class R>
using element_t = std::remove_pointer_t<data_t<R>>;

/// Elements that are themselves byte ranges: a list of them is a list of ranges
/// (Span<Bytes>), never the bytes of the list.
template <class T>
struct is_byte_range_list : std::is_same<std::remove_cv_t<T>, mbr_bytes> {};

/// A type that refers to memory it does not own (copying it copies the reference).
template <class R>
struct is_view : std::false_type {};
template <class C, class Tr>
struct is_view<std::basic_string_view<C, Tr>> : std::true_type {};
#if defined(__cpp_lib_span)
template <class T, std::size_t N>
struct is_view<std::span<T, N>> : std::true_type {};
#endif

/// An rvalue owning container (a std::vector or std::string returned by value): a view
/// of it dangles at the end of the full expression.
template <class R>
struct is_owning_rvalue
    : std::integral_constant<bool, !std::is_lvalue_reference<R>::value &&
                                       is_contiguous<std::remove_reference_t<R>>::value &&
                                       !is_view<std::remove_cv_t<std::remove_reference_t<R>>>::value> {};
template <class R>
using if_owning_rvalue = std::enable_if_t<is_owning_rvalue<R>::value, int>;
} // namespace detail

/// Read-only bytes: pointer and length (a span). Does not own what it points to. Made
/// from any contiguous range of plain values (std::vector<std::uint16_t>,
/// std::string_view, std::span, std::array, a C array), from a C string (its NUL left
/// out) or from a pointer and a length.
class Bytes {
  public:
    constexpr Bytes() noexcept = default;
    constexpr Bytes(const std::uint8_t *data, std::size_t size) noexcept : data_(data), size_(size) {}
    Bytes(const void *data, std::size_t size) noexcept : data_(static_cast<const std::uint8_t *>(data)), size_(size) {}
    Bytes(std::string_view text) noexcept : Bytes(text.data(), text.size()) {}
    /// A C string (a string literal, say): the bytes before its NUL; NULL is empty.
    Bytes(const char *c_string) noexcept : Bytes(c_string, c_string != nullptr ? std::strlen(c_string) : 0) {}
    template <class R, class = std::enable_if_t<detail::is_contiguous<R>::value &&
                                                !std::is_array<std::remove_reference_t<R>>::value &&
                                                !detail::is_byte_range_list<detail::element_t<R>>::value>>
    Bytes(R &&range) noexcept
        : Bytes(static_cast<const void *>(std::data(range)), std::size(range) * sizeof(detail::element_t<R>)) {
        static_assert(std::is_trivially_copyable<detail::element_t<R>>::value, "Bytes over plain values");
    }
    template <class T, std::size_t N,
              class = std::enable_if_t<!std::is_same<std::remove_cv_t<T>, char>::value &&
                                       !detail::is_byte_range_list<T>::value>>
    Bytes(T (&array)[N]) noexcept : Bytes(static_cast<const void *>(array), N * sizeof(T)) {
        static_assert(std::is_trivially_copyable<T>::value, "Bytes over plain values");
    }

    constexpr const std::uint8_t *data() const noexcept { return data_; }
    constexpr std::size_t size() const noexcept { return size_; }
    constexpr bool empty() const noexcept { return size_ == 0; }
    constexpr const std::uint8_t *begin() const noexcept { return data_; }
    constexpr const std::uint8_t *end() const noexcept { return data_ + size_; }
    constexpr const std::uint8_t &operator[](std::size_t i) const noexcept { return data_[i]; }
    std::string_view as_string_view() const noexcept {
        return std::string_view(reinterpret_cast<const char *>(data_), size_);
    }
    /// The first `n` bytes (n <= size()).
    constexpr Bytes first(std::size_t n) const noexcept { return Bytes(data_, n); }
    /// The bytes from `offset` on (offset <= size()).
    constexpr Bytes subspan(std::size_t offset) const noexcept { return Bytes(data_ + offset, size_ - offset); }
#if defined(__cpp_lib_span)
    operator std::span<const std::uint8_t>() const noexcept { return {data_, size_}; }
#endif

  private:
    const std::uint8_t *data_ = nullptr;
    std::size_t size_ = 0;
};

/// Writable bytes: pointer and length. Does not own what it points to. Made from any
/// writable contiguous range of plain values (an lvalue: std::vector<std::uint8_t>&,
/// std::array&, std::span<std::uint8_t>, a C array) or from a pointer and a length.
class MutableBytes {
  public:
    constexpr MutableBytes() noexcept = default;
    constexpr MutableBytes(std::uint8_t *data, std::size_t size) noexcept : data_(data), size_(size) {}
    MutableBytes(void *data, std::size_t size) noexcept : data_(static_cast<std::uint8_t *>(data)), size_(size) {}
    template <class R, class = std::enable_if_t<detail::is_contiguous<R>::value &&
                                                !std::is_const<detail::element_t<R>>::value &&
                                                (std::is_lvalue_reference<R>::value ||
                                                 detail::is_view<std::remove_cv_t<std::remove_reference_t<R>>>::value)>>
    MutableBytes(R &&range) noexcept
        : MutableBytes(static_cast<void *>(std::data(range)), std::size(range) * sizeof(detail::element_t<R>)) {
        static_assert(std::is_trivially_copyable<detail::element_t<R>>::value, "MutableBytes over plain values");
    }

    constexpr std::uint8_t *data() const noexcept { return data_; }
    constexpr std::size_t size() const noexcept { return size_; }
    constexpr bool empty() const noexcept { return size_ == 0; }
    constexpr std::uint8_t *begin() const noexcept { return data_; }
    constexpr std::uint8_t *end() const noexcept { return data_ + size_; }
    operator Bytes() const noexcept { return Bytes(data_, size_); }
#if defined(__cpp_lib_span)
    operator std::span<std::uint8_t>() const noexcept { return {data_, size_}; }
#endif

  private:
    std::uint8_t *data_ = nullptr;
    std::size_t size_ = 0;
};

/// A read-only run of `T` in place (std::span<const T> where C++20 has it: the two
/// convert into each other). Does not own what it points to; made from an lvalue
/// contiguous range of T, or a view.
template <class T>
class Span {
  public:
    constexpr Span() noexcept = default;
    constexpr Span(const T *data, std::size_t size) noexcept : data_(data), size_(size) {}
    template <class R, class = std::enable_if_t<
                           detail::is_contiguous<R>::value &&
                           std::is_same<std::remove_cv_t<detail::element_t<R>>, T>::value &&
                           (std::is_lvalue_reference<R>::value ||
                            detail::is_view<std::remove_cv_t<std::remove_reference_t<R>>>::value)>>
    constexpr Span(R &&range) noexcept : data_(std::data(range)), size_(std::size(range)) {}
#if defined(__cpp_lib_span)
    operator std::span<const T>() const noexcept { return std::span<const T>(data_, size_); }
#endif
    constexpr const T *data() const noexcept { return data_; }
    constexpr std::size_t size() const noexcept { return size_; }
    constexpr bool empty() const noexcept { return size_ == 0; }
    constexpr const T *begin() const noexcept { return data_; }
    constexpr const T *end() const noexcept { return data_ + size_; }
    constexpr const T &operator[](std::size_t i) const noexcept { return data_[i]; }

  private:
    const T *data_ = nullptr;
    std::size_t size_ = 0;
};

namespace detail {
template <>
struct is_byte_range_list<Bytes> : std::true_type {};
template <>
struct is_byte_range_list<const Bytes> : std::true_type {};
} // namespace detail

static_assert(std::is_standard_layout<Bytes>::value && sizeof(Bytes) == sizeof(mbr_bytes) &&
                  alignof(Bytes) == alignof(mbr_bytes),
              "a Bytes is laid out as an mbr_bytes (pointer, length), so a list of them is one");

namespace detail {
/// A list of Bytes as the C ABI's list of mbr_bytes (the same layout, checked above).
inline const mbr_bytes *c_ranges(const Bytes *ranges) noexcept { return reinterpret_cast<const mbr_bytes *>(ranges); }

template <class T>
struct is_view<Span<T>> : std::true_type {};
template <>
struct is_view<Bytes> : std::true_type {};
template <>
struct is_view<MutableBytes> : std::true_type {};
} // namespace detail

/* ---------------------------------------------------------------------------------- */
/* Errors                                                                             */

/// The std::error_category of Code ("membrane"): std::error_code(Code::...) works.
class ErrorCategory final : public std::error_category {
  public:
    const char *name() const noexcept override { return "membrane"; }
    std::string message(int code) const override { return mbr_status_str(static_cast<std::uint32_t>(code)); }
};
inline const std::error_category &error_category() noexcept {
    static const ErrorCategory category;
    return category;
}
inline std::error_code make_error_code(Code code) noexcept {
    return std::error_code(static_cast<int>(code), error_category());
}

/// Why a call failed: its code, the identity field it concerns (if any) and the byte
/// offset (if any). 16 bytes of plain data; the text is made only when asked for.
class Error {
  public:
    constexpr Error() noexcept = default;
    constexpr explicit Error(Code code, Field field = Field::none, std::uint64_t offset = MBR_NO_OFFSET) noexcept
        : code_(code), field_(field), offset_(offset) {}
    /// MBR_BUFFER_TOO_SMALL with the length needed.
    static constexpr Error buffer_too_small(std::uint64_t needed) noexcept {
        return Error(Code::buffer_too_small, Field::none, needed);
    }
    /// From a C status and the mbr_error the call filled (or did not).
    static Error from_c(std::uint32_t status, const mbr_error &detail) noexcept {
        if (detail.status != status) return Error(static_cast<Code>(status));
        if (status == MBR_BUFFER_TOO_SMALL) return buffer_too_small(detail.needed);
        return Error(static_cast<Code>(status), field_named(detail.field), detail.offset);
    }

    constexpr Code code() const noexcept { return code_; }
    constexpr std::uint32_t status() const noexcept { return static_cast<std::uint32_t>(code_); }
    constexpr bool ok() const noexcept { return code_ == Code::ok; }
    /// "trailer_mismatch", ...
    std::string_view name() const noexcept { return membrane::name(code_); }
    ErrorClass error_class() const noexcept { return static_cast<ErrorClass>(mbr_status_class(status())); }
    bool is_schema() const noexcept { return error_class() == ErrorClass::schema; }
    bool is_corrupt() const noexcept { return error_class() == ErrorClass::corrupt; }
    /// The identity field concerned, or Field::none.
    constexpr Field field() const noexcept { return field_; }
    /// The byte offset concerned, if any.
    constexpr std::optional<std::uint64_t> offset() const noexcept {
        if (code_ == Code::buffer_too_small || offset_ == MBR_NO_OFFSET) return std::nullopt;
        return offset_;
    }
    /// For Code::buffer_too_small: the bytes needed, when known (else 0).
    constexpr std::uint64_t needed() const noexcept { return code_ == Code::buffer_too_small ? offset_ : 0; }
    std::error_code error_code() const noexcept { return make_error_code(code_); }

    /// The error in one line ("identity_field at byte 71 (layer_range): <what the code
    /// means>") into `buf`, NUL-terminated and cut to fit; returns the full length.
    std::size_t format(char *buf, std::size_t capacity) const noexcept {
        char at[48] = "";
        if (offset()) std::snprintf(at, sizeof at, " at byte %llu", static_cast<unsigned long long>(*offset()));
        char in[48] = "";
        if (field_ != Field::none) std::snprintf(in, sizeof in, " (%s)", mbr_field_name(to_c(field_)));
        char more[48] = "";
        if (needed() != 0) std::snprintf(more, sizeof more, " (%llu bytes needed)", static_cast<unsigned long long>(needed()));
        int n = std::snprintf(buf, capacity, "%s%s%s%s: %s", mbr_status_name(status()), at, in, more,
                              mbr_status_str(status()));
        return n < 0 ? 0 : static_cast<std::size_t>(n);
    }
    /// The error in one line (allocates).
    std::string message() const {
        char line[256];
        std::size_t n = format(line, sizeof line);
        return std::string(line, n < sizeof line ? n : sizeof line - 1);
    }

    friend constexpr bool operator==(const Error &a, const Error &b) noexcept {
        return a.code_ == b.code_ && a.field_ == b.field_ && a.offset_ == b.offset_;
    }
    friend constexpr bool operator!=(const Error &a, const Error &b) noexcept { return !(a == b); }

  private:
    static Field field_named(const char *field) noexcept {
        for (std::uint32_t f = MBR_FIELD_PAYLOAD_HASH; f <= MBR_FIELD_SHAPE; f++) {
            if (std::strcmp(field, mbr_field_name(f)) == 0) return static_cast<Field>(f);
        }
        return Field::none;
    }
    Code code_ = Code::ok;
    Field field_ = Field::none;
    std::uint64_t offset_ = MBR_NO_OFFSET;
};
static_assert(sizeof(Error) == 16, "Error is 16 bytes");

#ifdef MEMBRANE_FRAME_HPP_EXCEPTIONS
/// Thrown by Result::value() on an error (only when exceptions are enabled).
class Exception : public std::system_error {
  public:
    explicit Exception(const Error &error) : std::system_error(error.error_code(), error.message()), error_(error) {}
    const Error &error() const noexcept { return error_; }

  private:
    Error error_;
};
#define MEMBRANE_FRAME_HPP_VALUE_NOEXCEPT
#else
#define MEMBRANE_FRAME_HPP_VALUE_NOEXCEPT noexcept
#endif

namespace detail {
[[noreturn]] inline void fail(const Error &error) {
#ifdef MEMBRANE_FRAME_HPP_EXCEPTIONS
    throw Exception(error);
#else
    (void)error;
    std::abort();
#endif
}

struct in_place_t {};
struct uninitialized_t {};
struct result_access;

template <class T>
constexpr bool trivial_v = std::is_trivially_copyable<T>::value && std::is_trivially_destructible<T>::value;

/// What an error keeps in the value's place: the bytes needed for buffer_too_small,
/// else the offset.
inline std::uint64_t raw_slot(const Error &error) noexcept {
    return error.code() == Code::buffer_too_small ? error.needed() : error.offset().value_or(MBR_NO_OFFSET);
}

/// The storage of a Result: the code, the error's field, and the value or the error's
/// offset in one union. Trivially copyable when T is, so that a Result<std::uint32_t>
/// (16 bytes) comes back in registers.
template <class T, bool Trivial = trivial_v<T>>
class result_storage {
  protected:
    result_storage(T &&value) noexcept : code_(Code::ok), field_(Field::none), value_(std::move(value)) {}
    result_storage(const T &value) noexcept : code_(Code::ok), field_(Field::none), value_(value) {}
    template <class... A>
    result_storage(in_place_t, A &&...args) noexcept : code_(Code::ok), field_(Field::none), value_(std::forward<A>(args)...) {}
    result_storage(const Error &error) noexcept : code_(error.code()), field_(error.field()), offset_(raw_slot(error)) {}

    Code code_;
    Field field_;
    union {
        T value_;
        std::uint64_t offset_;
    };
};

template <class T>
class result_storage<T, false> {
  protected:
    result_storage(T &&value) noexcept(std::is_nothrow_move_constructible<T>::value)
        : code_(Code::ok), field_(Field::none) {
        ::new (static_cast<void *>(&value_)) T(std::move(value));
    }
    result_storage(const T &value) : code_(Code::ok), field_(Field::none) { ::new (static_cast<void *>(&value_)) T(value); }
    result_storage(const Error &error) noexcept : code_(error.code()), field_(error.field()), offset_(raw_slot(error)) {}
    result_storage(const result_storage &other) : code_(other.code_), field_(other.field_) {
        if (code_ == Code::ok)
            ::new (static_cast<void *>(&value_)) T(other.value_);
        else
            offset_ = other.offset_;
    }
    result_storage(result_storage &&other) noexcept(std::is_nothrow_move_constructible<T>::value)
        : code_(other.code_), field_(other.field_) {
        if (code_ == Code::ok)
            ::new (static_cast<void *>(&value_)) T(std::move(other.value_));
        else
            offset_ = other.offset_;
    }
    result_storage &operator=(const result_storage &other) {
        if (this != &other) assign(other.code_, other.field_, other.offset_, other.value_);
        return *this;
    }
    result_storage &operator=(result_storage &&other) noexcept(std::is_nothrow_move_constructible<T>::value &&
                                                              std::is_nothrow_move_assignable<T>::value) {
        if (this != &other) assign(other.code_, other.field_, other.offset_, std::move(other.value_));
        return *this;
    }
    ~result_storage() { destroy(); }

    void destroy() noexcept {
        if (code_ == Code::ok) value_.~T();
    }
    /// Become another result: its value assigned or constructed here (read only when
    /// `code` is ok), or its error. A constructor that throws leaves an error here,
    /// never a value destroyed twice.
    template <class V>
    void assign(Code code, Field field, std::uint64_t offset, V &&value) {
        if (code_ == Code::ok && code == Code::ok) {
            value_ = std::forward<V>(value);
        } else {
            destroy();
            code_ = Code::invalid_state;
            if (code == Code::ok)
                ::new (static_cast<void *>(&value_)) T(std::forward<V>(value));
            else
                offset_ = offset;
        }
        code_ = code;
        field_ = field;
    }
    Code code_;
    Field field_;
    union {
        T value_;
        std::uint64_t offset_;
    };
};
} // namespace detail

/// A T or an Error. ok() is one comparison; the error is built when asked for.
template <class T>
class [[nodiscard]] Result : private detail::result_storage<T> {
    using base = detail::result_storage<T>;
    friend struct detail::result_access;

  public:
    using value_type = T;
    Result(T value) noexcept(std::is_nothrow_move_constructible<T>::value) : base(std::move(value)) {}
    Result(const Error &error) noexcept : base(error) {}

    constexpr bool ok() const noexcept { return this->code_ == Code::ok; }
    constexpr bool has_value() const noexcept { return ok(); }
    constexpr explicit operator bool() const noexcept { return ok(); }
    constexpr Code code() const noexcept { return this->code_; }
    /// The C status: MBR_OK or the error's.
    constexpr std::uint32_t status() const noexcept { return static_cast<std::uint32_t>(this->code_); }
    /// The error (Code::ok when there is none).
    Error error() const noexcept {
        if (ok()) return Error();
        return Error(this->code_, this->field_, this->offset_);
    }

    /// The value; on an error, throws Exception (or aborts without exceptions).
    T &value() & MEMBRANE_FRAME_HPP_VALUE_NOEXCEPT {
        if (MEMBRANE_FRAME_HPP_UNLIKELY(!ok())) detail::fail(error());
        return this->value_;
    }
    const T &value() const & MEMBRANE_FRAME_HPP_VALUE_NOEXCEPT {
        if (MEMBRANE_FRAME_HPP_UNLIKELY(!ok())) detail::fail(error());
        return this->value_;
    }
    T &&value() && MEMBRANE_FRAME_HPP_VALUE_NOEXCEPT {
        if (MEMBRANE_FRAME_HPP_UNLIKELY(!ok())) detail::fail(error());
        return std::move(this->value_);
    }
    template <class U>
    T value_or(U &&fallback) const & {
        return ok() ? this->value_ : static_cast<T>(std::forward<U>(fallback));
    }
    template <class U>
    T value_or(U &&fallback) && {
        return ok() ? std::move(this->value_) : static_cast<T>(std::forward<U>(fallback));
    }
    T *operator->() MEMBRANE_FRAME_HPP_VALUE_NOEXCEPT { return &value(); }
    const T *operator->() const MEMBRANE_FRAME_HPP_VALUE_NOEXCEPT { return &value(); }
    T &operator*() & MEMBRANE_FRAME_HPP_VALUE_NOEXCEPT { return value(); }
    const T &operator*() const & MEMBRANE_FRAME_HPP_VALUE_NOEXCEPT { return value(); }
    T &&operator*() && MEMBRANE_FRAME_HPP_VALUE_NOEXCEPT { return std::move(*this).value(); }

  private:
    template <class... A>
    explicit Result(detail::in_place_t tag, A &&...args) noexcept : base(tag, std::forward<A>(args)...) {}
};

/// Success or an Error.
template <>
class [[nodiscard]] Result<void> {
  public:
    constexpr Result() noexcept = default;
    constexpr Result(const Error &error) noexcept : error_(error) {}

    constexpr bool ok() const noexcept { return error_.ok(); }
    constexpr explicit operator bool() const noexcept { return ok(); }
    constexpr Code code() const noexcept { return error_.code(); }
    constexpr std::uint32_t status() const noexcept { return error_.status(); }
    constexpr const Error &error() const noexcept { return error_; }
    /// Throws Exception (or aborts without exceptions) on an error.
    void value() const MEMBRANE_FRAME_HPP_VALUE_NOEXCEPT {
        if (MEMBRANE_FRAME_HPP_UNLIKELY(!ok())) detail::fail(error_);
    }

  private:
    Error error_;
};

using Status = Result<void>;

namespace detail {
/// Results built in place: the C call writes the value straight into the Result the
/// caller receives (no copy of a 600-byte frame view).
struct result_access {
    /// A Result holding storage for the C call to fill: left uninitialised for the
    /// wrapper types (no 600-byte clear), zeroed for small C structs.
    template <class T, std::enable_if_t<std::is_constructible<T, uninitialized_t>::value, int> = 0>
    static Result<T> uninitialized() noexcept {
        return Result<T>(in_place_t{}, uninitialized_t{});
    }
    template <class T, std::enable_if_t<!std::is_constructible<T, uninitialized_t>::value, int> = 0>
    static Result<T> uninitialized() noexcept {
        return Result<T>(in_place_t{});
    }
    template <class T>
    static T &slot(Result<T> &result) noexcept {
        return result.value_;
    }
    template <class T>
    static void fail(Result<T> &result, std::uint32_t status, const mbr_error &detail) noexcept {
        static_assert(trivial_v<T>, "in-place results hold plain data");
        Error error = Error::from_c(status, detail);
        result.code_ = error.code();
        result.field_ = error.field();
        result.offset_ = raw_slot(error);
    }
};

/// An mbr_error for a C call: only its status is set, the call fills the rest on
/// failure (and only then is it read).
struct c_error {
    mbr_error raw;
    c_error() noexcept { raw.status = MBR_OK; }
};

/// A Result of `T` filled in place by `call(T &storage, mbr_error *detail)`, which
/// returns the C status: the one shape of every wrapper whose value is a view or a
/// struct the C call writes (a call without an mbr_error ignores `detail`).
template <class T, class Call>
Result<T> filled(Call &&call) noexcept {
    auto result = result_access::uninitialized<T>();
    c_error e;
    std::uint32_t s = call(result_access::slot(result), &e.raw);
    if (MEMBRANE_FRAME_HPP_UNLIKELY(s != MBR_OK)) result_access::fail(result, s, e.raw);
    return result;
}

template <class T>
Result<T> make(std::uint32_t status, T &&value) noexcept {
    if (MEMBRANE_FRAME_HPP_UNLIKELY(status != MBR_OK)) return Error(static_cast<Code>(status));
    return Result<T>(std::forward<T>(value));
}
template <class T>
Result<T> make(std::uint32_t status, const c_error &detail, T &&value) noexcept {
    if (MEMBRANE_FRAME_HPP_UNLIKELY(status != MBR_OK)) return Error::from_c(status, detail.raw);
    return Result<T>(std::forward<T>(value));
}
inline Status make_status(std::uint32_t status) noexcept {
    if (MEMBRANE_FRAME_HPP_UNLIKELY(status != MBR_OK)) return Error(static_cast<Code>(status));
    return Status();
}
inline Status make_status(std::uint32_t status, const c_error &detail) noexcept {
    if (MEMBRANE_FRAME_HPP_UNLIKELY(status != MBR_OK)) return Error::from_c(status, detail.raw);
    return Status();
}
inline mbr_str c_str(std::string_view s) noexcept { return mbr_str{s.data(), s.size()}; }
} // namespace detail

/* ---------------------------------------------------------------------------------- */
/* Digests                                                                            */

/// A SHA-256 digest: bytes, the 8-byte trailer prefix, lower-case hex. Its views point
/// into it, so they are not given out of a temporary digest.
struct Digest {
    mbr_digest raw;
    std::string_view hex() const & noexcept { return std::string_view(raw.hex, 64); }
    std::string_view hex() const && = delete;
    /// The hex digits as a string (allocates): what to keep from a temporary digest.
    std::string hex_string() const { return std::string(raw.hex, 64); }
    std::array<std::uint8_t, 8> trailer() const noexcept {
        std::array<std::uint8_t, 8> t{};
        std::memcpy(t.data(), raw.trailer, 8);
        return t;
    }
    Bytes trailer_bytes() const & noexcept { return Bytes(raw.trailer, 8); }
    Bytes trailer_bytes() const && = delete;
    Bytes bytes() const & noexcept { return Bytes(raw.sha256, 32); }
    Bytes bytes() const && = delete;
    friend bool operator==(const Digest &a, const Digest &b) noexcept {
        return std::memcmp(a.raw.sha256, b.raw.sha256, 32) == 0;
    }
    friend bool operator!=(const Digest &a, const Digest &b) noexcept { return !(a == b); }
};

/// SHA-256 of `data`: its hex is a payload_hash, its trailer the frame trailer.
inline Digest sha256(Bytes data) noexcept {
    Digest d;
    std::uint32_t status = mbr_sha256(data.data(), data.size(), &d.raw);
    (void)status; // MBR_OK for every pointer-and-length pair: `d.raw` is an object
    return d;
}

/// SHA-256 of byte ranges taken one after the other (the K and V slabs of each layer):
/// the payload_hash of a payload that lies in several buffers.
inline Digest sha256(Span<Bytes> ranges) noexcept {
    Digest d;
    std::uint32_t status = mbr_sha256_ranges(detail::c_ranges(ranges.data()), ranges.size(), &d.raw);
    (void)status; // MBR_OK: every Bytes is a valid range and `d.raw` an object
    return d;
}

/// SHA-256 over bytes given piece by piece, in the object (no allocation). Copying it
/// copies the computation so far.
class Sha256 {
  public:
    Sha256() noexcept {
        std::uint32_t status = mbr_sha256_init(&raw_);
        (void)status; // MBR_OK: `raw_` is storage of the right size
    }
    /// Hash `bytes` after everything before.
    Sha256 &update(Bytes bytes) noexcept {
        std::uint32_t status = mbr_sha256_update(&raw_, bytes.data(), bytes.size());
        (void)status; // MBR_OK until finish()
        return *this;
    }
    /// The digest of everything given; the object starts over.
    Digest finish() noexcept {
        Digest d;
        std::uint32_t status = mbr_sha256_final(&raw_, &d.raw);
        (void)status;
        status = mbr_sha256_init(&raw_);
        (void)status;
        return d;
    }

  private:
    mbr_sha256_state raw_;
};

/* ---------------------------------------------------------------------------------- */
/* Identity                                                                           */

/// The values of an identity, for Identity::build (borrowed: the strings must outlive
/// the identity) and OwnedIdentity::build (copied). The shape is always copied.
struct IdentityValues {
    std::string_view payload_hash;
    std::string_view model_id;
    std::string_view model_revision;
    std::string_view tokenizer_name;
    std::string_view tokenizer_revision;
    mbr_range layer_range{0, 0};
    mbr_range head_range{-1, -1};
    mbr_range token_span{0, 0};
    Dtype dtype = Dtype::float16;
    Span<std::int64_t> shape;
};

/// Up to MBR_MAX_SHAPE_DIMS dimensions.
struct Shape {
    std::array<std::int64_t, MBR_MAX_SHAPE_DIMS> dims;
    std::size_t count;
    Shape() noexcept : dims{}, count(0) {}
    /// Storage for a C call to fill (used by Result; the value is not valid until filled).
    explicit Shape(detail::uninitialized_t) noexcept {}
    std::size_t size() const noexcept { return count; }
    const std::int64_t *data() const & noexcept { return dims.data(); }
    const std::int64_t *begin() const & noexcept { return dims.data(); }
    const std::int64_t *end() const & noexcept { return dims.data() + count; }
    std::int64_t operator[](std::size_t i) const noexcept { return dims[i]; }
};

class OwnedIdentity;

/// The bytes of a string view (`mbr_text`) as they are, when it holds no escapes: its
/// value, in place. None for one with escapes (decode() it).
inline std::optional<std::string_view> plain(mbr_text text) noexcept {
    if (text.has_escapes) return std::nullopt;
    return std::string_view(text.ptr, text.len);
}
/// The value of a string view into `buf` (NUL-terminated); returns its length.
/// Code::buffer_too_small with needed() when `buf` is short.
inline Result<std::size_t> decode_into(mbr_text text, char *buf, std::size_t capacity) noexcept {
    std::size_t n = 0;
    detail::c_error e;
    std::uint32_t s = mbr_text_decode(text, buf, capacity, &n, &e.raw);
    return detail::make(s, e, std::move(n));
}
/// The value of a string view (allocates; no decoding when it has no escapes).
inline Result<std::string> decode(mbr_text text) {
    if (!text.has_escapes && text.ptr != nullptr) return std::string(text.ptr, text.len);
    // No value is longer than its raw text: room for it and the NUL takes one call.
    std::string out(text.len + 1, '\0');
    detail::c_error e;
    std::size_t n = 0;
    std::uint32_t s = mbr_text_decode(text, &out[0], out.size(), &n, &e.raw);
    if (s != MBR_OK) return Error::from_c(s, e.raw);
    out.resize(n);
    return out;
}

/// A validated identity (SPEC §2). Plain data that borrows the text or strings it was
/// made from: copy it freely; keep those alive while it is used.
class Identity {
  public:
    /// Storage for a C call to fill (used by Result; the value is not valid until filled).
    explicit Identity(detail::uninitialized_t) noexcept {}
    /// Parse an identity JSON text (any strict-JSON spelling).
    static Result<Identity> parse(Bytes json MBR_LIFETIMEBOUND) noexcept {
        return detail::filled<Identity>([&](Identity &out, mbr_error *e) {
            return mbr_identity_parse(json.data(), json.size(), &out.raw_, e);
        });
    }
    /// Parsing a string or vector returned by value: the identity would point into it
    /// after it is gone. Keep the text in a variable.
    template <class R, detail::if_owning_rvalue<R> = 0>
    static Result<Identity> parse(R &&json) = delete;

    /// Validate the values and make an identity that borrows their strings (which must
    /// outlive it; OwnedIdentity::build copies them).
    static Result<Identity> build(const IdentityValues &v) noexcept {
        mbr_identity_values c = values_of(v);
        return detail::filled<Identity>([&](Identity &out, mbr_error *e) { return mbr_identity_build(&c, &out.raw_, e); });
    }
    /// Wrap an mbr_identity filled by a C call (e.g. mbr_frame.identity).
    static Identity from_c(const mbr_identity &raw) noexcept {
        Identity id{detail::uninitialized_t{}};
        id.raw_ = raw;
        return id;
    }

    /// The same identity with another payload_hash, which it borrows.
    Result<Identity> with_payload_hash(std::string_view hash MBR_LIFETIMEBOUND) const noexcept {
        return detail::filled<Identity>([&](Identity &out, mbr_error *e) {
            return mbr_identity_with_payload_hash(&raw_, hash.data(), hash.size(), &out.raw_, e);
        });
    }
    /// A hash in a string returned by value would be gone before the identity is used.
    template <class S, detail::if_owning_rvalue<S> = 0>
    Result<Identity> with_payload_hash(S &&hash) const = delete;

    /// A string field (payload_hash .. tokenizer_revision, dtype) in place, without a
    /// copy, valid as long as what the identity borrows. A value written with JSON
    /// escapes has no such view: Code::buffer_too_small, needed() the bytes
    /// string_into() wants (or use string()).
    Result<std::string_view> view(Field field) const noexcept {
        mbr_str out{nullptr, 0};
        detail::c_error e;
        std::uint32_t s = mbr_identity_string_view(&raw_, to_c(field), &out);
        if (MEMBRANE_FRAME_HPP_UNLIKELY(s != MBR_OK)) {
            if (s == MBR_BUFFER_TOO_SMALL) {
                std::size_t n = 0;
                if (mbr_identity_string_len(&raw_, to_c(field), &n) == MBR_OK) return Error::buffer_too_small(n + 1);
            }
            return Error(static_cast<Code>(s));
        }
        return std::string_view(out.ptr, out.len);
    }
    /// Every field at once: the strings as `mbr_text` views in place (decode() the ones
    /// with escapes), the ranges, dtype and shape. Valid as long as what the identity
    /// borrows.
    Result<mbr_identity_view> fields_view() const noexcept {
        mbr_identity_view v;
        return detail::make(mbr_identity_get_view(&raw_, &v), std::move(v));
    }
    /// Parse an identity JSON text straight into the view of its fields (no Identity in
    /// between); the views point into `json`.
    static Result<mbr_identity_view> parse_view(Bytes json MBR_LIFETIMEBOUND) noexcept {
        mbr_identity_view v;
        detail::c_error e;
        std::uint32_t s = mbr_identity_parse_view(json.data(), json.size(), &v, &e.raw);
        return detail::make(s, e, std::move(v));
    }
    /// The views would point into a string returned by value after it is gone.
    template <class R, detail::if_owning_rvalue<R> = 0>
    static Result<mbr_identity_view> parse_view(R &&json) = delete;
    /// parse_view(), with the strings that hold escapes decoded into `buf` so that every
    /// view is a value (plain() gives it): in field order, each whose value fits the room
    /// left; one that does not keeps its view of the text (decode() it). A `buf` of
    /// json.size() bytes holds every value; its bytes after them are unspecified.
    static Result<mbr_identity_view> parse_view(Bytes json MBR_LIFETIMEBOUND, MutableBytes buf MBR_LIFETIMEBOUND) noexcept {
        mbr_identity_view v;
        detail::c_error e;
        std::uint32_t s = mbr_identity_parse_view_decoded(json.data(), json.size(), reinterpret_cast<char *>(buf.data()),
                                                          buf.size(), &v, &e.raw);
        return detail::make(s, e, std::move(v));
    }
    template <class R, detail::if_owning_rvalue<R> = 0>
    static Result<mbr_identity_view> parse_view(R &&json, MutableBytes buf) = delete;
    /// The fields among `fields` whose values differ from `expected`'s (strings compared
    /// decoded, so any JSON spelling of the same text matches); empty when they agree.
    /// One call, no copy: `frame_id.differences(loaded, FieldSet::model()).empty()` says
    /// whether a frame was made for the loaded model.
    Result<FieldSet> differences(const Identity &expected, FieldSet fields = FieldSet::all()) const noexcept {
        std::uint32_t differing = 0;
        std::uint32_t s = mbr_identity_compare(&raw_, &expected.raw_, fields.bits(), &differing);
        return detail::make(s, FieldSet::from_bits(differing));
    }
    /// A string field's decoded value into `buf` (NUL-terminated); returns its length.
    Result<std::size_t> string_into(Field field, char *buf, std::size_t capacity) const noexcept {
        std::size_t n = 0;
        std::uint32_t s = mbr_identity_string(&raw_, to_c(field), buf, capacity, &n);
        if (s == MBR_BUFFER_TOO_SMALL && mbr_identity_string_len(&raw_, to_c(field), &n) == MBR_OK)
            return Error::buffer_too_small(n + 1);
        return detail::make(s, std::move(n));
    }
    /// A string field's decoded value (allocates).
    Result<std::string> string(Field field) const {
        std::size_t n = 0;
        std::uint32_t s = mbr_identity_string_len(&raw_, to_c(field), &n);
        if (s != MBR_OK) return Error(static_cast<Code>(s));
        std::string out(n + 1, '\0');
        s = mbr_identity_string(&raw_, to_c(field), &out[0], out.size(), &n);
        if (s != MBR_OK) return Error(static_cast<Code>(s));
        out.resize(n);
        return out;
    }
    /// layer_range, head_range or token_span.
    Result<mbr_range> range(Field field) const noexcept {
        return detail::filled<mbr_range>(
            [&](mbr_range &out, mbr_error *) { return mbr_identity_range(&raw_, to_c(field), &out); });
    }
    Result<Dtype> dtype() const noexcept {
        std::uint32_t d = 0;
        std::uint32_t s = mbr_identity_dtype(&raw_, &d);
        return detail::make(s, static_cast<Dtype>(d));
    }
    Result<Shape> shape() const noexcept {
        return detail::filled<Shape>([&](Shape &out, mbr_error *) {
            return mbr_identity_shape(&raw_, out.dims.data(), out.dims.size(), &out.count);
        });
    }
    /// Bytes of the tensor shape x dtype describes (a helper, not a reader rule).
    Result<std::uint64_t> tensor_bytes() const noexcept {
        std::uint64_t n = 0;
        return detail::make(mbr_identity_tensor_bytes(&raw_, &n), std::move(n));
    }
    Result<bool> is_canonical() const noexcept {
        bool c = false;
        return detail::make(mbr_identity_is_canonical(&raw_, &c), std::move(c));
    }
    /// SHA-256 of the canonical serialisation (SPEC §2.4).
    Result<Digest> fingerprint() const noexcept {
        Digest d;
        return detail::make(mbr_identity_fingerprint(&raw_, &d.raw), std::move(d));
    }
    Result<std::size_t> canonical_len() const noexcept {
        std::size_t n = 0;
        return detail::make(mbr_identity_canonical_len(&raw_, &n), std::move(n));
    }
    /// The canonical serialisation into `out`; returns its length.
    Result<std::size_t> write_canonical(MutableBytes out) const noexcept {
        std::size_t n = 0;
        detail::c_error e;
        std::uint32_t s = mbr_identity_write_canonical(&raw_, out.data(), out.size(), &n, &e.raw);
        return detail::make(s, e, std::move(n));
    }

    const mbr_identity *c_ptr() const noexcept { return &raw_; }

  private:
    friend struct detail::result_access;
    friend class OwnedIdentity;

    static mbr_identity_values values_of(const IdentityValues &v) noexcept {
        mbr_identity_values c;
        c.payload_hash = detail::c_str(v.payload_hash);
        c.model_id = detail::c_str(v.model_id);
        c.model_revision = detail::c_str(v.model_revision);
        c.tokenizer_name = detail::c_str(v.tokenizer_name);
        c.tokenizer_revision = detail::c_str(v.tokenizer_revision);
        c.layer_range = v.layer_range;
        c.head_range = v.head_range;
        c.token_span = v.token_span;
        c.dtype = to_c(v.dtype);
        c.shape = v.shape.data();
        c.shape_len = v.shape.size();
        return c;
    }
    mbr_identity raw_;
};

/// An identity that owns its strings (allocates once): what to build when the values
/// come from temporaries or must outlive their source, and what for_payload() gives, with
/// the payload_hash it computed. Movable (the strings do not move), not copyable.
class OwnedIdentity {
  public:
    /// Copy the values' strings and build the identity over the copies.
    static Result<OwnedIdentity> build(const IdentityValues &values) {
        OwnedIdentity owned(values, values.payload_hash);
        mbr_identity_values c = Identity::values_of(owned.borrowed(values));
        detail::c_error e;
        std::uint32_t s = mbr_identity_build(&c, &owned.identity_.raw_, &e.raw);
        if (s != MBR_OK) return Error::from_c(s, e.raw);
        return Result<OwnedIdentity>(std::move(owned));
    }
    /// The identity of `payload`: its payload_hash is computed here (one SHA-256 pass;
    /// values.payload_hash is ignored).
    static Result<OwnedIdentity> for_payload(const IdentityValues &values, Bytes payload) {
        Digest digest = sha256(payload);
        IdentityValues with_hash = values;
        with_hash.payload_hash = digest.hex();
        return build(with_hash);
    }

    OwnedIdentity(OwnedIdentity &&) noexcept = default;
    OwnedIdentity &operator=(OwnedIdentity &&) noexcept = default;
    OwnedIdentity(const OwnedIdentity &) = delete;
    OwnedIdentity &operator=(const OwnedIdentity &) = delete;

    /// The identity, borrowing this object's strings.
    const Identity &identity() const & noexcept { return identity_; }
    const Identity &identity() const && = delete;
    operator const Identity &() const & noexcept { return identity_; }
    const Identity *operator->() const & noexcept { return &identity_; }

  private:
    static constexpr std::size_t kStrings = 5;
    OwnedIdentity(const IdentityValues &v, std::string_view payload_hash)
        : identity_(detail::uninitialized_t{}) {
        const std::string_view parts[kStrings] = {payload_hash, v.model_id, v.model_revision, v.tokenizer_name,
                                                  v.tokenizer_revision};
        std::size_t total = 0;
        for (std::string_view p : parts) total += p.size();
        text_.reset(new char[total + 1]);
        std::size_t at = 0;
        for (std::size_t i = 0; i < kStrings; i++) {
            if (!parts[i].empty()) std::memcpy(text_.get() + at, parts[i].data(), parts[i].size());
            lengths_[i] = parts[i].size();
            at += parts[i].size();
        }
    }
    /// The values with their strings pointing into text_.
    IdentityValues borrowed(const IdentityValues &v) const noexcept {
        std::string_view parts[kStrings];
        std::size_t at = 0;
        for (std::size_t i = 0; i < kStrings; i++) {
            parts[i] = std::string_view(text_.get() + at, lengths_[i]);
            at += lengths_[i];
        }
        IdentityValues out = v;
        out.payload_hash = parts[0];
        out.model_id = parts[1];
        out.model_revision = parts[2];
        out.tokenizer_name = parts[3];
        out.tokenizer_revision = parts[4];
        return out;
    }
    std::unique_ptr<char[]> text_;
    std::size_t lengths_[kStrings] = {};
    Identity identity_;
};

/// Fingerprint of an identity JSON text as 64 hex digits and a NUL.
inline Result<std::array<char, 65>> fingerprint_hex(Bytes json) noexcept {
    std::array<char, 65> out{};
    return detail::make(mbr_identity_fingerprint_hex(json.data(), json.size(), out.data()), std::move(out));
}

/* ---------------------------------------------------------------------------------- */
/* Reading frames                                                                     */

/// Reader policy: level, mode, limits (defaults: trailer level, exact mode).
class ReadOptions {
  public:
    ReadOptions() noexcept : raw_(mbr_read_options_default()) {}
    ReadOptions &level(Level level) noexcept { raw_.level = to_c(level); return *this; }
    ReadOptions &mode(Mode mode) noexcept { raw_.mode = to_c(mode); return *this; }
    ReadOptions &identity_limit(std::uint32_t limit) noexcept { raw_.identity_limit = limit; return *this; }
    ReadOptions &max_depth(std::uint32_t depth) noexcept { raw_.max_depth = depth; return *this; }
    const mbr_read_options &c_options() const noexcept { return raw_; }

  private:
    mbr_read_options raw_;
};

/// Validate one exact frame at a level; ok() when accepted.
inline Status check(Bytes frame, Level level = Level::trailer) noexcept {
    return detail::make_status(mbr_frame_check(frame.data(), frame.size(), to_c(level)));
}

namespace detail {
/// The MBR_ELEMENT_* number of an element type a payload can be viewed as.
template <class T>
struct element;
template <> struct element<std::uint8_t> { static constexpr std::uint32_t value = MBR_ELEMENT_U8; };
template <> struct element<std::int8_t> { static constexpr std::uint32_t value = MBR_ELEMENT_I8; };
template <> struct element<std::uint16_t> { static constexpr std::uint32_t value = MBR_ELEMENT_U16; };
template <> struct element<std::int16_t> { static constexpr std::uint32_t value = MBR_ELEMENT_I16; };
template <> struct element<std::int32_t> { static constexpr std::uint32_t value = MBR_ELEMENT_I32; };
template <> struct element<std::int64_t> { static constexpr std::uint32_t value = MBR_ELEMENT_I64; };
template <> struct element<float> { static constexpr std::uint32_t value = MBR_ELEMENT_F32; };
template <> struct element<double> { static constexpr std::uint32_t value = MBR_ELEMENT_F64; };
} // namespace detail

/// A frame read in place: every view points into the parsed buffer, which must stay
/// alive and unchanged while the view is used.
class FrameView {
  public:
    /// Storage for a C call to fill (used by Result; the value is not valid until filled).
    explicit FrameView(detail::uninitialized_t) noexcept {}
    static Result<FrameView> parse(Bytes buf MBR_LIFETIMEBOUND, const ReadOptions &options = ReadOptions()) noexcept {
        return detail::filled<FrameView>([&](FrameView &out, mbr_error *e) {
            return mbr_frame_parse(buf.data(), buf.size(), options.c_options(), &out.raw_, e);
        });
    }
    /// Parsing a vector or string returned by value: the view would point into it after
    /// it is gone. Keep the buffer in a variable.
    template <class R, detail::if_owning_rvalue<R> = 0>
    static Result<FrameView> parse(R &&buf, const ReadOptions &options = ReadOptions()) = delete;

    Bytes bytes() const noexcept { return Bytes(raw_.bytes, raw_.len); }
    Bytes identity_json() const noexcept { return Bytes(raw_.identity_json, raw_.identity_json_len); }
    Bytes payload() const noexcept { return Bytes(raw_.payload, raw_.payload_len); }
    /// Prefix mode: what follows the frame.
    Bytes rest() const noexcept { return Bytes(raw_.rest, raw_.rest_len); }
    Bytes trailer() const noexcept { return Bytes(raw_.trailer, 8); }
    Level level() const noexcept { return static_cast<Level>(raw_.level); }
    /// Offset of the payload in the frame, 22 + identity length (SPEC 1.5).
    std::size_t payload_offset() const noexcept { return raw_.payload_offset; }
    /// Spaces an aligned writer put after the canonical identity (0 when not canonical
    /// or at the layout level).
    std::size_t padding() const noexcept { return raw_.padding; }
    /// Whether the payload's address is a multiple of `align` (a power of two up to
    /// 4096; anything else is an error).
    Result<bool> payload_is_aligned(std::uint32_t align) const noexcept {
        bool aligned = false;
        return detail::make(mbr_frame_payload_is_aligned(&raw_, align, &aligned), std::move(aligned));
    }
    /// The payload in place as an array of T (std::uint16_t for the bits of float16 and
    /// bfloat16, float for float32, ...): never a copy. Code::misaligned when the
    /// payload's address is not aligned to T, its length is not a whole number of T, or
    /// the frame's dtype is not one T holds.
    template <class T>
    Result<Span<T>> payload_as() const noexcept {
        mbr_payload_elements out{nullptr, 0};
        detail::c_error e;
        std::uint32_t s = mbr_frame_payload_elements(&raw_, detail::element<T>::value, &out, &e.raw);
        return detail::make(s, e, Span<T>(static_cast<const T *>(out.data), out.count));
    }
    /// SHA-256 of the payload (trailer level and above).
    std::optional<Bytes> payload_sha256() const noexcept {
        if (!raw_.has_payload_sha256) return std::nullopt;
        return Bytes(raw_.payload_sha256, 32);
    }
    /// The identity (identity level and above).
    std::optional<Identity> identity() const noexcept {
        if (!raw_.has_identity) return std::nullopt;
        return Identity::from_c(raw_.identity);
    }
    const mbr_frame &c_frame() const noexcept { return raw_; }

  private:
    friend struct detail::result_access;
    mbr_frame raw_;
};

/// One frame's verdict from verify_batch: what FrameView::parse gives it, in brief.
struct Verdict {
    mbr_verdict raw;
    Code code() const noexcept { return static_cast<Code>(raw.status); }
    bool ok() const noexcept { return raw.status == MBR_OK; }
    /// The error, with its offset (Code::ok when accepted).
    Error error() const noexcept {
        return ok() ? Error() : Error(code(), Field::none, raw.offset);
    }
    /// When accepted, the frame's length.
    std::size_t frame_len() const noexcept { return raw.frame_len; }
};

/// Verify many frames, hashing several payloads at a time (see mbr_frame_verify_batch):
/// `verdicts[i]` gets frame `i`'s verdict. `frames` and `verdicts` are as long as each
/// other (else Code::length_mismatch and no verdict).
inline Status verify_batch(Span<mbr_bytes> frames, Verdict *verdicts, std::size_t verdicts_len,
                           const ReadOptions &options = ReadOptions()) noexcept {
    static_assert(sizeof(Verdict) == sizeof(mbr_verdict), "Verdict wraps mbr_verdict");
    if (verdicts_len != frames.size()) return Error(Code::length_mismatch);
    detail::c_error e;
    std::uint32_t s = mbr_frame_verify_batch(frames.data(), frames.size(), options.c_options(),
                                             reinterpret_cast<mbr_verdict *>(verdicts), &e.raw);
    return detail::make_status(s, e);
}

/// verify_batch over a list of byte ranges (allocates the verdicts).
inline Result<std::vector<Verdict>> verify_batch(const std::vector<Bytes> &frames,
                                                 const ReadOptions &options = ReadOptions()) {
    std::vector<mbr_bytes> c(frames.size());
    for (std::size_t i = 0; i < frames.size(); i++) c[i] = mbr_bytes{frames[i].data(), frames[i].size()};
    std::vector<Verdict> verdicts(frames.size());
    Status s = verify_batch(Span<mbr_bytes>(c), verdicts.data(), verdicts.size(), options);
    if (!s) return s.error();
    return verdicts;
}

/* ---------------------------------------------------------------------------------- */
/* Writing frames                                                                     */

/// Writer policy (defaults: no padding, the default identity limit). With align(A),
/// the payload starts at a multiple of A bytes (a power of two up to 4096) counted from
/// base() bytes before the frame: where it will lie in its file (SPEC 1.5).
class WriteOptions {
  public:
    WriteOptions() noexcept : raw_(mbr_write_options_default()) {}
    WriteOptions &align(std::uint32_t align) noexcept { raw_.align = align; return *this; }
    WriteOptions &base(std::uint64_t base) noexcept { raw_.base = base; return *this; }
    WriteOptions &identity_limit(std::uint32_t limit) noexcept { raw_.identity_limit = limit; return *this; }
    const mbr_write_options &c_options() const noexcept { return raw_; }

  private:
    mbr_write_options raw_;
};

/// The lengths and padding of the frame for `identity` and `payload_len` payload bytes
/// written with `options`.
inline Result<mbr_frame_layout> plan(const Identity &identity, std::uint64_t payload_len,
                                     const WriteOptions &options = WriteOptions()) noexcept {
    mbr_frame_layout layout{};
    detail::c_error e;
    std::uint32_t s = mbr_frame_plan(identity.c_ptr(), payload_len, options.c_options(), &layout, &e.raw);
    return detail::make(s, e, std::move(layout));
}

/// Length of the frame for `identity` and `payload_len` payload bytes.
inline Result<std::uint64_t> encoded_len(const Identity &identity, std::uint64_t payload_len) noexcept {
    std::uint64_t n = 0;
    detail::c_error e;
    std::uint32_t s = mbr_frame_encoded_len(identity.c_ptr(), payload_len, &n, &e.raw);
    return detail::make(s, e, std::move(n));
}

/// Length of the head (header, canonical identity, payload length).
inline Result<std::size_t> head_len(const Identity &identity, std::uint64_t payload_len) noexcept {
    std::size_t n = 0;
    detail::c_error e;
    std::uint32_t s = mbr_frame_head_len(identity.c_ptr(), payload_len, &n, &e.raw);
    return detail::make(s, e, std::move(n));
}

/// Write the head into `out` (padded as `options` asks); returns its length. Send head,
/// payload and sha256(payload).trailer_bytes() with writev: the payload is not copied.
inline Result<std::size_t> write_head(const Identity &identity, std::uint64_t payload_len, MutableBytes out,
                                      const WriteOptions &options = WriteOptions()) noexcept {
    std::size_t n = 0;
    detail::c_error e;
    std::uint32_t s = mbr_frame_write_head_with(identity.c_ptr(), payload_len, options.c_options(), out.data(),
                                                out.size(), &n, &e.raw);
    return detail::make(s, e, std::move(n));
}

/// Write a whole frame into `out` (padded as `options` asks); returns its length.
inline Result<std::size_t> encode(const Identity &identity, Bytes payload, MutableBytes out,
                                  const WriteOptions &options = WriteOptions()) noexcept {
    std::size_t n = 0;
    detail::c_error e;
    std::uint32_t s = mbr_frame_encode_with(identity.c_ptr(), payload.data(), payload.size(), options.c_options(),
                                            out.data(), out.size(), &n, &e.raw);
    return detail::make(s, e, std::move(n));
}

/// A whole frame in a new vector (allocates).
inline Result<std::vector<std::uint8_t>> encode(const Identity &identity, Bytes payload,
                                                const WriteOptions &options = WriteOptions()) {
    Result<mbr_frame_layout> layout = plan(identity, payload.size(), options);
    if (!layout) return layout.error();
    std::vector<std::uint8_t> out(static_cast<std::size_t>(layout->frame_len));
    Result<std::size_t> n = encode(identity, payload, MutableBytes(out), options);
    if (!n) return n.error();
    return out;
}

#if defined(__unix__) || defined(__APPLE__)
/// Write the frame of `identity` and a payload lying in `parts` (taken one after the
/// other) to the file descriptor `fd` with writev: nothing of the payload is copied;
/// short writes are continued and EINTR retried. `payload_digest` is the payload's
/// SHA-256 when you have it (sha256(parts) gave the payload_hash): trusted, not
/// recomputed; nullptr hashes the parts here. The identity's payload_hash must be that
/// digest, or nothing is written (Code::payload_hash_mismatch). Code::io: errno says why.
inline Result<mbr_frame_layout> write_frame(int fd, const Identity &identity, Span<Bytes> parts,
                                            const WriteOptions &options = WriteOptions(),
                                            const Digest *payload_digest = nullptr) noexcept {
    mbr_frame_layout layout{};
    detail::c_error e;
    std::uint32_t s = mbr_frame_write_fd(fd, identity.c_ptr(), detail::c_ranges(parts.data()), parts.size(),
                                         options.c_options(), payload_digest != nullptr ? &payload_digest->raw : nullptr,
                                         &layout, &e.raw);
    return detail::make(s, e, std::move(layout));
}
#endif

/// Writes a frame whose payload arrives in chunks to a sink: any object with
/// `int operator()(const std::uint8_t *data, std::size_t len)` returning 0 when all
/// bytes were taken. The sink and the identity must outlive the writer, which is
/// neither copyable nor movable (its state refers to them). Nothing to release.
class ChunkedWriter {
  public:
    ChunkedWriter() noexcept : raw_() {}
    ChunkedWriter(const ChunkedWriter &) = delete;
    ChunkedWriter &operator=(const ChunkedWriter &) = delete;

    /// Write the head for a payload of exactly `payload_len` bytes (padded as `options`
    /// asks).
    template <class Sink>
    Status begin(const Identity &identity, std::uint64_t payload_len, Sink &sink,
                 const WriteOptions &options = WriteOptions()) noexcept {
        detail::c_error e;
        std::uint32_t s = mbr_chunked_writer_begin_with(&raw_, identity.c_ptr(), payload_len, options.c_options(),
                                                        &trampoline<Sink>, &sink, &e.raw);
        return detail::make_status(s, e);
    }
    /// A temporary sink would be gone before the first chunk.
    template <class Sink>
    Status begin(const Identity &identity, std::uint64_t payload_len, const Sink &&sink,
                 const WriteOptions &options = WriteOptions()) = delete;
    /// Pass the next payload chunk through.
    Status write(Bytes chunk) noexcept {
        detail::c_error e;
        return detail::make_status(mbr_chunked_writer_write(&raw_, chunk.data(), chunk.size(), &e.raw), e);
    }
    Result<std::uint64_t> remaining() const noexcept {
        std::uint64_t n = 0;
        return detail::make(mbr_chunked_writer_remaining(&raw_, &n), std::move(n));
    }
    /// Write the trailer; the writer is finished whatever the result.
    Result<mbr_chunked_outcome> finish() noexcept {
        mbr_chunked_outcome out{};
        detail::c_error e;
        std::uint32_t s = mbr_chunked_writer_finish(&raw_, &out, &e.raw);
        return detail::make(s, e, std::move(out));
    }

  private:
    template <class Sink>
    static int trampoline(void *userdata, const std::uint8_t *data, std::size_t len) noexcept {
#ifdef MEMBRANE_FRAME_HPP_EXCEPTIONS
        try {
            return (*static_cast<Sink *>(userdata))(data, len);
        } catch (...) {
            return -1; // an exception must not cross the C ABI
        }
#else
        return (*static_cast<Sink *>(userdata))(data, len);
#endif
    }
    mbr_chunked_writer raw_;
};

/* ---------------------------------------------------------------------------------- */
/* Streaming verification                                                             */

/// The verdict of a streamed verification (identity and identity_json point into the
/// identity buffer given to the verifier).
struct StreamedFrame {
    mbr_streamed_frame raw;
    Bytes identity_json() const noexcept { return Bytes(raw.identity_json, raw.identity_json_len); }
    std::optional<Identity> identity() const noexcept {
        if (!raw.has_identity) return std::nullopt;
        return Identity::from_c(raw.identity);
    }
    std::uint64_t payload_len() const noexcept { return raw.payload_len; }
    std::uint64_t frame_len() const noexcept { return raw.frame_len; }
    /// Offset of the payload in the frame (SPEC 1.5).
    std::uint64_t payload_offset() const noexcept { return raw.payload_offset; }
    /// Spaces after a canonical identity (SPEC 1.5).
    std::size_t padding() const noexcept { return raw.padding; }
};

/// Verifies a frame that arrives in chunks. Initialised by its constructor (RAII:
/// there is nothing to release); the identity buffer must outlive it and the result.
/// Neither copyable nor movable.
class StreamVerifier {
  public:
    StreamVerifier(const ReadOptions &options, MutableBytes identity_buf) noexcept : raw_() {
        init_ = mbr_stream_verifier_init(&raw_, options.c_options(), identity_buf.data(), identity_buf.size());
    }
    StreamVerifier(const StreamVerifier &) = delete;
    StreamVerifier &operator=(const StreamVerifier &) = delete;

    /// Whether the options were accepted (else every call reports why not).
    Status status() const noexcept { return detail::make_status(init_); }

    /// Feed the next chunk; the progress says whether the frame is complete.
    Result<mbr_stream_progress> feed(Bytes chunk) noexcept {
        if (init_ != MBR_OK) return Error(static_cast<Code>(init_));
        mbr_stream_progress p{};
        detail::c_error e;
        std::uint32_t s = mbr_stream_verifier_feed(&raw_, chunk.data(), chunk.size(), &p, &e.raw);
        return detail::make(s, e, std::move(p));
    }
    /// Bytes fed so far.
    Result<std::uint64_t> received() const noexcept {
        std::uint64_t n = 0;
        return detail::make(mbr_stream_verifier_received(&raw_, &n), std::move(n));
    }
    /// End of stream: the verdict. The verifier is finished whatever the result.
    Result<StreamedFrame> finish() noexcept {
        if (init_ != MBR_OK) return Error(static_cast<Code>(init_));
        StreamedFrame f{};
        detail::c_error e;
        std::uint32_t s = mbr_stream_verifier_finish(&raw_, &f.raw, &e.raw);
        return detail::make(s, e, std::move(f));
    }

  private:
    mbr_stream_verifier raw_;
    std::uint32_t init_;
};

/* ---------------------------------------------------------------------------------- */
/* Envelopes (SPEC §3) and the compatibility hash (§3.3)                              */

/// 64 lower-case hex digits and a NUL (a compatibility hash).
using Hex = std::array<char, 65>;

/// Validate one envelope JSON text; ok() when accepted, else the SPEC §8 code
/// (envelope_json, _version, _missing_field, _field, identity_field).
inline Status check_envelope(Bytes json) noexcept {
    return detail::make_status(mbr_envelope_check(json.data(), json.size()));
}

/// Parse an envelope text and write its SPEC §3.2 (to_bytes) form into `out`; returns
/// the length. A too-small `out` is Code::buffer_too_small with error().needed() the
/// length needed (and `out` untouched).
inline Result<std::size_t> canonicalize_envelope(Bytes json, MutableBytes out) noexcept {
    std::size_t n = 0;
    std::uint32_t s = mbr_envelope_canonicalize(json.data(), json.size(), out.data(), out.size(), &n);
    if (s == MBR_BUFFER_TOO_SMALL) return Error::buffer_too_small(n);
    return detail::make(s, std::move(n));
}

/// The SPEC §3.2 form of an envelope text, in a new string (allocates).
inline Result<std::string> canonicalize_envelope(Bytes json) {
    std::size_t n = 0;
    std::uint32_t s = mbr_envelope_canonicalize(json.data(), json.size(), nullptr, 0, &n);
    if (s != MBR_BUFFER_TOO_SMALL) return Error(static_cast<Code>(s)); // an empty output is always too small
    std::string out(n, '\0');
    s = mbr_envelope_canonicalize(json.data(), json.size(), reinterpret_cast<std::uint8_t *>(&out[0]), out.size(), &n);
    if (s != MBR_OK) return Error(static_cast<Code>(s));
    return out;
}

/// The fields of an envelope, for Envelope::build. The strings and what the identity
/// borrows must outlive the envelope (the identity itself is copied).
struct EnvelopeValues {
    std::string_view tenant_id;
    const Identity *identity = nullptr;
    /// std::nullopt writes JSON null.
    std::optional<std::string_view> payload_ref;
    std::uint64_t payload_size = 0;
    double ttl = 0.0;
    double reuse_score = 0.0;
    std::uint64_t version_id = 1;
    Consistency consistency = Consistency::strong;
    /// Packed (hlc::pack).
    std::uint64_t hlc = 0;
    /// Derive fingerprint_compat from the identity (then `fingerprint_compat` is ignored).
    bool derive_fingerprint_compat = false;
    /// "" or 64 lower-case hex digits.
    std::string_view fingerprint_compat;
};

/// A validated v5 envelope (SPEC §3.1). Plain data that borrows the text or strings it
/// was made from: copy it freely; keep those alive while it is used.
class Envelope {
  public:
    /// Storage for a C call to fill (used by Result; the value is not valid until filled).
    explicit Envelope(detail::uninitialized_t) noexcept {}
    /// Parse an envelope JSON text.
    static Result<Envelope> parse(Bytes json MBR_LIFETIMEBOUND) noexcept {
        return detail::filled<Envelope>([&](Envelope &out, mbr_error *e) {
            return mbr_envelope_parse(json.data(), json.size(), &out.raw_, e);
        });
    }
    /// Parsing a string returned by value: the envelope would point into it after it is
    /// gone. Keep the text in a variable.
    template <class R, detail::if_owning_rvalue<R> = 0>
    static Result<Envelope> parse(R &&json) = delete;

    /// Validate the values and make an envelope of them.
    static Result<Envelope> build(const EnvelopeValues &v) noexcept {
        mbr_envelope_values c{};
        c.tenant_id = detail::c_str(v.tenant_id);
        c.identity = v.identity != nullptr ? v.identity->c_ptr() : nullptr;
        c.has_payload_ref = v.payload_ref.has_value();
        c.payload_ref = detail::c_str(v.payload_ref.value_or(std::string_view()));
        c.payload_size = v.payload_size;
        c.ttl = v.ttl;
        c.reuse_score = v.reuse_score;
        c.version_id = v.version_id;
        c.consistency = to_c(v.consistency);
        c.hlc = v.hlc;
        c.derive_fingerprint_compat = v.derive_fingerprint_compat;
        c.fingerprint_compat = detail::c_str(v.fingerprint_compat);
        return detail::filled<Envelope>([&](Envelope &out, mbr_error *e) { return mbr_envelope_build(&c, &out.raw_, e); });
    }

    /// Every field at once, the identity's included: strings as `mbr_text` views in
    /// place (decode() the ones with escapes).
    Result<mbr_envelope_view> view() const noexcept {
        mbr_envelope_view v;
        return detail::make(mbr_envelope_get_view(&raw_, &v), std::move(v));
    }
    /// Parse an envelope JSON text straight into the view of every field: the parse and
    /// the read-out in one call, no Envelope in between; the views point into `json`.
    static Result<mbr_envelope_view> parse_view(Bytes json MBR_LIFETIMEBOUND) noexcept {
        mbr_envelope_view v;
        detail::c_error e;
        std::uint32_t s = mbr_envelope_parse_view(json.data(), json.size(), &v, &e.raw);
        return detail::make(s, e, std::move(v));
    }
    /// The views would point into a string returned by value after it is gone.
    template <class R, detail::if_owning_rvalue<R> = 0>
    static Result<mbr_envelope_view> parse_view(R &&json) = delete;
    /// parse_view(), with the strings that hold escapes decoded into `buf`, as
    /// Identity::parse_view(json, buf) does: tenant_id, payload_ref, then the identity's.
    static Result<mbr_envelope_view> parse_view(Bytes json MBR_LIFETIMEBOUND, MutableBytes buf MBR_LIFETIMEBOUND) noexcept {
        mbr_envelope_view v;
        detail::c_error e;
        std::uint32_t s = mbr_envelope_parse_view_decoded(json.data(), json.size(), reinterpret_cast<char *>(buf.data()),
                                                          buf.size(), &v, &e.raw);
        return detail::make(s, e, std::move(v));
    }
    template <class R, detail::if_owning_rvalue<R> = 0>
    static Result<mbr_envelope_view> parse_view(R &&json, MutableBytes buf) = delete;

    /// Every field but the strings, and the identity.
    Result<mbr_envelope_fields> fields() const noexcept {
        mbr_envelope_fields f{};
        return detail::make(mbr_envelope_get_fields(&raw_, &f), std::move(f));
    }
    Result<Identity> identity() const noexcept {
        mbr_identity id;
        std::uint32_t s = mbr_envelope_identity(&raw_, &id);
        if (MEMBRANE_FRAME_HPP_UNLIKELY(s != MBR_OK)) return Error(static_cast<Code>(s));
        return Identity::from_c(id);
    }
    /// A string field into `buf` (NUL-terminated); returns its length.
    Result<std::size_t> string_into(EnvelopeField field, char *buf, std::size_t capacity) const noexcept {
        std::size_t n = 0;
        return detail::make(mbr_envelope_string(&raw_, to_c(field), buf, capacity, &n), std::move(n));
    }
    /// A string field's decoded value (allocates). payload_ref null reads as "".
    Result<std::string> string(EnvelopeField field) const {
        std::size_t n = 0;
        std::uint32_t s = mbr_envelope_string_len(&raw_, to_c(field), &n);
        if (s != MBR_OK) return Error(static_cast<Code>(s));
        std::string out(n + 1, '\0');
        s = mbr_envelope_string(&raw_, to_c(field), &out[0], out.size(), &n);
        if (s != MBR_OK) return Error(static_cast<Code>(s));
        out.resize(n);
        return out;
    }
    /// tenant_id (allocates).
    Result<std::string> tenant_id() const { return string(EnvelopeField::tenant_id); }
    /// Whether the parsed text is byte for byte its SPEC §3.2 form.
    Result<bool> is_canonical() const noexcept {
        bool c = false;
        return detail::make(mbr_envelope_is_canonical(&raw_, &c), std::move(c));
    }
    Result<std::size_t> encoded_len() const noexcept {
        std::size_t n = 0;
        return detail::make(mbr_envelope_encoded_len(&raw_, &n), std::move(n));
    }
    /// The SPEC §3.2 (to_bytes) text into `out`; returns its length.
    Result<std::size_t> write(MutableBytes out) const noexcept {
        std::size_t n = 0;
        detail::c_error e;
        std::uint32_t s = mbr_envelope_write(&raw_, out.data(), out.size(), &n, &e.raw);
        return detail::make(s, e, std::move(n));
    }
    /// The SPEC §3.2 text in a new string (allocates).
    Result<std::string> to_string() const {
        Result<std::size_t> len = encoded_len();
        if (!len) return len.error();
        std::string out(len.value(), '\0');
        Result<std::size_t> n = write(MutableBytes(&out[0], out.size()));
        if (!n) return n.error();
        return out;
    }

    const mbr_envelope *c_ptr() const noexcept { return &raw_; }

  private:
    friend struct detail::result_access;
    mbr_envelope raw_;
};

/// The inputs of the compatibility hash (SPEC §3.3).
struct CompatInputs {
    std::string_view model_id;
    std::string_view model_revision;
    std::int64_t model_layout_version = 0;
    std::string_view tokenizer_name;
    std::string_view tokenizer_revision;
    std::int64_t tokenizer_layout_version = 0;
    std::string_view dtype;
    std::string_view config_hash;
};

/// The compatibility hash of explicit values: an envelope's fingerprint_compat.
inline Result<Hex> compat_hash(const CompatInputs &in) noexcept {
    mbr_compat_inputs c{};
    c.model_id = detail::c_str(in.model_id);
    c.model_revision = detail::c_str(in.model_revision);
    c.model_layout_version = in.model_layout_version;
    c.tokenizer_name = detail::c_str(in.tokenizer_name);
    c.tokenizer_revision = detail::c_str(in.tokenizer_revision);
    c.tokenizer_layout_version = in.tokenizer_layout_version;
    c.dtype = detail::c_str(in.dtype);
    c.config_hash = detail::c_str(in.config_hash);
    Hex out{};
    return detail::make(mbr_compat_hash(&c, out.data()), std::move(out));
}

/// The compatibility hash derived from an identity (layout versions 0, config_hash "").
inline Result<Hex> compat_hash(const Identity &identity) noexcept {
    Hex out{};
    return detail::make(mbr_identity_compat_hash(identity.c_ptr(), out.data()), std::move(out));
}

/* ---------------------------------------------------------------------------------- */
/* HLC values (SPEC §9)                                                               */

namespace hlc {

/// A packed value's two parts.
struct Parts {
    std::uint64_t physical_ms = 0;
    std::uint16_t logical = 0;
};

/// (physical_ms << 16) | logical; Code::invalid_argument past MBR_HLC_MAX_PHYSICAL_MS.
inline Result<std::uint64_t> pack(std::uint64_t physical_ms, std::uint16_t logical) noexcept {
    std::uint64_t out = 0;
    return detail::make(mbr_hlc_pack(physical_ms, logical, &out), std::move(out));
}
inline Parts unpack(std::uint64_t value) noexcept {
    Parts p;
    std::uint32_t status = mbr_hlc_unpack(value, &p.physical_ms, &p.logical);
    (void)status; // MBR_OK for every value: both outputs are objects
    return p;
}
/// The next local value after `previous` at wall-clock time `now_ms`.
inline Result<std::uint64_t> tick(std::uint64_t previous, std::uint64_t now_ms) noexcept {
    std::uint64_t out = 0;
    return detail::make(mbr_hlc_tick(previous, now_ms, &out), std::move(out));
}
/// The local value after receiving `remote` at wall-clock time `now_ms`.
inline Result<std::uint64_t> merge(std::uint64_t local, std::uint64_t remote, std::uint64_t now_ms) noexcept {
    std::uint64_t out = 0;
    return detail::make(mbr_hlc_merge(local, remote, now_ms, &out), std::move(out));
}

/// A node's clock: the last value it issued or observed (unchanged on an error).
class Clock {
  public:
    explicit Clock(std::uint64_t last = 0) noexcept : last_(last) {}
    std::uint64_t last() const noexcept { return last_; }
    /// Issue a value for a local event.
    Result<std::uint64_t> tick(std::uint64_t now_ms) noexcept { return remember(hlc::tick(last_, now_ms)); }
    /// Take a remote value into account.
    Result<std::uint64_t> observe(std::uint64_t remote, std::uint64_t now_ms) noexcept {
        return remember(hlc::merge(last_, remote, now_ms));
    }

  private:
    Result<std::uint64_t> remember(Result<std::uint64_t> next) noexcept {
        if (next) last_ = *next;
        return next;
    }
    std::uint64_t last_;
};

} // namespace hlc

/* ---------------------------------------------------------------------------------- */
/* Migration to v5 (SPEC §7)                                                          */

/// What a frame migration found or did.
struct FrameMigration {
    mbr_frame_migration raw;
    MigrationKind kind() const noexcept { return static_cast<MigrationKind>(raw.kind); }
    std::uint32_t from_version() const noexcept { return raw.from_version; }
    bool rewrites() const noexcept { return raw.rewrites; }
};

/// Dry run: what migrating this frame would do (the mode must be Mode::exact).
inline Result<FrameMigration> plan_frame_migration(Bytes frame, const ReadOptions &options = ReadOptions()) noexcept {
    FrameMigration m{};
    detail::c_error e;
    std::uint32_t s = mbr_plan_frame_migration(frame.data(), frame.size(), options.c_options(), &m.raw, &e.raw);
    return detail::make(s, e, std::move(m));
}

/// Migrate a v2 or v4 frame to v5 in place (bytes 0..6); untouched on any error.
inline Result<FrameMigration> migrate_frame_in_place(MutableBytes frame,
                                                     const ReadOptions &options = ReadOptions()) noexcept {
    FrameMigration m{};
    detail::c_error e;
    std::uint32_t s = mbr_migrate_frame_in_place(frame.data(), frame.size(), options.c_options(), &m.raw, &e.raw);
    return detail::make(s, e, std::move(m));
}

/// Envelope migration policy (defaults: tenant "public", JSON depth 32). A tenant set
/// here must outlive the options.
class EnvelopeMigrationOptions {
  public:
    EnvelopeMigrationOptions() noexcept : raw_(mbr_envelope_migration_options_default()) {}
    EnvelopeMigrationOptions &default_tenant(std::string_view tenant MBR_LIFETIMEBOUND) noexcept {
        raw_.default_tenant = detail::c_str(tenant);
        return *this;
    }
    template <class S, detail::if_owning_rvalue<S> = 0>
    EnvelopeMigrationOptions &default_tenant(S &&tenant) = delete;
    EnvelopeMigrationOptions &max_depth(std::uint32_t depth) noexcept { raw_.max_depth = depth; return *this; }
    const mbr_envelope_migration_options &c_options() const noexcept { return raw_; }

  private:
    mbr_envelope_migration_options raw_;
};

/// What an envelope migration found or did.
struct EnvelopeMigration {
    mbr_envelope_migration raw;
    MigrationKind kind() const noexcept { return static_cast<MigrationKind>(raw.kind); }
    std::uint32_t from_version() const noexcept { return raw.from_version; }
    /// Bytes written (kind() == MigrationKind::legacy).
    std::size_t len() const noexcept { return raw.len; }
};

/// Migrate a schema 2-4 envelope into `out` (kind legacy, len() bytes); a v5 envelope
/// is kind already_v5 and nothing is written.
inline Result<EnvelopeMigration> migrate_envelope(Bytes json, MutableBytes out,
                                                  const EnvelopeMigrationOptions &options = {}) noexcept {
    EnvelopeMigration m{};
    detail::c_error e;
    std::uint32_t s =
        mbr_migrate_envelope(json.data(), json.size(), options.c_options(), out.data(), out.size(), &m.raw, &e.raw);
    return detail::make(s, e, std::move(m));
}

/// The v5 text of an envelope (allocates): the migrated text, or a copy of the input
/// when it is a valid v5 envelope already.
inline Result<std::string> migrate_envelope(Bytes json, const EnvelopeMigrationOptions &options = {}) {
    Result<EnvelopeMigration> sized = migrate_envelope(json, MutableBytes(), options);
    if (sized) return std::string(json.as_string_view()); // v5 already (a rewrite never fits 0 bytes)
    if (sized.code() != Code::buffer_too_small) return sized.error();
    std::string out(static_cast<std::size_t>(sized.error().needed()), '\0');
    Result<EnvelopeMigration> done = migrate_envelope(json, MutableBytes(&out[0], out.size()), options);
    if (!done) return done.error();
    out.resize(done->len());
    return out;
}

/* ---------------------------------------------------------------------------------- */

/// The loaded library's version ("0.1.0"; MBR_VERSION_STRING is the header's).
inline std::string_view version() noexcept { return mbr_version(); }
/// Whether the loaded library speaks the ABI this header describes.
inline bool abi_matches() noexcept { return mbr_abi_version() == MBR_ABI_VERSION; }

// ---- cluster metadata (SPEC §5, §6) ----

/// Validate a snapshot JSON text (SPEC §5): ok, or the SPEC §8 code.
inline Status check_snapshot(Bytes json) noexcept {
    return detail::make_status(mbr_snapshot_check(json.data(), json.size()));
}

/// The epoch guard (SPEC §5); std::nullopt is a snapshot without an epoch.
inline Status check_epoch(std::uint64_t live_epoch, std::optional<std::uint64_t> persisted) noexcept {
    return detail::make_status(mbr_snapshot_epoch_check(live_epoch, persisted.value_or(0), persisted.has_value()));
}

/// Validate a gossip map text (SPEC §6).
inline Status check_gossip(Bytes json) noexcept {
    return detail::make_status(mbr_gossip_check(json.data(), json.size()));
}

/// Merge two gossip maps (per hash the larger until) and write the entries active at
/// `now` into `out`; returns the length. A too-small `out` is Code::buffer_too_small
/// with error().needed() the length needed (and `out` untouched). No table, any map size.
inline Result<std::size_t> gossip_merge(Bytes a, Bytes b, double now, MutableBytes out) noexcept {
    std::size_t n = 0;
    std::uint32_t s = mbr_gossip_merge(a.data(), a.size(), b.data(), b.size(), now, out.data(), out.size(), &n);
    if (s == MBR_BUFFER_TOO_SMALL) return Error::buffer_too_small(n);
    return detail::make(s, std::move(n));
}

/// The merged gossip map text, in a new string (allocates).
inline Result<std::string> gossip_merge(Bytes a, Bytes b, double now) {
    std::size_t n = 0;
    std::uint32_t s = mbr_gossip_merge(a.data(), a.size(), b.data(), b.size(), now, nullptr, 0, &n);
    if (s != MBR_BUFFER_TOO_SMALL) return Error(static_cast<Code>(s)); // "{}" at least: an empty output is too small
    std::string out(n, '\0');
    s = mbr_gossip_merge(a.data(), a.size(), b.data(), b.size(), now, reinterpret_cast<std::uint8_t *>(&out[0]),
                         out.size(), &n);
    if (s != MBR_OK) return Error(static_cast<Code>(s));
    return out;
}

} // namespace membrane

namespace std {
template <>
struct is_error_code_enum<membrane::Code> : true_type {};
} // namespace std

#endif /* MEMBRANE_FRAME_HPP */
