// The layout of llama.cpp's per-sequence state blob (llama_state_seq_get_data), as
// written by llama_context::state_seq_get_data and llama_kv_cache::state_write of the
// pinned llama.cpp:
//
//   u32 io magic, i32 seq_id
//   u32 n_stream; per stream: u32 cell_count, then (cell_count > 0)
//     per cell: i32 pos, u32 n_seq_id, n_seq_id x i32 seq_id   (+ an ext for M-RoPE)
//     u32 v_trans, u32 n_layer
//     per layer: i32 k_type, u64 k_row_size, cell_count K rows
//     per layer: i32 v_type, u64 v_row_size, cell_count V rows    (v_trans == 0)
//
// llama.cpp's format, not Membrane's: this is what lets a layer range's K and V rows be
// located in the blob (a fragment's payload) and the blob be rebuilt from fragments.
#ifndef MEMBRANE_LLAMA_SEQ_STATE_HPP
#define MEMBRANE_LLAMA_SEQ_STATE_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llama.h"
#include "membrane_frame.hpp"

namespace membrane {
namespace llama {

/// The magic llama_state_seq_get_data writes first (io_magic in llama-context.cpp).
constexpr std::uint32_t kSeqStateMagic = 0xaf143cd8u;

/// The SPEC §2.1 dtype of a ggml element type, if it has one.
std::optional<Dtype> dtype_of_ggml(std::int32_t ggml_type_id);
/// The ggml element type of a SPEC dtype, if ggml has one.
std::optional<std::int32_t> ggml_of_dtype(Dtype dtype);

/// Where one layer's rows lie in a blob.
struct LayerRows {
    Bytes k;
    Bytes v;
};

/// A single-stream, untransposed state whose cells hold one sequence at consecutive
/// positions: the states fragments describe.
struct SeqState {
    llama_seq_id seq_id = 0;
    llama_pos first_pos = 0;
    std::uint32_t cell_count = 0;
    std::int32_t type = 0;          ///< ggml_type of K and V
    std::uint64_t row_size = 0;     ///< bytes per cell per layer, K and V alike
    std::vector<LayerRows> layers;  ///< K and V rows of each layer
};

/// Locate the rows of `blob` (a llama_state_seq_get_data result). Fails with the reason
/// when the blob is not a state SeqState describes; succeeds only if writing the result
/// back (write_seq_state) gives `blob` byte for byte.
bool parse_seq_state(Bytes blob, SeqState &out, std::string &why);

/// The first and last position among the cells of a single-stream blob of `n_layer`
/// layers, read from its cell list; false when the blob is not laid out so (several
/// streams, or a cell list with per-cell extensions, which llama.cpp writes for M-RoPE
/// models).
bool seq_state_positions(Bytes blob, std::int32_t n_layer, llama_pos &first, llama_pos &last);

/// Bytes write_seq_state produces for `state`.
std::uint64_t seq_state_size(const SeqState &state);

/// llama.cpp's blob for `state`, appended to `out` (its rows copied from where the
/// layers point).
void write_seq_state(const SeqState &state, std::vector<std::uint8_t> &out);

} // namespace llama
} // namespace membrane

#endif
