#include "parallel.hpp"

#include <algorithm>
#include <system_error>
#include <thread>

namespace membrane {
namespace llama {
namespace {

/// The hardware's thread count when `threads` is 0, else `threads`.
unsigned thread_count(unsigned threads) {
    return threads != 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
}

} // namespace

void for_each_run(const std::vector<std::uint64_t> &sizes, unsigned threads,
                  const std::function<void(std::size_t from, std::size_t to)> &work) {
    std::uint64_t total = 0;
    for (std::uint64_t size : sizes) total += size;
    std::size_t runs = std::min<std::size_t>(thread_count(threads), sizes.size());
    if (total < kParallelMinBytes || runs < 2) {
        if (!sizes.empty()) work(0, sizes.size());
        return;
    }
    // Cut after the item that carries the running total past each k/runs of the whole.
    std::vector<std::size_t> cuts{0};
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i + 1 < sizes.size() && cuts.size() < runs; i++) {
        sum += sizes[i];
        if (sum * runs >= total * cuts.size()) cuts.push_back(i + 1);
    }
    cuts.push_back(sizes.size());
    std::vector<std::thread> helpers;
    std::size_t k = 1;
    try {
        for (; k + 1 < cuts.size(); k++) helpers.emplace_back(work, cuts[k], cuts[k + 1]);
    } catch (const std::system_error &) {
        // No thread to be had: the runs not started are done here.
    }
    work(cuts[0], cuts[1]);
    for (; k + 1 < cuts.size(); k++) work(cuts[k], cuts[k + 1]);
    for (std::thread &t : helpers) t.join();
}

} // namespace llama
} // namespace membrane
