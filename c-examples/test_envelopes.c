/*
 * test_envelopes: the envelope, compatibility-hash and migration vectors (SPEC §11)
 * through the C API.
 *
 *  - envelopes.jsonl: mbr_envelope_check gives `expect` for every case (and
 *    mbr_envelope_parse_view the same, its view agreeing with the per-field calls), and
 *    mbr_envelope_parse the same with an error detail; accepted envelopes read back
 *    the vector's `fields` and `identity_fingerprint`; every `reemit_identical` case
 *    re-emits through mbr_envelope_canonicalize (and mbr_envelope_write) to the
 *    identical bytes; a too-small buffer reports the size needed and is left alone;
 *    rejected ones are refused by mbr_envelope_canonicalize with the same code.
 *  - compat.jsonl: mbr_compat_hash reproduces every digest (and
 *    mbr_identity_compat_hash too, where the inputs are those of an identity).
 *  - migration_frames.jsonl + migration/: the dry run says what will happen and
 *    writes nothing; mbr_migrate_frame_in_place gives exactly the expected v5 bytes;
 *    a second run is a no-op; damaged input is refused and left untouched.
 *  - migration_envelopes.jsonl: mbr_migrate_envelope gives exactly the expected v5
 *    text, which passes the v5 reader and migrates again as a no-op.
 *
 * The vectors are JSON lines; the small JSON reader in test_support.h extracts the fields (strings
 * decoded to UTF-8 with every escape, surrogate pairs included).
 *
 *   usage: test_envelopes [VECTORS_DIR]    (default: $MEMBRANE_VECTORS)
 *   last line: "test_envelopes: N passed, M failed"
 */
#include "test_support.h"
}

static int is_literal(const char *p, const char *literal) {
    return p != NULL && strncmp(p, literal, strlen(literal)) == 0;
}

static int u64_member(const char *obj, const char *key, uint64_t *out) {
    const char *p = member(obj, key);
    char *end;
    if (p == NULL || *p == '-') return 0;
    errno = 0;
    unsigned long long v = strtoull(p, &end, 10);
    if (errno != 0 || end == p) return 0;
    *out = (uint64_t)v;
    return 1;
}

static int i64_member(const char *obj, const char *key, int64_t *out) {
    const char *p = member(obj, key);
    char *end;
    if (p == NULL) return 0;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (errno != 0 || end == p) return 0;
    *out = (int64_t)v;
    return 1;
}

static int f64_member(const char *obj, const char *key, double *out) {
    const char *p = member(obj, key);
    char *end;
    if (p == NULL) return 0;
    *out = strtod(p, &end);
    return end != p;
}

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    size_t cap = 4096, n = 0, got;
    uint8_t *buf = malloc(cap);
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

static int same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Is every byte of p[0..n) still 0xA5? */
static int poisoned(const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i] != 0xA5) return 0;
    return 1;
}

/* ---- envelopes.jsonl ---- */

static void check_fields(const char *name, const mbr_envelope *env, const char *fields) {
    mbr_envelope_fields f;
    if (mbr_envelope_get_fields(env, &f) != MBR_OK) {
        fail(name, "mbr_envelope_get_fields");
        return;
    }
    size_t want_len, got_len;
    char got[1024];
    char *want = string_member(fields, "tenant_id", &want_len);
    if (want == NULL || mbr_envelope_string(env, MBR_ENVELOPE_FIELD_TENANT_ID, got, sizeof got, &got_len) != MBR_OK ||
        got_len != want_len || memcmp(got, want, want_len) != 0)
        fail(name, "tenant_id: got %s, want %s", got, want ? want : "(unreadable)");
    free(want);
    const char *ref = member(fields, "payload_ref");
    if (is_literal(ref, "null")) {
        if (f.has_payload_ref) fail(name, "payload_ref: got a string, want null");
    } else {
        want = string_value(ref, &want_len);
        if (want == NULL || !f.has_payload_ref ||
            mbr_envelope_string(env, MBR_ENVELOPE_FIELD_PAYLOAD_REF, got, sizeof got, &got_len) != MBR_OK ||
            got_len != want_len || memcmp(got, want, want_len) != 0)
            fail(name, "payload_ref");
        free(want);
    }
    uint64_t u = 0;
    double d = 0.0;
    if (!u64_member(fields, "payload_size", &u) || u != f.payload_size) fail(name, "payload_size");
    if (!f64_member(fields, "ttl", &d) || !same_double(d, f.ttl)) fail(name, "ttl: got %.17g, want %.17g", f.ttl, d);
    if (!f64_member(fields, "reuse_score", &d) || !same_double(d, f.reuse_score)) fail(name, "reuse_score");
    if (!u64_member(fields, "version_id", &u) || u != f.version_id) fail(name, "version_id");
    if (!u64_member(fields, "hlc", &u) || u != f.hlc) fail(name, "hlc");
    want = string_member(fields, "consistency", &want_len);
    if (want == NULL || strcmp(mbr_consistency_name(f.consistency), want) != 0 ||
        mbr_envelope_string(env, MBR_ENVELOPE_FIELD_CONSISTENCY, got, sizeof got, &got_len) != MBR_OK ||
        strcmp(got, want) != 0)
        fail(name, "consistency: got %s, want %s", mbr_consistency_name(f.consistency), want ? want : "?");
    free(want);
    want = string_member(fields, "fingerprint_compat", &want_len);
    if (want == NULL || strcmp(f.fingerprint_compat_hex, want) != 0 || f.has_fingerprint_compat != (want_len > 0) ||
        mbr_envelope_string(env, MBR_ENVELOPE_FIELD_FINGERPRINT_COMPAT, got, sizeof got, &got_len) != MBR_OK ||
        strcmp(got, want) != 0)
        fail(name, "fingerprint_compat: got %s, want %s", f.fingerprint_compat_hex, want ? want : "?");
    free(want);
}

static void check_identity(const char *name, const mbr_envelope *env, const char *want) {
    mbr_envelope_fields f;
    mbr_identity identity;
    mbr_digest a, b;
    if (mbr_envelope_get_fields(env, &f) != MBR_OK || mbr_envelope_identity(env, &identity) != MBR_OK ||
        mbr_identity_fingerprint(&f.identity, &a) != MBR_OK || mbr_identity_fingerprint(&identity, &b) != MBR_OK ||
        strcmp(a.hex, want) != 0 || strcmp(b.hex, want) != 0)
        fail(name, "identity fingerprint: got %s, want %s", a.hex, want);
}

/* A view's string decoded (in place when it has no escapes) equals `want`. */
static int text_equals(mbr_text text, const char *want, size_t want_len) {
    char buf[1024];
    size_t len = 0;
    if (!text.has_escapes) return text.len == want_len && (want_len == 0 || memcmp(text.ptr, want, want_len) == 0);
    return mbr_text_decode(text, buf, sizeof buf, &len, NULL) == MBR_OK && len == want_len &&
           memcmp(buf, want, len) == 0;
}

/* mbr_envelope_parse_view_decoded into a room of every size from none to the text's
 * length: in field order, each string with escapes whose value fits the room left is
 * that value, next in the room; every other string is the plain view's, and so is every
 * other field. */
static void check_decoded_view(const char *name, const uint8_t *text, size_t len, const mbr_envelope_view *plain) {
    char *room = malloc(len + 1);
    if (room == NULL) {
        fail(name, "out of memory");
        return;
    }
    const mbr_text theirs[] = {plain->tenant_id,           plain->payload_ref,         plain->identity.payload_hash,
                               plain->identity.model_id,   plain->identity.model_revision,
                               plain->identity.tokenizer_name, plain->identity.tokenizer_revision};
    for (size_t capacity = 0; capacity <= len; capacity++) {
        mbr_envelope_view got;
        if (mbr_envelope_parse_view_decoded(text, len, capacity ? room : NULL, capacity, &got, NULL) != MBR_OK) {
            fail(name, "mbr_envelope_parse_view_decoded, room %zu", capacity);
            break;
        }
        const mbr_text mine[] = {got.tenant_id,         got.payload_ref,           got.identity.payload_hash,
                                 got.identity.model_id, got.identity.model_revision, got.identity.tokenizer_name,
                                 got.identity.tokenizer_revision};
        size_t used = 0;
        for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++) {
            char value[1024];
            size_t value_len = 0;
            if (mbr_text_decode(theirs[i], value, sizeof value, &value_len, NULL) != MBR_OK) {
                fail(name, "mbr_text_decode of string %zu", i);
            } else if (theirs[i].has_escapes && value_len <= capacity - used) {
                if (mine[i].has_escapes || mine[i].ptr != room + used || mine[i].len != value_len ||
                    memcmp(mine[i].ptr, value, value_len) != 0)
                    fail(name, "decoded view: string %zu is not its value next in a room of %zu", i, capacity);
                used += value_len;
            } else if (mine[i].ptr != theirs[i].ptr || mine[i].len != theirs[i].len ||
                       mine[i].has_escapes != theirs[i].has_escapes) {
                fail(name, "decoded view: string %zu is not the plain view's, room %zu", i, capacity);
            }
        }
        if (got.payload_size != plain->payload_size || got.version_id != plain->version_id || got.hlc != plain->hlc ||
            got.has_payload_ref != plain->has_payload_ref || !same_double(got.ttl, plain->ttl) ||
            memcmp(&got.identity.layer_range, &plain->identity.layer_range, sizeof got.identity.layer_range) != 0 ||
            got.identity.shape_len != plain->identity.shape_len ||
            memcmp(got.identity.shape, plain->identity.shape, sizeof got.identity.shape) != 0)
            fail(name, "decoded view: a field other than a string differs, room %zu", capacity);
    }
    free(room);
}

/* The view of every field (mbr_envelope_parse_view, mbr_envelope_get_view) says what the
 * per-field calls say. */
static void check_view(const char *name, const uint8_t *text, size_t len, const mbr_envelope *env) {
    mbr_envelope_view view, again;
    mbr_envelope_fields f;
    char got[1024];
    size_t got_len = 0;
    if (mbr_envelope_parse_view(text, len, &view, NULL) != MBR_OK || mbr_envelope_get_view(env, &again) != MBR_OK ||
        mbr_envelope_get_fields(env, &f) != MBR_OK) {
        fail(name, "mbr_envelope_parse_view / mbr_envelope_get_view");
        return;
    }
    if (mbr_envelope_string(env, MBR_ENVELOPE_FIELD_TENANT_ID, got, sizeof got, &got_len) != MBR_OK ||
        !text_equals(view.tenant_id, got, got_len) || again.tenant_id.ptr != view.tenant_id.ptr)
        fail(name, "view: tenant_id");
    if (view.has_payload_ref != f.has_payload_ref ||
        mbr_envelope_string(env, MBR_ENVELOPE_FIELD_PAYLOAD_REF, got, sizeof got, &got_len) != MBR_OK ||
        !text_equals(view.payload_ref, got, got_len))
        fail(name, "view: payload_ref");
    if (view.payload_size != f.payload_size || !same_double(view.ttl, f.ttl) ||
        !same_double(view.reuse_score, f.reuse_score) || view.version_id != f.version_id || view.hlc != f.hlc ||
        view.consistency != f.consistency || view.has_fingerprint_compat != f.has_fingerprint_compat ||
        memcmp(view.fingerprint_compat, f.fingerprint_compat, 32) != 0)
        fail(name, "view: the numbers and flags differ from mbr_envelope_get_fields");
    const mbr_identity_view *id = &view.identity;
    const mbr_text strings[] = {id->payload_hash, id->model_id, id->model_revision, id->tokenizer_name,
                                id->tokenizer_revision};
    for (uint32_t field = MBR_FIELD_PAYLOAD_HASH; field <= MBR_FIELD_TOKENIZER_REVISION; field++) {
        if (mbr_identity_string(&f.identity, field, got, sizeof got, &got_len) != MBR_OK ||
            !text_equals(strings[field - MBR_FIELD_PAYLOAD_HASH], got, got_len))
            fail(name, "view: identity %s", mbr_field_name(field));
    }
    const mbr_range ranges[] = {id->layer_range, id->head_range, id->token_span};
    for (uint32_t field = MBR_FIELD_LAYER_RANGE; field <= MBR_FIELD_TOKEN_SPAN; field++) {
        mbr_range range;
        const mbr_range *mine = &ranges[field - MBR_FIELD_LAYER_RANGE];
        if (mbr_identity_range(&f.identity, field, &range) != MBR_OK || range.start != mine->start ||
            range.end != mine->end)
            fail(name, "view: identity %s", mbr_field_name(field));
    }
    uint32_t dtype = 0;
    int64_t dims[MBR_MAX_SHAPE_DIMS];
    size_t dims_len = 0;
    if (mbr_identity_dtype(&f.identity, &dtype) != MBR_OK || dtype != id->dtype ||
        mbr_identity_shape(&f.identity, dims, MBR_MAX_SHAPE_DIMS, &dims_len) != MBR_OK || dims_len != id->shape_len ||
        memcmp(dims, id->shape, dims_len * sizeof dims[0]) != 0)
        fail(name, "view: identity dtype or shape");
    mbr_identity_view parsed;
    if (mbr_identity_get_view(&f.identity, &parsed) != MBR_OK || parsed.model_id.ptr != id->model_id.ptr ||
        parsed.shape_len != id->shape_len)
        fail(name, "view: mbr_identity_get_view");
    check_decoded_view(name, text, len, &view);
}

/* Canonicalise an accepted envelope every way there is, and compare. */
static void check_reemission(const char *name, const char *json, size_t len, const mbr_envelope *env, int identical) {
    const uint8_t *text = (const uint8_t *)json;
    size_t needed = 0, written = 0, encoded = 0;
    if (mbr_envelope_canonicalize(text, len, NULL, 0, &needed) != MBR_BUFFER_TOO_SMALL || needed == 0) {
        fail(name, "size query: want MBR_BUFFER_TOO_SMALL and the length");
        return;
    }
    if (mbr_envelope_encoded_len(env, &encoded) != MBR_OK || encoded != needed)
        fail(name, "mbr_envelope_encoded_len %zu, canonicalize says %zu", encoded, needed);
    uint8_t *out = malloc(needed + 1);
    uint8_t *again = malloc(needed + 1);
    if (out == NULL || again == NULL) {
        fail(name, "out of memory");
        free(out);
        free(again);
        return;
    }
    /* One byte short: the size again, and the buffer untouched. */
    memset(out, 0xA5, needed + 1);
    written = 0;
    if (mbr_envelope_canonicalize(text, len, out, needed - 1, &written) != MBR_BUFFER_TOO_SMALL || written != needed ||
        !poisoned(out, needed + 1))
        fail(name, "one byte short: want MBR_BUFFER_TOO_SMALL, *written = %zu, buffer untouched", needed);
    uint32_t st = mbr_envelope_canonicalize(text, len, out, needed + 1, &written);
    if (st != MBR_OK || written != needed || out[needed] != 0xA5) fail(name, "canonicalize: %s", mbr_status_name(st));
    if (identical && (written != len || memcmp(out, json, len) != 0))
        fail(name, "re-emission differs from the vector text:\n  got  %.*s\n  want %s", (int)written,
             (const char *)out, json);
    bool canonical = false;
    if (mbr_envelope_is_canonical(env, &canonical) != MBR_OK || canonical != (written == len && memcmp(out, json, len) == 0))
        fail(name, "mbr_envelope_is_canonical says %d", (int)canonical);
    /* The envelope's own writer gives the same bytes; the output is a fixed point. */
    mbr_error err;
    size_t n = 0;
    if (mbr_envelope_write(env, again, needed - 1, &n, &err) != MBR_BUFFER_TOO_SMALL || err.needed != needed)
        fail(name, "mbr_envelope_write one byte short");
    if (mbr_envelope_write(env, again, needed, &n, NULL) != MBR_OK || n != needed || memcmp(again, out, n) != 0)
        fail(name, "mbr_envelope_write differs from mbr_envelope_canonicalize");
    if (mbr_envelope_check(out, written) != MBR_OK ||
        mbr_envelope_canonicalize(out, written, again, needed, &n) != MBR_OK || n != written ||
        memcmp(again, out, n) != 0)
        fail(name, "the canonical form is not a fixed point");
    free(out);
    free(again);
}

static int envelope_case(const char *line, int *reemitted) {
    size_t name_len, len, expect_len;
    char *name = string_member(line, "name", &name_len);
    char *json = string_member(line, "json", &len);
    char *expect = string_member(line, "expect", &expect_len);
    int identical = is_literal(member(line, "reemit_identical"), "true");
    int counted = 0;
    begin_case();
    if (name == NULL || json == NULL || expect == NULL) {
        fail(name ? name : "envelopes.jsonl", "unreadable line: %.60s", line);
        goto done;
    }
    counted = 1;
    const uint8_t *text = (const uint8_t *)json;
    uint32_t st = mbr_envelope_check(text, len);
    if (strcmp(mbr_status_name(st), expect) != 0)
        fail(name, "mbr_envelope_check: got %s, want %s", mbr_status_name(st), expect);
    mbr_envelope env;
    mbr_error err;
    uint32_t parsed = mbr_envelope_parse(text, len, &env, &err);
    if (parsed != st)
        fail(name, "mbr_envelope_parse %s, mbr_envelope_check %s", mbr_status_name(parsed), mbr_status_name(st));
    if (parsed != MBR_OK) {
        if (err.status != parsed || err.error_class != MBR_CLASS_SCHEMA || err.offset == MBR_NO_OFFSET || err.offset > len)
            fail(name, "error detail: %s", err.message);
        if (parsed != MBR_ENVELOPE_JSON && err.field[0] == '\0') fail(name, "no field named: %s", err.message);
        /* Canonicalising refuses it with the same code and leaves *written alone. */
        size_t written = 12345;
        uint8_t out[16];
        if (mbr_envelope_canonicalize(text, len, out, sizeof out, &written) != parsed || written != 12345)
            fail(name, "mbr_envelope_canonicalize on a rejected envelope");
        /* The view refuses it alike and is left untouched. */
        mbr_envelope_view view;
        mbr_error view_err;
        memset(&view, 0xA5, sizeof view);
        if (mbr_envelope_parse_view(text, len, &view, &view_err) != parsed || view_err.offset != err.offset ||
            !poisoned(&view, sizeof view))
            fail(name, "mbr_envelope_parse_view on a rejected envelope");
        char room[64];
        memset(room, 0xA5, sizeof room);
        if (mbr_envelope_parse_view_decoded(text, len, room, sizeof room, &view, &view_err) != parsed ||
            view_err.offset != err.offset || !poisoned(&view, sizeof view) || !poisoned(room, sizeof room))
            fail(name, "mbr_envelope_parse_view_decoded on a rejected envelope");
        goto done;
    }
    const char *fields = member(line, "fields");
    if (fields != NULL) check_fields(name, &env, fields);
    char *fingerprint = string_member(line, "identity_fingerprint", &expect_len);
    if (fingerprint != NULL) check_identity(name, &env, fingerprint);
    free(fingerprint);
    check_view(name, text, len, &env);
    check_reemission(name, json, len, &env, identical);
    if (identical) ++*reemitted;
done:
    end_case();
    free(name);
    free(json);
    free(expect);
    return counted;
}

/* ---- compat.jsonl ---- */

static int compat_case(const char *line) {
    static const char *const keys[6] = {"model_id",       "model_revision", "tokenizer_name",
                                        "tokenizer_revision", "dtype",      "config_hash"};
    char *values[6] = {0};
    size_t lens[6] = {0};
    size_t name_len, want_len;
    char *name = string_member(line, "name", &name_len);
    char *want = string_member(line, "compatibility_hash", &want_len);
    const char *input = member(line, "input");
    int64_t model_layout = 0, tokenizer_layout = 0;
    int ok = name != NULL && want != NULL && input != NULL && i64_member(input, "model_layout_version", &model_layout) &&
             i64_member(input, "tokenizer_layout_version", &tokenizer_layout);
    for (int i = 0; i < 6 && ok; i++) ok = (values[i] = string_member(input, keys[i], &lens[i])) != NULL;
    begin_case();
    if (!ok) {
        fail(name ? name : "compat.jsonl", "unreadable line: %.60s", line);
    } else {
        mbr_compat_inputs in;
        in.model_id = (mbr_str){values[0], lens[0]};
        in.model_revision = (mbr_str){values[1], lens[1]};
        in.model_layout_version = model_layout;
        in.tokenizer_name = (mbr_str){values[2], lens[2]};
        in.tokenizer_revision = (mbr_str){values[3], lens[3]};
        in.tokenizer_layout_version = tokenizer_layout;
        in.dtype = (mbr_str){values[4], lens[4]};
        in.config_hash = (mbr_str){values[5], lens[5]};
        char hex[65];
        uint32_t st = mbr_compat_hash(&in, hex);
        if (st != MBR_OK || strcmp(hex, want) != 0)
            fail(name, "mbr_compat_hash: %s %s, want %s", mbr_status_name(st), hex, want);
        /* When these are an identity's inputs, the identity gives the same hash. */
        uint32_t dtype;
        if (model_layout == 0 && tokenizer_layout == 0 && lens[5] == 0 &&
            mbr_dtype_from_name(values[4], lens[4], &dtype) == MBR_OK) {
            int64_t shape[1] = {1};
            mbr_identity_values v = {{"x", 1}, in.model_id, in.model_revision, in.tokenizer_name, in.tokenizer_revision,
                                     {0, 0}, {-1, -1}, {0, 0}, dtype, shape, 1};
            mbr_identity identity;
            if (mbr_identity_build(&v, &identity, NULL) != MBR_OK || mbr_identity_compat_hash(&identity, hex) != MBR_OK ||
                strcmp(hex, want) != 0)
                fail(name, "mbr_identity_compat_hash: %s, want %s", hex, want);
        }
    }
    end_case();
    for (int i = 0; i < 6; i++) free(values[i]);
    free(name);
    free(want);
    return ok;
}

/* ---- migration_frames.jsonl ---- */

static int frame_migration_case(const char *dir, const char *line) {
    char path[1024];
    size_t n, input_len = 0, expected_len = 0;
    char *name = string_member(line, "name", &n);
    char *input_file = string_member(line, "input", &n);
    char *expected_file = string_member(line, "expected_v5", &n);
    uint64_t version = 0;
    uint8_t *input = NULL, *expected = NULL, *buf = NULL;
    int ok = name != NULL && input_file != NULL && expected_file != NULL && u64_member(line, "from_version", &version);
    begin_case();
    if (ok) {
        snprintf(path, sizeof path, "%s/%s", dir, input_file);
        input = read_file(path, &input_len);
        snprintf(path, sizeof path, "%s/%s", dir, expected_file);
        expected = read_file(path, &expected_len);
        buf = malloc(input_len + 1);
        ok = input != NULL && expected != NULL && buf != NULL && input_len > 6;
    }
    if (!ok) {
        fail(name ? name : "migration_frames.jsonl", "unreadable case: %.80s", line);
        goto done;
    }
    mbr_read_options options = mbr_read_options_default();
    mbr_frame_migration m;
    if (mbr_frame_check(input, input_len, MBR_LEVEL_TRAILER) != MBR_LEGACY_FRAME) fail(name, "not a legacy frame");
    /* Dry run: says what will happen, writes nothing (it takes const bytes). */
    if (mbr_plan_frame_migration(input, input_len, options, &m, NULL) != MBR_OK || m.kind != MBR_MIGRATION_LEGACY ||
        m.from_version != version || !m.rewrites)
        fail(name, "mbr_plan_frame_migration");
    memcpy(buf, input, input_len);
    if (mbr_migrate_frame_in_place(buf, input_len, options, &m, NULL) != MBR_OK || m.kind != MBR_MIGRATION_LEGACY ||
        m.from_version != version)
        fail(name, "mbr_migrate_frame_in_place");
    if (input_len != expected_len || memcmp(buf, expected, expected_len) != 0)
        fail(name, "migrated bytes differ from the expected v5");
    if (memcmp(buf + 6, input + 6, input_len - 6) != 0) fail(name, "bytes after 0..6 changed");
    if (mbr_frame_check(buf, input_len, MBR_LEVEL_TRAILER) != MBR_OK) fail(name, "the result fails the v5 reader");
    /* Idempotent. */
    if (mbr_migrate_frame_in_place(buf, input_len, options, &m, NULL) != MBR_OK || m.kind != MBR_MIGRATION_ALREADY_V5 ||
        m.rewrites || memcmp(buf, expected, expected_len) != 0)
        fail(name, "a second run is not a no-op");
    /* Damaged input: an error, and not one byte changes. */
    mbr_error err;
    memcpy(buf, input, input_len);
    buf[input_len - 1] ^= 0x01; /* the trailer */
    if (mbr_migrate_frame_in_place(buf, input_len, options, &m, &err) != MBR_TRAILER_MISMATCH ||
        err.status != MBR_TRAILER_MISMATCH || buf[input_len - 1] != (input[input_len - 1] ^ 0x01) ||
        memcmp(buf, input, input_len - 1) != 0)
        fail(name, "a damaged frame: %s", err.message);
    memcpy(buf, input, input_len);
    buf[input_len] = 0;
    if (mbr_migrate_frame_in_place(buf, input_len + 1, options, &m, NULL) != MBR_TRAILING_BYTES ||
        memcmp(buf, input, input_len) != 0)
        fail(name, "trailing bytes");
    if (mbr_migrate_frame_in_place(buf, input_len - 1, options, &m, NULL) != MBR_PAYLOAD_OVERRUN ||
        memcmp(buf, input, input_len) != 0)
        fail(name, "a truncated frame");
done:
    end_case();
    free(name);
    free(input_file);
    free(expected_file);
    free(input);
    free(expected);
    free(buf);
    return ok;
}

/* ---- migration_envelopes.jsonl ---- */

static int envelope_migration_case(const char *line) {
    size_t n, input_len = 0, expected_len = 0, tenant_len = 0;
    char *name = string_member(line, "name", &n);
    char *input = string_member(line, "input", &input_len);
    char *expected = string_member(line, "expected_v5", &expected_len);
    char *tenant = string_member(line, "default_tenant", &tenant_len);
    uint64_t version = 0;
    uint8_t *out = NULL;
    int ok = name != NULL && input != NULL && expected != NULL && tenant != NULL &&
             u64_member(line, "from_version", &version);
    begin_case();
    if (ok) ok = (out = malloc(expected_len + 16)) != NULL;
    if (!ok) {
        fail(name ? name : "migration_envelopes.jsonl", "unreadable line: %.60s", line);
        goto done;
    }
    const uint8_t *text = (const uint8_t *)input;
    mbr_envelope_migration_options options = mbr_envelope_migration_options_default();
    options.default_tenant.ptr = tenant;
    options.default_tenant.len = tenant_len;
    mbr_envelope_migration result;
    mbr_error err;
    if (mbr_envelope_check(text, input_len) != MBR_ENVELOPE_VERSION) fail(name, "the input is accepted as v5");
    /* Too small: the size needed, nothing written. */
    memset(&result, 0xA5, sizeof result);
    memset(out, 0xA5, expected_len + 16);
    if (mbr_migrate_envelope(text, input_len, options, out, expected_len - 1, &result, &err) != MBR_BUFFER_TOO_SMALL ||
        err.needed != expected_len || !poisoned(&result, sizeof result) || !poisoned(out, expected_len + 16))
        fail(name, "one byte short: want MBR_BUFFER_TOO_SMALL, needed %zu, nothing written", expected_len);
    uint32_t st = mbr_migrate_envelope(text, input_len, options, out, expected_len + 16, &result, &err);
    if (st != MBR_OK || result.kind != MBR_MIGRATION_LEGACY || result.from_version != version ||
        result.len != expected_len || memcmp(out, expected, expected_len) != 0)
        fail(name, "mbr_migrate_envelope: %s\n  got  %.*s\n  want %s", st == MBR_OK ? "ok" : err.message,
             (int)(st == MBR_OK ? result.len : 0), (const char *)out, expected);
    if (mbr_envelope_check(out, expected_len) != MBR_OK) fail(name, "the result fails the v5 reader");
    /* Migrating the result again is a no-op that writes nothing. */
    if (mbr_migrate_envelope(out, expected_len, options, NULL, 0, &result, NULL) != MBR_OK ||
        result.kind != MBR_MIGRATION_ALREADY_V5 || result.len != 0 || result.from_version != 5)
        fail(name, "migrating the v5 result again");
    /* A missing fingerprint_compat is the hash derived from the identity. */
    if (member(input, "fingerprint_compat") == NULL) {
        mbr_envelope env;
        mbr_envelope_fields f;
        char hex[65];
        if (mbr_envelope_parse(out, expected_len, &env, NULL) != MBR_OK || mbr_envelope_get_fields(&env, &f) != MBR_OK ||
            mbr_identity_compat_hash(&f.identity, hex) != MBR_OK || strcmp(hex, f.fingerprint_compat_hex) != 0)
            fail(name, "fingerprint_compat is not the identity's compatibility hash");
    }
done:
    end_case();
    free(name);
    free(input);
    free(expected);
    free(tenant);
    free(out);
    return ok;
}

/* Run `each` on every non-blank line of DIR/FILE; returns the number of cases. */
static int for_lines(const char *dir, const char *file, int (*each)(const char *dir, const char *line)) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        printf("FAIL: cannot read %s\n", path);
        failures++;
        return 0;
    }
    char *line = NULL;
    size_t cap = 0;
    int cases = 0;
    while (getline(&line, &cap, f) != -1) {
        if (*ws(line) == '\0') continue;
        cases += each(dir, line);
    }
    free(line);
    fclose(f);
    if (cases == 0) {
        printf("FAIL: no cases read from %s\n", path);
        failures++;
    }
    return cases;
}

static int reemitted, accepted;
static int each_envelope(const char *dir, const char *line) {
    (void)dir;
    accepted += is_literal(member(line, "expect"), "\"ok\"");
    return envelope_case(line, &reemitted);
}
static int each_compat(const char *dir, const char *line) {
    (void)dir;
    return compat_case(line);
}
static int each_envelope_migration(const char *dir, const char *line) {
    (void)dir;
    return envelope_migration_case(line);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : getenv("MEMBRANE_VECTORS");
    char probe[1024];
    FILE *f = NULL;
    if (dir != NULL) {
        snprintf(probe, sizeof probe, "%s/envelopes.jsonl", dir);
        f = fopen(probe, "r");
    }
    if (f == NULL) {
        printf("\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n");
        printf("!!! CONFORMANCE VECTORS NOT FOUND at %s\n", dir ? probe : "(no directory given)");
        printf("!!! Pass the folder holding envelopes.jsonl, or set MEMBRANE_VECTORS. This test\n");
        printf("!!! FAILS rather than pass without checking anything.\n");
        printf("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\n");
        printf("test_envelopes: 0 passed, 1 failed\n");
        return 1;
    }
    fclose(f);
    int envelopes = for_lines(dir, "envelopes.jsonl", each_envelope);
    int compat = for_lines(dir, "compat.jsonl", each_compat);
    int frames = for_lines(dir, "migration_frames.jsonl", frame_migration_case);
    int migrated = for_lines(dir, "migration_envelopes.jsonl", each_envelope_migration);
    printf("test_envelopes: %d envelopes (%d accepted, %d re-emitted identically), %d compat hashes, "
           "%d frame and %d envelope migrations\n",
           envelopes, accepted, reemitted, compat, frames, migrated);
    if (reemitted == 0) {
        printf("FAIL: no envelope was re-emitted\n");
        failures++;
    }
    printf("test_envelopes: %d passed, %d failed\n", passes, failures);
    return failures == 0 ? 0 : 1;
}
