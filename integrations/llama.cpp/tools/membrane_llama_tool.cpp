// membrane-llama: the integration from a shell.
//
//   membrane-llama identity MODEL.gguf
//   membrane-llama check    MODEL.gguf STATE.kv [--level layout|identity|trailer|full]
//   membrane-llama save     MODEL.gguf STATE.kv --prompt TEXT [--layers-per-fragment N] [--align A] [--durable]
//   membrane-llama restore  MODEL.gguf STATE.kv [--direct] [--next TEXT]
//
// Exit status: 0 done, 1 the state was refused (damaged, another model, another
// layout), 2 usage, 3 the system or llama.cpp failed.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "membrane_llama.hpp"

namespace ml = membrane::llama;

namespace {

const char kUsage[] =
    "usage: membrane-llama identity MODEL.gguf\n"
    "       membrane-llama check    MODEL.gguf STATE.kv [--level layout|identity|trailer|full]\n"
    "       membrane-llama save     MODEL.gguf STATE.kv --prompt TEXT\n"
    "                               [--layers-per-fragment N] [--align A] [--durable]\n"
    "       membrane-llama restore  MODEL.gguf STATE.kv [--direct] [--next TEXT]\n";

int usage(const char *why) {
    if (why != nullptr) std::fprintf(stderr, "membrane-llama: %s\n", why);
    std::fputs(kUsage, stderr);
    return 2;
}

void errors_only(ggml_log_level level, const char *text, void *) {
    if (level >= GGML_LOG_LEVEL_ERROR) std::fputs(text, stderr);
}

int fail(const std::string &what, const ml::Status &s) {
    std::fprintf(stderr, "membrane-llama: %s: %s\n", what.c_str(), s.message().c_str());
    bool refused = s.failure() == ml::Failure::frame || s.failure() == ml::Failure::identity ||
                   s.failure() == ml::Failure::layout;
    return refused ? 1 : 3;
}

struct Loaded {
    llama_model *model = nullptr;
    ml::ModelIdentity identity;
    ~Loaded() {
        if (model != nullptr) llama_model_free(model);
    }
};

/// Load a whole model: a vocab_only one lacks the layer shapes an identity needs (the
/// weights are mapped, not read, so this is cheap).
int load(const std::string &path, Loaded &out) {
    llama_model_params mp = llama_model_default_params();
    mp.progress_callback = [](float, void *) { return true; }; // no progress dots
    out.model = llama_model_load_from_file(path.c_str(), mp);
    if (out.model == nullptr) {
        std::fprintf(stderr, "membrane-llama: %s: llama.cpp cannot load the model\n", path.c_str());
        return 3;
    }
    ml::Status s = ml::describe_model(out.model, path, out.identity);
    return s ? 0 : fail(path, s);
}

std::vector<llama_token> tokenize(const llama_model *model, const std::string &text, bool add_bos) {
    const llama_vocab *vocab = llama_model_get_vocab(model);
    int32_t n = -llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), nullptr, 0, add_bos, false);
    std::vector<llama_token> tokens(static_cast<size_t>(n > 0 ? n : 0));
    llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), tokens.data(), n, add_bos, false);
    return tokens;
}

llama_context *new_context(llama_model *model, uint32_t n_ctx) {
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = n_ctx;
    cp.n_batch = n_ctx;
    return llama_init_from_model(model, cp);
}

/// Decode `tokens` from `pos0` into sequence 0; the greedy next token's text.
bool decode_next(llama_context *ctx, const llama_model *model, const std::vector<llama_token> &tokens, llama_pos pos0,
                 std::string &next) {
    llama_batch b = llama_batch_init(static_cast<int32_t>(tokens.size()), 0, 1);
    for (size_t i = 0; i < tokens.size(); i++) {
        b.token[i] = tokens[i];
        b.pos[i] = pos0 + static_cast<llama_pos>(i);
        b.n_seq_id[i] = 1;
        b.seq_id[i][0] = 0;
        b.logits[i] = i + 1 == tokens.size();
    }
    b.n_tokens = static_cast<int32_t>(tokens.size());
    bool ok = llama_decode(ctx, b) == 0;
    llama_batch_free(b);
    if (!ok) return false;
    const llama_vocab *vocab = llama_model_get_vocab(model);
    const float *logits = llama_get_logits_ith(ctx, -1);
    llama_token best = 0;
    for (llama_token t = 1; t < llama_vocab_n_tokens(vocab); t++)
        if (logits[t] > logits[best]) best = t;
    char piece[256];
    int32_t n = llama_token_to_piece(vocab, best, piece, sizeof piece, 0, false);
    next.assign(piece, n > 0 ? static_cast<size_t>(n) : 0);
    return true;
}

bool parse_level(const char *text, membrane::Level &out) {
    const struct {
        const char *name;
        membrane::Level level;
    } levels[] = {{"layout", membrane::Level::layout},
                  {"identity", membrane::Level::identity},
                  {"trailer", membrane::Level::trailer},
                  {"full", membrane::Level::full}};
    for (const auto &l : levels)
        if (std::strcmp(text, l.name) == 0) return out = l.level, true;
    return false;
}

int identity(const std::string &model_path) {
    Loaded m;
    if (int rc = load(model_path, m)) return rc;
    std::printf("model_id            %s\nmodel_revision      %s\ntokenizer_name      %s\n"
                "tokenizer_revision  %s\nlayers              %d\nkv_heads            %d\n",
                m.identity.model_id.c_str(), m.identity.model_revision.c_str(), m.identity.tokenizer_name.c_str(),
                m.identity.tokenizer_revision.c_str(), m.identity.n_layer, m.identity.n_head_kv);
    return 0;
}

int check(const std::string &model_path, const std::string &state_path, membrane::Level level) {
    Loaded m;
    if (int rc = load(model_path, m)) return rc;
    std::FILE *f = std::fopen(state_path.c_str(), "rb");
    if (f == nullptr) return fail(state_path, ml::Status::io(errno, "open"));
    std::vector<uint8_t> bytes;
    uint8_t chunk[1 << 16];
    for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, f)) > 0;) bytes.insert(bytes.end(), chunk, chunk + n);
    std::fclose(f);
    ml::RestoreOptions options;
    options.level = level;
    ml::Restored r;
    ml::Status s = ml::check_state(m.identity, membrane::Bytes(bytes), options, &r);
    if (!s) return fail(state_path, s);
    std::printf("%s: ok: %u frame%s, positions %d..%d, %llu state bytes%s\n", state_path.c_str(), r.frames,
                r.frames == 1 ? "" : "s", r.first_pos, r.last_pos, static_cast<unsigned long long>(r.state_bytes),
                r.assembled ? " (from layer-range fragments)" : "");
    return 0;
}

int save(const std::string &model_path, const std::string &state_path, const std::string &prompt,
         const ml::SaveOptions &options) {
    Loaded m;
    if (int rc = load(model_path, m)) return rc;
    std::vector<llama_token> tokens = tokenize(m.model, prompt, true);
    if (tokens.empty()) return usage("--prompt gives no tokens");
    llama_context *ctx = new_context(m.model, static_cast<uint32_t>(tokens.size()) + 64);
    std::string next;
    if (ctx == nullptr || !decode_next(ctx, m.model, tokens, 0, next)) {
        std::fprintf(stderr, "membrane-llama: llama.cpp could not decode the prompt\n");
        if (ctx != nullptr) llama_free(ctx);
        return 3;
    }
    ml::Saved saved;
    ml::Status s = ml::save_sequence(ctx, 0, m.identity, state_path, options, &saved);
    llama_free(ctx);
    if (!s) return fail(state_path, s);
    std::printf("%s: %zu tokens (positions %d..%d), %u frame%s, %llu bytes; next token \"%s\"\n",
                state_path.c_str(), tokens.size(), saved.first_pos, saved.last_pos, saved.frames,
                saved.frames == 1 ? "" : "s", static_cast<unsigned long long>(saved.bytes), next.c_str());
    return 0;
}

int restore(const std::string &model_path, const std::string &state_path, const ml::RestoreOptions &options,
            const char *next_text) {
    Loaded m;
    if (int rc = load(model_path, m)) return rc;
    llama_context *ctx = new_context(m.model, llama_model_n_ctx_train(m.model));
    if (ctx == nullptr) return 3;
    ml::Restored r;
    ml::Status s = ml::restore_sequence(ctx, 0, m.identity, state_path, options, &r);
    if (!s) {
        llama_free(ctx);
        return fail(state_path, s);
    }
    std::printf("%s: restored positions %d..%d from %u frame%s%s%s\n", state_path.c_str(), r.first_pos, r.last_pos,
                r.frames, r.frames == 1 ? "" : "s", r.direct_io ? ", read with O_DIRECT" : "",
                r.assembled ? ", assembled from fragments" : ", passed to llama.cpp in place");
    int rc = 0;
    if (next_text != nullptr) {
        std::string next;
        std::vector<llama_token> tokens = tokenize(m.model, next_text, false);
        if (tokens.empty() || !decode_next(ctx, m.model, tokens, r.last_pos + 1, next)) {
            std::fprintf(stderr, "membrane-llama: llama.cpp could not decode --next\n");
            rc = 3;
        } else {
            std::printf("next token \"%s\"\n", next.c_str());
        }
    }
    llama_free(ctx);
    return rc;
}

} // namespace

int main(int argc, char **argv) {
    if (argc < 3) return usage(nullptr);
    const std::string command = argv[1];
    const std::string model = argv[2];
    llama_log_set(errors_only, nullptr);
    llama_backend_init();

    if (command == "identity") return argc == 3 ? identity(model) : usage("identity takes a model only");
    if (argc < 4) return usage(nullptr);
    const std::string state = argv[3];
    membrane::Level level = membrane::Level::full;
    ml::SaveOptions save_options;
    ml::RestoreOptions restore_options;
    const char *prompt = nullptr;
    const char *next = nullptr;
    for (int i = 4; i < argc; i++) {
        const std::string flag = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : nullptr;
        auto number = [&](long min, long max, long &out) {
            char *end = nullptr;
            out = value != nullptr ? std::strtol(value, &end, 10) : 0;
            return value != nullptr && *end == '\0' && out >= min && out <= max;
        };
        long n = 0;
        if (flag == "--level" && command == "check" && value != nullptr && parse_level(value, level)) {
            i++;
        } else if (flag == "--prompt" && command == "save" && value != nullptr) {
            prompt = value, i++;
        } else if (flag == "--layers-per-fragment" && command == "save" && number(0, 1 << 20, n)) {
            save_options.layers_per_fragment = static_cast<int32_t>(n), i++;
        } else if (flag == "--align" && command == "save" && number(1, 4096, n)) {
            save_options.align = static_cast<uint32_t>(n), i++;
        } else if (flag == "--durable" && command == "save") {
            save_options.durable = true;
        } else if (flag == "--direct" && command == "restore") {
            restore_options.direct_io = true;
        } else if (flag == "--next" && command == "restore" && value != nullptr) {
            next = value, i++;
        } else {
            return usage(("unknown or incomplete option for " + command + ": " + flag).c_str());
        }
    }
    if (command == "check") return check(model, state, level);
    if (command == "save")
        return prompt != nullptr ? save(model, state, prompt, save_options) : usage("save needs --prompt");
    if (command == "restore") return restore(model, state, restore_options, next);
    return usage(("no command " + command).c_str());
}
