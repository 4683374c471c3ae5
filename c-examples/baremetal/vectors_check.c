/*
 * The C library on bare metal (thumbv7em-none-eabihf, no_std, no allocation), run
 * under QEMU (mps2-an386, Cortex-M4F) with semihosting, which gives it the host's
 * files and console: every case of frames.jsonl and aligned.jsonl gives its expected
 * code at the trailer and the full level, from the one-shot reader and from the
 * streaming verifier fed in 7-byte chunks; the aligned frames report their padding and
 * payload offset, and are written again byte for byte from their identity and payload
 * with their alignment (SPEC 1.5); then a frame is written with the chunked writer and
 * read back.
 *
 * VECTORS_DIR is compiled in (the Makefile passes $MEMBRANE_VECTORS).
 * Last line: "baremetal: N passed, M failed".
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "membrane_frame.h"

#ifndef VECTORS_DIR
#error "define VECTORS_DIR"
#endif

static int passes, failures;
static uint8_t frame[256 * 1024];
static char line[8192];

static void check(int ok, const char *name, const char *what, const char *got, const char *want) {
    if (ok) {
        passes++;
    } else {
        failures++;
        printf("FAIL %s: %s: got %s, want %s\n", name, what, got, want);
    }
}

/* The string value of "key" in a flat JSON line (these fields have no escapes). */
static int field(const char *json, const char *key, char *out, size_t cap) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\": \"", key);
    const char *start = strstr(json, pattern);
    if (start == NULL) return -1;
    start += strlen(pattern);
    const char *end = strchr(start, '"');
    if (end == NULL || (size_t)(end - start) >= cap) return -1;
    memcpy(out, start, (size_t)(end - start));
    out[end - start] = '\0';
    return 0;
}

/* The non-negative integer value of "key" in a flat JSON line; -1 when absent. */
static long number(const char *json, const char *key) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\": ", key);
    const char *start = strstr(json, pattern);
    if (start == NULL) return -1;
    long value = 0;
    for (start += strlen(pattern); *start >= '0' && *start <= '9'; start++) value = value * 10 + (*start - '0');
    return value;
}

static long read_file(const char *path, uint8_t *buf, size_t cap) {
    FILE *file = fopen(path, "rb");
    if (file == NULL) return -1;
    size_t len = fread(buf, 1, cap, file);
    int more = fgetc(file) != EOF;
    fclose(file);
    return more ? -1 : (long)len;
}

/* The streaming verifier's verdict on buf, fed in 7-byte chunks. */
static uint32_t streamed(const uint8_t *buf, size_t len, uint32_t level) {
    static uint8_t identity[65536];
    mbr_stream_verifier verifier;
    mbr_read_options options = mbr_read_options_default();
    options.level = level;
    uint32_t status = mbr_stream_verifier_init(&verifier, options, identity, sizeof identity);
    for (size_t at = 0; status == MBR_OK && at < len; at += 7) {
        mbr_stream_progress progress;
        status = mbr_stream_verifier_feed(&verifier, buf + at, len - at < 7 ? len - at : 7, &progress, NULL);
    }
    if (status != MBR_OK) return status;
    mbr_streamed_frame verdict;
    return mbr_stream_verifier_finish(&verifier, &verdict, NULL);
}

static uint8_t rewritten[sizeof frame];

/* An aligned vector: padding and payload offset as recorded, and the writer asked for
 * its alignment and base writes its bytes. */
static void aligned(const char *name, const char *json, size_t len) {
    mbr_read_options options = mbr_read_options_default();
    mbr_frame view;
    if (mbr_frame_parse(frame, len, options, &view, NULL) != MBR_OK) return; /* judged above */
    check((long)view.padding == number(json, "padding"), name, "padding", "another count", "the vector's");
    check((long)view.payload_offset == number(json, "payload_offset"), name, "payload_offset", "another offset",
          "the vector's");
    long align = number(json, "align");
    if (align < 0) return;
    mbr_write_options write = mbr_write_options_default();
    write.align = (uint32_t)align;
    write.base = (uint64_t)number(json, "base");
    size_t n = 0;
    uint32_t status = mbr_frame_encode_with(&view.identity, view.payload, view.payload_len, write, rewritten,
                                            sizeof rewritten, &n, NULL);
    check(status == MBR_OK && n == len && memcmp(rewritten, frame, len) == 0, name, "mbr_frame_encode_with",
          mbr_status_name(status), "the vector's bytes");
}

static void vectors(const char *list_name) {
    char list_path[256];
    snprintf(list_path, sizeof list_path, "%s/%s", VECTORS_DIR, list_name);
    int is_aligned = strcmp(list_name, "aligned.jsonl") == 0;
    int count = 0;
    FILE *list = fopen(list_path, "r");
    if (list == NULL) {
        check(0, list_name, "open", "nothing", list_path);
        return;
    }
    while (fgets(line, sizeof line, list) != NULL) {
        char name[128], file[256], expect[64], expect_full[64], path[512];
        if (field(line, "name", name, sizeof name) || field(line, "file", file, sizeof file) ||
            field(line, "expect", expect, sizeof expect) || field(line, "expect_full", expect_full, sizeof expect_full)) {
            check(0, list_name, "a line", line, "name, file, expect, expect_full");
            continue;
        }
        snprintf(path, sizeof path, "%s/%s", VECTORS_DIR, file);
        long len = read_file(path, frame, sizeof frame);
        if (len < 0) {
            check(0, name, "read", path, "a readable file that fits");
            continue;
        }
        const char *trailer = mbr_status_name(mbr_frame_check(frame, (size_t)len, MBR_LEVEL_TRAILER));
        const char *full = mbr_status_name(mbr_frame_check(frame, (size_t)len, MBR_LEVEL_FULL));
        check(strcmp(trailer, expect) == 0, name, "trailer level", trailer, expect);
        check(strcmp(full, expect_full) == 0, name, "full level", full, expect_full);
        const char *stream = mbr_status_name(streamed(frame, (size_t)len, MBR_LEVEL_FULL));
        check(strcmp(stream, expect_full) == 0, name, "streamed, full level", stream, expect_full);
        if (is_aligned) aligned(name, line, (size_t)len);
        count++;
    }
    fclose(list);
    check(count > 0, list_name, "cases", "none", "at least one");
}

static uint8_t written[4096];
static size_t written_len;

static int collect(void *userdata, const uint8_t *buf, size_t len) {
    (void)userdata;
    if (written_len + len > sizeof written) return 1;
    memcpy(written + written_len, buf, len);
    written_len += len;
    return 0;
}

static void write_and_read_back(void) {
    static const uint8_t payload[64] = {1, 2, 3, 4, 5, 6, 7, 8};
    mbr_digest digest;
    uint32_t hashed = mbr_sha256(payload, sizeof payload, &digest);
    check(hashed == MBR_OK, "write", "payload digest", mbr_status_name(hashed), "ok");
    if (hashed != MBR_OK) return;
    const int64_t shape[] = {1, 1, 4, 8};
    mbr_identity_values values = {
        {digest.hex, 64},      {"tiny-model", 10}, {"", 0},   {"tiny-tok", 8},   {"", 0},
        {0, 0},                {-1, -1},           {0, 3},    MBR_DTYPE_INT16, shape,
        sizeof shape / sizeof shape[0],
    };
    mbr_identity identity;
    mbr_chunked_writer writer;
    mbr_chunked_outcome outcome;
    uint32_t status = mbr_identity_build(&values, &identity, NULL);
    if (status == MBR_OK) status = mbr_chunked_writer_begin(&writer, &identity, sizeof payload, collect, NULL, NULL);
    if (status == MBR_OK) status = mbr_chunked_writer_write(&writer, payload, 40, NULL);
    if (status == MBR_OK) status = mbr_chunked_writer_write(&writer, payload + 40, sizeof payload - 40, NULL);
    if (status == MBR_OK) status = mbr_chunked_writer_finish(&writer, &outcome, NULL);
    check(status == MBR_OK, "write", "chunked writer", mbr_status_name(status), "ok");
    mbr_read_options options = mbr_read_options_default();
    options.level = MBR_LEVEL_FULL;
    mbr_frame view;
    status = mbr_frame_parse(written, written_len, options, &view, NULL);
    check(status == MBR_OK, "read back", "full level", mbr_status_name(status), "ok");
    check(status == MBR_OK && view.payload_len == sizeof payload && memcmp(view.payload, payload, sizeof payload) == 0,
          "read back", "payload", "different bytes", "the payload written");
}

int main(void) {
    printf("baremetal: %s (C ABI %u) on a Cortex-M4F, vectors from %s\n", mbr_version(),
           (unsigned)mbr_abi_version(), VECTORS_DIR);
    vectors("frames.jsonl");
    vectors("aligned.jsonl");
    write_and_read_back();
    printf("baremetal: %d passed, %d failed\n", passes, failures);
    return failures == 0 ? 0 : 1;
}
