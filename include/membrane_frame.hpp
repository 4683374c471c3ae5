/*
 * membrane_frame.hpp: a header-only C++17 wrapper over the C ABI in membrane_frame.h.
 *
 * Hand-written (not generated). Same rules as the C ABI (docs/c-abi.md):
 *  - nothing here allocates except the few helpers that return std::string or
 *    std::vector (marked "allocates");
 *  - views (Bytes, FrameView, Identity, Envelope) point into buffers the caller keeps
 *    alive;
 *  - errors are values: Result<T> holds a T or an Error (code, class, offset, field,
 *    message). Result::value() on an error throws membrane::Exception when exceptions
 *    are enabled and calls std::abort() when they are not (-fno-exceptions); check
 *    ok() first to never need either.
 *
 *   auto frame = membrane::FrameView::parse(buf, membrane::ReadOptions().level(MBR_LEVEL_FULL));
 *   if (!frame) { std::fprintf(stderr, "%s\n", frame.error().message().data()); return 1; }
 *   auto model = frame->identity()->string(MBR_FIELD_MODEL_ID);
 */
#ifndef MEMBRANE_FRAME_HPP
#define MEMBRANE_FRAME_HPP

#include "membrane_frame.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#if __cplusplus >= 202002L && __has_include(<span>)
#include <span>
#endif
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
#define MEMBRANE_FRAME_HPP_EXCEPTIONS 1
#include <stdexcept>
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

/* ---------------------------------------------------------------------------------- */
/* Byte ranges                                                                        */

/// Read-only bytes: pointer and length (a span). Does not own what it points to.
struct Bytes {
    const std::uint8_t *data = nullptr;
    std::size_t size = 0;

    constexpr Bytes() noexcept = default;
    constexpr Bytes(const std::uint8_t *d, std::size_t n) noexcept : data(d), size(n) {}
    Bytes(const void *d, std::size_t n) noexcept : data(static_cast<const std::uint8_t *>(d)), size(n) {}
    Bytes(std::string_view text) noexcept : Bytes(text.data(), text.size()) {}
    template <class Traits, class A>
    Bytes(const std::basic_string<char, Traits, A> &text) noexcept : Bytes(text.data(), text.size()) {}
    template <class T, class A>
    Bytes(const std::vector<T, A> &v) noexcept : Bytes(v.data(), v.size() * sizeof(T)) {
        static_assert(std::is_trivially_copyable<T>::value, "Bytes over a vector of plain values");
    }

    constexpr const std::uint8_t *begin() const noexcept { return data; }
    constexpr const std::uint8_t *end() const noexcept { return data + size; }
    constexpr bool empty() const noexcept { return size == 0; }
    std::string_view as_string_view() const noexcept {
        return std::string_view(reinterpret_cast<const char *>(data), size);
    }
    /// The first `n` bytes (n <= size).
    constexpr Bytes first(std::size_t n) const noexcept { return Bytes(data, n); }
    /// The bytes from `offset` on (offset <= size).
    constexpr Bytes subspan(std::size_t offset) const noexcept { return Bytes(data + offset, size - offset); }
};

/// Writable bytes: pointer and length. Does not own what it points to.
struct MutableBytes {
    std::uint8_t *data = nullptr;
    std::size_t size = 0;

    constexpr MutableBytes() noexcept = default;
    constexpr MutableBytes(std::uint8_t *d, std::size_t n) noexcept : data(d), size(n) {}
    MutableBytes(std::vector<std::uint8_t> &v) noexcept : MutableBytes(v.data(), v.size()) {}
    template <std::size_t N>
    constexpr MutableBytes(std::array<std::uint8_t, N> &a) noexcept : MutableBytes(a.data(), N) {}
};

/* ---------------------------------------------------------------------------------- */
/* Errors                                                                             */

/// Name of a status: "ok", "trailer_mismatch", ... (static).
inline std::string_view status_name(std::uint32_t status) noexcept { return mbr_status_name(status); }
/// One-line description of a status (static).
inline std::string_view status_str(std::uint32_t status) noexcept { return mbr_status_str(status); }

/// A read-only run of `T` in place (std::span<const T> where C++20 has it: the two
/// convert into each other). Does not own what it points to.
template <class T>
class Span {
  public:
    Span() noexcept = default;
    Span(const T *data, std::size_t size) noexcept : data_(data), size_(size) {}
#if defined(__cpp_lib_span)
    Span(std::span<const T> span) noexcept : data_(span.data()), size_(span.size()) {}
    operator std::span<const T>() const noexcept { return std::span<const T>(data_, size_); }
#endif
    const T *data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    const T *begin() const noexcept { return data_; }
    const T *end() const noexcept { return data_ + size_; }
    const T &operator[](std::size_t i) const noexcept { return data_[i]; }

  private:
    const T *data_ = nullptr;
    std::size_t size_ = 0;
};

/// Why a call failed: the status and, where the call reports them, offset, field and
/// a one-line message. Plain data (an mbr_error); cheap to copy.
class Error {
  public:
    Error() noexcept : detail_() { set_status(MBR_OK); }
    explicit Error(std::uint32_t status) noexcept : detail_() { set_status(status); }
    /// From the detail a C call filled (status must be non-zero).
    explicit Error(const mbr_error &detail) noexcept : detail_(detail) {}

    std::uint32_t status() const noexcept { return detail_.status; }
    /// "trailer_mismatch", ...
    std::string_view name() const noexcept { return status_name(detail_.status); }
    /// MBR_CLASS_SCHEMA (do not retry; maybe migrate), MBR_CLASS_CORRUPT (damaged
    /// bytes), MBR_CLASS_USAGE, MBR_CLASS_IO.
    std::uint32_t error_class() const noexcept { return detail_.error_class; }
    std::string_view class_name() const noexcept { return mbr_class_name(detail_.error_class); }
    bool is_schema() const noexcept { return detail_.error_class == MBR_CLASS_SCHEMA; }
    bool is_corrupt() const noexcept { return detail_.error_class == MBR_CLASS_CORRUPT; }
    /// The byte offset concerned, if any.
    std::optional<std::uint64_t> offset() const noexcept {
        if (detail_.offset == MBR_NO_OFFSET) return std::nullopt;
        return detail_.offset;
    }
    /// The field or argument concerned ("" if none).
    std::string_view field() const noexcept { return detail_.field; }
    /// For MBR_BUFFER_TOO_SMALL: the bytes needed, when known (else 0).
    std::uint64_t needed() const noexcept { return detail_.needed; }
    /// The whole error in one line (NUL-terminated, so .data() works as a C string).
    std::string_view message() const noexcept { return detail_.message; }
    const mbr_error &c_error() const noexcept { return detail_; }

  private:
    void set_status(std::uint32_t status) noexcept {
        detail_.status = status;
        detail_.error_class = mbr_status_class(status);
        detail_.offset = MBR_NO_OFFSET;
        detail_.needed = 0;
        const char *name = mbr_status_name(status);
        std::size_t n = std::strlen(name);
        if (n >= sizeof detail_.message) n = sizeof detail_.message - 1;
        std::memcpy(detail_.message, name, n);
        detail_.message[n] = '\0';
    }
    mbr_error detail_;
};

#ifdef MEMBRANE_FRAME_HPP_EXCEPTIONS
/// Thrown by Result::value() on an error (only when exceptions are enabled).
class Exception : public std::runtime_error {
  public:
    explicit Exception(const Error &error) : std::runtime_error(std::string(error.message())), error_(error) {}
    const Error &error() const noexcept { return error_; }

  private:
    Error error_;
};
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
} // namespace detail

/// A T or an Error.
template <class T>
class [[nodiscard]] Result {
  public:
    Result(T value) : value_(std::move(value)) {}
    Result(Error error) : error_(error) {}

    bool ok() const noexcept { return value_.has_value(); }
    explicit operator bool() const noexcept { return ok(); }
    /// The status: MBR_OK or the error's.
    std::uint32_t status() const noexcept { return ok() ? MBR_OK : error_.status(); }
    /// The error (status MBR_OK when there is none).
    const Error &error() const noexcept { return error_; }

    /// The value; on an error, throws Exception (or aborts without exceptions).
    T &value() & {
        if (!ok()) detail::fail(error_);
        return *value_;
    }
    const T &value() const & {
        if (!ok()) detail::fail(error_);
        return *value_;
    }
    T &&value() && {
        if (!ok()) detail::fail(error_);
        return std::move(*value_);
    }
    template <class U>
    T value_or(U &&fallback) const & {
        return ok() ? *value_ : static_cast<T>(std::forward<U>(fallback));
    }
    T *operator->() { return &value(); }
    const T *operator->() const { return &value(); }
    T &operator*() & { return value(); }
    const T &operator*() const & { return value(); }

  private:
    std::optional<T> value_;
    Error error_;
};

/// Success or an Error.
template <>
class [[nodiscard]] Result<void> {
  public:
    Result() noexcept = default;
    Result(Error error) noexcept : error_(error) {}

    bool ok() const noexcept { return error_.status() == MBR_OK; }
    explicit operator bool() const noexcept { return ok(); }
    std::uint32_t status() const noexcept { return error_.status(); }
    const Error &error() const noexcept { return error_; }
    /// Throws Exception (or aborts without exceptions) on an error.
    void value() const {
        if (!ok()) detail::fail(error_);
    }

  private:
    Error error_;
};

using Status = Result<void>;

namespace detail {
/// Turn a C status (and the detail it may have filled) into a Result.
inline Error error_of(std::uint32_t status, const mbr_error &detail) noexcept {
    return detail.status == status ? Error(detail) : Error(status);
}
template <class T>
Result<T> make(std::uint32_t status, const mbr_error &detail, T &&value) {
    if (status != MBR_OK) return error_of(status, detail);
    return Result<T>(std::forward<T>(value));
}
inline Status make_status(std::uint32_t status, const mbr_error &detail) noexcept {
    if (status != MBR_OK) return error_of(status, detail);
    return Status();
}
inline mbr_error blank() noexcept {
    mbr_error e;
    std::memset(&e, 0, sizeof e);
    return e;
}
} // namespace detail

/* ---------------------------------------------------------------------------------- */
/* Digests                                                                            */

/// A SHA-256 digest: bytes, the 8-byte trailer prefix, lower-case hex.
struct Digest {
    mbr_digest raw;
    std::string_view hex() const noexcept { return std::string_view(raw.hex, 64); }
    std::array<std::uint8_t, 8> trailer() const noexcept {
        std::array<std::uint8_t, 8> t{};
        std::memcpy(t.data(), raw.trailer, 8);
        return t;
    }
    Bytes trailer_bytes() const noexcept { return Bytes(raw.trailer, 8); }
    Bytes bytes() const noexcept { return Bytes(raw.sha256, 32); }
    bool operator==(const Digest &o) const noexcept { return std::memcmp(raw.sha256, o.raw.sha256, 32) == 0; }
    bool operator!=(const Digest &o) const noexcept { return !(*this == o); }
};

/// SHA-256 of `data`: its hex is a payload_hash, its trailer the frame trailer.
inline Digest sha256(Bytes data) noexcept {
    Digest d{};
    (void)mbr_sha256(data.data, data.size, &d.raw);
    return d;
}

/* ---------------------------------------------------------------------------------- */
/* Identity                                                                           */

/// The C values of an identity, for Identity::build. The strings are borrowed by the
/// identity that is built, so they must outlive it; shape is copied.
struct IdentityValues {
    std::string_view payload_hash;
    std::string_view model_id;
    std::string_view model_revision;
    std::string_view tokenizer_name;
    std::string_view tokenizer_revision;
    mbr_range layer_range{0, 0};
    mbr_range head_range{-1, -1};
    mbr_range token_span{0, 0};
    std::uint32_t dtype = MBR_DTYPE_FLOAT16;
    const std::int64_t *shape = nullptr;
    std::size_t shape_len = 0;
};

/// Up to MBR_MAX_SHAPE_DIMS dimensions.
struct Shape {
    std::array<std::int64_t, MBR_MAX_SHAPE_DIMS> dims{};
    std::size_t size = 0;
    const std::int64_t *begin() const noexcept { return dims.data(); }
    const std::int64_t *end() const noexcept { return dims.data() + size; }
    std::int64_t operator[](std::size_t i) const noexcept { return dims[i]; }
};

/// A validated identity (SPEC §2). Plain data that borrows the text or strings it was
/// made from: copy it freely; keep those alive while it is used.
class Identity {
  public:
    /// Parse an identity JSON text (any strict-JSON spelling).
    static Result<Identity> parse(Bytes json) {
        Identity id;
        mbr_error e = detail::blank();
        std::uint32_t s = mbr_identity_parse(json.data, json.size, &id.raw_, &e);
        return detail::make(s, e, std::move(id));
    }
    /// Validate C++ values and make an identity of them.
    static Result<Identity> build(const IdentityValues &v) {
        mbr_identity_values c{};
        c.payload_hash = str(v.payload_hash);
        c.model_id = str(v.model_id);
        c.model_revision = str(v.model_revision);
        c.tokenizer_name = str(v.tokenizer_name);
        c.tokenizer_revision = str(v.tokenizer_revision);
        c.layer_range = v.layer_range;
        c.head_range = v.head_range;
        c.token_span = v.token_span;
        c.dtype = v.dtype;
        c.shape = v.shape;
        c.shape_len = v.shape_len;
        Identity id;
        mbr_error e = detail::blank();
        std::uint32_t s = mbr_identity_build(&c, &id.raw_, &e);
        return detail::make(s, e, std::move(id));
    }
    /// Wrap an mbr_identity filled by a C call (e.g. mbr_frame.identity).
    static Identity from_c(const mbr_identity &raw) noexcept {
        Identity id;
        id.raw_ = raw;
        return id;
    }

    /// The same identity with another payload_hash (which must outlive the result).
    Result<Identity> with_payload_hash(std::string_view hash) const {
        Identity id;
        mbr_error e = detail::blank();
        std::uint32_t s = mbr_identity_with_payload_hash(&raw_, hash.data(), hash.size(), &id.raw_, &e);
        return detail::make(s, e, std::move(id));
    }

    /// A string field's decoded value into `buf` (NUL-terminated); returns its length.
    Result<std::size_t> string_into(std::uint32_t field, char *buf, std::size_t capacity) const {
        std::size_t n = 0;
        std::uint32_t s = mbr_identity_string(&raw_, field, buf, capacity, &n);
        return detail::make(s, detail::blank(), std::move(n));
    }
    /// A string field's decoded value (allocates).
    Result<std::string> string(std::uint32_t field) const {
        std::size_t n = 0;
        std::uint32_t s = mbr_identity_string_len(&raw_, field, &n);
        if (s != MBR_OK) return Error(s);
        std::string out(n + 1, '\0');
        s = mbr_identity_string(&raw_, field, &out[0], out.size(), &n);
        if (s != MBR_OK) return Error(s);
        out.resize(n);
        return out;
    }
    Result<mbr_range> range(std::uint32_t field) const {
        mbr_range r{0, 0};
        std::uint32_t s = mbr_identity_range(&raw_, field, &r);
        return detail::make(s, detail::blank(), std::move(r));
    }
    Result<std::uint32_t> dtype() const {
        std::uint32_t d = 0;
        std::uint32_t s = mbr_identity_dtype(&raw_, &d);
        return detail::make(s, detail::blank(), std::move(d));
    }
    Result<Shape> shape() const {
        Shape sh;
        std::uint32_t s = mbr_identity_shape(&raw_, sh.dims.data(), sh.dims.size(), &sh.size);
        return detail::make(s, detail::blank(), std::move(sh));
    }
    /// Bytes of the tensor shape x dtype describes (a helper, not a reader rule).
    Result<std::uint64_t> tensor_bytes() const {
        std::uint64_t n = 0;
        std::uint32_t s = mbr_identity_tensor_bytes(&raw_, &n);
        return detail::make(s, detail::blank(), std::move(n));
    }
    Result<bool> is_canonical() const {
        bool c = false;
        std::uint32_t s = mbr_identity_is_canonical(&raw_, &c);
        return detail::make(s, detail::blank(), std::move(c));
    }
    /// SHA-256 of the canonical serialisation (SPEC §2.4).
    Result<Digest> fingerprint() const {
        Digest d{};
        std::uint32_t s = mbr_identity_fingerprint(&raw_, &d.raw);
        return detail::make(s, detail::blank(), std::move(d));
    }
    Result<std::size_t> canonical_len() const {
        std::size_t n = 0;
        std::uint32_t s = mbr_identity_canonical_len(&raw_, &n);
        return detail::make(s, detail::blank(), std::move(n));
    }
    /// The canonical serialisation into `out`; returns its length.
    Result<std::size_t> write_canonical(MutableBytes out) const {
        std::size_t n = 0;
        mbr_error e = detail::blank();
        std::uint32_t s = mbr_identity_write_canonical(&raw_, out.data, out.size, &n, &e);
        return detail::make(s, e, std::move(n));
    }

    const mbr_identity *c_ptr() const noexcept { return &raw_; }

  private:
    static mbr_str str(std::string_view s) noexcept { return mbr_str{s.data(), s.size()}; }
    Identity() noexcept : raw_() {}
    mbr_identity raw_;
};

/// Name of an MBR_DTYPE_* number ("float16", ...; static).
inline std::string_view dtype_name(std::uint32_t dtype) noexcept { return mbr_dtype_name(dtype); }

/// Fingerprint of an identity JSON text as 64 hex digits.
inline Result<std::array<char, 65>> fingerprint_hex(Bytes json) {
    std::array<char, 65> out{};
    std::uint32_t s = mbr_identity_fingerprint_hex(json.data, json.size, out.data());
    return detail::make(s, detail::blank(), std::move(out));
}

/* ---------------------------------------------------------------------------------- */
/* Reading frames                                                                     */

/// Reader policy: level, mode, limits (defaults: trailer level, exact mode).
class ReadOptions {
  public:
    ReadOptions() noexcept : raw_(mbr_read_options_default()) {}
    ReadOptions &level(std::uint32_t level) noexcept { raw_.level = level; return *this; }
    ReadOptions &mode(std::uint32_t mode) noexcept { raw_.mode = mode; return *this; }
    ReadOptions &identity_limit(std::uint32_t limit) noexcept { raw_.identity_limit = limit; return *this; }
    ReadOptions &max_depth(std::uint32_t depth) noexcept { raw_.max_depth = depth; return *this; }
    const mbr_read_options &c_options() const noexcept { return raw_; }

  private:
    mbr_read_options raw_;
};

/// Validate one exact frame at a level; ok() when accepted.
inline Status check(Bytes frame, std::uint32_t level = MBR_LEVEL_TRAILER) noexcept {
    std::uint32_t s = mbr_frame_check(frame.data, frame.size, level);
    return detail::make_status(s, detail::blank());
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

/// A frame read in place: every Bytes points into the parsed buffer, which must stay
/// alive and unchanged while the view is used.
class FrameView {
  public:
    static Result<FrameView> parse(Bytes buf, const ReadOptions &options = ReadOptions()) {
        FrameView view;
        mbr_error e = detail::blank();
        std::uint32_t s = mbr_frame_parse(buf.data, buf.size, options.c_options(), &view.raw_, &e);
        return detail::make(s, e, std::move(view));
    }

    Bytes bytes() const noexcept { return Bytes(raw_.bytes, raw_.len); }
    Bytes identity_json() const noexcept { return Bytes(raw_.identity_json, raw_.identity_json_len); }
    Bytes payload() const noexcept { return Bytes(raw_.payload, raw_.payload_len); }
    /// Prefix mode: what follows the frame.
    Bytes rest() const noexcept { return Bytes(raw_.rest, raw_.rest_len); }
    Bytes trailer() const noexcept { return Bytes(raw_.trailer, 8); }
    std::uint32_t level() const noexcept { return raw_.level; }
    /// Offset of the payload in the frame, 22 + identity length (SPEC 1.5).
    std::size_t payload_offset() const noexcept { return raw_.payload_offset; }
    /// Spaces an aligned writer put after the canonical identity (0 when not canonical
    /// or at the layout level).
    std::size_t padding() const noexcept { return raw_.padding; }
    /// Whether the payload's address is a multiple of `align` (a power of two up to
    /// 4096; anything else is an error).
    Result<bool> payload_is_aligned(std::uint32_t align) const {
        bool aligned = false;
        std::uint32_t s = mbr_frame_payload_is_aligned(&raw_, align, &aligned);
        return detail::make(s, detail::blank(), std::move(aligned));
    }
    /// The payload in place as an array of T (std::uint16_t for the bits of float16 and
    /// bfloat16, float for float32, ...): never a copy. MBR_MISALIGNED when the payload's
    /// address is not aligned to T, its length is not a whole number of T, or the
    /// frame's dtype is not one T holds.
    template <class T>
    Result<Span<T>> payload_as() const {
        mbr_payload_elements out{};
        mbr_error e = detail::blank();
        std::uint32_t s = mbr_frame_payload_elements(&raw_, detail::element<T>::value, &out, &e);
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
    FrameView() noexcept : raw_() {}
    mbr_frame raw_;
};

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
                                     const WriteOptions &options) {
    mbr_frame_layout layout{};
    mbr_error e = detail::blank();
    std::uint32_t s = mbr_frame_plan(identity.c_ptr(), payload_len, options.c_options(), &layout, &e);
    return detail::make(s, e, std::move(layout));
}

/// Length of the frame for `identity` and `payload_len` payload bytes.
inline Result<std::uint64_t> encoded_len(const Identity &identity, std::uint64_t payload_len) {
    std::uint64_t n = 0;
    mbr_error e = detail::blank();
    std::uint32_t s = mbr_frame_encoded_len(identity.c_ptr(), payload_len, &n, &e);
    return detail::make(s, e, std::move(n));
}

/// Length of the head (header, canonical identity, payload length).
inline Result<std::size_t> head_len(const Identity &identity, std::uint64_t payload_len) {
    std::size_t n = 0;
    mbr_error e = detail::blank();
    std::uint32_t s = mbr_frame_head_len(identity.c_ptr(), payload_len, &n, &e);
    return detail::make(s, e, std::move(n));
}

/// Write the head into `out`; returns its length. Send head, payload and
/// sha256(payload).trailer_bytes() with writev: the payload is not copied.
inline Result<std::size_t> write_head(const Identity &identity, std::uint64_t payload_len, MutableBytes out) {
    std::size_t n = 0;
    mbr_error e = detail::blank();
    std::uint32_t s = mbr_frame_write_head(identity.c_ptr(), payload_len, out.data, out.size, &n, &e);
    return detail::make(s, e, std::move(n));
}

/// Write a whole frame into `out`; returns its length.
inline Result<std::size_t> encode(const Identity &identity, Bytes payload, MutableBytes out) {
    std::size_t n = 0;
    mbr_error e = detail::blank();
    std::uint32_t s = mbr_frame_encode(identity.c_ptr(), payload.data, payload.size, out.data, out.size, &n, &e);
    return detail::make(s, e, std::move(n));
}

/// write_head with `options` (the head ends with the padding that aligns the payload).
inline Result<std::size_t> write_head(const Identity &identity, std::uint64_t payload_len, MutableBytes out,
                                      const WriteOptions &options) {
    std::size_t n = 0;
    mbr_error e = detail::blank();
    std::uint32_t s =
        mbr_frame_write_head_with(identity.c_ptr(), payload_len, options.c_options(), out.data, out.size, &n, &e);
    return detail::make(s, e, std::move(n));
}

/// encode with `options` (alignment, identity limit).
inline Result<std::size_t> encode(const Identity &identity, Bytes payload, MutableBytes out,
                                  const WriteOptions &options) {
    std::size_t n = 0;
    mbr_error e = detail::blank();
    std::uint32_t s = mbr_frame_encode_with(identity.c_ptr(), payload.data, payload.size, options.c_options(),
                                            out.data, out.size, &n, &e);
    return detail::make(s, e, std::move(n));
}

/// A whole frame in a new vector (allocates).
inline Result<std::vector<std::uint8_t>> encode(const Identity &identity, Bytes payload) {
    Result<std::uint64_t> len = encoded_len(identity, payload.size);
    if (!len) return len.error();
    std::vector<std::uint8_t> out(static_cast<std::size_t>(len.value()));
    Result<std::size_t> n = encode(identity, payload, MutableBytes(out));
    if (!n) return n.error();
    return out;
}

/// Writes a frame whose payload arrives in chunks to a sink: any object with
/// `int operator()(const std::uint8_t *data, std::size_t len)` returning 0 when all
/// bytes were taken. The sink and the identity must outlive the writer, which is
/// neither copyable nor movable (its state refers to them). Nothing to release.
class ChunkedWriter {
  public:
    ChunkedWriter() noexcept : raw_() {}
    ChunkedWriter(const ChunkedWriter &) = delete;
    ChunkedWriter &operator=(const ChunkedWriter &) = delete;

    /// Write the head for a payload of exactly `payload_len` bytes.
    template <class Sink>
    Status begin(const Identity &identity, std::uint64_t payload_len, Sink &sink) {
        mbr_error e = detail::blank();
        std::uint32_t s =
            mbr_chunked_writer_begin(&raw_, identity.c_ptr(), payload_len, &trampoline<Sink>, &sink, &e);
        return detail::make_status(s, e);
    }
    /// begin with `options` (alignment, identity limit).
    template <class Sink>
    Status begin(const Identity &identity, std::uint64_t payload_len, Sink &sink, const WriteOptions &options) {
        mbr_error e = detail::blank();
        std::uint32_t s = mbr_chunked_writer_begin_with(&raw_, identity.c_ptr(), payload_len, options.c_options(),
                                                        &trampoline<Sink>, &sink, &e);
        return detail::make_status(s, e);
    }
    /// Pass the next payload chunk through.
    Status write(Bytes chunk) {
        mbr_error e = detail::blank();
        return detail::make_status(mbr_chunked_writer_write(&raw_, chunk.data, chunk.size, &e), e);
    }
    Result<std::uint64_t> remaining() const {
        std::uint64_t n = 0;
        std::uint32_t s = mbr_chunked_writer_remaining(&raw_, &n);
        return detail::make(s, detail::blank(), std::move(n));
    }
    /// Write the trailer; the writer is finished whatever the result.
    Result<mbr_chunked_outcome> finish() {
        mbr_chunked_outcome out{};
        mbr_error e = detail::blank();
        std::uint32_t s = mbr_chunked_writer_finish(&raw_, &out, &e);
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
        init_ = mbr_stream_verifier_init(&raw_, options.c_options(), identity_buf.data, identity_buf.size);
    }
    StreamVerifier(const StreamVerifier &) = delete;
    StreamVerifier &operator=(const StreamVerifier &) = delete;

    /// Whether the options were accepted (else every call reports why not).
    Status status() const noexcept { return detail::make_status(init_, detail::blank()); }

    /// Feed the next chunk; the progress says whether the frame is complete.
    Result<mbr_stream_progress> feed(Bytes chunk) {
        if (init_ != MBR_OK) return Error(init_);
        mbr_stream_progress p{};
        mbr_error e = detail::blank();
        std::uint32_t s = mbr_stream_verifier_feed(&raw_, chunk.data, chunk.size, &p, &e);
        return detail::make(s, e, std::move(p));
    }
    /// End of stream: the verdict. The verifier is finished whatever the result.
    Result<StreamedFrame> finish() {
        if (init_ != MBR_OK) return Error(init_);
        StreamedFrame f{};
        mbr_error e = detail::blank();
        std::uint32_t s = mbr_stream_verifier_finish(&raw_, &f.raw, &e);
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

namespace detail {
/// MBR_BUFFER_TOO_SMALL with the length needed.
inline Error too_small(std::size_t needed) noexcept {
    mbr_error e = Error(MBR_BUFFER_TOO_SMALL).c_error();
    e.needed = needed;
    return Error(e);
}
inline mbr_str c_str(std::string_view s) noexcept { return mbr_str{s.data(), s.size()}; }
} // namespace detail

/// Validate one envelope JSON text; ok() when accepted, else the SPEC §8 code
/// (MBR_ENVELOPE_JSON, _VERSION, _MISSING_FIELD, _FIELD, MBR_IDENTITY_FIELD).
inline Status check_envelope(Bytes json) noexcept {
    return detail::make_status(mbr_envelope_check(json.data, json.size), detail::blank());
}

/// Parse an envelope text and write its SPEC §3.2 (to_bytes) form into `out`; returns
/// the length. A too-small `out` is MBR_BUFFER_TOO_SMALL with error().needed() the
/// length needed (and `out` untouched).
inline Result<std::size_t> canonicalize_envelope(Bytes json, MutableBytes out) {
    std::size_t n = 0;
    std::uint32_t s = mbr_envelope_canonicalize(json.data, json.size, out.data, out.size, &n);
    if (s == MBR_BUFFER_TOO_SMALL) return detail::too_small(n);
    return detail::make(s, detail::blank(), std::move(n));
}

/// The SPEC §3.2 form of an envelope text, in a new string (allocates).
inline Result<std::string> canonicalize_envelope(Bytes json) {
    std::size_t n = 0;
    std::uint32_t s = mbr_envelope_canonicalize(json.data, json.size, nullptr, 0, &n);
    if (s != MBR_BUFFER_TOO_SMALL) return Error(s); // an empty output is always too small
    std::string out(n, '\0');
    s = mbr_envelope_canonicalize(json.data, json.size, reinterpret_cast<std::uint8_t *>(&out[0]), out.size(), &n);
    if (s != MBR_OK) return Error(s);
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
    std::uint32_t consistency = MBR_CONSISTENCY_STRONG;
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
    /// Parse an envelope JSON text.
    static Result<Envelope> parse(Bytes json) {
        Envelope env;
        mbr_error e = detail::blank();
        std::uint32_t s = mbr_envelope_parse(json.data, json.size, &env.raw_, &e);
        return detail::make(s, e, std::move(env));
    }
    /// Validate C++ values and make an envelope of them.
    static Result<Envelope> build(const EnvelopeValues &v) {
        mbr_envelope_values c{};
        c.tenant_id = detail::c_str(v.tenant_id);
        c.identity = v.identity != nullptr ? v.identity->c_ptr() : nullptr;
        c.has_payload_ref = v.payload_ref.has_value();
        c.payload_ref = detail::c_str(v.payload_ref.value_or(std::string_view()));
        c.payload_size = v.payload_size;
        c.ttl = v.ttl;
        c.reuse_score = v.reuse_score;
        c.version_id = v.version_id;
        c.consistency = v.consistency;
        c.hlc = v.hlc;
        c.derive_fingerprint_compat = v.derive_fingerprint_compat;
        c.fingerprint_compat = detail::c_str(v.fingerprint_compat);
        Envelope env;
        mbr_error e = detail::blank();
        std::uint32_t s = mbr_envelope_build(&c, &env.raw_, &e);
        return detail::make(s, e, std::move(env));
    }

    /// Every field but the strings, and the identity.
    Result<mbr_envelope_fields> fields() const {
        mbr_envelope_fields f{};
        std::uint32_t s = mbr_envelope_get_fields(&raw_, &f);
        return detail::make(s, detail::blank(), std::move(f));
    }
    Result<Identity> identity() const {
        mbr_identity id{};
        std::uint32_t s = mbr_envelope_identity(&raw_, &id);
        if (s != MBR_OK) return Error(s);
        return Identity::from_c(id);
    }
    /// A string field (MBR_ENVELOPE_FIELD_*) into `buf` (NUL-terminated); returns its length.
    Result<std::size_t> string_into(std::uint32_t field, char *buf, std::size_t capacity) const {
        std::size_t n = 0;
        std::uint32_t s = mbr_envelope_string(&raw_, field, buf, capacity, &n);
        return detail::make(s, detail::blank(), std::move(n));
    }
    /// A string field's decoded value (allocates). payload_ref null reads as "".
    Result<std::string> string(std::uint32_t field) const {
        std::size_t n = 0;
        std::uint32_t s = mbr_envelope_string_len(&raw_, field, &n);
        if (s != MBR_OK) return Error(s);
        std::string out(n + 1, '\0');
        s = mbr_envelope_string(&raw_, field, &out[0], out.size(), &n);
        if (s != MBR_OK) return Error(s);
        out.resize(n);
        return out;
    }
    /// tenant_id (allocates).
    Result<std::string> tenant_id() const { return string(MBR_ENVELOPE_FIELD_TENANT_ID); }
    /// Whether the parsed text is byte for byte its SPEC §3.2 form.
    Result<bool> is_canonical() const {
        bool c = false;
        std::uint32_t s = mbr_envelope_is_canonical(&raw_, &c);
        return detail::make(s, detail::blank(), std::move(c));
    }
    Result<std::size_t> encoded_len() const {
        std::size_t n = 0;
        std::uint32_t s = mbr_envelope_encoded_len(&raw_, &n);
        return detail::make(s, detail::blank(), std::move(n));
    }
    /// The SPEC §3.2 (to_bytes) text into `out`; returns its length.
    Result<std::size_t> write(MutableBytes out) const {
        std::size_t n = 0;
        mbr_error e = detail::blank();
        std::uint32_t s = mbr_envelope_write(&raw_, out.data, out.size, &n, &e);
        return detail::make(s, e, std::move(n));
    }
    /// The SPEC §3.2 text in a new string (allocates).
    Result<std::string> to_string() const {
        Result<std::size_t> len = encoded_len();
        if (!len) return len.error();
        std::string out(len.value(), '\0');
        Result<std::size_t> n = write(MutableBytes(reinterpret_cast<std::uint8_t *>(&out[0]), out.size()));
        if (!n) return n.error();
        return out;
    }

    const mbr_envelope *c_ptr() const noexcept { return &raw_; }

  private:
    Envelope() noexcept : raw_() {}
    mbr_envelope raw_;
};

/// Name of an MBR_CONSISTENCY_* number ("strong", ...; static).
inline std::string_view consistency_name(std::uint32_t consistency) noexcept { return mbr_consistency_name(consistency); }

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
inline Result<Hex> compat_hash(const CompatInputs &in) {
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
    std::uint32_t s = mbr_compat_hash(&c, out.data());
    return detail::make(s, detail::blank(), std::move(out));
}

/// The compatibility hash derived from an identity (layout versions 0, config_hash "").
inline Result<Hex> compat_hash(const Identity &identity) {
    Hex out{};
    std::uint32_t s = mbr_identity_compat_hash(identity.c_ptr(), out.data());
    return detail::make(s, detail::blank(), std::move(out));
}

/* ---------------------------------------------------------------------------------- */
/* HLC values (SPEC §9)                                                               */

namespace hlc {

/// A packed value's two parts.
struct Parts {
    std::uint64_t physical_ms = 0;
    std::uint16_t logical = 0;
};

/// (physical_ms << 16) | logical; MBR_INVALID_ARGUMENT past MBR_HLC_MAX_PHYSICAL_MS.
inline Result<std::uint64_t> pack(std::uint64_t physical_ms, std::uint16_t logical) {
    std::uint64_t out = 0;
    std::uint32_t s = mbr_hlc_pack(physical_ms, logical, &out);
    return detail::make(s, detail::blank(), std::move(out));
}
inline Parts unpack(std::uint64_t value) noexcept {
    Parts p;
    (void)mbr_hlc_unpack(value, &p.physical_ms, &p.logical);
    return p;
}
/// The next local value after `previous` at wall-clock time `now_ms`.
inline Result<std::uint64_t> tick(std::uint64_t previous, std::uint64_t now_ms) {
    std::uint64_t out = 0;
    std::uint32_t s = mbr_hlc_tick(previous, now_ms, &out);
    return detail::make(s, detail::blank(), std::move(out));
}
/// The local value after receiving `remote` at wall-clock time `now_ms`.
inline Result<std::uint64_t> merge(std::uint64_t local, std::uint64_t remote, std::uint64_t now_ms) {
    std::uint64_t out = 0;
    std::uint32_t s = mbr_hlc_merge(local, remote, now_ms, &out);
    return detail::make(s, detail::blank(), std::move(out));
}

/// A node's clock: the last value it issued or observed (unchanged on an error).
class Clock {
  public:
    explicit Clock(std::uint64_t last = 0) noexcept : last_(last) {}
    std::uint64_t last() const noexcept { return last_; }
    /// Issue a value for a local event.
    Result<std::uint64_t> tick(std::uint64_t now_ms) { return remember(hlc::tick(last_, now_ms)); }
    /// Take a remote value into account.
    Result<std::uint64_t> observe(std::uint64_t remote, std::uint64_t now_ms) {
        return remember(hlc::merge(last_, remote, now_ms));
    }

  private:
    Result<std::uint64_t> remember(Result<std::uint64_t> next) {
        if (next) last_ = next.value();
        return next;
    }
    std::uint64_t last_;
};

} // namespace hlc

/* ---------------------------------------------------------------------------------- */
/* Migration to v5 (SPEC §7)                                                          */

/// Dry run: what migrating this frame would do (the mode must be MBR_MODE_EXACT).
inline Result<mbr_frame_migration> plan_frame_migration(Bytes frame, const ReadOptions &options = ReadOptions()) {
    mbr_frame_migration m{};
    mbr_error e = detail::blank();
    std::uint32_t s = mbr_plan_frame_migration(frame.data, frame.size, options.c_options(), &m, &e);
    return detail::make(s, e, std::move(m));
}

/// Migrate a v2 or v4 frame to v5 in place (bytes 0..6); untouched on any error.
inline Result<mbr_frame_migration> migrate_frame_in_place(MutableBytes frame,
                                                         const ReadOptions &options = ReadOptions()) {
    mbr_frame_migration m{};
    mbr_error e = detail::blank();
    std::uint32_t s = mbr_migrate_frame_in_place(frame.data, frame.size, options.c_options(), &m, &e);
    return detail::make(s, e, std::move(m));
}

/// Envelope migration policy (defaults: tenant "public", JSON depth 32). A tenant set
/// here must outlive the options.
class EnvelopeMigrationOptions {
  public:
    EnvelopeMigrationOptions() noexcept : raw_(mbr_envelope_migration_options_default()) {}
    EnvelopeMigrationOptions &default_tenant(std::string_view tenant) noexcept {
        raw_.default_tenant = detail::c_str(tenant);
        return *this;
    }
    EnvelopeMigrationOptions &max_depth(std::uint32_t depth) noexcept { raw_.max_depth = depth; return *this; }
    const mbr_envelope_migration_options &c_options() const noexcept { return raw_; }

  private:
    mbr_envelope_migration_options raw_;
};

/// Migrate a schema 2-4 envelope into `out` (kind MBR_MIGRATION_LEGACY, `len` bytes);
/// a v5 envelope is MBR_MIGRATION_ALREADY_V5 and nothing is written.
inline Result<mbr_envelope_migration> migrate_envelope(Bytes json, MutableBytes out,
                                                       const EnvelopeMigrationOptions &options = {}) {
    mbr_envelope_migration m{};
    mbr_error e = detail::blank();
    std::uint32_t s = mbr_migrate_envelope(json.data, json.size, options.c_options(), out.data, out.size, &m, &e);
    return detail::make(s, e, std::move(m));
}

/// The v5 text of an envelope (allocates): the migrated text, or a copy of the input
/// when it is a valid v5 envelope already.
inline Result<std::string> migrate_envelope(Bytes json, const EnvelopeMigrationOptions &options = {}) {
    Result<mbr_envelope_migration> sized = migrate_envelope(json, MutableBytes(), options);
    if (sized) return std::string(json.as_string_view()); // v5 already (a rewrite never fits 0 bytes)
    if (sized.error().status() != MBR_BUFFER_TOO_SMALL) return sized.error();
    std::string out(static_cast<std::size_t>(sized.error().needed()), '\0');
    Result<mbr_envelope_migration> done =
        migrate_envelope(json, MutableBytes(reinterpret_cast<std::uint8_t *>(&out[0]), out.size()), options);
    if (!done) return done.error();
    out.resize(done->len);
    return out;
}

/* ---------------------------------------------------------------------------------- */

/// The library version ("0.1.0").
inline std::string_view version() noexcept { return mbr_version(); }
/// Whether the loaded library speaks the ABI this header describes.
inline bool abi_matches() noexcept { return mbr_abi_version() == MBR_ABI_VERSION; }

// ---- cluster metadata (SPEC §5, §6) ----

/// Validate a snapshot JSON text (SPEC §5): Ok, or the SPEC §8 code.
inline Status check_snapshot(Bytes json) noexcept {
    return detail::make_status(mbr_snapshot_check(json.data, json.size), detail::blank());
}

/// The epoch guard (SPEC §5); std::nullopt is a snapshot without an epoch.
inline Status check_epoch(std::uint64_t live_epoch, std::optional<std::uint64_t> persisted) noexcept {
    return detail::make_status(mbr_snapshot_epoch_check(live_epoch, persisted.value_or(0), persisted.has_value()),
                               detail::blank());
}

/// Validate a gossip map text (SPEC §6).
inline Status check_gossip(Bytes json) noexcept {
    return detail::make_status(mbr_gossip_check(json.data, json.size), detail::blank());
}

/// Merge two gossip maps (per hash the larger until) and write the entries active at
/// `now` into `out`; returns the length. A too-small `out` is MBR_BUFFER_TOO_SMALL with
/// error().needed() the length needed (and `out` untouched). No table, any map size.
inline Result<std::size_t> gossip_merge(Bytes a, Bytes b, double now, MutableBytes out) {
    std::size_t n = 0;
    std::uint32_t s = mbr_gossip_merge(a.data, a.size, b.data, b.size, now, out.data, out.size, &n);
    if (s == MBR_BUFFER_TOO_SMALL) return detail::too_small(n);
    return detail::make(s, detail::blank(), std::move(n));
}

/// The merged gossip map text, in a new string (allocates).
inline Result<std::string> gossip_merge(Bytes a, Bytes b, double now) {
    std::size_t n = 0;
    std::uint32_t s = mbr_gossip_merge(a.data, a.size, b.data, b.size, now, nullptr, 0, &n);
    if (s != MBR_BUFFER_TOO_SMALL) return Error(s); // "{}" at least: an empty output is too small
    std::string out(n, '\0');
    s = mbr_gossip_merge(a.data, a.size, b.data, b.size, now, reinterpret_cast<std::uint8_t *>(&out[0]), out.size(), &n);
    if (s != MBR_OK) return Error(s);
    return out;
}

} // namespace membrane

#endif /* MEMBRANE_FRAME_HPP */
