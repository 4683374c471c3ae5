/*
 * What SHA-256 costs on the board: mbr_sha256 over 64 KiB and over 64 bytes, timed
 * with SysTick, run under QEMU with -icount shift=0 (virtual time advances one
 * nanosecond per instruction; SysTick counts the mps2-an386's 25 MHz clock, one tick
 * per 40 instructions). Prints "sha256: N instructions per byte" from the difference
 * of the two, so the call's fixed cost drops out.
 */
#include <stdint.h>
#include <stdio.h>

#include "membrane_frame.h"

#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define INSTRUCTIONS_PER_TICK 40u

static uint8_t data[64 * 1024];

/* SysTick ticks spent hashing `len` bytes (the counter counts down from 2^24 - 1). */
static uint32_t ticks_for(size_t len) {
    mbr_digest digest;
    SYST_RVR = 0x00FFFFFFu;
    SYST_CVR = 0;
    SYST_CSR = 5u; /* enabled, processor clock, no interrupt */
    uint32_t start = SYST_CVR;
    uint32_t status = mbr_sha256(data, len, &digest);
    uint32_t end = SYST_CVR;
    SYST_CSR = 0;
    return status == MBR_OK ? (start - end) & 0x00FFFFFFu : 0;
}

int main(void) {
    for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i * 131u);
    uint32_t small = ticks_for(64), big = ticks_for(sizeof data);
    if (big <= small) {
        printf("sha_cost: FAIL: no time measured (%u ticks, %u ticks)\n", (unsigned)big, (unsigned)small);
        return 1;
    }
    unsigned long per_kib = (unsigned long)(big - small) * INSTRUCTIONS_PER_TICK / ((sizeof data - 64) / 1024);
    printf("sha256: %lu.%lu instructions per byte\n", per_kib / 1024, per_kib % 1024 * 10 / 1024);
    return 0;
}
