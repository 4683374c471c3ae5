// membrane_llama: llama.cpp keeps a sequence's KV cache in Membrane v5 frames.
//
// llama.cpp's per-sequence state (llama_state_seq_get_data / set_data) carries no
// checksum, no version and no model identity: a flipped bit or a state saved under
// another model's weights is restored and decoded without a word. Saved through this
// library the state is one v5 frame (or one frame per layer range) whose identity names
// the model, its weights' digest, the tokenizer and the token span, and a restore
// verifies the frames at the full level and matches them against the loaded model
// before llama.cpp reads a byte.
//
//     membrane::llama::ModelIdentity model;
//     auto s = membrane::llama::describe_model(llama_model_ptr, "model.gguf", model);
//     s = membrane::llama::save_sequence(ctx, seq, model, "seq0.kv");
//     ...
//     s = membrane::llama::restore_sequence(other_ctx, seq, model, "seq0.kv");
//     if (!s) std::fprintf(stderr, "%s\n", s.message().c_str());  // nothing was restored
//
// The format logic (frames, identities, hashing, verification) is membrane_frame's;
// this library only translates between llama.cpp's state and those frames.
#ifndef MEMBRANE_LLAMA_HPP
#define MEMBRANE_LLAMA_HPP

#include <cstdint>
#include <string>
#include <vector>

#include "llama.h"
#include "membrane_frame.hpp"

namespace membrane {
namespace llama {

/// Why a call failed.
enum class Failure {
    none,
    /// A frame was refused by the reader: frame_error() has the SPEC §8 code and offset.
    frame,
    /// A frame is valid but made for another model (or tokenizer): mismatched() says
    /// which identity fields differ.
    identity,
    /// The frames are valid and for this model but do not describe a state this
    /// context can take (layers missing, shapes that disagree, a cache layout llama.cpp
    /// does not write): detail() says what.
    layout,
    /// llama.cpp refused or failed (detail() names the call).
    llama,
    /// The operating system refused (os_error() is errno).
    io,
};

/// Success, or a Failure with what it concerns. Cheap to return; message() allocates.
class [[nodiscard]] Status {
  public:
    Status() = default;
    static Status frame(const Error &error, std::string detail = {});
    static Status identity(FieldSet fields, std::string detail = {});
    static Status layout(std::string detail);
    static Status llama_call(std::string detail);
    static Status io(int os_error, std::string detail);

    bool ok() const noexcept { return failure_ == Failure::none; }
    explicit operator bool() const noexcept { return ok(); }
    Failure failure() const noexcept { return failure_; }
    /// Failure::frame: the reader's error (code, field, offset).
    const Error &frame_error() const noexcept { return frame_error_; }
    /// Failure::identity: the identity fields that differ from the loaded model's.
    FieldSet mismatched() const noexcept { return mismatched_; }
    /// Failure::io: errno.
    int os_error() const noexcept { return os_error_; }
    /// Where or what (a file, a frame's index, the layers concerned).
    const std::string &detail() const noexcept { return detail_; }
    /// The whole failure in one line.
    std::string message() const;

  private:
    Status(Failure failure, std::string detail);
    Failure failure_ = Failure::none;
    Error frame_error_;
    FieldSet mismatched_;
    int os_error_ = 0;
    std::string detail_;
};

/// The digest of a model file's bytes, remembered by path, size and modification time
/// so a process does not re-read gigabytes of weights at every start. The file is lines
/// of `<size> <mtime ns> <sha256 hex> <path>`; a model whose size or mtime changed is
/// hashed again. An empty file name disables the cache.
class RevisionCache {
  public:
    explicit RevisionCache(std::string file = {}) : file_(std::move(file)) {}
    /// $MEMBRANE_LLAMA_REVISION_CACHE, else $XDG_CACHE_HOME (or ~/.cache) /
    /// membrane-llama/model-revisions.
    static RevisionCache from_environment();
    const std::string &file() const noexcept { return file_; }
    /// "sha256:<64 hex>" of the file at `model_path`; `hit` says whether it came from
    /// the cache.
    Status revision(const std::string &model_path, std::string &out, bool *hit = nullptr) const;

  private:
    std::string file_;
};

/// What ties a KV state to one loaded model: the identity fields every saved frame
/// carries and every restore compares, and the shape of the model's KV cache.
struct ModelIdentity {
    /// GGUF general.name, or the file name without ".gguf" when the model has none.
    std::string model_id;
    /// "sha256:<hex>" of the model file's bytes, weights included: two models of one
    /// name and shape but other weights differ here.
    std::string model_revision;
    /// GGUF tokenizer.ggml.model ("llama", "gpt2", ...).
    std::string tokenizer_name;
    /// "sha256:<hex>" over the vocabulary: every token's text, score and attributes.
    std::string tokenizer_revision;
    std::int32_t n_layer = 0;
    std::int32_t n_head_kv = 0;
};

/// Fill `out` for `model`, loaded from `model_path` (the file whose bytes are hashed).
Status describe_model(const llama_model *model, const std::string &model_path, ModelIdentity &out,
                      const RevisionCache &cache = RevisionCache::from_environment());

/// The identity fields a restore compares with the loaded model's.
constexpr FieldSet model_fields() noexcept {
    return Field::model_id | Field::model_revision | FieldSet(Field::tokenizer_name) |
           FieldSet(Field::tokenizer_revision);
}

struct SaveOptions {
    /// Payload alignment in the file (SPEC §1.5): 4096 lets a restore read it with
    /// O_DIRECT into place; 1 writes unpadded frames.
    std::uint32_t align = 4096;
    /// 0: one frame holding llama.cpp's whole state blob (dtype uint8). N > 0: one
    /// frame per N layers holding those layers' K and V rows in the cache's element
    /// type, shape [2 (K, V), layers, tokens, kv_heads, head_dim]; needs a cache whose
    /// K and V share an element type SPEC §2.1 names, V not transposed (flash
    /// attention), one stream and one position per cell.
    std::int32_t layers_per_fragment = 0;
    /// Threads hashing fragments (0: one per core).
    unsigned threads = 0;
    /// Write a new file beside `path` and rename it into place, so a reader never sees
    /// half a state and a failed save leaves the old one. Replacing a file so costs a
    /// flush of the new one on ext4 (auto_da_alloc); false truncates and writes `path`
    /// in place, as llama_state_seq_save_file does.
    bool replace_atomically = true;
    /// fsync the file (and, renamed, its directory) before returning.
    bool durable = false;
};

/// What a save wrote.
struct Saved {
    std::uint64_t bytes = 0;     ///< file length
    std::uint32_t frames = 0;    ///< frames in the file
    llama_pos first_pos = 0;     ///< token_span
    llama_pos last_pos = 0;
};

/// Save sequence `seq`'s KV state to `path`.
Status save_sequence(llama_context *ctx, llama_seq_id seq, const ModelIdentity &model, const std::string &path,
                     const SaveOptions &options = SaveOptions(), Saved *saved = nullptr);

/// The same into memory: the file's bytes.
Status encode_sequence(llama_context *ctx, llama_seq_id seq, const ModelIdentity &model,
                       std::vector<std::uint8_t> &out, const SaveOptions &options = SaveOptions(),
                       Saved *saved = nullptr);

struct RestoreOptions {
    /// Verification level; full (trailer and payload_hash) unless you know better.
    Level level = Level::full;
    /// Threads verifying fragments (0: one per core); one frame is one SHA-256 pass.
    unsigned threads = 0;
    /// Read the file with O_DIRECT into an aligned buffer instead of mapping it (where
    /// the file system refuses O_DIRECT, it is read through the page cache).
    bool direct_io = false;
};

/// What a restore (or a check) found.
struct Restored {
    std::uint32_t frames = 0;
    llama_pos first_pos = 0;
    llama_pos last_pos = 0;
    /// Bytes handed to llama_state_seq_set_data.
    std::uint64_t state_bytes = 0;
    /// Whether the state had to be assembled in a buffer (fragments) rather than passed
    /// to llama.cpp where it lay.
    bool assembled = false;
    /// Whether the file was read with O_DIRECT.
    bool direct_io = false;
};

/// Verify the frames in `path` against `model` and restore them into sequence `seq` of
/// `ctx` (its earlier cells for `seq` are replaced). Nothing reaches llama.cpp unless
/// every frame passed at options.level and matches the model.
Status restore_sequence(llama_context *ctx, llama_seq_id seq, const ModelIdentity &model, const std::string &path,
                        const RestoreOptions &options = RestoreOptions(), Restored *restored = nullptr);

/// The same from bytes in memory (the file's bytes, one or more frames).
Status restore_sequence(llama_context *ctx, llama_seq_id seq, const ModelIdentity &model, Bytes frames,
                        const RestoreOptions &options = RestoreOptions(), Restored *restored = nullptr);

/// Everything restore_sequence checks, without a context: whether `frames` would be
/// restored into a context of `model`.
Status check_state(const ModelIdentity &model, Bytes frames, const RestoreOptions &options = RestoreOptions(),
                   Restored *restored = nullptr);

} // namespace llama
} // namespace membrane

#endif
