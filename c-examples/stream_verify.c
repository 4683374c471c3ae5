/*
 * stream_verify: verify a frame arriving on standard input (a pipe, a socket) in small
 * chunks, without holding its payload: the payload is hashed as it passes, the
 * identity is kept in a buffer of at most the identity limit, and the verifier's state
 * lives in a local variable.
 *
 *   usage: producer | stream_verify [CHUNK] [LEVEL]   (CHUNK bytes per read, default 7;
 *                                                      LEVEL 0..3, default 3 = full)
 *   exit:  0 accepted, 2 rejected, other: usage or I/O
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "membrane_frame.h"

static uint8_t identity_buf[MBR_DEFAULT_IDENTITY_LIMIT];

int main(int argc, char **argv) {
    size_t chunk_size = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 7;
    if (chunk_size == 0 || chunk_size > 1 << 20) {
        fprintf(stderr, "usage: %s [CHUNK 1..1048576] [LEVEL]\n", argv[0]);
        return 64;
    }
    mbr_read_options options = mbr_read_options_default();
    options.level = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : MBR_LEVEL_FULL;

    mbr_stream_verifier verifier;
    uint32_t status = mbr_stream_verifier_init(&verifier, options, identity_buf, sizeof identity_buf);
    if (status != MBR_OK) {
        fprintf(stderr, "stream_verify: %s: %s\n", mbr_status_name(status), mbr_status_str(status));
        return 64;
    }
    uint8_t *chunk = malloc(chunk_size);
    if (chunk == NULL) return 70;

    mbr_error err;
    unsigned long long reads = 0;
    for (;;) {
        ssize_t n = read(STDIN_FILENO, chunk, chunk_size);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            perror("read");
            free(chunk);
            return 74;
        }
        if (n == 0) break;
        reads++;
        mbr_stream_progress progress;
        status = mbr_stream_verifier_feed(&verifier, chunk, (size_t)n, &progress, &err);
        if (status != MBR_OK) break; /* rejected as soon as it is certain */
    }
    free(chunk);

    mbr_streamed_frame verdict;
    if (status == MBR_OK) status = mbr_stream_verifier_finish(&verifier, &verdict, &err);
    if (status != MBR_OK) {
        printf("stream_verify: rejected after %llu reads: %s (%s): %s\n", reads, mbr_status_name(status),
               mbr_class_name(mbr_status_class(status)), err.message);
        return 2;
    }
    printf("stream_verify: ok at level %u after %llu reads of <= %zu bytes: frame %llu bytes, payload %llu bytes\n",
           (unsigned)verdict.level, reads, chunk_size, (unsigned long long)verdict.frame_len,
           (unsigned long long)verdict.payload_len);
    if (verdict.has_identity) {
        mbr_digest fingerprint;
        if (mbr_identity_fingerprint(&verdict.identity, &fingerprint) == MBR_OK)
            printf("stream_verify: fingerprint %s\n", fingerprint.hex);
    }
    return 0;
}
