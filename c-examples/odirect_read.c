/*
 * odirect_read: verify a frame whose payload is read with O_DIRECT, straight from the
 * device into an aligned buffer, bypassing the page cache (Linux).
 *
 * O_DIRECT needs the file offset, the buffer address and the length to be multiples
 * of the device's logical block size (512 B to 4 KiB). A frame written with its
 * payload aligned to 4096 (SPEC 1.5: `membrane-frame pack --align 4096`,
 * mbr_write_options.align = 4096) starts its payload on such a boundary, so the
 * payload and trailer are read in whole blocks from there. The head is read first
 * through the page cache: the streaming verifier says how long it is, so this program
 * knows nothing of the format. Every byte goes through the verifier (full level).
 *
 * Where O_DIRECT cannot be used the payload is read through the page cache instead,
 * and the program says why: the filesystem refuses O_DIRECT (tmpfs does: EINVAL), or
 * the payload does not start on a 4096-byte boundary (the frame was not written
 * aligned).
 *
 *   usage: odirect_read FRAME [CHUNK_KIB]     (default chunk 1024 KiB)
 *   prints: the verdict, the payload offset, and "O_DIRECT" or "buffered (why)"
 *   exit status: 0 valid, 1 invalid, 2 usage or I/O error
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "membrane_frame.h"

#define BLOCK 4096

static uint8_t identity_buf[MBR_DEFAULT_IDENTITY_LIMIT];

/* Read exactly `len` bytes at `offset` (or up to end of file: *got says how many). */
static int pread_all(int fd, uint8_t *buf, size_t len, off_t offset, size_t *got) {
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(fd, buf + done, len - done, offset + (off_t)done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        if (n == 0) break;
        done += (size_t)n;
    }
    *got = done;
    return 0;
}

/* Feed `len` bytes to the verifier; 0, or the status of a failure (printed). */
static uint32_t feed(mbr_stream_verifier *v, const uint8_t *bytes, size_t len, mbr_stream_progress *progress) {
    mbr_error err;
    uint32_t st = mbr_stream_verifier_feed(v, bytes, len, progress, &err);
    if (st != MBR_OK) printf("invalid: %s\n", err.message);
    return st;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s FRAME [CHUNK_KIB]\n", argv[0]);
        return 2;
    }
    size_t chunk = (argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 1024) * 1024;
    if (chunk == 0 || chunk % BLOCK != 0) {
        fprintf(stderr, "CHUNK_KIB must be a positive multiple of 4\n");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    mbr_read_options options = mbr_read_options_default();
    options.level = MBR_LEVEL_FULL;
    mbr_stream_verifier v;
    mbr_stream_progress progress;
    if (mbr_stream_verifier_init(&v, options, identity_buf, sizeof identity_buf) != MBR_OK) return 2;

    /* The head, through the page cache: the header first, then as much more as the
     * verifier asks for to complete the head. */
    uint8_t head[MBR_HEADER_LEN + sizeof identity_buf + 8];
    size_t got = 0;
    uint64_t offset = 0;
    size_t want = MBR_HEADER_LEN;
    for (int part = 0; part < 2; part++) {
        if (pread_all(fd, head, want, (off_t)offset, &got) != 0) {
            fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
            return 2;
        }
        if (feed(&v, head, got, &progress) != MBR_OK) return 1;
        offset += got;
        if (got < want || progress.complete) break;
        /* After the header, need_more is the rest of the head (identity, payload_len). */
        if (progress.need_more > sizeof head) break;
        want = (size_t)progress.need_more;
    }
    uint64_t payload_offset = offset;

    /* The payload and trailer: with O_DIRECT where the offset allows and the
     * filesystem accepts it, else through the page cache. */
    const char *why = NULL;
    int direct = -1;
    if (payload_offset % BLOCK != 0) {
        why = "the payload does not start on a 4096-byte boundary (write the frame with align 4096)";
    } else if ((direct = open(argv[1], O_RDONLY | O_DIRECT)) < 0) {
        why = errno == EINVAL ? "the filesystem refuses O_DIRECT" : strerror(errno);
    }
    void *memory = NULL;
    if (posix_memalign(&memory, BLOCK, chunk) != 0) {
        fprintf(stderr, "out of memory\n");
        return 2;
    }
    uint8_t *buf = memory;
    uint64_t direct_bytes = 0;
    while (!progress.complete) {
        ssize_t n;
        /* O_DIRECT reads whole blocks at block offsets: one pread a chunk, the last one
         * short at the end of the file (which need not end on a block). */
        if (direct >= 0 && offset % BLOCK == 0) {
            do n = pread(direct, buf, chunk, (off_t)offset);
            while (n < 0 && errno == EINTR);
            if (n < 0 && errno == EINVAL && direct_bytes == 0) {
                why = "the filesystem refuses O_DIRECT reads"; /* opened, but the read is refused */
                close(direct);
                direct = -1;
                continue;
            }
            if (n > 0) direct_bytes += (uint64_t)n;
        } else {
            do n = pread(fd, buf, chunk, (off_t)offset);
            while (n < 0 && errno == EINTR);
        }
        if (n < 0) {
            fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
            return 2;
        }
        if (n == 0) break; /* end of file: finish says what is missing */
        if (feed(&v, buf, (size_t)n, &progress) != MBR_OK) return 1;
        offset += (uint64_t)n;
    }
    free(buf);
    if (direct >= 0) close(direct);
    close(fd);

    mbr_streamed_frame frame;
    mbr_error err;
    uint32_t st = mbr_stream_verifier_finish(&v, &frame, &err);
    if (st != MBR_OK) {
        printf("invalid: %s\n", err.message);
        return 1;
    }
    printf("ok: payload %llu bytes at offset %llu (padding %zu), ", (unsigned long long)frame.payload_len,
           (unsigned long long)frame.payload_offset, frame.padding);
    if (why == NULL)
        printf("read with O_DIRECT (%llu bytes)\n", (unsigned long long)direct_bytes);
    else
        printf("read through the page cache: %s\n", why);
    return 0;
}
