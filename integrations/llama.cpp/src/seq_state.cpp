#include "seq_state.hpp"

#include <algorithm>
#include <cstring>

namespace membrane {
namespace llama {
namespace {

/// Bounds-checked little-endian reads over a blob (llama.cpp writes host order; the
/// hosts it runs on are little-endian, and a big-endian blob fails the magic check).
class Reader {
  public:
    explicit Reader(Bytes bytes) : bytes_(bytes) {}
    template <class T>
    bool read(T &out) {
        if (bytes_.size() - at_ < sizeof(T)) return false;
        std::memcpy(&out, bytes_.data() + at_, sizeof(T));
        at_ += sizeof(T);
        return true;
    }
    bool take(std::uint64_t len, Bytes &out) {
        if (bytes_.size() - at_ < len) return false;
        out = Bytes(bytes_.data() + at_, static_cast<std::size_t>(len));
        at_ += static_cast<std::size_t>(len);
        return true;
    }
    std::size_t offset() const { return at_; }
    bool at_end() const { return at_ == bytes_.size(); }

  private:
    Bytes bytes_;
    std::size_t at_ = 0;
};

template <class T>
void put(std::vector<std::uint8_t> &out, T value) {
    const auto *p = reinterpret_cast<const std::uint8_t *>(&value);
    out.insert(out.end(), p, p + sizeof(T));
}

void put(std::vector<std::uint8_t> &out, Bytes bytes) { out.insert(out.end(), bytes.begin(), bytes.end()); }

/// Bytes per cell of the per-cell metadata: pos, n_seq_id (1), seq_id.
constexpr std::uint64_t kCellMeta = 12;
/// Bytes of a layer's K or V header: i32 type, u64 row size.
constexpr std::uint64_t kRowsHeader = 12;

/// The element types a KV cache can have that SPEC §2.1 names.
struct TypePair {
    ggml_type ggml;
    Dtype dtype;
};
constexpr TypePair kTypes[] = {
    {GGML_TYPE_F16, Dtype::float16}, {GGML_TYPE_BF16, Dtype::bfloat16}, {GGML_TYPE_F32, Dtype::float32},
    {GGML_TYPE_F64, Dtype::float64}, {GGML_TYPE_I8, Dtype::int8},       {GGML_TYPE_I16, Dtype::int16},
    {GGML_TYPE_I32, Dtype::int32},   {GGML_TYPE_I64, Dtype::int64},
};

} // namespace

std::optional<Dtype> dtype_of_ggml(std::int32_t ggml_type_id) {
    for (TypePair pair : kTypes)
        if (static_cast<std::int32_t>(pair.ggml) == ggml_type_id) return pair.dtype;
    return std::nullopt;
}

std::optional<std::int32_t> ggml_of_dtype(Dtype dtype) {
    for (TypePair pair : kTypes)
        if (pair.dtype == dtype) return static_cast<std::int32_t>(pair.ggml);
    return std::nullopt;
}

bool parse_seq_state(Bytes blob, SeqState &out, std::string &why) {
    Reader r(blob);
    std::uint32_t magic = 0, n_stream = 0, cell_count = 0;
    if (!r.read(magic) || magic != kSeqStateMagic) return why = "no llama.cpp sequence-state magic", false;
    if (!r.read(out.seq_id) || !r.read(n_stream)) return why = "state ends in its header", false;
    if (n_stream != 1) return why = "the cache has " + std::to_string(n_stream) + " streams", false;
    if (!r.read(cell_count)) return why = "state ends in its header", false;
    if (cell_count == 0) return why = "the sequence holds no cells", false;
    out.cell_count = cell_count;
    for (std::uint32_t i = 0; i < cell_count; i++) {
        llama_pos pos = 0;
        std::uint32_t n_seq = 0;
        llama_seq_id id = 0;
        if (!r.read(pos) || !r.read(n_seq) || !r.read(id)) return why = "state ends in its cell list", false;
        if (i == 0) out.first_pos = pos;
        if (n_seq != 1 || id != out.seq_id)
            return why = "cell " + std::to_string(i) + " is not one cell of the saved sequence", false;
        if (static_cast<std::int64_t>(pos) != static_cast<std::int64_t>(out.first_pos) + i)
            return why = "positions are not consecutive (cell " + std::to_string(i) + ")", false;
    }
    std::uint32_t v_trans = 0, n_layer = 0;
    if (!r.read(v_trans) || !r.read(n_layer)) return why = "state ends before its layers", false;
    if (v_trans != 0) return why = "V is stored transposed (a context without flash attention)", false;
    if (n_layer > blob.size() / (2 * kRowsHeader)) return why = "more layers than the state has bytes for", false;
    out.layers.assign(n_layer, LayerRows{});
    for (int half = 0; half < 2; half++) {
        for (std::uint32_t l = 0; l < n_layer; l++) {
            std::int32_t type = 0;
            std::uint64_t row_size = 0;
            if (!r.read(type) || !r.read(row_size)) return why = "state ends in layer " + std::to_string(l), false;
            if (half == 0 && l == 0) {
                out.type = type;
                out.row_size = row_size;
            } else if (type != out.type || row_size != out.row_size) {
                return why = "layers or K and V differ in element type or row size", false;
            }
            if (row_size == 0 || row_size > UINT64_MAX / cell_count)
                return why = "row size " + std::to_string(row_size) + " out of range", false;
            Bytes &rows = half == 0 ? out.layers[l].k : out.layers[l].v;
            if (!r.take(row_size * cell_count, rows)) return why = "state ends in layer " + std::to_string(l), false;
        }
    }
    if (!r.at_end()) return why = "bytes after the last layer", false;
    // What was read is all there is: writing it back must give the blob, or the layout
    // above misses something (an M-RoPE ext, a field llama.cpp added) and fragments
    // would not restore it.
    if (seq_state_size(out) != blob.size()) return why = "layout not recognised", false;
    return true;
}

bool seq_state_positions(Bytes blob, std::int32_t n_layer, llama_pos &first, llama_pos &last) {
    Reader r(blob);
    std::uint32_t magic = 0, n_stream = 0, cell_count = 0;
    llama_seq_id seq = 0;
    if (!r.read(magic) || magic != kSeqStateMagic || !r.read(seq) || !r.read(n_stream) || n_stream != 1 ||
        !r.read(cell_count) || cell_count == 0)
        return false;
    llama_pos lo = 0, hi = 0;
    for (std::uint32_t i = 0; i < cell_count; i++) {
        llama_pos pos = 0;
        std::uint32_t n_seq = 0;
        Bytes ids;
        if (!r.read(pos) || !r.read(n_seq) || !r.take(std::uint64_t{n_seq} * sizeof(llama_seq_id), ids)) return false;
        lo = i == 0 ? pos : std::min(lo, pos);
        hi = i == 0 ? pos : std::max(hi, pos);
    }
    // A misread cell list (one with extensions) would not land on these two fields.
    std::uint32_t v_trans = 2, layers = 0;
    if (!r.read(v_trans) || v_trans > 1 || !r.read(layers) || layers != static_cast<std::uint32_t>(n_layer))
        return false;
    first = lo;
    last = hi;
    return true;
}

std::uint64_t seq_state_size(const SeqState &state) {
    std::uint64_t layers = state.layers.size();
    return 4 + 4 + 4 + 4 + kCellMeta * state.cell_count + 4 + 4 +
           2 * layers * (kRowsHeader + state.row_size * state.cell_count);
}

void write_seq_state(const SeqState &state, std::vector<std::uint8_t> &out) {
    out.reserve(out.size() + static_cast<std::size_t>(seq_state_size(state)));
    put(out, kSeqStateMagic);
    put(out, state.seq_id);
    put(out, std::uint32_t{1});
    put(out, state.cell_count);
    for (std::uint32_t i = 0; i < state.cell_count; i++) {
        put(out, static_cast<llama_pos>(state.first_pos + static_cast<llama_pos>(i)));
        put(out, std::uint32_t{1});
        put(out, state.seq_id);
    }
    put(out, std::uint32_t{0});
    put(out, static_cast<std::uint32_t>(state.layers.size()));
    for (int half = 0; half < 2; half++) {
        for (const LayerRows &layer : state.layers) {
            put(out, state.type);
            put(out, state.row_size);
            put(out, half == 0 ? layer.k : layer.v);
        }
    }
}

} // namespace llama
} // namespace membrane
