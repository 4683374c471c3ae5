// What this core's SHA-NI unit allows an interleaved SHA-256 kernel: the
// latency and throughput of sha256rnds2, the throughput of sha256msg1 and sha256msg2,
// and the cycles one 64-byte block's instructions take when nothing waits on anything
// (the floor for any number of lanes). One SHA-256 stream is a chain of 32 dependent
// sha256rnds2 a block, so it runs at 32 x their latency; the ratio of that to the floor
// is the most interleaving can gain over single-stream code on this core.
//
//   gcc -O2 scripts/sha_ni_limits.c -o /tmp/sha_ni_limits && taskset -c 1 /tmp/sha_ni_limits
//
// x86-64 with SHA-NI only. Cycles come from a chain of 1-cycle register adds timed by
// the same clock (rdtsc), so a turbo clock above the TSC rate is accounted for. (Not
// `add $1`: an Intel Xeon with AVX-512 folds chains of immediate adds at rename,
// about five a cycle, which made this harness's cycles five times too short there.) The best of 5
// rounds counts: the machine is shared.
#include <stdio.h>
#include <x86intrin.h>

#define N 20000000L

// Registers the loops write (the inputs xmm0, xmm1 and xmm15 are only read).
#define CLOBBER "rax", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14"

// One loop of N iterations of `body`: TSC ticks per iteration.
#define TICKS(body)                                                                                                    \
    ({                                                                                                                 \
        unsigned long long start = __rdtsc();                                                                          \
        for (long i = 0; i < N; i++) __asm__ volatile(body ::: CLOBBER);                                              \
        (double)(__rdtsc() - start) / N;                                                                               \
    })

// sha256rnds2 into register x (a new chain per register), message in xmm0.
#define RNDS(x) "sha256rnds2 %%xmm0, %%xmm1, %%xmm" #x "\n\t"
// msg1/msg2 into x, then x reset from xmm15 so iterations do not chain.
#define MSG1(x) "sha256msg1 %%xmm1, %%xmm" #x "\n\tmovdqa %%xmm15, %%xmm" #x "\n\t"
#define MSG2(x) "sha256msg2 %%xmm1, %%xmm" #x "\n\tmovdqa %%xmm15, %%xmm" #x "\n\t"
#define RNDS8 RNDS(2) RNDS(3) RNDS(4) RNDS(5) RNDS(6) RNDS(7) RNDS(8) RNDS(9)
// A quarter of a block's SHA and SSE instructions, as a kernel issues them: 8 rounds,
// 3 msg1, 3 msg2, the constants added (4), the high message halves (4 pshufd), the
// schedule's alignr (3) and adds (3), one byte swap.
#define QUARTER                                                                                                        \
    RNDS8 MSG1(10) MSG1(11) MSG1(12) MSG2(13) MSG2(14) MSG2(10)                                                        \
    "paddd %%xmm1, %%xmm11\n\tpaddd %%xmm1, %%xmm12\n\tpaddd %%xmm1, %%xmm13\n\tpaddd %%xmm1, %%xmm14\n\t"          \
    "pshufd $14, %%xmm1, %%xmm11\n\tpshufd $14, %%xmm1, %%xmm12\n\tpshufd $14, %%xmm1, %%xmm13\n\t"                 \
    "pshufd $14, %%xmm1, %%xmm14\n\tpalignr $4, %%xmm1, %%xmm11\n\tpalignr $4, %%xmm1, %%xmm12\n\t"                 \
    "palignr $4, %%xmm1, %%xmm13\n\tpaddd %%xmm1, %%xmm11\n\tpaddd %%xmm1, %%xmm12\n\tpaddd %%xmm1, %%xmm13\n\t"    \
    "pshufb %%xmm1, %%xmm14\n\t"

static double min(double a, double b) { return a < b ? a : b; }

int main(void) {
    double cycle = 1e30, latency = 1e30, rnds = 1e30, msg1 = 1e30, msg2 = 1e30, block = 1e30;
    for (int round = 0; round < 5; round++) {
        cycle = min(cycle, TICKS("add %%rax, %%rax\n\tadd %%rax, %%rax\n\tadd %%rax, %%rax\n\tadd %%rax, %%rax\n\t") / 4);
        // The chain of one stream: each rnds2 reads the other's result.
        latency = min(latency, TICKS("sha256rnds2 %%xmm0, %%xmm2, %%xmm3\n\tsha256rnds2 %%xmm0, %%xmm3, %%xmm2\n\t") / 2);
        rnds = min(rnds, TICKS(RNDS8) / 8);
        msg1 = min(msg1, TICKS(MSG1(2) MSG1(3) MSG1(4) MSG1(5) MSG1(6) MSG1(7) MSG1(8) MSG1(9)) / 8);
        msg2 = min(msg2, TICKS(MSG2(2) MSG2(3) MSG2(4) MSG2(5) MSG2(6) MSG2(7) MSG2(8) MSG2(9)) / 8);
        block = min(block, TICKS(QUARTER QUARTER QUARTER QUARTER));
    }
    double stream = 32 * latency / cycle + 2; // 32 chained rounds and the state's two adds
    printf("TSC ticks per core cycle: %.3f\n", cycle);
    printf("sha256rnds2: latency %.2f cycles, throughput %.2f cycles each (8 independent)\n", latency / cycle,
           rnds / cycle);
    printf("sha256msg1 throughput %.2f cycles each, sha256msg2 %.2f\n", msg1 / cycle, msg2 / cycle);
    printf("one block's instructions with no dependencies: %.1f cycles (the floor for any number of lanes)\n",
           block / cycle);
    printf("one stream, latency-bound: %.1f cycles a block\n", stream);
    printf("ceiling of an interleaved kernel over single-stream code: %.2fx\n", stream / (block / cycle));
    // Where the other instructions run on other pipes (AMD Zen 1, an Intel Xeon
    // with AVX-512), the block's sum above is no bound: the 32 rounds alone are the floor.
    printf("the 32 rounds alone: %.1f cycles a block, a ceiling of %.2fx where nothing else competes\n",
           32 * rnds / cycle, stream / (32 * rnds / cycle));
    return 0;
}
