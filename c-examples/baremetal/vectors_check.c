/*
 * The C library on bare metal (thumbv7em-none-eabihf, no_std, no allocation), run
 * under QEMU (mps2-an386, Cortex-M4F) with semihosting, which gives it the host's
 * files and console: every case of frames.jsonl and aligned.jsonl gives its expected
 * code at the trailer and the full level, from the one-shot reader and from the
 * streaming verifier fed in 7-byte chunks; the aligned frames report their padding and
 * payload offset, and are written again byte for byte from their identity and payload
 * with their alignment (SPEC 1.5); then a frame is written with the chunked writer and
 * read back. Then crafted frames whose identities take the reader's deepest paths.
 *
 * Built with -DVERIFY_ONLY (verify_check.elf) it is the smallest useful firmware: only
 * mbr_frame_check over the same frames, so the image holds the library's verify path
 * alone. Either way the program names the status codes itself.
 *
 * Every call into the library runs under the painted-stack probe (stack_probe.h), and
 * the program ends with each entry point's worst case over all of them:
 * "stack <function> <bytes>" lines (make baremetal-check compares them with
 * budgets.txt).
 *
 * VECTORS_DIR is compiled in (the Makefile passes $MEMBRANE_VECTORS).
 * Last line: "baremetal: N passed, M failed".
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "membrane_frame.h"
#include "stack_probe.h"

#ifndef VECTORS_DIR
#error "define VECTORS_DIR"
#endif

static int passes, failures;

/* The worst stack seen per entry point, in bytes. */
enum entry {
    FRAME_CHECK,
    FRAME_PARSE,
    STREAM_INIT,
    STREAM_FEED,
    STREAM_FINISH,
    FRAME_ENCODE_WITH,
    IDENTITY_BUILD,
    CHUNKED_BEGIN,
    CHUNKED_WRITE,
    CHUNKED_FINISH,
    SHA256,
    ENTRIES
};
static const char *const entry_names[ENTRIES] = {
    "mbr_frame_check",         "mbr_frame_parse",       "mbr_stream_verifier_init", "mbr_stream_verifier_feed",
    "mbr_stream_verifier_finish", "mbr_frame_encode_with", "mbr_identity_build",     "mbr_chunked_writer_begin",
    "mbr_chunked_writer_write", "mbr_chunked_writer_finish", "mbr_sha256",
};
static size_t worst_stack[ENTRIES];

/* The frame codes by name, as a firmware that logs them would keep them (the library's
 * own table, mbr_status_name, names every code; test_null_args.c links it). */
static const char *status_name(uint32_t status) {
    static const char *const names[] = {
        "ok",           "too_short",          "bad_magic",       "legacy_frame",    "schema_mismatch",
        "reserved_nonzero", "identity_overrun", "identity_too_large", "identity_json", "identity_field",
        "payload_overrun", "trailing_bytes",   "trailer_mismatch", "payload_hash_mismatch",
    };
    return status < sizeof names / sizeof names[0] ? names[status] : "another status";
}
#define PROBED(entry, call) STACK_PROBE(worst_stack[entry], call)
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

static long read_file(const char *path, uint8_t *buf, size_t cap) {
    FILE *file = fopen(path, "rb");
    if (file == NULL) return -1;
    size_t len = fread(buf, 1, cap, file);
    int more = fgetc(file) != EOF;
    fclose(file);
    return more ? -1 : (long)len;
}

#ifndef VERIFY_ONLY
/* The streaming verifier's verdict on buf, fed in 7-byte chunks. */
static uint32_t streamed(const uint8_t *buf, size_t len, uint32_t level) {
    static uint8_t identity[65536];
    mbr_stream_verifier verifier;
    mbr_read_options options = mbr_read_options_default();
    options.level = level;
    uint32_t status;
    PROBED(STREAM_INIT, status = mbr_stream_verifier_init(&verifier, options, identity, sizeof identity));
    for (size_t at = 0; status == MBR_OK && at < len; at += 7) {
        mbr_stream_progress progress;
        size_t chunk = len - at < 7 ? len - at : 7;
        PROBED(STREAM_FEED, status = mbr_stream_verifier_feed(&verifier, buf + at, chunk, &progress, NULL));
    }
    if (status != MBR_OK) return status;
    mbr_streamed_frame verdict;
    PROBED(STREAM_FINISH, status = mbr_stream_verifier_finish(&verifier, &verdict, NULL));
    return status;
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

static uint8_t rewritten[sizeof frame];

/* An aligned vector: padding and payload offset as recorded, and the writer asked for
 * its alignment and base writes its bytes. */
static void aligned(const char *name, const char *json, size_t len) {
    mbr_read_options options = mbr_read_options_default();
    mbr_frame view;
    uint32_t parsed;
    PROBED(FRAME_PARSE, parsed = mbr_frame_parse(frame, len, options, &view, NULL));
    if (parsed != MBR_OK) return; /* judged above */
    check((long)view.padding == number(json, "padding"), name, "padding", "another count", "the vector's");
    check((long)view.payload_offset == number(json, "payload_offset"), name, "payload_offset", "another offset",
          "the vector's");
    long align = number(json, "align");
    if (align < 0) return;
    mbr_write_options write = mbr_write_options_default();
    write.align = (uint32_t)align;
    write.base = (uint64_t)number(json, "base");
    size_t n = 0;
    uint32_t status;
    PROBED(FRAME_ENCODE_WITH, status = mbr_frame_encode_with(&view.identity, view.payload, view.payload_len, write,
                                                             rewritten, sizeof rewritten, &n, NULL));
    check(status == MBR_OK && n == len && memcmp(rewritten, frame, len) == 0, name, "mbr_frame_encode_with",
          status_name(status), "the vector's bytes");
}

#endif

static void vectors(const char *list_name) {
    char list_path[256];
    snprintf(list_path, sizeof list_path, "%s/%s", VECTORS_DIR, list_name);
#ifndef VERIFY_ONLY
    int is_aligned = strcmp(list_name, "aligned.jsonl") == 0;
#endif
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
        uint32_t trailer_status, full_status;
        PROBED(FRAME_CHECK, trailer_status = mbr_frame_check(frame, (size_t)len, MBR_LEVEL_TRAILER));
        PROBED(FRAME_CHECK, full_status = mbr_frame_check(frame, (size_t)len, MBR_LEVEL_FULL));
        const char *trailer = status_name(trailer_status);
        const char *full = status_name(full_status);
        check(strcmp(trailer, expect) == 0, name, "trailer level", trailer, expect);
        check(strcmp(full, expect_full) == 0, name, "full level", full, expect_full);
#ifndef VERIFY_ONLY
        const char *stream = status_name(streamed(frame, (size_t)len, MBR_LEVEL_FULL));
        check(strcmp(stream, expect_full) == 0, name, "streamed, full level", stream, expect_full);
        if (is_aligned) aligned(name, line, (size_t)len);
#endif
        count++;
    }
    fclose(list);
    check(count > 0, list_name, "cases", "none", "at least one");
}

#ifndef VERIFY_ONLY
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
    uint32_t hashed;
    PROBED(SHA256, hashed = mbr_sha256(payload, sizeof payload, &digest));
    check(hashed == MBR_OK, "write", "payload digest", status_name(hashed), "ok");
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
    uint32_t status;
    PROBED(IDENTITY_BUILD, status = mbr_identity_build(&values, &identity, NULL));
    if (status == MBR_OK)
        PROBED(CHUNKED_BEGIN,
               status = mbr_chunked_writer_begin(&writer, &identity, sizeof payload, collect, NULL, NULL));
    if (status == MBR_OK) PROBED(CHUNKED_WRITE, status = mbr_chunked_writer_write(&writer, payload, 40, NULL));
    if (status == MBR_OK)
        PROBED(CHUNKED_WRITE, status = mbr_chunked_writer_write(&writer, payload + 40, sizeof payload - 40, NULL));
    if (status == MBR_OK) PROBED(CHUNKED_FINISH, status = mbr_chunked_writer_finish(&writer, &outcome, NULL));
    check(status == MBR_OK, "write", "chunked writer", status_name(status), "ok");
    mbr_read_options options = mbr_read_options_default();
    options.level = MBR_LEVEL_FULL;
    mbr_frame view;
    PROBED(FRAME_PARSE, status = mbr_frame_parse(written, written_len, options, &view, NULL));
    check(status == MBR_OK, "read back", "full level", status_name(status), "ok");
    check(status == MBR_OK && view.payload_len == sizeof payload && memcmp(view.payload, payload, sizeof payload) == 0,
          "read back", "payload", "different bytes", "the payload written");
}

#endif

/* Crafted identities for the reader's deepest paths, each framed around an empty payload
 * (whose digest the base identity carries, so the valid ones pass the full level). */
#define BASE_HEAD "{\"dtype\":\"float16\",\"head_range\":[-1,-1],\"layer_range\":"
#define BASE_TAIL                                                                                             \
    ",\"model_id\":\"m\",\"model_revision\":\"\",\"payload_hash\":"                                            \
    "\"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\",\"shape\":[1],\"token_span\":[0,0]," \
    "\"tokenizer_name\":\"t\",\"tokenizer_revision\":\"\"}"

static char crafted_text[16384];
static size_t crafted_len;

static void put(const char *text) {
    size_t len = strlen(text);
    if (crafted_len + len < sizeof crafted_text) {
        memcpy(crafted_text + crafted_len, text, len);
        crafted_len += len;
    }
}

static void put_repeated(const char *text, int times) {
    for (int i = 0; i < times; i++) put(text);
}

/* The frame around crafted_text, in `frame`; its length. */
static size_t frame_crafted(void) {
    static const uint8_t head[10] = {0xC0, 0xDE, 0x01, 0x05, 5, 0, 0, 0, 0, 0};
    mbr_digest empty;
    uint32_t hashed = mbr_sha256(NULL, 0, &empty);
    check(hashed == MBR_OK, "crafted", "empty digest", status_name(hashed), "ok");
    size_t at = 0;
    memcpy(frame, head, sizeof head);
    at += sizeof head;
    for (int i = 0; i < 4; i++) frame[at++] = (uint8_t)(crafted_len >> (8 * i));
    memcpy(frame + at, crafted_text, crafted_len);
    at += crafted_len;
    memset(frame + at, 0, 8); /* payload_len 0 */
    at += 8;
    memcpy(frame + at, empty.trailer, 8);
    return at + 8;
}

/* One crafted identity through every reader, with the error detail asked for. */
static void crafted(const char *name, const char *want) {
    size_t len = frame_crafted();
    uint32_t checked;
    PROBED(FRAME_CHECK, checked = mbr_frame_check(frame, len, MBR_LEVEL_FULL));
    check(strcmp(status_name(checked), want) == 0, name, "mbr_frame_check", status_name(checked), want);
#ifndef VERIFY_ONLY
    mbr_error error;
    mbr_frame view;
    mbr_read_options options = mbr_read_options_default();
    options.level = MBR_LEVEL_FULL;
    uint32_t parsed;
    PROBED(FRAME_PARSE, parsed = mbr_frame_parse(frame, len, options, &view, &error));
    const char *stream = status_name(streamed(frame, len, MBR_LEVEL_FULL));
    check(strcmp(status_name(parsed), want) == 0, name, "mbr_frame_parse", parsed == MBR_OK ? "ok" : error.message,
          want);
    check(strcmp(stream, want) == 0, name, "streamed", stream, want);
#endif
    crafted_len = 0;
}

static void crafted_frames(void) {
    put(BASE_HEAD "[0,31]" BASE_TAIL);
    crafted("crafted: canonical", "ok");
    /* Another spelling: the reader's any-order path. */
    put("{ \"shape\" : [ 1 ] , \"token_span\" : [ 0 , 0 ] , \"dtype\" : \"float16\" , ");
    put("\"head_range\" : [ -1 , -1 ] , \"layer_range\" : [ 0 , 31 ] , \"model_id\" : ");
    put("\"\\ud83d\\ude00\\u00e9\\n\\\"\\\\\\/\" , \"model_revision\" : \"\" , \"payload_hash\" : ");
    put("\"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\" , ");
    put("\"tokenizer_name\" : \"t\" , \"tokenizer_revision\" : \"\" }");
    crafted("crafted: pretty, escapes", "ok");
    /* Integers in a range: beyond i64 (a field problem), beyond the f64 range (a JSON one). */
    put(BASE_HEAD "[1");
    put_repeated("0", 307);
    put(",31]" BASE_TAIL);
    crafted("crafted: 308-digit range start", "identity_field");
    put(BASE_HEAD "[1");
    put_repeated("0", 767);
    put(",31]" BASE_TAIL);
    crafted("crafted: 768-digit range start", "identity_json");
    /* A 768-digit fraction with an exponent. */
    put(BASE_HEAD "[0.");
    put_repeated("1", 766);
    put("e-400,31]" BASE_TAIL);
    crafted("crafted: 768-digit fraction", "identity_field");
    /* Nesting at the default limit (32) under an unknown key, then one deeper. */
    put("{\"x\":");
    put_repeated("[", 31);
    put_repeated("]", 31);
    put(",");
    put(BASE_HEAD + 1);
    put("[0,31]" BASE_TAIL);
    crafted("crafted: depth 32 under an unknown key", "identity_field");
    put("{\"x\":");
    put_repeated("[{\"k\":", 16);
    put("1");
    put_repeated("}]", 16);
    put(",");
    put(BASE_HEAD + 1);
    put("[0,31]" BASE_TAIL);
    crafted("crafted: depth 33", "identity_json");
    /* More keys open at once than the reader's table holds. */
    put("{\"x\":{");
    for (int i = 0; i < 80; i++) {
        char key[24];
        snprintf(key, sizeof key, "%s\"k%d\":%d", i ? "," : "", i, i);
        put(key);
    }
    put("},");
    put(BASE_HEAD + 1);
    put("[0,31]" BASE_TAIL);
    crafted("crafted: 80 keys in a nested object", "identity_json");
    /* A duplicate key. */
    put(BASE_HEAD "[0,31],\"layer_range\":[0,31]" BASE_TAIL);
    crafted("crafted: duplicate key", "identity_json");
}

int main(void) {
    printf("baremetal: %s (C ABI %u) on a Cortex-M4F, vectors from %s\n", mbr_version(),
           (unsigned)mbr_abi_version(), VECTORS_DIR);
    vectors("frames.jsonl");
    vectors("aligned.jsonl");
#ifndef VERIFY_ONLY
    write_and_read_back();
#endif
    crafted_frames();
    for (int i = 0; i < ENTRIES; i++)
        if (worst_stack[i] > 0) printf("stack %s %u\n", entry_names[i], (unsigned)worst_stack[i]);
    printf("baremetal: %d passed, %d failed\n", passes, failures);
    return failures == 0 ? 0 : 1;
}
