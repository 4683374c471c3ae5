// test_aligned: aligned frames (SPEC 1.5) through the C++ wrapper, as an engine uses
// them. A float16 KV block is written with its payload on a page boundary, the file is
// mapped, and payload_as<std::uint16_t>() views the block where it lies in the mapping
// (no copy: the span's data pointer is the mapping plus 4096); the same block written
// without alignment lands at an odd offset, where the view is refused with
// MBR_MISALIGNED instead of being undefined behaviour; a float view of a float16
// payload is refused too. The streaming verifier and a chunked writer report and write
// the same padding.
//
//   usage: test_aligned [DIR]        (a directory for the scratch files; default /tmp)
//   last line: "test_aligned: N passed, M failed"
#include "membrane_frame.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace mf = membrane;

static int passes, failures;

static void expect(bool ok, const char *what) {
    if (ok) {
        passes++;
    } else {
        failures++;
        std::printf("FAIL %s\n", what);
    }
}

/// A file mapped read-only, unmapped when it goes.
class Mapping {
  public:
    explicit Mapping(const std::string &path) {
        int fd = ::open(path.c_str(), O_RDONLY);
        struct stat st;
        if (fd >= 0 && ::fstat(fd, &st) == 0 && st.st_size > 0) {
            void *at = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
            if (at != MAP_FAILED) {
                data_ = static_cast<const std::uint8_t *>(at);
                size_ = static_cast<std::size_t>(st.st_size);
            }
        }
        if (fd >= 0) ::close(fd);
    }
    ~Mapping() {
        if (data_ != nullptr) ::munmap(const_cast<std::uint8_t *>(data_), size_);
    }
    Mapping(const Mapping &) = delete;
    Mapping &operator=(const Mapping &) = delete;
    mf::Bytes bytes() const { return mf::Bytes(data_, size_); }
    bool contains(const void *p, std::size_t n) const {
        auto at = static_cast<const std::uint8_t *>(p);
        return data_ != nullptr && at >= data_ && at + n <= data_ + size_;
    }
    const std::uint8_t *data() const { return data_; }

  private:
    const std::uint8_t *data_ = nullptr;
    std::size_t size_ = 0;
};

static bool write_file(const std::string &path, const std::vector<std::uint8_t> &bytes) {
    std::FILE *f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) return false;
    bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    return std::fclose(f) == 0 && ok;
}

/// The frame for `kv` written with `options` into a new vector.
static std::vector<std::uint8_t> frame_of(const mf::Identity &identity, mf::Bytes kv, const mf::WriteOptions &options) {
    auto layout = mf::plan(identity, kv.size(), options);
    if (!layout) return {};
    std::vector<std::uint8_t> out(static_cast<std::size_t>(layout->frame_len));
    auto n = mf::encode(identity, kv, mf::MutableBytes(out), options);
    if (!n || *n != out.size()) return {};
    return out;
}

int main(int argc, char **argv) {
    std::string dir = argc > 1 ? argv[1] : "/tmp";
    std::vector<std::uint16_t> kv(8 * 128); // 8 heads x 128 dims of float16 bits
    for (std::size_t i = 0; i < kv.size(); i++) kv[i] = static_cast<std::uint16_t>(0x3c00 + i);
    mf::Bytes kv_bytes(kv);
    mf::Digest digest = mf::sha256(kv_bytes);
    const std::int64_t shape[] = {1, 1, 8, 1, 128};
    mf::IdentityValues values;
    values.payload_hash = digest.hex();
    values.model_id = "llama-3-8b";
    values.tokenizer_name = "llama-3-8b";
    values.layer_range = {0, 0};
    values.head_range = {-1, -1};
    values.token_span = {0, 0};
    values.dtype = mf::Dtype::float16;
    values.shape = shape;
    auto identity = mf::Identity::build(values);
    expect(identity.ok(), "build the identity");
    if (!identity) return 1;

    // Page-aligned: the payload at byte 4096 of the file.
    std::string aligned_path = dir + "/test_aligned.page.frame";
    std::vector<std::uint8_t> aligned = frame_of(*identity, kv_bytes, mf::WriteOptions().align(4096));
    expect(!aligned.empty() && write_file(aligned_path, aligned), "write the page-aligned frame");
    {
        Mapping map(aligned_path);
        auto frame = mf::FrameView::parse(map.bytes(), mf::ReadOptions().level(mf::Level::full));
        expect(frame.ok(), "the page-aligned frame is valid at the full level");
        if (frame) {
            expect(frame->payload_offset() == 4096 && frame->padding() > 0, "payload_offset 4096, padded");
            expect(frame->payload_is_aligned(4096).value_or(false), "payload_is_aligned(4096)");
            auto halves = frame->payload_as<std::uint16_t>();
            expect(halves.ok(), "payload_as<std::uint16_t>() over the mapping");
            if (halves) {
                expect(halves->data() == reinterpret_cast<const std::uint16_t *>(map.data() + 4096),
                       "the span's data is the mapping + 4096: no copy");
                expect(map.contains(halves->data(), halves->size() * 2), "the span lies inside the mapping");
                expect(halves->size() == kv.size() && (*halves)[5] == kv[5] && (*halves)[1023] == kv[1023],
                       "the span reads the block");
            }
            auto floats = frame->payload_as<float>();
            expect(!floats && floats.code() == mf::Code::misaligned, "payload_as<float>() of float16 is refused");
            auto bytes = frame->payload_as<std::uint8_t>();
            expect(bytes.ok() && bytes->size() == kv_bytes.size(), "payload_as<std::uint8_t>() is the raw bytes");
        }
        // The streaming verifier reports the same placement.
        std::vector<std::uint8_t> identity_buf(MBR_DEFAULT_IDENTITY_LIMIT);
        mf::StreamVerifier verifier(mf::ReadOptions().level(mf::Level::full), mf::MutableBytes(identity_buf));
        auto fed = verifier.feed(map.bytes());
        auto streamed = verifier.finish();
        expect(fed.ok() && streamed.ok() && streamed->payload_offset() == 4096 &&
                   frame.ok() && streamed->padding() == frame->padding(),
               "the streamed frame reports payload_offset and padding");
    }

    // Unaligned: the same block written as the original writer does, at an odd offset
    // (the identity's length decides; a model id one byte longer or shorter makes it odd).
    std::vector<std::uint8_t> plain;
    std::string model = "llama-3-8b";
    for (int tries = 0; tries < 2; tries++) {
        values.model_id = model;
        auto other = mf::Identity::build(values);
        plain = other ? frame_of(*other, kv_bytes, mf::WriteOptions()) : std::vector<std::uint8_t>();
        auto parsed = mf::FrameView::parse(mf::Bytes(plain));
        if (parsed && parsed->payload_offset() % 2 == 1) break;
        model += "x";
    }
    std::string plain_path = dir + "/test_aligned.plain.frame";
    expect(!plain.empty() && write_file(plain_path, plain), "write the unaligned frame");
    {
        Mapping map(plain_path);
        auto frame = mf::FrameView::parse(map.bytes());
        expect(frame.ok() && frame->payload_offset() % 2 == 1 && frame->padding() == 0,
               "the unaligned frame's payload is at an odd offset, unpadded");
        if (frame) {
            auto halves = frame->payload_as<std::uint16_t>();
            expect(!halves && halves.code() == mf::Code::misaligned &&
                       halves.error().offset() == frame->payload_offset(),
                   "payload_as<std::uint16_t>() at an odd address is MBR_MISALIGNED, with the payload's offset");
            expect(!frame->payload_is_aligned(2).value_or(true), "payload_is_aligned(2) is false");
            expect(frame->payload_is_aligned(3).code() == mf::Code::invalid_argument, "payload_is_aligned(3) is refused");
        }
    }

    // A chunked writer asked for the same alignment writes the same bytes.
    std::vector<std::uint8_t> chunked;
    auto sink = [&chunked](const std::uint8_t *data, std::size_t len) {
        chunked.insert(chunked.end(), data, data + len);
        return 0;
    };
    {
        mf::ChunkedWriter writer;
        bool ok = writer.begin(*identity, kv_bytes.size(), sink, mf::WriteOptions().align(4096)).ok() &&
                  writer.write(kv_bytes).ok() && writer.finish().ok();
        expect(ok && chunked == aligned, "ChunkedWriter with align(4096) writes the same frame");
    }
    // An alignment past a page is a usage error, before anything is written.
    auto too_wide = mf::plan(*identity, kv_bytes.size(), mf::WriteOptions().align(8192));
    expect(!too_wide && too_wide.code() == mf::Code::invalid_argument && !too_wide.error().offset(),
           "align(8192) is invalid_argument");
    std::remove(aligned_path.c_str());
    std::remove(plain_path.c_str());
    std::printf("test_aligned: %d passed, %d failed\n", passes, failures);
    return failures == 0 ? 0 : 1;
}
