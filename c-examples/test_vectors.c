/*
 * test_vectors: every case of frames.jsonl (SPEC §11) through the C API.
 *
 * For each case: mbr_frame_check and mbr_frame_parse at the trailer and full levels
 * give the expected codes (`expect`, `expect_full`); the streaming verifier gives the
 * same in 1-, 7- and 4096-byte chunks; accepted frames have the expected fingerprint
 * (from the view and from the JSON text), payload length, payload SHA-256, canonical
 * flag and canonical length, and every string field reads back. All cases at once
 * through mbr_frame_verify_batch (the multi-buffer hasher) give each case the status and
 * offset mbr_frame_parse gives it. Then the checks run again from 4 threads at once on
 * separate objects.
 *
 *   usage: test_vectors [VECTORS_DIR]    (default: $MEMBRANE_VECTORS)
 *   last line: "test_vectors: N passed, M failed"
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "membrane_frame.h"

#define MAX_CASES 4096

typedef struct {
    char name[128], file[256], expect[64], expect_full[64], fingerprint[65], payload_sha256[65];
    long long payload_len, identity_json_len;
    long long padding, payload_offset, align, base; /* aligned.jsonl only; -1 absent */
    int canonical; /* -1 unknown */
    uint8_t *bytes;
    size_t len;
} vector_case;

static vector_case cases[MAX_CASES];
static size_t case_count;
static int failures, passes;

static void fail(const vector_case *c, const char *what, const char *got, const char *want) {
    printf("FAIL %s: %s: got %s, want %s\n", c->name, what, got, want);
    failures++;
}

/* ---- a minimal reader for one flat JSON object per line (string, number, bool, null
 * values; no nesting), enough for frames.jsonl ---- */

static const char *skip_ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    return p;
}

/* Read a JSON string at p (at the quote) into out (cap bytes, escapes other than
 * \" and \\ kept verbatim: the fields we use have none); returns the char after it. */
static const char *read_string(const char *p, char *out, size_t cap) {
    size_t n = 0;
    if (*p != '"') return NULL;
    for (p++; *p && *p != '"'; p++) {
        char ch = *p;
        if (ch == '\\' && (p[1] == '"' || p[1] == '\\')) ch = *++p;
        if (n + 1 < cap) out[n++] = ch;
    }
    if (cap) out[n] = '\0';
    return *p == '"' ? p + 1 : NULL;
}

/* Copy a NUL-terminated value that must fit. */
static int copy_text(char *dst, size_t cap, const char *src) {
    size_t n = strlen(src);
    if (n >= cap) return -1;
    memcpy(dst, src, n + 1);
    return 0;
}

static int parse_line(const char *line, vector_case *c) {
    memset(c, 0, sizeof *c);
    c->payload_len = c->identity_json_len = -1;
    c->padding = c->payload_offset = c->align = c->base = -1;
    c->canonical = -1;
    const char *p = skip_ws(line);
    if (*p++ != '{') return -1;
    for (;;) {
        char key[64], value[512];
        p = skip_ws(p);
        if (*p == '}') return 0;
        p = read_string(p, key, sizeof key);
        if (p == NULL) return -1;
        p = skip_ws(p);
        if (*p++ != ':') return -1;
        p = skip_ws(p);
        if (*p == '"') {
            p = read_string(p, value, sizeof value);
            if (p == NULL) return -1;
        } else {
            size_t n = 0;
            while (*p && *p != ',' && *p != '}' && n + 1 < sizeof value) value[n++] = *p++;
            while (n > 0 && (value[n - 1] == ' ' || value[n - 1] == '\t')) n--;
            value[n] = '\0';
        }
#define COPY(field) do { if (copy_text(c->field, sizeof c->field, value) != 0) return -1; } while (0)
        if (strcmp(key, "name") == 0) COPY(name);
        else if (strcmp(key, "file") == 0) COPY(file);
        else if (strcmp(key, "expect") == 0) COPY(expect);
        else if (strcmp(key, "expect_full") == 0) COPY(expect_full);
        else if (strcmp(key, "fingerprint") == 0) COPY(fingerprint);
        else if (strcmp(key, "payload_sha256") == 0) COPY(payload_sha256);
        else if (strcmp(key, "payload_len") == 0) c->payload_len = strtoll(value, NULL, 10);
        else if (strcmp(key, "identity_json_len") == 0) c->identity_json_len = strtoll(value, NULL, 10);
        else if (strcmp(key, "canonical") == 0) c->canonical = strcmp(value, "true") == 0;
        else if (strcmp(key, "padding") == 0) c->padding = strtoll(value, NULL, 10);
        else if (strcmp(key, "payload_offset") == 0) c->payload_offset = strtoll(value, NULL, 10);
        else if (strcmp(key, "align") == 0) c->align = strtoll(value, NULL, 10);
        else if (strcmp(key, "base") == 0) c->base = strtoll(value, NULL, 10);
#undef COPY
        p = skip_ws(p);
        if (*p == ',') p++;
        else if (*p != '}') return -1;
    }
}

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf != NULL && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *bigger = realloc(buf, cap * 2);
            if (bigger == NULL) free(buf);
            buf = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

static void hex(const uint8_t *bytes, size_t n, char *out) {
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * n] = '\0';
}

static uint8_t identity_buf[MBR_DEFAULT_IDENTITY_LIMIT];

static uint32_t stream_status(const vector_case *c, uint32_t level, size_t chunk) {
    mbr_read_options options = mbr_read_options_default();
    options.level = level;
    mbr_stream_verifier v;
    uint32_t st = mbr_stream_verifier_init(&v, options, identity_buf, sizeof identity_buf);
    for (size_t at = 0; st == MBR_OK && at < c->len; at += chunk) {
        size_t n = c->len - at < chunk ? c->len - at : chunk;
        mbr_stream_progress progress;
        st = mbr_stream_verifier_feed(&v, c->bytes + at, n, &progress, NULL);
    }
    mbr_streamed_frame verdict;
    if (st == MBR_OK) st = mbr_stream_verifier_finish(&v, &verdict, NULL);
    return st;
}

static void check_code(const vector_case *c, const char *what, uint32_t got, const char *want) {
    if (strcmp(mbr_status_name(got), want) != 0) fail(c, what, mbr_status_name(got), want);
}

static void check_accepted(const vector_case *c, const mbr_frame *f) {
    char got[65];
    mbr_digest fp;
    if (mbr_identity_fingerprint(&f->identity, &fp) != MBR_OK || strcmp(fp.hex, c->fingerprint) != 0)
        fail(c, "fingerprint", fp.hex, c->fingerprint);
    char from_json[65];
    if (mbr_identity_fingerprint_hex(f->identity_json, f->identity_json_len, from_json) != MBR_OK ||
        strcmp(from_json, c->fingerprint) != 0)
        fail(c, "mbr_identity_fingerprint_hex", from_json, c->fingerprint);
    if ((long long)f->payload_len != c->payload_len) fail(c, "payload_len", "other", "payload_len");
    hex(f->payload_sha256, 32, got);
    if (!f->has_payload_sha256 || strcmp(got, c->payload_sha256) != 0) fail(c, "payload_sha256", got, c->payload_sha256);
    bool canonical = false;
    if (mbr_identity_is_canonical(&f->identity, &canonical) != MBR_OK || (int)canonical != c->canonical)
        fail(c, "canonical", canonical ? "true" : "false", c->canonical ? "true" : "false");
    /* frames.jsonl gives the canonical length; aligned.jsonl the stored one, padding
     * and all (SPEC §11), and a canonical identity is that less its padding. */
    size_t canonical_len = 0;
    long long want_canonical_len = c->identity_json_len;
    if (c->padding >= 0) {
        if ((long long)f->identity_json_len != c->identity_json_len) fail(c, "identity_json_len", "other", "stored");
        want_canonical_len = c->canonical ? c->identity_json_len - c->padding : -1;
    }
    if (mbr_identity_canonical_len(&f->identity, &canonical_len) != MBR_OK ||
        (want_canonical_len >= 0 && (long long)canonical_len != want_canonical_len))
        fail(c, "canonical_len", "other", "identity_json_len");
    /* The canonical form re-parses to the same fingerprint. */
    uint8_t *canon = malloc(canonical_len ? canonical_len : 1);
    size_t written = 0;
    mbr_identity again;
    if (canon == NULL || mbr_identity_write_canonical(&f->identity, canon, canonical_len, &written, NULL) != MBR_OK ||
        written != canonical_len || mbr_identity_parse(canon, written, &again, NULL) != MBR_OK ||
        mbr_identity_fingerprint(&again, &fp) != MBR_OK || strcmp(fp.hex, c->fingerprint) != 0)
        fail(c, "canonical write and re-parse", "mismatch", "same fingerprint");
    free(canon);
    /* Every string field reads back at exactly its length, and the decoded view of the
     * identity's text (a room of its length) holds the same value. */
    char *room = malloc(f->identity_json_len + 1);
    mbr_identity_view view;
    memset(&view, 0, sizeof view);
    const bool have_view = room != NULL && mbr_identity_parse_view_decoded(f->identity_json, f->identity_json_len, room,
                                                                           f->identity_json_len, &view, NULL) == MBR_OK;
    if (!have_view) fail(c, "mbr_identity_parse_view_decoded", "error", "the view");
    const mbr_text views[] = {view.payload_hash, view.model_id, view.model_revision, view.tokenizer_name,
                              view.tokenizer_revision};
    for (uint32_t field = MBR_FIELD_PAYLOAD_HASH; field <= MBR_FIELD_TOKENIZER_REVISION; field++) {
        size_t len = 0, got_len = 0;
        char *text = NULL;
        if (mbr_identity_string_len(&f->identity, field, &len) != MBR_OK || (text = malloc(len + 1)) == NULL ||
            mbr_identity_string(&f->identity, field, text, len + 1, &got_len) != MBR_OK || got_len != len ||
            text[len] != '\0' ||
            (len > 0 && mbr_identity_string(&f->identity, field, text, len, &got_len) != MBR_BUFFER_TOO_SMALL))
            fail(c, "string field", "error", "its value");
        else if (have_view) {
            const mbr_text *decoded = &views[field - MBR_FIELD_PAYLOAD_HASH];
            if (decoded->has_escapes || decoded->len != len || (len > 0 && memcmp(decoded->ptr, text, len) != 0))
                fail(c, "decoded view", "another value", mbr_field_name(field));
        }
        free(text);
    }
    free(room);
}

/* ---- aligned.jsonl (SPEC §1.5): padding and payload offset as the readers report
 * them, and the writers asked for the vector's alignment write its exact bytes ---- */

static int append(void *userdata, const uint8_t *buf, size_t len) {
    mbr_bytes *out = userdata; /* ptr: the start of a large enough buffer */
    memcpy((uint8_t *)out->ptr + out->len, buf, len);
    out->len += len;
    return 0;
}

static void check_aligned(const vector_case *c, const mbr_frame *f) {
    if ((long long)f->padding != c->padding) fail(c, "mbr_frame.padding", "other", "padding");
    if ((long long)f->payload_offset != c->payload_offset || f->payload != f->bytes + f->payload_offset)
        fail(c, "mbr_frame.payload_offset", "other", "payload_offset");
    /* The address test agrees with the pointer arithmetic, for every alignment. */
    for (uint32_t align = 1; align <= MBR_MAX_PAYLOAD_ALIGN; align *= 2) {
        bool aligned = false;
        if (mbr_frame_payload_is_aligned(f, align, &aligned) != MBR_OK ||
            aligned != ((uintptr_t)f->payload % align == 0))
            fail(c, "mbr_frame_payload_is_aligned", aligned ? "true" : "false", "the address's alignment");
    }
    bool ignored;
    if (mbr_frame_payload_is_aligned(f, 3, &ignored) != MBR_INVALID_ARGUMENT ||
        mbr_frame_payload_is_aligned(f, 8192, &ignored) != MBR_INVALID_ARGUMENT ||
        mbr_frame_payload_is_aligned(NULL, 8, &ignored) != MBR_NULL_POINTER)
        fail(c, "mbr_frame_payload_is_aligned arguments", "accepted", "refused");
    /* The streaming verifier reports the same. */
    mbr_read_options options = mbr_read_options_default();
    options.level = MBR_LEVEL_FULL;
    mbr_stream_verifier v;
    mbr_stream_progress progress;
    mbr_streamed_frame streamed;
    if (mbr_stream_verifier_init(&v, options, identity_buf, sizeof identity_buf) != MBR_OK ||
        mbr_stream_verifier_feed(&v, c->bytes, c->len, &progress, NULL) != MBR_OK ||
        mbr_stream_verifier_finish(&v, &streamed, NULL) != MBR_OK || (long long)streamed.padding != c->padding ||
        (long long)streamed.payload_offset != c->payload_offset)
        fail(c, "mbr_streamed_frame padding and payload_offset", "other", "the vector's");
    if (c->align < 0) return;

    mbr_write_options write = mbr_write_options_default();
    write.align = (uint32_t)c->align;
    write.base = (uint64_t)c->base;
    mbr_frame_layout layout;
    if (mbr_frame_plan(&f->identity, f->payload_len, write, &layout, NULL) != MBR_OK ||
        (long long)layout.padding != c->padding || layout.frame_len != c->len ||
        (long long)layout.head_len != c->payload_offset)
        fail(c, "mbr_frame_plan", "other", "the vector's lengths");
    uint8_t *out = malloc(c->len);
    size_t len = 0;
    if (out == NULL || mbr_frame_encode_with(&f->identity, f->payload, f->payload_len, write, out, c->len, &len,
                                             NULL) != MBR_OK ||
        len != c->len || memcmp(out, c->bytes, len) != 0)
        fail(c, "mbr_frame_encode_with", "other bytes", "the vector's bytes");
    if (out != NULL && (mbr_frame_write_head_with(&f->identity, f->payload_len, write, out, c->len, &len, NULL) !=
                            MBR_OK ||
                        (long long)len != c->payload_offset || memcmp(out, c->bytes, len) != 0))
        fail(c, "mbr_frame_write_head_with", "other bytes", "the vector's head");
    mbr_chunked_writer writer;
    mbr_chunked_outcome outcome;
    mbr_bytes sink = {out, 0};
    if (out == NULL ||
        mbr_chunked_writer_begin_with(&writer, &f->identity, f->payload_len, write, append, &sink, NULL) != MBR_OK ||
        mbr_chunked_writer_write(&writer, f->payload, f->payload_len, NULL) != MBR_OK ||
        mbr_chunked_writer_finish(&writer, &outcome, NULL) != MBR_OK || sink.len != c->len ||
        memcmp(out, c->bytes, c->len) != 0)
        fail(c, "mbr_chunked_writer_begin_with", "other bytes", "the vector's bytes");
    write.align = 48;
    if (mbr_frame_plan(&f->identity, f->payload_len, write, &layout, NULL) != MBR_INVALID_ARGUMENT)
        fail(c, "mbr_frame_plan with align 48", "accepted", "MBR_INVALID_ARGUMENT");
    free(out);
}

static void run_case(const vector_case *c) {
    int before = failures;
    check_code(c, "mbr_frame_check trailer", mbr_frame_check(c->bytes, c->len, MBR_LEVEL_TRAILER), c->expect);
    check_code(c, "mbr_frame_check full", mbr_frame_check(c->bytes, c->len, MBR_LEVEL_FULL), c->expect_full);
    const char *want[2] = {c->expect, c->expect_full};
    for (uint32_t i = 0; i < 2; i++) {
        uint32_t level = i == 0 ? MBR_LEVEL_TRAILER : MBR_LEVEL_FULL;
        mbr_read_options options = mbr_read_options_default();
        options.level = level;
        mbr_frame f;
        mbr_error err;
        uint32_t st = mbr_frame_parse(c->bytes, c->len, options, &f, &err);
        check_code(c, i == 0 ? "mbr_frame_parse trailer" : "mbr_frame_parse full", st, want[i]);
        if (st != MBR_OK && err.status != st) fail(c, "mbr_error.status", mbr_status_name(err.status), want[i]);
        if (st == MBR_OK && i == 0) check_accepted(c, &f);
        if (st == MBR_OK && i == 1 && c->padding >= 0) check_aligned(c, &f);
        static const size_t chunks[3] = {1, 7, 4096};
        for (int k = 0; k < 3; k++)
            check_code(c, "streamed", stream_status(c, level, chunks[k]), want[i]);
    }
    if (failures == before) passes++;
}

/* ---- every case in one batch: the same verdict as one by one ---- */

static void run_batch(void) {
    static mbr_bytes frames[MAX_CASES];
    static mbr_verdict verdicts[MAX_CASES];
    for (size_t i = 0; i < case_count; i++) {
        frames[i].ptr = cases[i].bytes;
        frames[i].len = cases[i].len;
    }
    for (uint32_t level = MBR_LEVEL_LAYOUT; level <= MBR_LEVEL_FULL; level++) {
        mbr_read_options options = mbr_read_options_default();
        options.level = level;
        int before = failures;
        mbr_error err;
        uint32_t st = mbr_frame_verify_batch(frames, case_count, options, verdicts, &err);
        if (st != MBR_OK) {
            printf("FAIL mbr_frame_verify_batch level %u: %s (%s)\n", level, mbr_status_name(st), err.message);
            failures++;
            continue;
        }
        for (size_t i = 0; i < case_count; i++) {
            mbr_frame f;
            mbr_error one;
            uint32_t want = mbr_frame_parse(cases[i].bytes, cases[i].len, options, &f, &one);
            uint64_t want_offset = want == MBR_OK ? MBR_NO_OFFSET : one.offset;
            size_t want_len = want == MBR_OK ? f.len : 0;
            if (verdicts[i].status != want || verdicts[i].offset != want_offset || verdicts[i].frame_len != want_len) {
                printf("FAIL %s: batch level %u: %s at %llu, one by one %s at %llu\n", cases[i].name, level,
                       mbr_status_name(verdicts[i].status), (unsigned long long)verdicts[i].offset,
                       mbr_status_name(want), (unsigned long long)want_offset);
                failures++;
            }
        }
        if (failures == before) passes++;
    }
    /* Argument errors write no verdict. */
    mbr_read_options bad = mbr_read_options_default();
    bad.level = 9;
    verdicts[0].status = 12345;
    if (mbr_frame_verify_batch(frames, case_count, bad, verdicts, NULL) != MBR_INVALID_ARGUMENT ||
        verdicts[0].status != 12345) {
        printf("FAIL mbr_frame_verify_batch: an unknown level must be MBR_INVALID_ARGUMENT, writing nothing\n");
        failures++;
    } else {
        passes++;
    }
    mbr_bytes holes[2] = {{cases[0].bytes, cases[0].len}, {NULL, 5}};
    if (mbr_frame_verify_batch(holes, 2, mbr_read_options_default(), verdicts, NULL) != MBR_NULL_POINTER ||
        verdicts[0].status != 12345 || mbr_frame_verify_batch(NULL, 0, mbr_read_options_default(), NULL, NULL) != MBR_OK) {
        printf("FAIL mbr_frame_verify_batch: a NULL range must be MBR_NULL_POINTER; an empty batch MBR_OK\n");
        failures++;
    } else {
        passes++;
    }
}

/* ---- the same checks from several threads at once, each on its own objects ---- */

typedef struct {
    int mismatches;
} thread_result;

static void *thread_main(void *arg) {
    thread_result *r = arg;
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < case_count; i++) {
            const vector_case *c = &cases[i];
            mbr_frame f;
            if (strcmp(mbr_status_name(mbr_frame_check(c->bytes, c->len, MBR_LEVEL_FULL)), c->expect_full) != 0)
                r->mismatches++;
            uint32_t st = mbr_frame_parse(c->bytes, c->len, mbr_read_options_default(), &f, NULL);
            if (strcmp(mbr_status_name(st), c->expect) != 0) r->mismatches++;
            mbr_digest fp;
            if (st == MBR_OK && (mbr_identity_fingerprint(&f.identity, &fp) != MBR_OK || strcmp(fp.hex, c->fingerprint)))
                r->mismatches++;
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : getenv("MEMBRANE_VECTORS");
    char path[1024];
    static const char *lists[2] = {"frames.jsonl", "aligned.jsonl"};
    size_t aligned_count = 0;
    for (int l = 0; l < 2; l++) {
        FILE *list = NULL;
        if (dir != NULL) {
            snprintf(path, sizeof path, "%s/%s", dir, lists[l]);
            list = fopen(path, "r");
        }
        if (list == NULL) {
            printf("\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n");
            printf("!!! CONFORMANCE VECTORS NOT FOUND at %s\n", dir ? path : "(no directory given)");
            printf("!!! Pass the folder holding %s, or set MEMBRANE_VECTORS. This test\n", lists[l]);
            printf("!!! FAILS rather than pass without checking anything.\n");
            printf("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\n");
            printf("test_vectors: 0 passed, 1 failed\n");
            return 1;
        }
        static char line[1 << 16];
        while (fgets(line, sizeof line, list) != NULL && case_count < MAX_CASES) {
            if (skip_ws(line)[0] == '\0') continue;
            vector_case *c = &cases[case_count];
            if (parse_line(line, c) != 0 || !c->file[0] || !c->expect[0] || !c->expect_full[0] ||
                (l == 1 && (c->padding < 0 || c->payload_offset < 0))) {
                printf("FAIL: unreadable line in %s: %.60s\n", lists[l], line);
                failures++;
                continue;
            }
            snprintf(path, sizeof path, "%s/%s", dir, c->file);
            c->bytes = read_file(path, &c->len);
            if (c->bytes == NULL) {
                printf("FAIL %s: cannot read %s\n", c->name, path);
                failures++;
                continue;
            }
            case_count++;
            aligned_count += l == 1;
        }
        fclose(list);
    }

    for (size_t i = 0; i < case_count; i++) run_case(&cases[i]);
    run_batch();

    pthread_t threads[4];
    thread_result results[4];
    memset(results, 0, sizeof results);
    int started = 0;
    for (int t = 0; t < 4; t++)
        if (pthread_create(&threads[t], NULL, thread_main, &results[t]) == 0) started++;
    int mismatches = 0;
    for (int t = 0; t < started; t++) {
        pthread_join(threads[t], NULL);
        mismatches += results[t].mismatches;
    }
    if (started == 4 && mismatches == 0) {
        passes++;
    } else {
        printf("FAIL: concurrent checks: %d threads started, %d mismatches\n", started, mismatches);
        failures++;
    }

    int accepted = 0;
    for (size_t i = 0; i < case_count; i++) {
        accepted += strcmp(cases[i].expect, "ok") == 0;
        free(cases[i].bytes);
    }
    printf("test_vectors: %zu frame vectors (%d accepted, %zu aligned) at the trailer and full levels, 3 chunkings, "
           "4 threads\n",
           case_count, accepted, aligned_count);
    if (case_count == 0 || aligned_count == 0) {
        printf("FAIL: no vectors read\n");
        failures++;
    }
    printf("test_vectors: %d passed, %d failed\n", passes, failures);
    return failures == 0 ? 0 : 1;
}
