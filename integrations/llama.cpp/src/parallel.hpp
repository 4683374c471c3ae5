// Work over a list of payloads split across cores: runs of about equal bytes, one per
// thread, the caller's thread taking the first.
#ifndef MEMBRANE_LLAMA_PARALLEL_HPP
#define MEMBRANE_LLAMA_PARALLEL_HPP

#include <cstdint>
#include <functional>
#include <vector>

namespace membrane {
namespace llama {

/// Below this many bytes one thread does the work: starting a second costs more than
/// it saves (bench_membrane_llama at 300 tokens, 0.3 MiB: 2 threads were slower).
constexpr std::uint64_t kParallelMinBytes = 1u << 20;

/// Call `work(from, to)` on contiguous runs of items [0, sizes.size()) of about equal
/// total size, on up to `threads` threads (0: one per core); returns when all are done.
void for_each_run(const std::vector<std::uint64_t> &sizes, unsigned threads,
                  const std::function<void(std::size_t from, std::size_t to)> &work);

} // namespace llama
} // namespace membrane

#endif
