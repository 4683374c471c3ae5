// Saving and restoring a sequence through v5 frames beside llama.cpp's own
// llama_state_seq_save_file / load_file, on the same state, in paired rounds in one
// process (the order alternating each round), files in the page cache.
//
//   bench_membrane_llama MODEL.gguf SCRATCH_DIR [ROUNDS]
//
// Prints, per state size, the median of each operation and its ratio to llama.cpp's
// unverified save or load, then where a restore's time goes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "membrane_llama.hpp"

namespace ml = membrane::llama;

namespace {

double now_us() {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown CPU";
}

void silent(ggml_log_level, const char *, void *) {}

bool decode(llama_context *ctx, int n) {
    llama_batch b = llama_batch_init(n, 0, 1);
    for (int i = 0; i < n; i++) {
        b.token[i] = 100 + (i * 7919) % 30000;
        b.pos[i] = i;
        b.n_seq_id[i] = 1;
        b.seq_id[i][0] = 0;
        b.logits[i] = i + 1 == n;
    }
    b.n_tokens = n;
    bool ok = llama_decode(ctx, b) == 0;
    llama_batch_free(b);
    return ok;
}

/// One timed operation of a round; false stops the benchmark.
struct Op {
    const char *name;
    const char *baseline; // the llama.cpp op this one is a ratio to, or nullptr
    std::function<bool()> run;
    std::vector<double> us;
};

bool check(const ml::Status &s, const char *what) {
    if (!s) std::printf("%s failed: %s\n", what, s.message().c_str());
    return s.ok();
}

} // namespace

int main(int argc, char **argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s MODEL.gguf SCRATCH_DIR [ROUNDS]\n", argv[0]);
        return 2;
    }
    const std::string model_path = argv[1], dir = argv[2];
    const int rounds = argc > 3 ? std::atoi(argv[3]) : 41;
    llama_log_set(silent, nullptr);
    llama_backend_init();
    llama_model *model = llama_model_load_from_file(model_path.c_str(), llama_model_default_params());
    if (model == nullptr) return 1;
    ml::ModelIdentity id;
    if (!check(ml::describe_model(model, model_path, id), "describe_model")) return 1;

    std::printf("# llama.cpp KV state: v5 frames vs llama_state_seq_save_file/load_file\n");
    std::printf("# %s, %u threads available; %d paired rounds, medians; files in the page cache\n",
                cpu_model().c_str(), std::max(1u, std::thread::hardware_concurrency()), rounds);
    std::printf("# model %s: %d layers, %d KV heads x %d, F16 cache, flash attention; fragments of 1 layer\n",
                id.model_id.c_str(), id.n_layer, id.n_head_kv, llama_model_n_embd(model) / llama_model_n_head(model));

    for (int n_tokens : {300, 3000}) {
        llama_context_params cp = llama_context_default_params();
        cp.n_ctx = 4096;
        cp.n_batch = 4096;
        cp.n_threads = 2;
        cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_ENABLED;
        llama_context *src = llama_init_from_model(model, cp);
        llama_context *dst = llama_init_from_model(model, cp);
        if (src == nullptr || dst == nullptr || !decode(src, n_tokens)) return 1;
        std::vector<llama_token> tokens(n_tokens);
        for (int i = 0; i < n_tokens; i++) tokens[i] = 100 + (i * 7919) % 30000;
        std::vector<llama_token> tokens_out(n_tokens);
        const std::string llama_file = dir + "/bench-llama.bin", whole = dir + "/bench-whole.kv",
                          frags = dir + "/bench-frag.kv";
        ml::SaveOptions whole_options, frag_options, whole_in_place, frag_in_place;
        frag_options.layers_per_fragment = 1;
        frag_in_place.layers_per_fragment = 1;
        whole_in_place.replace_atomically = false;
        frag_in_place.replace_atomically = false;
        ml::RestoreOptions full, full_one_thread;
        full_one_thread.threads = 1;

        std::vector<Op> ops = {
            {"llama_state_seq_save_file", nullptr,
             [&] {
                 return llama_state_seq_save_file(src, llama_file.c_str(), 0, tokens.data(), tokens.size()) > 0;
             }, {}},
            {"save_sequence: one frame, in place", "llama_state_seq_save_file",
             [&] { return check(ml::save_sequence(src, 0, id, whole, whole_in_place), "save"); }, {}},
            {"save_sequence: fragments, in place", "llama_state_seq_save_file",
             [&] { return check(ml::save_sequence(src, 0, id, frags, frag_in_place), "save fragments"); }, {}},
            {"save_sequence: one frame, atomic (rename)", "llama_state_seq_save_file",
             [&] { return check(ml::save_sequence(src, 0, id, whole, whole_options), "save"); }, {}},
            {"save_sequence: fragments, atomic (rename)", "llama_state_seq_save_file",
             [&] { return check(ml::save_sequence(src, 0, id, frags, frag_options), "save fragments"); }, {}},
            {"llama_state_seq_load_file", nullptr,
             [&] {
                 size_t count = 0;
                 return llama_state_seq_load_file(dst, llama_file.c_str(), 0, tokens_out.data(), tokens_out.size(),
                                                  &count) > 0;
             }, {}},
            {"restore_sequence: one frame, full", "llama_state_seq_load_file",
             [&] { return check(ml::restore_sequence(dst, 0, id, whole, full), "restore"); }, {}},
            {"restore_sequence: fragments, full", "llama_state_seq_load_file",
             [&] { return check(ml::restore_sequence(dst, 0, id, frags, full), "restore fragments"); }, {}},
            {"restore_sequence: fragments, full, 1 thread", "llama_state_seq_load_file",
             [&] { return check(ml::restore_sequence(dst, 0, id, frags, full_one_thread), "restore fragments"); }, {}},
        };
        for (int r = -2; r < rounds; r++) { // two warm-up rounds
            for (size_t k = 0; k < ops.size(); k++) {
                Op &op = ops[r % 2 == 0 ? k : ops.size() - 1 - k];
                double t0 = now_us();
                if (!op.run()) return 1;
                double t = now_us() - t0;
                if (r >= 0) op.us.push_back(t);
            }
        }

        // Where a restore's time goes: the hashing pass and llama.cpp's own read.
        size_t blob_size = llama_state_seq_get_size(src, 0);
        std::vector<uint8_t> blob(blob_size);
        llama_state_seq_get_data(src, blob.data(), blob.size(), 0);
        std::vector<double> hash_us, set_us, get_us, check_us, check1_us, layout_us;
        std::ifstream frag_in(frags, std::ios::binary);
        std::vector<uint8_t> frag_bytes((std::istreambuf_iterator<char>(frag_in)), std::istreambuf_iterator<char>());
        ml::RestoreOptions layout_only;
        layout_only.level = membrane::Level::layout;
        for (int r = 0; r < rounds; r++) {
            for (auto [options, out] : {std::pair{&full, &check_us}, std::pair{&full_one_thread, &check1_us},
                                        std::pair{&layout_only, &layout_us}}) {
                double t0 = now_us();
                if (!check(ml::check_state(id, membrane::Bytes(frag_bytes), *options), "check_state")) return 1;
                out->push_back(now_us() - t0);
            }
            double t0 = now_us();
            membrane::Digest d = membrane::sha256(membrane::Bytes(blob));
            double t1 = now_us();
            volatile uint8_t sink = d.raw.sha256[0];
            (void)sink;
            llama_state_seq_set_data(dst, blob.data(), blob.size(), 0);
            double t2 = now_us();
            llama_state_seq_get_data(src, blob.data(), blob.size(), 0);
            double t3 = now_us();
            hash_us.push_back(t1 - t0);
            set_us.push_back(t2 - t1);
            get_us.push_back(t3 - t2);
        }

        std::printf("\n## %d tokens: state %zu bytes (%.2f MiB)\n\n", n_tokens, blob_size, blob_size / 1048576.0);
        std::printf("| operation | median | ratio to llama.cpp |\n|---|---:|---:|\n");
        for (const Op &op : ops) {
            double m = median(op.us);
            if (op.baseline == nullptr) {
                std::printf("| %s | %.0f us | 1.00 (baseline) |\n", op.name, m);
                continue;
            }
            double base = 0;
            for (const Op &b : ops)
                if (std::strcmp(b.name, op.baseline) == 0) base = median(b.us);
            std::printf("| %s | %.0f us | %.2f |\n", op.name, m, m / base);
        }
        std::printf("\nwhere it goes: SHA-256 of the state %.0f us (%.2f GB/s); llama_state_seq_set_data "
                    "from memory %.0f us; llama_state_seq_get_data %.0f us\n",
                    median(hash_us), blob_size / median(hash_us) / 1000.0, median(set_us), median(get_us));
        std::printf("fragments, everything before llama.cpp (check_state, in memory): full %.0f us, full on 1 "
                    "thread %.0f us, layout only (no hashing: identities and assembly) %.0f us\n",
                    median(check_us), median(check1_us), median(layout_us));
        llama_free(src);
        llama_free(dst);
    }
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
