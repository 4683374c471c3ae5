/*
 * Reset for QEMU's mps2-an386: the vector table, then turn on the FPU (the library is
 * built for thumbv7em-none-eabihf, hard float) before the C library's start-up code
 * (rdimon-crt0's _start: .bss, the semihosting console, main, exit) runs any of it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

extern void _start(void);
extern uint32_t __stack;

void reset_handler(void);
void fault_handler(void);

void reset_handler(void) {
    /* CPACR: full access to CP10 and CP11 (the FPU). */
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
    __asm volatile("dsb\n\tisb" ::: "memory");
    _start();
    for (;;) {
    }
}

/* Any fault is a failed run: say so on the semihosting console and stop QEMU. */
void fault_handler(void) {
    fputs("baremetal: FAULT (hard fault, memory or usage fault)\n", stdout);
    exit(3);
}

/* The initial stack pointer, then the reset and the fault handlers (Cortex-M). */
struct vector_table {
    void *stack_top;
    void (*handlers[15])(void);
};

__attribute__((section(".vectors"), used)) const struct vector_table vector_table = {
    &__stack,
    {reset_handler, fault_handler, fault_handler, fault_handler, fault_handler, fault_handler, 0, 0, 0, 0,
     fault_handler, fault_handler, 0, fault_handler, fault_handler},
};

/*
 * The painted-stack probe (stack_probe.h): the window below the caller's stack is
 * filled with a pattern before an entry point runs, and afterwards the deepest word that
 * no longer holds it says how much stack the call used. The window stays inside the
 * 64 KiB the linker script keeps for the stack above the heap.
 */
#include "stack_probe.h"

#define STACK_PATTERN 0xA5C3E1F7u

static uint32_t *window_bottom(uintptr_t top) {
    return (uint32_t *)((top - STACK_PROBE_WINDOW) & ~(uintptr_t)3);
}

__attribute__((noinline)) uintptr_t stack_probe_begin(void) {
    uintptr_t sp;
    __asm volatile("mov %0, sp" : "=r"(sp));
    /* Below this function's own frame: everything the next call can reach. */
    uint32_t *word = window_bottom(sp);
    uint32_t *end = (uint32_t *)((sp - 16) & ~(uintptr_t)3);
    while (word < end) *word++ = STACK_PATTERN;
    return sp;
}

size_t stack_probe_end(uintptr_t top) {
    const uint32_t *word = window_bottom(top);
    while (word < (const uint32_t *)top && *word == STACK_PATTERN) word++;
    return (size_t)(top - (uintptr_t)word);
}
