/*
 * validate_mmap: map a frame file, verify it at the full level (SPEC §1.2) in place,
 * print its identity and fingerprint. Nothing is copied: the view points into the map.
 *
 *   usage: validate_mmap FILE [LEVEL]      (LEVEL 0..3, default 3 = full)
 *   exit:  0 accepted, 2 rejected (the SPEC §8 code is printed), other: usage or I/O
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "membrane_frame.h"

static void print_string(const mbr_identity *id, uint32_t field, const char *label) {
    size_t len = 0;
    if (mbr_identity_string_len(id, field, &len) != MBR_OK) return;
    char *text = malloc(len + 1);
    if (text != NULL && mbr_identity_string(id, field, text, len + 1, &len) == MBR_OK)
        printf("  %-19s \"%.*s\"\n", label, (int)len, text);
    free(text);
}

static void print_range(const mbr_identity *id, uint32_t field, const char *label) {
    mbr_range r;
    if (mbr_identity_range(id, field, &r) == MBR_OK)
        printf("  %-19s [%lld, %lld]\n", label, (long long)r.start, (long long)r.end);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE [LEVEL]\n", argv[0]);
        return 64;
    }
    mbr_read_options options = mbr_read_options_default();
    options.level = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : MBR_LEVEL_FULL;

    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) {
        perror(argv[1]);
        return 66;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        perror("fstat");
        close(fd);
        return 74;
    }
    size_t size = (size_t)st.st_size;
    /* mmap of an empty file fails; an empty buffer is (NULL, 0). */
    const uint8_t *map = NULL;
    if (size > 0) {
        void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            perror("mmap");
            close(fd);
            return 74;
        }
        map = m;
    }
    close(fd);

    mbr_frame frame;
    mbr_error err;
    uint32_t status = mbr_frame_parse(map, size, options, &frame, &err);
    int rc = 0;
    if (status != MBR_OK) {
        printf("%s: rejected: %s (%s): %s\n", argv[1], mbr_status_name(status),
               mbr_class_name(mbr_status_class(status)), err.message);
        rc = 2;
    } else {
        printf("%s: ok at level %u: %zu bytes, payload %zu bytes at offset %zu\n", argv[1],
               (unsigned)frame.level, frame.len, frame.payload_len, (size_t)(frame.payload - frame.bytes));
        if (frame.has_identity) {
            const mbr_identity *id = &frame.identity;
            print_string(id, MBR_FIELD_PAYLOAD_HASH, "payload_hash");
            print_string(id, MBR_FIELD_MODEL_ID, "model_id");
            print_string(id, MBR_FIELD_MODEL_REVISION, "model_revision");
            print_string(id, MBR_FIELD_TOKENIZER_NAME, "tokenizer_name");
            print_string(id, MBR_FIELD_TOKENIZER_REVISION, "tokenizer_revision");
            print_range(id, MBR_FIELD_LAYER_RANGE, "layer_range");
            print_range(id, MBR_FIELD_HEAD_RANGE, "head_range");
            print_range(id, MBR_FIELD_TOKEN_SPAN, "token_span");
            uint32_t dtype = 0;
            if (mbr_identity_dtype(id, &dtype) == MBR_OK) printf("  %-19s %s\n", "dtype", mbr_dtype_name(dtype));
            int64_t dims[MBR_MAX_SHAPE_DIMS];
            size_t ndims = 0;
            if (mbr_identity_shape(id, dims, MBR_MAX_SHAPE_DIMS, &ndims) == MBR_OK) {
                printf("  %-19s [", "shape");
                for (size_t i = 0; i < ndims; i++) printf("%s%lld", i ? ", " : "", (long long)dims[i]);
                printf("]\n");
            }
            uint64_t tensor = 0;
            if (mbr_identity_tensor_bytes(id, &tensor) == MBR_OK)
                printf("  %-19s %llu%s\n", "tensor bytes", (unsigned long long)tensor,
                       tensor == frame.payload_len ? " (= payload)" : " (differs from payload)");
            bool canonical = false;
            if (mbr_identity_is_canonical(id, &canonical) == MBR_OK)
                printf("  %-19s %s\n", "canonical identity", canonical ? "yes" : "no");
            mbr_digest fingerprint;
            if (mbr_identity_fingerprint(id, &fingerprint) == MBR_OK)
                printf("  %-19s %s\n", "fingerprint", fingerprint.hex);
        }
    }
    if (map != NULL) munmap((void *)map, size);
    return rc;
}
