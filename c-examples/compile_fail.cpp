// Code that must not compile: each MBR_CASE_* block is one way of using the C++ wrapper
// (or the C header) that would dangle, mix up typed numbers or drop a status. With no case
// defined the file is the same code written correctly, and must compile: that is the
// control which shows a failing case fails for its own reason.
//
//   compile_fail.sh runs it: every case under g++ and clang++, C++17 and C++20, with
//   -Wall -Wextra -Wpedantic -Werror, each expected to fail with the diagnostic it names.
#include "membrane_frame.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace mf = membrane;

std::vector<std::uint8_t> load();
std::string load_text();
mf::OwnedIdentity make_owned();
int control(const mf::Identity &id, const std::vector<std::uint8_t> &kv);

int control(const mf::Identity &id, const std::vector<std::uint8_t> &kv) {
    (void)id; // each case uses some of the arguments: no other warning may fail it
    (void)kv;
    int failures = 0;
    mf::IdentityValues values;
    mf::Digest digest = mf::sha256(mf::Bytes(kv));
    std::vector<std::uint8_t> buf = load();
    std::string text = load_text();
    auto sink = [](const std::uint8_t *, std::size_t) { return 0; };
    mf::ChunkedWriter writer;
    std::string tenant = "acme";
    std::vector<char> room(64);

#if defined(MBR_CASE_HEX_OF_A_TEMPORARY_DIGEST) // expect: deleted
    values.payload_hash = mf::sha256(mf::Bytes(kv)).hex();
#elif defined(MBR_CASE_TRAILER_OF_A_TEMPORARY_DIGEST) // expect: deleted
    mf::Bytes trailer = mf::sha256(mf::Bytes(kv)).trailer_bytes();
    failures += static_cast<int>(trailer.size());
#elif defined(MBR_CASE_PARSE_A_TEMPORARY_VECTOR) // expect: deleted
    auto frame = mf::FrameView::parse(load());
    failures += !frame;
#elif defined(MBR_CASE_PARSE_A_TEMPORARY_STRING_AS_IDENTITY) // expect: deleted
    auto parsed = mf::Identity::parse(load_text());
    failures += !parsed;
#elif defined(MBR_CASE_PARSE_A_TEMPORARY_STRING_AS_ENVELOPE) // expect: deleted
    auto parsed = mf::Envelope::parse(load_text());
    failures += !parsed;
#elif defined(MBR_CASE_PAYLOAD_HASH_FROM_A_TEMPORARY_STRING) // expect: deleted
    auto rehashed = id.with_payload_hash(std::string(64, 'a'));
    failures += !rehashed;
#elif defined(MBR_CASE_DECODED_VIEW_OF_A_TEMPORARY_STRING) // expect: deleted
    auto decoded = mf::Envelope::parse_view(load_text(), room);
    failures += !decoded;
#elif defined(MBR_CASE_DECODED_VIEW_INTO_A_TEMPORARY_BUFFER) // expect: convert
    auto decoded = mf::Identity::parse_view(text, std::vector<char>(64));
    failures += !decoded;
#elif defined(MBR_CASE_VIEW_OF_A_TEMPORARY_OWNED_IDENTITY) // expect: deleted
    const mf::Identity &view = make_owned().identity();
    failures += !view.dtype();
#elif defined(MBR_CASE_TEMPORARY_SINK) // expect: deleted
    failures += !writer.begin(id, 0, [](const std::uint8_t *, std::size_t) { return 0; });
#elif defined(MBR_CASE_TENANT_FROM_A_TEMPORARY_STRING) // expect: deleted
    auto options = mf::EnvelopeMigrationOptions().default_tenant(std::string("acme"));
    failures += static_cast<int>(options.c_options().max_depth);
#elif defined(MBR_CASE_SHAPE_FROM_A_TEMPORARY_VECTOR) // expect: convert
    values.shape = std::vector<std::int64_t>{2, 4};
#elif defined(MBR_CASE_LEVEL_GIVEN_A_C_MODE) // expect: convert
    auto options = mf::ReadOptions().level(MBR_MODE_PREFIX);
    failures += static_cast<int>(options.c_options().level);
#elif defined(MBR_CASE_LEVEL_GIVEN_A_MODE) // expect: convert
    auto options = mf::ReadOptions().level(mf::Mode::prefix);
    failures += static_cast<int>(options.c_options().level);
#elif defined(MBR_CASE_RANGE_GIVEN_A_C_DTYPE) // expect: convert
    failures += !id.range(MBR_DTYPE_INT8);
#elif defined(MBR_CASE_RANGE_GIVEN_A_DTYPE) // expect: convert
    failures += !id.range(mf::Dtype::int8);
#elif defined(MBR_CASE_CHECK_GIVEN_A_MODE) // expect: convert
    failures += !mf::check(buf, mf::Mode::prefix);
#elif defined(MBR_CASE_DTYPE_FROM_AN_INTEGER) // expect: convert
    values.dtype = 4;
#elif defined(MBR_CASE_CODE_COMPARED_WITH_A_C_STATUS) // expect: convert
    failures += mf::check(buf).code() == MBR_TRAILER_MISMATCH;
#elif defined(MBR_CASE_STATUS_IGNORED) // expect: discard
    mf::check(buf);
#elif defined(MBR_CASE_C_STATUS_IGNORED) // expect: discard
    mbr_frame_check(buf.data(), buf.size(), MBR_LEVEL_FULL);
#else
    // The same intentions, written so that nothing dangles or is mixed up.
    values.payload_hash = digest.hex();
    mf::Bytes trailer = digest.trailer_bytes();
    failures += static_cast<int>(trailer.size());
    auto frame = mf::FrameView::parse(buf);
    auto identity = mf::Identity::parse(text);
    auto envelope = mf::Envelope::parse(text);
    auto decoded = mf::Envelope::parse_view(text, room);
    auto decoded_identity = mf::Identity::parse_view(text, room);
    std::string hash(64, 'a');
    auto rehashed = id.with_payload_hash(hash);
    mf::OwnedIdentity owned = make_owned();
    const mf::Identity &view = owned.identity();
    failures += !writer.begin(id, 0, sink);
    auto migration = mf::EnvelopeMigrationOptions().default_tenant(tenant);
    std::vector<std::int64_t> dims{2, 4};
    values.shape = dims;
    auto options = mf::ReadOptions().level(mf::Level::full).mode(mf::Mode::prefix);
    failures += !id.range(mf::Field::layer_range);
    failures += !mf::check(buf, mf::Level::full);
    values.dtype = mf::Dtype::int8;
    failures += mf::check(buf).code() == mf::Code::trailer_mismatch;
    failures += mf::check(buf).status() == MBR_TRAILER_MISMATCH;
    failures += mbr_frame_check(buf.data(), buf.size(), MBR_LEVEL_FULL) != MBR_OK;
    failures += !frame + !identity + !envelope + !decoded + !decoded_identity + !rehashed + !view.dtype();
    failures += static_cast<int>(migration.c_options().max_depth + options.c_options().level);
#endif
    return failures + static_cast<int>(values.shape.size());
}
