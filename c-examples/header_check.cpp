// Compile-only check: membrane_frame.h (plain, inside extern "C" guards) and the C++
// wrapper membrane_frame.hpp are valid C++17 under -Wall -Wextra -Wpedantic -Werror,
// with and without exceptions.
#include "membrane_frame.h"
#include "membrane_frame.hpp"

static_assert(sizeof(mbr_stream_verifier) == MBR_STREAM_VERIFIER_SIZE, "verifier storage");
static_assert(alignof(mbr_chunked_writer) == MBR_CHUNKED_WRITER_ALIGN, "writer storage");

int header_check();
int header_check() {
    membrane::ReadOptions options;
    options.level(MBR_LEVEL_FULL).mode(MBR_MODE_PREFIX);
    membrane::Result<membrane::FrameView> frame = membrane::FrameView::parse(membrane::Bytes(), options);
    membrane::Status status = membrane::check(membrane::Bytes());
    membrane::Result<membrane::Envelope> envelope = membrane::Envelope::parse(membrane::Bytes());
    membrane::Status envelope_status = membrane::check_envelope(membrane::Bytes());
    membrane::Result<membrane::Hex> compat = membrane::compat_hash(membrane::CompatInputs{});
    membrane::hlc::Clock clock;
    membrane::Result<std::uint64_t> tick = clock.tick(0);
    membrane::Result<mbr_frame_migration> plan = membrane::plan_frame_migration(membrane::Bytes());
    membrane::Result<std::string> migrated = membrane::migrate_envelope(membrane::Bytes());
    return static_cast<int>(frame.status() + status.status() + envelope.status() + envelope_status.status() +
                            compat.status() + tick.status() + plan.status() + migrated.status());
}
