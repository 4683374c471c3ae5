/*
 * emit_frame: write a tensor buffer (a float16 KV block) to a file as one Membrane v5
 * frame with a single writev(2): the head the library builds, the tensor bytes in
 * place, the 8-byte trailer. The payload is never copied. With ALIGN (a power of two
 * up to 4096), the payload starts at a multiple of ALIGN bytes in the file (SPEC 1.5:
 * the head ends with the padding that puts it there): 4096 lets O_DIRECT and
 * GPUDirect Storage read it in place (odirect_read.c).
 *
 *   usage: emit_frame OUT.bin [TOKENS [ALIGN]]
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "membrane_frame.h"

#define LIT(s) { (s), sizeof(s) - 1 }

enum { KV = 2, LAYERS = 4, HEADS = 8, HEAD_DIM = 64 };

/* writev until every byte is out (a short write moves the iovecs along). */
static int writev_all(int fd, struct iovec *iov, int count) {
    while (count > 0) {
        ssize_t n = writev(fd, iov, count);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        while (count > 0 && (size_t)n >= iov->iov_len) {
            n -= (ssize_t)iov->iov_len;
            iov++;
            count--;
        }
        if (count > 0) {
            iov->iov_base = (char *)iov->iov_base + n;
            iov->iov_len -= (size_t)n;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s OUT.bin [TOKENS [ALIGN]]\n", argv[0]);
        return 64;
    }
    long tokens = argc > 2 ? strtol(argv[2], NULL, 10) : 16;
    if (tokens < 1 || tokens > 4096) {
        fprintf(stderr, "emit_frame: TOKENS must be 1..4096\n");
        return 64;
    }

    /* The engine's tensor: K and V for 4 layers x 8 heads x TOKENS x 64, float16. */
    size_t elements = (size_t)KV * LAYERS * HEADS * (size_t)tokens * HEAD_DIM;
    size_t payload_len = elements * sizeof(uint16_t);
    uint16_t *tensor = malloc(payload_len);
    if (tensor == NULL) return 70;
    for (size_t i = 0; i < elements; i++) tensor[i] = (uint16_t)(0x3c00u ^ (i * 2654435761u >> 7));

    /* One SHA-256 pass: the payload_hash (hex) and the trailer. */
    mbr_digest digest;
    uint32_t st = mbr_sha256((const uint8_t *)tensor, payload_len, &digest);

    int64_t shape[5] = {KV, LAYERS, HEADS, tokens, HEAD_DIM};
    mbr_identity_values values = {
        .payload_hash = {digest.hex, 64},
        .model_id = LIT("llama-3-8b"),
        .model_revision = LIT("rev-2024-05"),
        .tokenizer_name = LIT("llama-3-8b"),
        .tokenizer_revision = LIT(""),
        .layer_range = {0, LAYERS - 1},
        .head_range = {-1, -1},
        .token_span = {0, tokens - 1},
        .dtype = MBR_DTYPE_FLOAT16,
        .shape = shape,
        .shape_len = 5,
    };
    mbr_identity identity;
    mbr_error err;
    mbr_write_options options = mbr_write_options_default();
    options.align = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 1;
    if (st == MBR_OK) st = mbr_identity_build(&values, &identity, &err);
    /* The lengths first (an align that is no power of two up to 4096 fails here). */
    mbr_frame_layout layout;
    if (st == MBR_OK) st = mbr_frame_plan(&identity, payload_len, options, &layout, &err);
    uint8_t *head = st == MBR_OK ? malloc(layout.head_len) : NULL;
    size_t written = 0;
    if (st == MBR_OK && head == NULL) st = MBR_BUFFER_TOO_SMALL;
    if (st == MBR_OK)
        st = mbr_frame_write_head_with(&identity, payload_len, options, head, layout.head_len, &written, &err);
    uint64_t frame_len = st == MBR_OK ? layout.frame_len : 0;
    if (st != MBR_OK) {
        fprintf(stderr, "emit_frame: %s: %s\n", mbr_status_name(st), err.message);
        free(head);
        free(tensor);
        return 1;
    }

    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(argv[1]);
        free(head);
        free(tensor);
        return 74;
    }
    struct iovec iov[3] = {
        {head, written},
        {tensor, payload_len},      /* the tensor itself: no copy */
        {digest.trailer, 8},
    };
    int failed = writev_all(fd, iov, 3) != 0;
    if (failed) perror("writev");
    if (close(fd) != 0 && !failed) {
        perror("close");
        failed = 1;
    }

    mbr_digest fingerprint;
    if (mbr_identity_fingerprint(&identity, &fingerprint) != MBR_OK) {
        fprintf(stderr, "emit_frame: the identity has no fingerprint\n");
        failed = 1;
    }
    if (!failed) {
        printf("emit_frame: wrote %llu bytes to %s (head %zu, %u of them padding, + payload %zu + trailer 8)\n",
               (unsigned long long)frame_len, argv[1], written, layout.padding, payload_len);
        printf("emit_frame: fingerprint %s\n", fingerprint.hex);
    }
    free(head);
    free(tensor);
    return failed ? 74 : 0;
}
