// The integration's tests, against a real llama.cpp and two tiny models of one shape,
// name and tokenizer that differ only in their weights.
//
//   test_membrane_llama MODEL_A.gguf MODEL_B.gguf SCRATCH_DIR
//
// Each case prints "ok" or "FAILED" with what failed; the last line is
// "tests: N passed, M failed". llama_state_seq_set_data is wrapped (-Wl,--wrap) so a
// case can show that llama.cpp was, or was not, handed a state.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "membrane_llama.hpp"

namespace ml = membrane::llama;
using membrane::Bytes;
using membrane::Code;

extern "C" {
size_t __real_llama_state_seq_set_data(llama_context *ctx, const uint8_t *src, size_t size, llama_seq_id seq_id);

static int g_set_data_calls = 0;
static const uint8_t *g_set_data_src = nullptr;

size_t __wrap_llama_state_seq_set_data(llama_context *ctx, const uint8_t *src, size_t size, llama_seq_id seq_id) {
    g_set_data_calls++;
    g_set_data_src = src;
    return __real_llama_state_seq_set_data(ctx, src, size, seq_id);
}
}

namespace {

int g_passed = 0;
int g_failed = 0;
bool g_case_ok = true;

#define EXPECT(cond)                                                                                               \
    do {                                                                                                           \
        if (!(cond)) {                                                                                             \
            std::printf("    %s:%d: expected %s\n", __FILE__, __LINE__, #cond);                                    \
            g_case_ok = false;                                                                                     \
        }                                                                                                          \
    } while (0)

#define EXPECT_OK(status)                                                                                          \
    do {                                                                                                           \
        const ml::Status &s_ = (status);                                                                           \
        if (!s_) {                                                                                                 \
            std::printf("    %s:%d: %s failed: %s\n", __FILE__, __LINE__, #status, s_.message().c_str());          \
            g_case_ok = false;                                                                                     \
        }                                                                                                          \
    } while (0)

void run(const char *name, const std::function<void()> &body) {
    g_case_ok = true;
    body();
    std::printf("%s: %s\n", g_case_ok ? "ok" : "FAILED", name);
    std::fflush(stdout);
    (g_case_ok ? g_passed : g_failed)++;
}

void quiet_log(ggml_log_level level, const char *text, void *) {
    if (level >= GGML_LOG_LEVEL_ERROR && std::getenv("MEMBRANE_LLAMA_TEST_VERBOSE") != nullptr)
        std::fputs(text, stderr);
}

std::vector<uint8_t> read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const std::string &path, const std::vector<uint8_t> &bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

/// A loaded model and its identity.
struct Model {
    std::string path;
    llama_model *model = nullptr;
    ml::ModelIdentity identity;
};

llama_context *new_context(const Model &m, llama_flash_attn_type flash = LLAMA_FLASH_ATTN_TYPE_ENABLED) {
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 4096;
    cp.n_batch = 4096;
    cp.n_ubatch = 512;
    cp.n_threads = 2;
    cp.n_threads_batch = 2;
    cp.flash_attn_type = flash;
    return llama_init_from_model(m.model, cp);
}

/// Decode `tokens` at positions pos0.. into sequence `seq`; logits for the last one.
bool decode(llama_context *ctx, const std::vector<llama_token> &tokens, llama_pos pos0, llama_seq_id seq = 0) {
    llama_batch b = llama_batch_init(static_cast<int32_t>(tokens.size()), 0, 1);
    for (size_t i = 0; i < tokens.size(); i++) {
        b.token[i] = tokens[i];
        b.pos[i] = pos0 + static_cast<llama_pos>(i);
        b.n_seq_id[i] = 1;
        b.seq_id[i][0] = seq;
        b.logits[i] = i + 1 == tokens.size();
    }
    b.n_tokens = static_cast<int32_t>(tokens.size());
    bool ok = llama_decode(ctx, b) == 0;
    llama_batch_free(b);
    return ok;
}

std::vector<llama_token> prompt(int n) {
    std::vector<llama_token> tokens(n);
    for (int i = 0; i < n; i++) tokens[i] = 100 + (i * 7919) % 30000;
    return tokens;
}

/// The logits (every vocabulary entry) after decoding `next` at `pos`.
std::vector<float> next_logits(llama_context *ctx, const Model &m, llama_token next, llama_pos pos,
                               llama_seq_id seq = 0) {
    if (!decode(ctx, {next}, pos, seq)) return {};
    int32_t n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(m.model));
    const float *logits = llama_get_logits_ith(ctx, -1);
    return std::vector<float>(logits, logits + n_vocab);
}

bool bit_identical(const std::vector<float> &a, const std::vector<float> &b) {
    return !a.empty() && a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

/// A context holding `n` prompt tokens in sequence 0.
llama_context *primed(const Model &m, int n, llama_flash_attn_type flash = LLAMA_FLASH_ATTN_TYPE_ENABLED) {
    llama_context *ctx = new_context(m, flash);
    if (ctx != nullptr && !decode(ctx, prompt(n), 0)) {
        llama_free(ctx);
        return nullptr;
    }
    return ctx;
}

/// Save → restore into a fresh context → the next token's logits match bit for bit.
void round_trip(const Model &m, int n_tokens, const ml::SaveOptions &save, const ml::RestoreOptions &restore,
                const std::string &path, bool expect_assembled, llama_flash_attn_type flash) {
    llama_context *a = primed(m, n_tokens, flash);
    llama_context *b = new_context(m, flash);
    EXPECT(a != nullptr && b != nullptr);
    if (a == nullptr || b == nullptr) return;
    ml::Saved saved;
    EXPECT_OK(ml::save_sequence(a, 0, m.identity, path, save, &saved));
    EXPECT(saved.first_pos == 0 && saved.last_pos == n_tokens - 1);
    int n_layer = m.identity.n_layer;
    int per = save.layers_per_fragment;
    EXPECT(saved.frames == static_cast<uint32_t>(per == 0 ? 1 : (n_layer + per - 1) / per));
    int calls = g_set_data_calls;
    ml::Restored restored;
    EXPECT_OK(ml::restore_sequence(b, 0, m.identity, path, restore, &restored));
    EXPECT(g_set_data_calls == calls + 1);
    EXPECT(restored.assembled == expect_assembled);
    EXPECT(restored.first_pos == 0 && restored.last_pos == n_tokens - 1);
    EXPECT(restored.direct_io == restore.direct_io);
    EXPECT(bit_identical(next_logits(a, m, 4242, n_tokens), next_logits(b, m, 4242, n_tokens)));
    llama_free(a);
    llama_free(b);
}

/// Every frame of a file: offset, and the parsed view (layout level, prefix mode).
std::vector<membrane::FrameView> frames_of(const std::vector<uint8_t> &file, std::vector<size_t> &offsets) {
    std::vector<membrane::FrameView> out;
    Bytes rest(file);
    size_t offset = 0;
    while (!rest.empty()) {
        auto f = membrane::FrameView::parse(
            rest, membrane::ReadOptions().level(membrane::Level::identity).mode(membrane::Mode::prefix));
        if (!f) break;
        out.push_back(*f);
        offsets.push_back(offset);
        size_t len = rest.size() - f->rest().size();
        rest = rest.subspan(len);
        offset += len;
    }
    return out;
}

/// `bytes` with bit `bit` of byte `at` flipped must be refused, and llama.cpp not
/// called; returns the refusal.
ml::Status refused_flip(llama_context *ctx, const Model &m, std::vector<uint8_t> bytes, size_t at, int bit) {
    bytes[at] ^= static_cast<uint8_t>(1u << bit);
    int calls = g_set_data_calls;
    ml::Status s = ml::restore_sequence(ctx, 0, m.identity, Bytes(bytes));
    if (s) std::printf("    a flip of bit %d at byte %zu was restored\n", bit, at);
    if (g_set_data_calls != calls) std::printf("    llama.cpp was called for a flip at byte %zu\n", at);
    EXPECT(!s);
    EXPECT(g_set_data_calls == calls);
    return s;
}

/// Flip a bit in every byte of each frame's head and trailer and in 200 bytes spread
/// over each payload: every one refused before llama.cpp; a payload or trailer flip
/// with trailer_mismatch.
void every_flip_refused(const Model &m, const std::vector<uint8_t> &file) {
    llama_context *ctx = new_context(m);
    std::vector<size_t> offsets;
    std::vector<membrane::FrameView> frames = frames_of(file, offsets);
    EXPECT(!frames.empty());
    size_t tried = 0;
    for (size_t i = 0; i < frames.size(); i++) {
        size_t start = offsets[i];
        size_t head = frames[i].payload_offset();
        size_t payload = frames[i].payload().size();
        size_t end = start + frames[i].bytes().size();
        for (size_t at = start; at < start + head; at++, tried++)
            (void)refused_flip(ctx, m, file, at, static_cast<int>(at % 8));
        for (size_t k = 0; k < 200; k++, tried++) {
            size_t at = start + head + k * (payload - 1) / 199;
            ml::Status s = refused_flip(ctx, m, file, at, static_cast<int>(k % 8));
            EXPECT(s.failure() == ml::Failure::frame && s.frame_error().code() == Code::trailer_mismatch);
        }
        for (size_t at = end - 8; at < end; at++, tried++) {
            ml::Status s = refused_flip(ctx, m, file, at, static_cast<int>(at % 8));
            EXPECT(s.failure() == ml::Failure::frame && s.frame_error().code() == Code::trailer_mismatch);
        }
    }
    std::printf("    %zu flips refused in %zu frames\n", tried, frames.size());
    llama_free(ctx);
}

} // namespace

int main(int argc, char **argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s MODEL_A.gguf MODEL_B.gguf SCRATCH_DIR\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[3];
    llama_log_set(quiet_log, nullptr);
    llama_backend_init();
    Model a, b;
    a.path = argv[1];
    b.path = argv[2];
    for (Model *m : {&a, &b}) {
        m->model = llama_model_load_from_file(m->path.c_str(), llama_model_default_params());
        if (m->model == nullptr) {
            std::printf("cannot load %s\ntests: 0 passed, 1 failed\n", m->path.c_str());
            return 1;
        }
    }
    const int n_tokens = 300;

    run("describe_model: the identity names the model, its weights' digest and its tokenizer", [&] {
        for (Model *m : {&a, &b}) EXPECT_OK(ml::describe_model(m->model, m->path, m->identity));
        std::vector<uint8_t> bytes = read_file(a.path);
        EXPECT(a.identity.model_revision == "sha256:" + membrane::sha256(Bytes(bytes)).hex_string());
        EXPECT(a.identity.model_id == "tiny-llama" && b.identity.model_id == a.identity.model_id);
        EXPECT(a.identity.tokenizer_name == "llama");
        EXPECT(a.identity.tokenizer_revision.size() == 71);
        EXPECT(a.identity.tokenizer_revision == b.identity.tokenizer_revision);
        EXPECT(a.identity.model_revision != b.identity.model_revision);
        EXPECT(a.identity.n_layer == 4 && a.identity.n_head_kv == 2);
    });

    run("revision cache: a second look is a hit; a new mtime is hashed again", [&] {
        std::string cache_file = dir + "/revisions-test";
        std::remove(cache_file.c_str());
        ml::RevisionCache cache(cache_file);
        std::string first, second, third;
        bool hit = true;
        EXPECT_OK(cache.revision(a.path, first, &hit));
        EXPECT(!hit);
        EXPECT_OK(cache.revision(a.path, second, &hit));
        EXPECT(hit && second == first && first == a.identity.model_revision);
        struct stat st;
        EXPECT(stat(a.path.c_str(), &st) == 0);
        struct timespec times[2] = {{0, UTIME_OMIT}, {st.st_mtim.tv_sec + 1, st.st_mtim.tv_nsec}};
        EXPECT(utimensat(AT_FDCWD, a.path.c_str(), times, 0) == 0);
        EXPECT_OK(cache.revision(a.path, third, &hit));
        EXPECT(!hit && third == first);
        ml::RevisionCache none;
        EXPECT_OK(none.revision(a.path, third, &hit));
        EXPECT(!hit && third == first);
    });

    run("whole state: save, restore into a fresh context, identical logits (mapped)", [&] {
        round_trip(a, n_tokens, ml::SaveOptions(), ml::RestoreOptions(), dir + "/whole.kv", false,
                   LLAMA_FLASH_ATTN_TYPE_ENABLED);
    });
    run("whole state: restore read with O_DIRECT, identical logits", [&] {
        ml::RestoreOptions direct;
        direct.direct_io = true;
        round_trip(a, n_tokens, ml::SaveOptions(), direct, dir + "/whole.kv", false, LLAMA_FLASH_ATTN_TYPE_ENABLED);
    });
    run("whole state of a context without flash attention (V transposed), identical logits", [&] {
        round_trip(a, n_tokens, ml::SaveOptions(), ml::RestoreOptions(), dir + "/whole-vtrans.kv", false,
                   LLAMA_FLASH_ATTN_TYPE_DISABLED);
    });
    run("fragments of 1 layer: restore, identical logits", [&] {
        ml::SaveOptions per1;
        per1.layers_per_fragment = 1;
        round_trip(a, n_tokens, per1, ml::RestoreOptions(), dir + "/frag1.kv", true, LLAMA_FLASH_ATTN_TYPE_ENABLED);
    });
    run("fragments of 3 layers (3 + 1), one thread, unaligned: restore, identical logits", [&] {
        ml::SaveOptions per3;
        per3.layers_per_fragment = 3;
        per3.align = 1;
        ml::RestoreOptions one;
        one.threads = 1;
        round_trip(a, n_tokens, per3, one, dir + "/frag3.kv", true, LLAMA_FLASH_ATTN_TYPE_ENABLED);
    });

    run("the whole state is handed to llama.cpp where it lies: no copy", [&] {
        llama_context *ctx = primed(a, n_tokens);
        llama_context *fresh = new_context(a);
        std::vector<uint8_t> bytes;
        EXPECT_OK(ml::encode_sequence(ctx, 0, a.identity, bytes));
        std::vector<size_t> offsets;
        auto frames = frames_of(bytes, offsets);
        EXPECT(frames.size() == 1);
        EXPECT_OK(ml::restore_sequence(fresh, 0, a.identity, Bytes(bytes)));
        EXPECT(frames.size() == 1 && g_set_data_src == bytes.data() + frames[0].payload_offset());
        llama_free(ctx);
        llama_free(fresh);
    });

    run("save and encode write the same bytes; payloads aligned to 4096 in the file", [&] {
        llama_context *ctx = primed(a, n_tokens);
        for (int per : {0, 1, 3}) {
            ml::SaveOptions options;
            options.layers_per_fragment = per;
            std::vector<uint8_t> encoded;
            std::string path = dir + "/same-" + std::to_string(per) + ".kv";
            EXPECT_OK(ml::encode_sequence(ctx, 0, a.identity, encoded, options));
            EXPECT_OK(ml::save_sequence(ctx, 0, a.identity, path, options));
            EXPECT(read_file(path) == encoded);
            std::vector<size_t> offsets;
            auto frames = frames_of(encoded, offsets);
            for (size_t i = 0; i < frames.size(); i++) EXPECT((offsets[i] + frames[i].payload_offset()) % 4096 == 0);
        }
        llama_free(ctx);
    });

    run("fragment identities: layer range, float16, shape [2, layers, tokens, kv heads, head_dim]", [&] {
        std::vector<uint8_t> file = read_file(dir + "/frag3.kv");
        std::vector<size_t> offsets;
        auto frames = frames_of(file, offsets);
        EXPECT(frames.size() == 2);
        if (frames.size() != 2) return;
        const int64_t kv_heads = llama_model_n_head_kv(a.model);
        const int64_t head_dim = llama_model_n_embd(a.model) / llama_model_n_head(a.model);
        const int64_t expect[2][5] = {{2, 3, n_tokens, kv_heads, head_dim}, {2, 1, n_tokens, kv_heads, head_dim}};
        for (size_t i = 0; i < 2; i++) {
            membrane::Identity id = *frames[i].identity();
            EXPECT(*id.dtype() == membrane::Dtype::float16);
            auto layers = *id.range(membrane::Field::layer_range);
            EXPECT(layers.start == (i == 0 ? 0 : 3) && layers.end == (i == 0 ? 2 : 3));
            auto span = *id.range(membrane::Field::token_span);
            EXPECT(span.start == 0 && span.end == n_tokens - 1);
            auto shape = *id.shape();
            EXPECT(shape.size() == 5);
            for (size_t d = 0; d < 5 && d < shape.size(); d++) EXPECT(shape[d] == expect[i][d]);
            EXPECT(*id.tensor_bytes() == frames[i].payload().size());
        }
    });

    run("every flipped bit in a whole-state frame is refused before llama.cpp", [&] {
        every_flip_refused(a, read_file(dir + "/whole.kv"));
    });
    run("every flipped bit in a fragment file is refused before llama.cpp", [&] {
        every_flip_refused(a, read_file(dir + "/frag3.kv"));
    });

    run("truncated files are refused before llama.cpp, with the reader's code", [&] {
        llama_context *ctx = new_context(a);
        for (const char *name : {"/whole.kv", "/frag1.kv"}) {
            std::vector<uint8_t> file = read_file(dir + name);
            for (size_t len : {size_t{0}, size_t{10}, size_t{21}, size_t{100}, size_t{5000}, file.size() / 2,
                               file.size() - 9, file.size() - 1}) {
                int calls = g_set_data_calls;
                ml::Status s = ml::restore_sequence(ctx, 0, a.identity, Bytes(file.data(), len));
                EXPECT(!s && g_set_data_calls == calls);
                EXPECT(s.failure() == ml::Failure::frame);
                Code c = s.frame_error().code();
                EXPECT(c == Code::too_short || c == Code::identity_overrun || c == Code::payload_overrun);
            }
            // A file cut at a frame boundary is complete frames but not every layer.
            std::vector<size_t> offsets;
            auto frames = frames_of(file, offsets);
            if (frames.size() > 1) {
                ml::Status s = ml::restore_sequence(ctx, 0, a.identity, Bytes(file.data(), offsets[1]));
                EXPECT(s.failure() == ml::Failure::layout);
            }
        }
        std::string cut = dir + "/cut.kv";
        std::vector<uint8_t> file = read_file(dir + "/whole.kv");
        file.resize(file.size() - 3);
        write_file(cut, file);
        int calls = g_set_data_calls;
        ml::Status s = ml::restore_sequence(ctx, 0, a.identity, cut);
        EXPECT(s.failure() == ml::Failure::frame && s.frame_error().code() == Code::payload_overrun);
        EXPECT(g_set_data_calls == calls);
        llama_free(ctx);
    });

    run("a state saved under another model of the same shape is refused (model_revision)", [&] {
        for (int per : {0, 1}) {
            llama_context *other = primed(b, n_tokens);
            ml::SaveOptions options;
            options.layers_per_fragment = per;
            std::string path = dir + "/other-" + std::to_string(per) + ".kv";
            EXPECT_OK(ml::save_sequence(other, 0, b.identity, path, options));
            llama_context *ctx = new_context(a);
            int calls = g_set_data_calls;
            ml::Status s = ml::restore_sequence(ctx, 0, a.identity, path);
            EXPECT(s.failure() == ml::Failure::identity);
            EXPECT(s.mismatched() == membrane::FieldSet(membrane::Field::model_revision));
            EXPECT(g_set_data_calls == calls);
            std::printf("    %s\n", s.message().c_str());
            // The same file restores into a context of its own model.
            llama_context *own = new_context(b);
            EXPECT_OK(ml::restore_sequence(own, 0, b.identity, path));
            llama_free(own);
            llama_free(ctx);
            llama_free(other);
        }
    });

    run("a frame that is not a KV state of this model's layout is refused before llama.cpp", [&] {
        llama_context *ctx = new_context(a);
        auto refused_layout = [&](std::vector<uint8_t> file, const char *what) {
            int calls = g_set_data_calls;
            ml::Status s = ml::restore_sequence(ctx, 0, a.identity, Bytes(file));
            if (s.failure() != ml::Failure::layout) std::printf("    %s: %s\n", what, s.message().c_str());
            EXPECT(s.failure() == ml::Failure::layout);
            EXPECT(g_set_data_calls == calls);
        };
        // Fragments listed twice, or one missing.
        std::vector<uint8_t> frag1 = read_file(dir + "/frag1.kv");
        std::vector<size_t> offsets;
        auto frames = frames_of(frag1, offsets);
        std::vector<uint8_t> doubled(frag1);
        auto at = [&](size_t i) { return frag1.begin() + static_cast<long>(offsets[i]); };
        doubled.insert(doubled.end(), at(1), at(2));
        refused_layout(doubled, "a layer twice");
        std::vector<uint8_t> missing(frag1.begin(), at(2));
        missing.insert(missing.end(), at(3), frag1.end());
        refused_layout(missing, "a layer missing");
        // A valid frame for this model whose identity says another layer count.
        int64_t shape[1] = {static_cast<int64_t>(frames[0].payload().size())};
        membrane::IdentityValues v;
        v.model_id = a.identity.model_id;
        v.model_revision = a.identity.model_revision;
        v.tokenizer_name = a.identity.tokenizer_name;
        v.tokenizer_revision = a.identity.tokenizer_revision;
        v.layer_range = mbr_range{0, 1};
        v.token_span = mbr_range{0, n_tokens - 1};
        v.dtype = membrane::Dtype::uint8;
        v.shape = membrane::Span<int64_t>(shape, 1);
        auto owned = membrane::OwnedIdentity::for_payload(v, frames[0].payload());
        auto encoded = membrane::encode(owned->identity(), frames[0].payload());
        EXPECT(encoded.ok());
        if (encoded.ok()) refused_layout(*encoded, "two layers of four");
        llama_free(ctx);
    });

    run("fragments need flash attention: a transposed-V state is refused for splitting, with why", [&] {
        llama_context *ctx = primed(a, 64, LLAMA_FLASH_ATTN_TYPE_DISABLED);
        ml::SaveOptions options;
        options.layers_per_fragment = 2;
        ml::Status s = ml::save_sequence(ctx, 0, a.identity, dir + "/vtrans-frag.kv", options);
        EXPECT(s.failure() == ml::Failure::layout);
        EXPECT(s.detail().find("transposed") != std::string::npos);
        struct stat st;
        EXPECT(stat((dir + "/vtrans-frag.kv").c_str(), &st) != 0 && errno == ENOENT);
        llama_free(ctx);
    });

    run("an empty sequence is not saved; a missing file is an io failure", [&] {
        llama_context *ctx = new_context(a);
        ml::Status s = ml::save_sequence(ctx, 0, a.identity, dir + "/empty.kv");
        EXPECT(s.failure() == ml::Failure::layout);
        s = ml::restore_sequence(ctx, 0, a.identity, dir + "/no-such-file.kv");
        EXPECT(s.failure() == ml::Failure::io && s.os_error() == ENOENT);
        llama_free(ctx);
    });

    run("restore into sequence 1 of a context serving two; sequence 0 is left as it was", [&] {
        llama_context_params cp = llama_context_default_params();
        cp.n_ctx = 4096;
        cp.n_batch = 4096;
        cp.n_threads = 2;
        cp.n_seq_max = 2;
        cp.kv_unified = true;
        cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_ENABLED;
        llama_context *src = primed(a, n_tokens);
        llama_context *empty = llama_init_from_model(a.model, cp);
        llama_context *busy = llama_init_from_model(a.model, cp);
        llama_context *direct = llama_init_from_model(a.model, cp);
        EXPECT(empty != nullptr && busy != nullptr && direct != nullptr);
        EXPECT(decode(busy, prompt(50), 0, 0) && decode(direct, prompt(50), 0, 0));
        EXPECT(decode(direct, prompt(n_tokens), 0, 1));
        EXPECT_OK(ml::restore_sequence(empty, 1, a.identity, dir + "/frag1.kv"));
        EXPECT_OK(ml::restore_sequence(busy, 1, a.identity, dir + "/whole.kv"));
        llama_memory_t busy_memory = llama_get_memory(busy);
        EXPECT(llama_memory_seq_pos_min(busy_memory, 0) == 0 && llama_memory_seq_pos_max(busy_memory, 0) == 49);
        EXPECT(llama_memory_seq_pos_min(busy_memory, 1) == 0);
        EXPECT(llama_memory_seq_pos_max(busy_memory, 1) == n_tokens - 1);
        // In cells 0.. as in the source: the same logits, bit for bit.
        EXPECT(bit_identical(next_logits(src, a, 4242, n_tokens), next_logits(empty, a, 4242, n_tokens, 1)));
        // Behind sequence 0's cells the restored cells need not take the slots a decode
        // gives them, and flash attention sums the cache in blocks: the reference (the
        // prompt decoded behind sequence 0) agrees to float rounding, not bit for bit.
        std::vector<float> want = next_logits(direct, a, 4242, n_tokens, 1);
        std::vector<float> got = next_logits(busy, a, 4242, n_tokens, 1);
        EXPECT(!got.empty() && got.size() == want.size());
        float worst = 0;
        for (size_t i = 0; i < got.size() && i < want.size(); i++) worst = std::max(worst, std::fabs(got[i] - want[i]));
        std::printf("    largest logit difference from the prompt decoded behind sequence 0: %g\n",
                    static_cast<double>(worst));
        EXPECT(worst < 1e-4f);
        llama_free(direct);
        llama_free(src);
        llama_free(empty);
        llama_free(busy);
    });

    llama_model_free(a.model);
    llama_model_free(b.model);
    llama_backend_free();
    std::printf("tests: %d passed, %d failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
