/*
 * two_rust_libs: libmembrane_frame.a and a second Rust static library (second_rust/)
 * linked into one program. Each carries a copy of Rust's std; the build of
 * libmembrane_frame.a leaves only its mbr_* API global (scripts/localize-staticlib.sh),
 * so the link succeeds and both libraries work, panics and all.
 *
 *   exit: 0 when both libraries answered as expected
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "membrane_frame.h"

int64_t second_rust_describe(uint32_t tokens, char *out, size_t capacity);

int main(void) {
    char text[64];
    int64_t n = second_rust_describe(447, text, sizeof text);
    int64_t caught = second_rust_describe(UINT32_MAX, text + 32, 32);
    mbr_digest digest;
    uint32_t status = mbr_sha256((const uint8_t *)"hello", 5, &digest);
    int ok = n == 11 && strcmp(text, "tokens: 447") == 0 && caught == -2 && status == MBR_OK &&
             strncmp(digest.hex, "2cf24dba", 8) == 0 && mbr_frame_check(NULL, 0, MBR_LEVEL_FULL) == MBR_TOO_SHORT;
    printf("two_rust_libs: second library \"%s\" (a panic caught: %lld), membrane %s, sha256(hello) %.8s...: %s\n",
           text, (long long)caught, mbr_version(), digest.hex, ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
