// What the library's modules share of a model's identity.
#ifndef MEMBRANE_LLAMA_MODEL_IDENTITY_HPP
#define MEMBRANE_LLAMA_MODEL_IDENTITY_HPP

#include "membrane_llama.hpp"

namespace membrane {
namespace llama {

/// Identity values carrying `model`'s four fields and all heads, borrowing its strings:
/// what every saved frame starts from, and what a restore compares frames with.
IdentityValues model_values(const ModelIdentity &model);

} // namespace llama
} // namespace membrane

#endif
