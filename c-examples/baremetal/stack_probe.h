/*
 * Worst-case stack of a call, measured by painting (startup.c): stack_probe_begin()
 * fills the STACK_PROBE_WINDOW bytes below the stack pointer with a pattern and returns
 * that stack pointer; stack_probe_end() returns how many bytes below it the pattern was
 * overwritten since. The figure includes the arguments passed on the stack and is exact
 * to a word; a call deeper than the window reads as the whole window.
 */
#ifndef STACK_PROBE_H
#define STACK_PROBE_H

#include <stddef.h>
#include <stdint.h>

#define STACK_PROBE_WINDOW (32u * 1024u)

uintptr_t stack_probe_begin(void);
size_t stack_probe_end(uintptr_t top);

/* Run `call` (an expression) with the probe; the bytes it used raise `worst`. */
#define STACK_PROBE(worst, call)                       \
    do {                                               \
        uintptr_t stack_top_ = stack_probe_begin();    \
        call;                                          \
        size_t stack_used_ = stack_probe_end(stack_top_); \
        if (stack_used_ > (worst)) (worst) = stack_used_; \
    } while (0)

#endif
