// Saving a sequence: llama.cpp's state blob, and the frames that carry it.
#include <algorithm>
#include <cerrno>

#include "file_io.hpp"
#include "membrane_llama.hpp"
#include "model_identity.hpp"
#include "parallel.hpp"
#include "seq_state.hpp"

namespace membrane {
namespace llama {
namespace {

/// One frame to write: its identity and its payload, in pieces of the state blob.
struct PlannedFrame {
    OwnedIdentity identity;
    std::vector<Bytes> parts;
    Digest digest;
    std::uint64_t payload_len;
};

Status plan_frame(IdentityValues values, std::vector<Bytes> parts, const Digest &digest,
                  std::vector<PlannedFrame> &frames) {
    std::string hex = digest.hex_string();
    values.payload_hash = hex;
    Result<OwnedIdentity> identity = OwnedIdentity::build(values);
    if (!identity) return Status::frame(identity.error(), "building the identity");
    std::uint64_t len = 0;
    for (Bytes part : parts) len += part.size();
    frames.push_back(PlannedFrame{std::move(*identity), std::move(parts), digest, len});
    return Status();
}

/// The whole blob as one uint8 frame over every layer.
Status plan_whole(const ModelIdentity &model, Bytes blob, mbr_range span, std::vector<PlannedFrame> &frames) {
    std::int64_t shape[1] = {static_cast<std::int64_t>(blob.size())};
    IdentityValues v = model_values(model);
    v.layer_range = mbr_range{0, model.n_layer - 1};
    v.token_span = span;
    v.dtype = Dtype::uint8;
    v.shape = Span<std::int64_t>(shape, 1);
    return plan_frame(v, std::vector<Bytes>{blob}, sha256(blob), frames);
}

/// One frame per `per` layers: the K rows of those layers, then their V rows.
Status plan_fragments(const ModelIdentity &model, Bytes blob, std::int32_t per, unsigned threads,
                      std::vector<PlannedFrame> &frames) {
    SeqState state;
    std::string why;
    if (!parse_seq_state(blob, state, why)) return Status::layout("cannot split this state into layer ranges: " + why);
    if (static_cast<std::int64_t>(state.layers.size()) != model.n_layer)
        return Status::layout("the state has " + std::to_string(state.layers.size()) + " layers, the model " +
                              std::to_string(model.n_layer));
    std::optional<Dtype> dtype = dtype_of_ggml(state.type);
    if (!dtype)
        return Status::layout(std::string("the cache's element type ") +
                              ggml_type_name(static_cast<ggml_type>(state.type)) +
                              " has no SPEC dtype: save the whole state (layers_per_fragment 0)");
    std::uint64_t element = ggml_type_size(static_cast<ggml_type>(state.type));
    std::uint64_t heads = static_cast<std::uint64_t>(model.n_head_kv);
    if (heads == 0 || state.row_size % (element * heads) != 0)
        return Status::layout("a row of " + std::to_string(state.row_size) + " bytes is not " +
                              std::to_string(heads) + " KV heads of whole elements");
    std::int64_t head_dim = static_cast<std::int64_t>(state.row_size / (element * heads));
    mbr_range span{state.first_pos, static_cast<std::int64_t>(state.first_pos) + state.cell_count - 1};

    struct Planned {
        mbr_range layers;
        std::vector<Bytes> parts;
        std::uint64_t bytes;
        Digest digest;
    };
    std::vector<Planned> planned;
    for (std::int32_t first = 0; first < model.n_layer; first += per) {
        Planned p{mbr_range{first, std::min(first + per, model.n_layer) - 1}, {}, 0, Digest{}};
        for (std::int64_t l = p.layers.start; l <= p.layers.end; l++) p.parts.push_back(state.layers[l].k);
        for (std::int64_t l = p.layers.start; l <= p.layers.end; l++) p.parts.push_back(state.layers[l].v);
        p.bytes = 2 * static_cast<std::uint64_t>(p.layers.end - p.layers.start + 1) * state.row_size * state.cell_count;
        planned.push_back(std::move(p));
    }
    // The hashing pass is the cost of a save: the fragments' digests on several cores.
    std::vector<std::uint64_t> sizes;
    for (const Planned &p : planned) sizes.push_back(p.bytes);
    for_each_run(sizes, threads, [&](std::size_t from, std::size_t to) {
        for (std::size_t i = from; i < to; i++) planned[i].digest = sha256(Span<Bytes>(planned[i].parts));
    });
    for (Planned &p : planned) {
        std::int64_t shape[5] = {2, p.layers.end - p.layers.start + 1, state.cell_count, model.n_head_kv, head_dim};
        IdentityValues v = model_values(model);
        v.layer_range = p.layers;
        v.token_span = span;
        v.dtype = *dtype;
        v.shape = Span<std::int64_t>(shape, 5);
        if (Status s = plan_frame(v, std::move(p.parts), p.digest, frames); !s) return s;
    }
    return Status();
}

/// llama.cpp's state of `seq`, and the frames that carry it (pointing into `blob`).
Status plan_sequence(llama_context *ctx, llama_seq_id seq, const ModelIdentity &model, const SaveOptions &options,
                     std::vector<std::uint8_t> &blob, std::vector<PlannedFrame> &frames, Saved &saved) {
    if (ctx == nullptr) return Status::llama_call("no context");
    if (options.layers_per_fragment < 0) return Status::layout("layers_per_fragment is negative");
    llama_memory_t memory = llama_get_memory(ctx);
    llama_pos first = llama_memory_seq_pos_min(memory, seq);
    llama_pos last = llama_memory_seq_pos_max(memory, seq);
    if (first < 0 || last < first) return Status::layout("sequence " + std::to_string(seq) + " holds no tokens");
    saved.first_pos = first;
    saved.last_pos = last;

    // The one copy a save makes: llama.cpp writes the state only into a buffer.
    blob.resize(llama_state_seq_get_size(ctx, seq));
    std::size_t got = llama_state_seq_get_data(ctx, blob.data(), blob.size(), seq);
    if (got == 0 || got != blob.size())
        return Status::llama_call("llama_state_seq_get_data gave " + std::to_string(got) + " of " +
                                  std::to_string(blob.size()) + " bytes");
    if (options.layers_per_fragment == 0) return plan_whole(model, Bytes(blob), mbr_range{first, last}, frames);
    return plan_fragments(model, Bytes(blob), options.layers_per_fragment, options.threads, frames);
}

} // namespace

Status save_sequence(llama_context *ctx, llama_seq_id seq, const ModelIdentity &model, const std::string &path,
                     const SaveOptions &options, Saved *saved) {
    std::vector<std::uint8_t> blob;
    std::vector<PlannedFrame> frames;
    Saved result;
    if (Status s = plan_sequence(ctx, seq, model, options, blob, frames, result); !s) return s;
    std::uint64_t written = 0;
    Status s = write_file(path, options.replace_atomically, options.durable, [&](int fd) {
        for (const PlannedFrame &frame : frames) {
            // Each frame's payload is aligned where it lies in the file.
            WriteOptions write = WriteOptions().align(options.align).base(written);
            Result<mbr_frame_layout> layout =
                write_frame(fd, frame.identity.identity(), Span<Bytes>(frame.parts), write, &frame.digest);
            if (!layout) {
                if (layout.code() == Code::io) return Status::io(errno, "writing " + path);
                return Status::frame(layout.error(), "writing " + path);
            }
            written += layout->frame_len;
        }
        return Status();
    });
    if (!s) return s;
    result.bytes = written;
    result.frames = static_cast<std::uint32_t>(frames.size());
    if (saved != nullptr) *saved = result;
    return Status();
}

Status encode_sequence(llama_context *ctx, llama_seq_id seq, const ModelIdentity &model,
                       std::vector<std::uint8_t> &out, const SaveOptions &options, Saved *saved) {
    std::vector<std::uint8_t> blob;
    std::vector<PlannedFrame> frames;
    Saved result;
    if (Status s = plan_sequence(ctx, seq, model, options, blob, frames, result); !s) return s;
    // Head, payload pieces, trailer (SPEC §1.4): the trailer is the digest the
    // payload_hash came from, so no payload is hashed a second time.
    std::vector<std::uint8_t> bytes;
    for (const PlannedFrame &frame : frames) {
        WriteOptions write = WriteOptions().align(options.align).base(bytes.size());
        Result<mbr_frame_layout> layout = plan(frame.identity.identity(), frame.payload_len, write);
        if (!layout) return Status::frame(layout.error(), "encoding");
        std::size_t at = bytes.size();
        bytes.resize(at + layout->head_len);
        Result<std::size_t> head = write_head(frame.identity.identity(), frame.payload_len,
                                              MutableBytes(bytes.data() + at, layout->head_len), write);
        if (!head) return Status::frame(head.error(), "encoding");
        for (Bytes part : frame.parts) bytes.insert(bytes.end(), part.begin(), part.end());
        Bytes trailer = frame.digest.trailer_bytes();
        bytes.insert(bytes.end(), trailer.begin(), trailer.end());
    }
    result.bytes = bytes.size();
    result.frames = static_cast<std::uint32_t>(frames.size());
    out = std::move(bytes);
    if (saved != nullptr) *saved = result;
    return Status();
}

} // namespace llama
} // namespace membrane
