// bench_cpp: what the C++ wrapper costs over the C call it wraps, measured in the same
// process. Each round times the C form and the C++ form of one operation back to back
// (which goes first alternates), and the figure printed is the median over the rounds
// of the per-round ratio C++ / C, so that frequency changes and noise from other
// processes fall on both sides alike.
//
//   usage: bench_cpp [ROUNDS]      (default 31; `make bench-cpp`)
//   prints one line per operation: C ns/op, C++ ns/op, the median ratio
#include "membrane_frame.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace mf = membrane;

namespace {

volatile std::uint64_t sink; // keeps every result alive

template <class F>
double ns_per_op(F &&f, std::size_t iterations) {
    auto start = std::chrono::steady_clock::now();
    std::uint64_t acc = 0;
    for (std::size_t i = 0; i < iterations; i++) acc += f();
    auto elapsed = std::chrono::steady_clock::now() - start;
    sink = sink + acc;
    return std::chrono::duration<double, std::nano>(elapsed).count() / static_cast<double>(iterations);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/// Paired rounds of the C form `c` and the C++ form `cxx`; prints the medians.
template <class C, class Cxx>
void compare(const char *name, C &&c, Cxx &&cxx, int rounds, std::size_t iterations) {
    std::vector<double> c_ns, cxx_ns, ratios;
    for (int r = 0; r < rounds; r++) {
        double a, b;
        if (r % 2 == 0) {
            a = ns_per_op(c, iterations);
            b = ns_per_op(cxx, iterations);
        } else {
            b = ns_per_op(cxx, iterations);
            a = ns_per_op(c, iterations);
        }
        c_ns.push_back(a);
        cxx_ns.push_back(b);
        ratios.push_back(b / a);
    }
    std::printf("bench_cpp: %-44s C %7.2f ns  C++ %7.2f ns  C++/C %.3f (median of %d paired rounds)\n", name,
                median(c_ns), median(cxx_ns), median(ratios), rounds);
}

} // namespace

int main(int argc, char **argv) {
    int rounds = argc > 1 ? std::atoi(argv[1]) : 31;
    if (rounds < 1) rounds = 1;

    // A small frame (an identity and 32 payload bytes, about 350 bytes in all).
    static const std::int64_t shape[] = {2, 1, 1, 16};
    std::vector<std::uint8_t> payload(32, 0x5a);
    mf::IdentityValues values;
    values.model_id = "llama-3-8b";
    values.model_revision = "2024-05";
    values.tokenizer_name = "llama-3-8b";
    values.layer_range = {0, 0};
    values.token_span = {0, 15};
    values.dtype = mf::Dtype::uint8;
    values.shape = shape;
    auto owned = mf::OwnedIdentity::for_payload(values, payload);
    if (!owned) {
        std::fprintf(stderr, "bench_cpp: %s\n", owned.error().message().c_str());
        return 1;
    }
    std::vector<std::uint8_t> frame = mf::encode(owned->identity(), payload).value();
    std::printf("bench_cpp: a %zu-byte frame; %d rounds\n", frame.size(), rounds);

    auto view = mf::FrameView::parse(frame).value();
    const mf::Identity id = *view.identity();
    const mbr_identity *raw = id.c_ptr();
    const std::size_t n = 2000000;

    compare("Identity::dtype()", [&] {
        std::uint32_t d = 0;
        return std::uint64_t(mbr_identity_dtype(raw, &d)) + d;
    }, [&] {
        auto d = id.dtype();
        return std::uint64_t(d.status()) + mf::to_c(d.value_or(mf::Dtype::int8));
    }, rounds, n);
    compare("Identity::range(layer_range)", [&] {
        mbr_range r{0, 0};
        return std::uint64_t(mbr_identity_range(raw, MBR_FIELD_LAYER_RANGE, &r)) + std::uint64_t(r.end);
    }, [&] {
        auto r = id.range(mf::Field::layer_range);
        return std::uint64_t(r.status()) + std::uint64_t(r ? r->end : 0);
    }, rounds, n);
    compare("Identity::shape()", [&] {
        std::int64_t dims[MBR_MAX_SHAPE_DIMS];
        std::size_t count = 0;
        return std::uint64_t(mbr_identity_shape(raw, dims, MBR_MAX_SHAPE_DIMS, &count)) + count;
    }, [&] {
        auto s = id.shape();
        return std::uint64_t(s.status()) + (s ? s->size() : 0);
    }, rounds, n);
    compare("Identity::view(model_id) (string in place)", [&] {
        mbr_str s{nullptr, 0};
        return std::uint64_t(mbr_identity_string_view(raw, MBR_FIELD_MODEL_ID, &s)) + s.len;
    }, [&] {
        auto s = id.view(mf::Field::model_id);
        return std::uint64_t(s.status()) + (s ? s->size() : 0);
    }, rounds, n);

    // Parses at the two levels that read no payload: the wrapper's cost is not hidden
    // behind a SHA-256 pass.
    const std::size_t parses = 200000;
    const std::pair<mf::Level, const char *> levels[] = {{mf::Level::layout, "FrameView::parse, layout level"},
                                                         {mf::Level::identity, "FrameView::parse, identity level"}};
    for (const auto &level : levels) {
        mbr_read_options c_options = mbr_read_options_default();
        c_options.level = mf::to_c(level.first);
        mf::ReadOptions cxx_options = mf::ReadOptions().level(level.first);
        compare(level.second, [&] {
            mbr_frame f;
            mbr_error e;
            std::uint32_t status = mbr_frame_parse(frame.data(), frame.size(), c_options, &f, &e);
            return std::uint64_t(status) + (status == MBR_OK ? f.payload_len : 0);
        }, [&] {
            auto f = mf::FrameView::parse(frame, cxx_options);
            return std::uint64_t(f.status()) + (f ? f->payload().size() : 0);
        }, rounds, parses);
    }

    std::printf("bench_cpp: sizeof Result<uint32_t> %zu, Result<bool> %zu, Status %zu, Error %zu, "
                "Result<FrameView> %zu (mbr_frame %zu)\n",
                sizeof(mf::Result<std::uint32_t>), sizeof(mf::Result<bool>), sizeof(mf::Status), sizeof(mf::Error),
                sizeof(mf::Result<mf::FrameView>), sizeof(mbr_frame));
    return 0;
}
