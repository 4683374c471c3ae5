// Compile-only check: membrane_frame.h (plain, inside extern "C" guards) and the C++
// wrapper membrane_frame.hpp are valid C++ (17, 20, 23) under -Wall -Wextra -Wpedantic
// -Werror, with and without exceptions, on g++ and clang++.
#include "membrane_frame.h"
#include "membrane_frame.hpp"

static_assert(sizeof(mbr_stream_verifier) == MBR_STREAM_VERIFIER_SIZE, "verifier storage");
static_assert(alignof(mbr_chunked_writer) == MBR_CHUNKED_WRITER_ALIGN, "writer storage");
static_assert(MBR_VERSION_NUMBER == MBR_VERSION_MAJOR * 10000 + MBR_VERSION_MINOR * 100 + MBR_VERSION_PATCH,
              "version number");
static_assert(MEMBRANE_FRAME_HPP_VERSION == MBR_VERSION_NUMBER, "the wrapper ships with the C header");

// What a result costs: a small value and its error fit in 16 bytes and stay plain data,
// so they come back in registers.
static_assert(sizeof(membrane::Result<std::uint32_t>) <= 16, "Result<uint32_t> is at most 16 bytes");
static_assert(sizeof(membrane::Result<bool>) <= 16, "Result<bool> is at most 16 bytes");
static_assert(sizeof(membrane::Status) == 16, "Status is 16 bytes");
static_assert(sizeof(membrane::Result<membrane::FrameView>) <= sizeof(mbr_frame) + 8, "no error detail beside a view");
static_assert(std::is_trivially_copyable<membrane::Result<std::uint64_t>>::value, "plain results are plain data");
static_assert(std::is_trivially_copyable<membrane::Result<membrane::FrameView>>::value, "a view result is plain data");
static_assert(std::is_nothrow_copy_constructible<membrane::Result<std::string>>::value == false,
              "an allocating result copies its string");
static_assert(std::is_error_code_enum<membrane::Code>::value, "Code is a std::error_code enum");

int header_check();
int header_check() {
    membrane::ReadOptions options;
    options.level(membrane::Level::full).mode(membrane::Mode::prefix);
    membrane::Result<membrane::FrameView> frame = membrane::FrameView::parse(membrane::Bytes(), options);
    membrane::Status status = membrane::check(membrane::Bytes());
    membrane::Result<membrane::Envelope> envelope = membrane::Envelope::parse(membrane::Bytes());
    membrane::Status envelope_status = membrane::check_envelope(membrane::Bytes());
    membrane::Result<membrane::Hex> compat = membrane::compat_hash(membrane::CompatInputs{});
    membrane::hlc::Clock clock;
    membrane::Result<std::uint64_t> tick = clock.tick(0);
    membrane::Result<membrane::FrameMigration> plan = membrane::plan_frame_migration(membrane::Bytes());
    membrane::Result<std::string> migrated = membrane::migrate_envelope(membrane::Bytes());
    std::error_code code = frame.error().error_code();
    return static_cast<int>(frame.status() + status.status() + envelope.status() + envelope_status.status() +
                            compat.status() + tick.status() + plan.status() + migrated.status()) +
           code.value();
}
