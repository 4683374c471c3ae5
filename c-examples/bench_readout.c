/* bench_readout: what reading every field of a parsed envelope costs a C caller, against
 * the parse alone, in one process. Three forms, each timed in thread CPU time:
 *
 *   parse       mbr_envelope_parse into an mbr_envelope (the baseline);
 *   accessors   the parse, then every field through the per-field calls
 *               (mbr_envelope_get_fields, mbr_envelope_string, mbr_identity_string,
 *               _range, _dtype, _shape): each string decoded and copied;
 *   view        mbr_envelope_parse_view: the parse and a view of every field in one
 *               call, strings used in place (mbr_text_decode only for those with
 *               escapes).
 *
 * Rounds alternate the order of the forms; the figure printed is the median over the
 * rounds of the per-round ratio to the parse, so that frequency changes and noise fall
 * on both sides alike. The envelope is the SPEC 3.2 form (what nodes store) of the
 * docs-style fragment, built here, so the program needs no files.
 *
 *   usage: bench_readout [ROUNDS]      (default 31; `make bench-readout`)
 */
#define _POSIX_C_SOURCE 199309L
#include "membrane_frame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile uint64_t sink; /* keeps every result alive */

static double thread_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (double)now.tv_sec * 1e9 + (double)now.tv_nsec;
}

static const uint8_t *text;
static size_t text_len;

static uint64_t parse_only(void) {
    mbr_envelope envelope;
    if (mbr_envelope_parse(text, text_len, &envelope, NULL) != MBR_OK) abort();
    return 1;
}

static uint64_t string_len(uint32_t status, size_t len) {
    if (status != MBR_OK) abort();
    return len;
}

static uint64_t parse_and_accessors(void) {
    mbr_envelope envelope;
    mbr_envelope_fields fields;
    char buf[256];
    size_t len = 0;
    uint64_t acc = 0;
    if (mbr_envelope_parse(text, text_len, &envelope, NULL) != MBR_OK) abort();
    if (mbr_envelope_get_fields(&envelope, &fields) != MBR_OK) abort();
    acc += fields.payload_size + fields.version_id + fields.hlc + fields.consistency + fields.fingerprint_compat[0];
    acc += (uint64_t)(fields.ttl + fields.reuse_score);
    acc += string_len(mbr_envelope_string(&envelope, MBR_ENVELOPE_FIELD_TENANT_ID, buf, sizeof buf, &len), len);
    acc += string_len(mbr_envelope_string(&envelope, MBR_ENVELOPE_FIELD_PAYLOAD_REF, buf, sizeof buf, &len), len);
    for (uint32_t field = MBR_FIELD_PAYLOAD_HASH; field <= MBR_FIELD_TOKENIZER_REVISION; field++) {
        acc += string_len(mbr_identity_string(&fields.identity, field, buf, sizeof buf, &len), len);
    }
    for (uint32_t field = MBR_FIELD_LAYER_RANGE; field <= MBR_FIELD_TOKEN_SPAN; field++) {
        mbr_range range;
        if (mbr_identity_range(&fields.identity, field, &range) != MBR_OK) abort();
        acc += (uint64_t)(range.start + range.end);
    }
    uint32_t dtype = 0;
    int64_t dims[MBR_MAX_SHAPE_DIMS];
    if (mbr_identity_dtype(&fields.identity, &dtype) != MBR_OK) abort();
    if (mbr_identity_shape(&fields.identity, dims, MBR_MAX_SHAPE_DIMS, &len) != MBR_OK) abort();
    acc += dtype + len + (uint64_t)dims[0];
    return acc;
}

/* A view's string: in place, or decoded when it holds escapes. */
static uint64_t text_use(mbr_text value, char *buf, size_t capacity) {
    size_t len = 0;
    if (!value.has_escapes) return value.len + (value.len ? (uint8_t)value.ptr[0] : 0);
    if (mbr_text_decode(value, buf, capacity, &len, NULL) != MBR_OK) abort();
    return len + (uint8_t)buf[0];
}

static uint64_t parse_view(void) {
    mbr_envelope_view view;
    char buf[256];
    uint64_t acc = 0;
    if (mbr_envelope_parse_view(text, text_len, &view, NULL) != MBR_OK) abort();
    acc += view.payload_size + view.version_id + view.hlc + view.consistency + view.fingerprint_compat[0];
    acc += (uint64_t)(view.ttl + view.reuse_score) + view.has_payload_ref;
    acc += text_use(view.tenant_id, buf, sizeof buf) + text_use(view.payload_ref, buf, sizeof buf);
    const mbr_identity_view *id = &view.identity;
    acc += text_use(id->payload_hash, buf, sizeof buf) + text_use(id->model_id, buf, sizeof buf);
    acc += text_use(id->model_revision, buf, sizeof buf) + text_use(id->tokenizer_name, buf, sizeof buf);
    acc += text_use(id->tokenizer_revision, buf, sizeof buf);
    acc += (uint64_t)(id->layer_range.start + id->layer_range.end + id->head_range.start + id->head_range.end);
    acc += (uint64_t)(id->token_span.start + id->token_span.end) + id->dtype + id->shape_len + (uint64_t)id->shape[0];
    return acc;
}

static double ns_per_op(uint64_t (*f)(void), int iterations) {
    uint64_t acc = 0;
    double start = thread_ns();
    for (int i = 0; i < iterations; i++) acc += f();
    double elapsed = thread_ns() - start;
    sink = sink + acc;
    return elapsed / iterations;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, int n) {
    qsort(values, (size_t)n, sizeof *values, by_value);
    return values[n / 2];
}

/* The envelope as nodes store it: built from values, written in the SPEC 3.2 form. */
static size_t stored_envelope(uint8_t *out, size_t capacity) {
    static const int64_t shape[] = {2, 32, 8, 128, 64};
    mbr_identity_values id = {0};
    id.payload_hash = (mbr_str){"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", 64};
    id.model_id = (mbr_str){"llama-3-8b", 10};
    id.model_revision = (mbr_str){"main", 4};
    id.tokenizer_name = (mbr_str){"llama-3-8b", 10};
    id.tokenizer_revision = (mbr_str){"main", 4};
    id.layer_range = (mbr_range){0, 31};
    id.head_range = (mbr_range){-1, -1};
    id.token_span = (mbr_range){0, 127};
    id.dtype = MBR_DTYPE_FLOAT16;
    id.shape = shape;
    id.shape_len = 5;
    mbr_identity identity;
    mbr_error error;
    if (mbr_identity_build(&id, &identity, &error) != MBR_OK) {
        fprintf(stderr, "bench_readout: identity: %s\n", error.message);
        exit(1);
    }
    mbr_envelope_values values = {0};
    values.tenant_id = (mbr_str){"acme", 4};
    values.identity = &identity;
    values.has_payload_ref = true;
    values.payload_ref = id.payload_hash;
    values.payload_size = 524288;
    values.ttl = 3600.0;
    values.reuse_score = 0.75;
    values.version_id = 42;
    values.consistency = MBR_CONSISTENCY_QUORUM;
    values.hlc = 7353178390208200704u;
    values.derive_fingerprint_compat = true;
    mbr_envelope envelope;
    size_t len = 0;
    if (mbr_envelope_build(&values, &envelope, &error) != MBR_OK ||
        mbr_envelope_write(&envelope, out, capacity, &len, &error) != MBR_OK) {
        fprintf(stderr, "bench_readout: envelope: %s\n", error.message);
        exit(1);
    }
    return len;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 31;
    if (rounds < 1) rounds = 1;
    if (rounds > 1001) rounds = 1001;
    static uint8_t stored[2048];
    text_len = stored_envelope(stored, sizeof stored);
    text = stored;

    /* Each form must read the same envelope: the accessors and the view agree. */
    if (parse_and_accessors() == 0 || parse_view() == 0) abort();

    enum { ITERATIONS = 20000 };
    static double parse_ns[1001], accessors_ns[1001], view_ns[1001], accessors_ratio[1001], view_ratio[1001];
    for (int r = 0; r < rounds; r++) {
        double p, a, v;
        if (r % 2 == 0) {
            p = ns_per_op(parse_only, ITERATIONS);
            a = ns_per_op(parse_and_accessors, ITERATIONS);
            v = ns_per_op(parse_view, ITERATIONS);
        } else {
            v = ns_per_op(parse_view, ITERATIONS);
            a = ns_per_op(parse_and_accessors, ITERATIONS);
            p = ns_per_op(parse_only, ITERATIONS);
        }
        parse_ns[r] = p;
        accessors_ns[r] = a;
        view_ns[r] = v;
        accessors_ratio[r] = a / p;
        view_ratio[r] = v / p;
    }
    printf("bench_readout: envelope as stored, %zu bytes, %d paired rounds of %d calls, thread CPU time\n",
           text_len, rounds, (int)ITERATIONS);
    printf("bench_readout: parse alone (mbr_envelope_parse)                %7.1f ns\n", median(parse_ns, rounds));
    printf("bench_readout: parse + every field, per-field calls (copies)   %7.1f ns  %.2fx the parse\n",
           median(accessors_ns, rounds), median(accessors_ratio, rounds));
    printf("bench_readout: parse + every field, mbr_envelope_parse_view    %7.1f ns  %.2fx the parse (target <= 1.30x)\n",
           median(view_ns, rounds), median(view_ratio, rounds));
    return 0;
}
