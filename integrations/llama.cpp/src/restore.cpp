// Restoring a sequence: find the frames, verify them (fragments on several cores),
// match them with the loaded model, and only then hand llama.cpp the state.
#include <algorithm>

#include "file_io.hpp"
#include "membrane_llama.hpp"
#include "model_identity.hpp"
#include "parallel.hpp"
#include "seq_state.hpp"

namespace membrane {
namespace llama {
namespace {

/// A frame of the file: its bytes and where it starts.
struct Located {
    Bytes bytes;
    std::uint64_t offset;
};

std::string at(std::size_t index, std::uint64_t offset) {
    return "frame " + std::to_string(index) + " at byte " + std::to_string(offset);
}

/// A reader's error on frame `index`, its offset made one in the file.
Status frame_refused(const Error &error, std::size_t index, std::uint64_t offset) {
    std::uint64_t in_file = error.offset() ? *error.offset() + offset : MBR_NO_OFFSET;
    return Status::frame(Error(error.code(), error.field(), in_file), at(index, offset));
}

/// Where the frames of `bytes` begin and end (header and lengths only: nothing hashed).
Status locate_frames(Bytes bytes, std::int32_t max_frames, std::vector<Located> &frames) {
    const ReadOptions layout = ReadOptions().level(Level::layout).mode(Mode::prefix);
    Bytes rest = bytes;
    std::uint64_t offset = 0;
    do {
        if (frames.size() == static_cast<std::size_t>(max_frames))
            return Status::layout("more frames than the model has layers, from byte " + std::to_string(offset));
        Result<FrameView> frame = FrameView::parse(rest, layout);
        if (!frame) return frame_refused(frame.error(), frames.size(), offset);
        std::size_t len = rest.size() - frame->rest().size();
        frames.push_back(Located{rest.first(len), offset});
        rest = rest.subspan(len);
        offset += len;
    } while (!rest.empty());
    return Status();
}

/// Verify every frame at `level`: the payloads hashed side by side (verify_batch), on
/// several cores when there is enough to hash.
Status verify_frames(const std::vector<Located> &frames, Level level, unsigned threads) {
    const ReadOptions read = ReadOptions().level(level);
    std::vector<mbr_bytes> c(frames.size());
    std::vector<std::uint64_t> sizes(frames.size());
    for (std::size_t i = 0; i < frames.size(); i++) {
        c[i] = mbr_bytes{frames[i].bytes.data(), frames[i].bytes.size()};
        sizes[i] = frames[i].bytes.size();
    }
    std::vector<Verdict> verdicts(frames.size());
    std::vector<membrane::Status> results(frames.size());
    for_each_run(sizes, threads, [&](std::size_t from, std::size_t to) {
        const std::size_t n = to - from;
        results[from] = verify_batch(Span<mbr_bytes>(c.data() + from, n), verdicts.data() + from, n, read);
    });
    for (const membrane::Status &s : results)
        if (!s) return Status::frame(s.error(), "verifying");
    for (std::size_t i = 0; i < frames.size(); i++)
        if (!verdicts[i].ok()) return frame_refused(verdicts[i].error(), i, frames[i].offset);
    return Status();
}

/// A verified frame's identity and payload.
struct Fragment {
    Identity identity;
    Bytes payload;
    std::uint64_t offset;
    std::size_t index;
    mbr_range layers;
    mbr_range tokens;
};

bool same(mbr_range a, mbr_range b) { return a.start == b.start && a.end == b.end; }

std::string range_text(mbr_range r) { return "[" + std::to_string(r.start) + ", " + std::to_string(r.end) + "]"; }

/// Read each frame's identity (no second hash: the level was checked) and match it
/// with the model.
Status read_identities(const std::vector<Located> &frames, const ModelIdentity &model,
                       std::vector<Fragment> &fragments) {
    // Only model_fields() are compared; the rest is any valid identity.
    IdentityValues values = model_values(model);
    values.payload_hash = "-";
    std::int64_t one = 1;
    values.shape = Span<std::int64_t>(&one, 1);
    Result<Identity> expected = Identity::build(values);
    if (!expected) return Status::frame(expected.error(), "the model's identity");

    const ReadOptions read = ReadOptions().level(Level::identity);
    for (std::size_t i = 0; i < frames.size(); i++) {
        Result<FrameView> frame = FrameView::parse(frames[i].bytes, read);
        if (!frame) return frame_refused(frame.error(), i, frames[i].offset);
        Identity id = *frame->identity();
        Result<FieldSet> differ = id.differences(*expected, model_fields());
        if (!differ) return Status::frame(differ.error(), at(i, frames[i].offset));
        if (!differ->empty()) return Status::identity(*differ, at(i, frames[i].offset));
        Result<mbr_range> heads = id.range(Field::head_range);
        if (!heads || !same(*heads, mbr_range{-1, -1}))
            return Status::layout(at(i, frames[i].offset) + " holds some heads only; a state needs all");
        fragments.push_back(Fragment{id, frame->payload(), frames[i].offset, i, *id.range(Field::layer_range),
                                     *id.range(Field::token_span)});
    }
    return Status();
}

/// The state a single uint8 frame carries: its payload, as it lies.
Status whole_state(const Fragment &f, const ModelIdentity &model, Bytes &state) {
    Result<Shape> shape = f.identity.shape();
    if (!same(f.layers, mbr_range{0, model.n_layer - 1}))
        return Status::layout(at(f.index, f.offset) + " covers layers " + range_text(f.layers) + ", the model has " +
                              std::to_string(model.n_layer));
    if (!shape || shape->size() != 1 || static_cast<std::uint64_t>((*shape)[0]) != f.payload.size())
        return Status::layout(at(f.index, f.offset) + ": a uint8 state's shape is [its length]");
    // The identity's token_span is outside the trailer's reach: check it against the
    // cells the state holds, where its layout can be read.
    llama_pos first = 0, last = 0;
    if (seq_state_positions(f.payload, model.n_layer, first, last) && !same(f.tokens, mbr_range{first, last}))
        return Status::layout(at(f.index, f.offset) + ": token_span " + range_text(f.tokens) + ", the state holds " +
                              range_text(mbr_range{first, last}));
    state = f.payload;
    return Status();
}

/// The state fragments describe, rebuilt in `assembled` for sequence `seq`.
Status fragment_state(std::vector<Fragment> &fragments, const ModelIdentity &model, llama_seq_id seq,
                      std::vector<std::uint8_t> &assembled) {
    std::sort(fragments.begin(), fragments.end(),
              [](const Fragment &a, const Fragment &b) { return a.layers.start < b.layers.start; });
    const Fragment &head = fragments.front();
    Dtype dtype = *head.identity.dtype();
    std::optional<std::int32_t> type = ggml_of_dtype(dtype);
    if (!type)
        return Status::layout(at(head.index, head.offset) + ": llama.cpp has no cache of " + std::string(name(dtype)));
    std::uint64_t element = bits(dtype) / 8;
    const mbr_range tokens = head.tokens;
    const std::int64_t cells = tokens.end - tokens.start + 1;
    if (tokens.end > INT32_MAX || cells > UINT32_MAX)
        return Status::layout(at(head.index, head.offset) + ": token span " + range_text(tokens) + " too long");

    SeqState state;
    state.seq_id = seq;
    state.first_pos = static_cast<llama_pos>(tokens.start);
    state.cell_count = static_cast<std::uint32_t>(cells);
    state.type = *type;
    std::int64_t next_layer = 0;
    for (const Fragment &f : fragments) {
        const std::string where = at(f.index, f.offset);
        if (*f.identity.dtype() != dtype) return Status::layout(where + ": fragments differ in dtype");
        if (!same(f.tokens, tokens)) return Status::layout(where + ": fragments differ in token span");
        if (f.layers.start != next_layer)
            return Status::layout(where + " covers layers " + range_text(f.layers) + ", expected layer " +
                                  std::to_string(next_layer) + " next");
        if (f.layers.end >= model.n_layer)
            return Status::layout(where + " covers layers " + range_text(f.layers) + ", the model has " +
                                  std::to_string(model.n_layer));
        const std::int64_t n_layers = f.layers.end - f.layers.start + 1;
        Result<Shape> shape = f.identity.shape();
        if (!shape || shape->size() != 5 || (*shape)[0] != 2 || (*shape)[1] != n_layers || (*shape)[2] != cells ||
            (*shape)[3] != model.n_head_kv || (*shape)[4] <= 0 ||
            static_cast<std::uint64_t>((*shape)[4]) > f.payload.size())
            return Status::layout(where + ": a fragment's shape is [2, its layers, its tokens, " +
                                  std::to_string(model.n_head_kv) + " KV heads, head_dim]");
        std::uint64_t row = static_cast<std::uint64_t>((*shape)[3]) * static_cast<std::uint64_t>((*shape)[4]) * element;
        if (state.row_size == 0) state.row_size = row;
        if (row != state.row_size) return Status::layout(where + ": fragments differ in head_dim");
        const std::uint64_t rows = row * static_cast<std::uint64_t>(cells);
        const std::uint64_t halves = 2 * static_cast<std::uint64_t>(n_layers);
        if (rows / row != static_cast<std::uint64_t>(cells) || rows > UINT64_MAX / halves ||
            f.payload.size() != halves * rows)
            return Status::layout(where + ": payload of " + std::to_string(f.payload.size()) + " bytes, shape x " +
                                  std::string(name(dtype)) + " says otherwise");
        for (std::int64_t l = 0; l < n_layers; l++) {
            state.layers.push_back(LayerRows{Bytes(f.payload.data() + l * rows, rows),
                                             Bytes(f.payload.data() + (n_layers + l) * rows, rows)});
        }
        next_layer = f.layers.end + 1;
    }
    if (next_layer != model.n_layer)
        return Status::layout("the fragments cover layers [0, " + std::to_string(next_layer - 1) + "], the model has " +
                              std::to_string(model.n_layer));
    // The one copy a restore from fragments makes: llama.cpp takes the state as one
    // buffer, and the fragments' rows lie between frame heads and trailers.
    write_seq_state(state, assembled);
    return Status();
}

/// Everything up to llama.cpp: `state` is what to hand it (in `frames` or `assembled`).
Status prepare(const ModelIdentity &model, Bytes bytes, const RestoreOptions &options, llama_seq_id seq,
               std::vector<std::uint8_t> &assembled, Bytes &state, Restored &restored) {
    if (model.n_layer <= 0) return Status::layout("the model identity has no layers (describe_model fills it)");
    std::vector<Located> frames;
    if (Status s = locate_frames(bytes, model.n_layer, frames); !s) return s;
    if (Status s = verify_frames(frames, options.level, options.threads); !s) return s;
    std::vector<Fragment> fragments;
    if (Status s = read_identities(frames, model, fragments); !s) return s;
    restored.frames = static_cast<std::uint32_t>(frames.size());
    restored.first_pos = static_cast<llama_pos>(fragments.front().tokens.start);
    restored.last_pos = static_cast<llama_pos>(fragments.front().tokens.end);
    if (fragments.size() == 1 && *fragments.front().identity.dtype() == Dtype::uint8) {
        restored.assembled = false;
        if (Status s = whole_state(fragments.front(), model, state); !s) return s;
    } else {
        restored.assembled = true;
        if (Status s = fragment_state(fragments, model, seq, assembled); !s) return s;
        state = Bytes(assembled);
    }
    restored.state_bytes = state.size();
    return Status();
}

} // namespace

Status check_state(const ModelIdentity &model, Bytes frames, const RestoreOptions &options, Restored *restored) {
    std::vector<std::uint8_t> assembled;
    Bytes state;
    Restored result;
    if (Status s = prepare(model, frames, options, 0, assembled, state, result); !s) return s;
    if (restored != nullptr) *restored = result;
    return Status();
}

Status restore_sequence(llama_context *ctx, llama_seq_id seq, const ModelIdentity &model, Bytes frames,
                        const RestoreOptions &options, Restored *restored) {
    if (ctx == nullptr) return Status::llama_call("no context");
    std::vector<std::uint8_t> assembled;
    Bytes state;
    Restored result;
    if (Status s = prepare(model, frames, options, seq, assembled, state, result); !s) return s;
    std::size_t read = llama_state_seq_set_data(ctx, state.data(), state.size(), seq);
    if (read == 0) return Status::llama_call("llama_state_seq_set_data refused the state (llama.cpp's log says why)");
    if (read != state.size())
        return Status::llama_call("llama_state_seq_set_data read " + std::to_string(read) + " of " +
                                  std::to_string(state.size()) + " bytes");
    if (restored != nullptr) *restored = result;
    return Status();
}

Status restore_sequence(llama_context *ctx, llama_seq_id seq, const ModelIdentity &model, const std::string &path,
                        const RestoreOptions &options, Restored *restored) {
    FileBytes file;
    Status opened = options.direct_io ? FileBytes::read_direct(path, file) : FileBytes::map(path, file);
    if (!opened) return opened;
    Restored result;
    if (Status s = restore_sequence(ctx, seq, model, file.bytes(), options, &result); !s) return s;
    result.direct_io = file.direct();
    if (restored != nullptr) *restored = result;
    return Status();
}

} // namespace llama
} // namespace membrane
