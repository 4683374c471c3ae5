// The identity fields of a loaded model, and the cache that keeps its weights' digest.
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include "file_io.hpp"
#include "membrane_llama.hpp"
#include "model_identity.hpp"

namespace membrane {
namespace llama {
namespace {

/// What says a model file is the one hashed before.
struct FileStamp {
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
};

Status stamp_of(const std::string &path, FileStamp &out) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return Status::io(errno, "stat " + path);
    out.size = static_cast<std::uint64_t>(st.st_size);
    out.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    return Status();
}

std::string revision_of(const Digest &digest) { return "sha256:" + digest.hex_string(); }

/// A GGUF string value, or "" when the model has no such key.
std::string meta_string(const llama_model *model, const char *key) {
    int n = llama_model_meta_val_str(model, key, nullptr, 0);
    if (n < 0) return std::string();
    std::string out(static_cast<std::size_t>(n) + 1, '\0');
    llama_model_meta_val_str(model, key, &out[0], out.size());
    out.resize(static_cast<std::size_t>(n));
    return out;
}

/// Digest of the vocabulary: per token its text (length-prefixed), score and attributes.
std::string tokenizer_revision(const llama_model *model) {
    const llama_vocab *vocab = llama_model_get_vocab(model);
    Sha256 hash;
    std::int32_t n = llama_vocab_n_tokens(vocab);
    hash.update(Bytes(&n, sizeof n));
    for (llama_token t = 0; t < n; t++) {
        const char *text = llama_vocab_get_text(vocab, t);
        std::uint64_t len = text != nullptr ? std::char_traits<char>::length(text) : 0;
        float score = llama_vocab_get_score(vocab, t);
        std::int32_t attr = static_cast<std::int32_t>(llama_vocab_get_attr(vocab, t));
        hash.update(Bytes(&len, sizeof len)).update(Bytes(text, len));
        hash.update(Bytes(&score, sizeof score)).update(Bytes(&attr, sizeof attr));
    }
    return revision_of(hash.finish());
}

std::string file_name_stem(const std::string &path) {
    std::string name = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
    const std::string ext = ".gguf";
    if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0)
        name.resize(name.size() - ext.size());
    return name;
}

} // namespace

RevisionCache RevisionCache::from_environment() {
    if (const char *file = std::getenv("MEMBRANE_LLAMA_REVISION_CACHE")) return RevisionCache(file);
    std::string base;
    if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
        base = xdg;
    } else if (const char *home = std::getenv("HOME"); home != nullptr && *home != '\0') {
        base = std::string(home) + "/.cache";
    } else {
        return RevisionCache();
    }
    return RevisionCache(base + "/membrane-llama/model-revisions");
}

Status RevisionCache::revision(const std::string &model_path, std::string &out, bool *hit) const {
    if (hit != nullptr) *hit = false;
    char *resolved = realpath(model_path.c_str(), nullptr);
    if (resolved == nullptr) return Status::io(errno, "realpath " + model_path);
    std::string path(resolved);
    std::free(resolved);
    FileStamp stamp;
    if (Status s = stamp_of(path, stamp); !s) return s;

    if (!file_.empty()) {
        std::ifstream in(file_);
        std::string line;
        while (std::getline(in, line)) {
            std::istringstream fields(line);
            FileStamp cached;
            std::string hex, cached_path;
            if (!(fields >> cached.size >> cached.mtime_ns >> hex) || !std::getline(fields >> std::ws, cached_path))
                continue;
            if (cached_path == path && cached.size == stamp.size && cached.mtime_ns == stamp.mtime_ns &&
                hex.size() == 64) {
                out = "sha256:" + hex;
                if (hit != nullptr) *hit = true;
                return Status();
            }
        }
    }

    FileBytes bytes;
    if (Status s = FileBytes::map(path, bytes); !s) return s;
    Digest digest = sha256(bytes.bytes());
    out = revision_of(digest);

    if (!file_.empty()) {
        // Appended in one write: concurrent processes at worst record a line twice; a
        // line for an older stamp of the path is never matched again.
        std::string dir = file_.substr(0, file_.find_last_of('/') == std::string::npos ? 0 : file_.find_last_of('/'));
        if (!dir.empty()) {
            for (std::size_t at = 1; (at = dir.find('/', at)) != std::string::npos; at++)
                mkdir(dir.substr(0, at).c_str(), 0755);
            mkdir(dir.c_str(), 0755);
        }
        std::ofstream log(file_, std::ios::app);
        log << stamp.size << ' ' << stamp.mtime_ns << ' ' << digest.hex() << ' ' << path << '\n';
        // A cache that cannot be written costs a re-read next time, nothing else.
    }
    return Status();
}

IdentityValues model_values(const ModelIdentity &model) {
    IdentityValues v;
    v.model_id = model.model_id;
    v.model_revision = model.model_revision;
    v.tokenizer_name = model.tokenizer_name;
    v.tokenizer_revision = model.tokenizer_revision;
    v.head_range = mbr_range{-1, -1};
    return v;
}

Status describe_model(const llama_model *model, const std::string &model_path, ModelIdentity &out,
                      const RevisionCache &cache) {
    if (model == nullptr) return Status::llama_call("describe_model: no model");
    // A model loaded vocab_only has no layers, and llama.cpp aborts when asked their
    // head count.
    if (llama_model_n_layer(model) <= 0)
        return Status::llama_call("describe_model: the model has no layers (loaded vocab_only?)");
    ModelIdentity id;
    id.model_id = meta_string(model, "general.name");
    if (id.model_id.empty()) id.model_id = file_name_stem(model_path);
    if (Status s = cache.revision(model_path, id.model_revision); !s) return s;
    id.tokenizer_name = meta_string(model, "tokenizer.ggml.model");
    id.tokenizer_revision = tokenizer_revision(model);
    id.n_layer = llama_model_n_layer(model);
    id.n_head_kv = llama_model_n_head_kv(model);
    out = std::move(id);
    return Status();
}

} // namespace llama
} // namespace membrane
