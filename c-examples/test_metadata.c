/*
 * test_metadata: the cluster-metadata vectors (SPEC §5, §6, §11: metadata.jsonl)
 * through the C API.
 *
 *  - kind "snapshot": mbr_snapshot_check gives `expect` for every case, and
 *    mbr_snapshot_parse the same with an error detail; accepted snapshots read back
 *    through the accessors, write -> parse -> write is identical and canonical, and the
 *    epoch guard accepts the snapshot's own epoch and refuses one two ahead of it;
 *    mbr_snapshot_parse_indexed gives the same code, asks for exactly the index words
 *    it needs, and its maps read back view for view as the text's.
 *  - kind "gossip": mbr_gossip_merge gives `expect`, and the exact `merged` bytes in
 *    both orders; (NULL, 0) and a one-byte-short buffer report the length needed and
 *    leave the buffer alone; merging both maps into a tombstone table over malloc'd
 *    storage and writing its gossip gives the same text.
 *
 *   usage: test_metadata [VECTORS_DIR]    (default: $MEMBRANE_VECTORS)
 *   last line: "test_metadata: N passed, M failed"
 */
#include "test_support.h"
}

static int f64_member(const char *obj, const char *key, double *out) {
    const char *p = member(obj, key);
    char *end;
    if (p == NULL) return 0;
    *out = strtod(p, &end);
    return end != p;
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


static int same_name(uint32_t status, const char *want) { return strcmp(mbr_status_name(status), want) == 0; }

static int accepted, reemitted_total, gossip_merged;

/* Walk one list or map with a cursor: every string of every entry equals what the
 * indexed accessor gives for the same index, and the count equals `count`. */
static void check_cursor(const char *name, const mbr_snapshot *snap, uint32_t list, size_t count) {
    static const uint32_t fields[4][2] = {{0, 0},
                                          {MBR_SNAPSHOT_MEMBER_NODE_ID, MBR_SNAPSHOT_MEMBER_HOST},
                                          {MBR_SNAPSHOT_PRIMARY_KEY, MBR_SNAPSHOT_PRIMARY_NODE},
                                          {MBR_SNAPSHOT_REPLICA_KEY, MBR_SNAPSHOT_REPLICA_KEY}};
    mbr_snapshot_cursor cursor;
    if (mbr_snapshot_cursor_init(snap, list, &cursor) != MBR_OK) {
        fail(name, "mbr_snapshot_cursor_init(%u)", list);
        return;
    }
    char a[MBR_ID_BUF_SIZE], b[MBR_ID_BUF_SIZE];
    size_t alen, blen, index = 0;
    bool more = false;
    while (mbr_snapshot_cursor_next(&cursor, &more) == MBR_OK && more) {
        for (int f = 0; f < 2; f++) {
            uint32_t field = fields[list][f];
            if (mbr_snapshot_cursor_string(&cursor, field, 0, a, sizeof a, &alen, NULL) != MBR_OK ||
                mbr_snapshot_string(snap, field, index, 0, b, sizeof b, &blen, NULL) != MBR_OK || alen != blen ||
                memcmp(a, b, alen + 1) != 0)
                fail(name, "cursor list %u entry %zu field %u differs from the indexed value", list, index, field);
        }
        if (list == MBR_SNAPSHOT_MEMBERSHIP) {
            mbr_member x, y;
            if (mbr_snapshot_cursor_member(&cursor, &x) != MBR_OK || mbr_snapshot_member(snap, index, &y) != MBR_OK ||
                x.port != y.port || x.cluster_epoch != y.cluster_epoch || x.healthy != y.healthy ||
                x.has_healthy != y.has_healthy || x.missed_heartbeats != y.missed_heartbeats)
                fail(name, "cursor member %zu differs", index);
        }
        if (list == MBR_SNAPSHOT_REPLICA_MAP) {
            size_t nodes = 0, want = 0;
            if (mbr_snapshot_cursor_replica_len(&cursor, &nodes) != MBR_OK ||
                mbr_snapshot_replica_len(snap, index, &want) != MBR_OK || nodes != want)
                fail(name, "cursor replica %zu: node count", index);
            for (size_t j = 0; j < nodes; j++)
                if (mbr_snapshot_cursor_string(&cursor, MBR_SNAPSHOT_REPLICA_NODE, j, a, sizeof a, &alen, NULL) != MBR_OK ||
                    mbr_snapshot_string(snap, MBR_SNAPSHOT_REPLICA_NODE, index, j, b, sizeof b, &blen, NULL) != MBR_OK ||
                    alen != blen || memcmp(a, b, alen + 1) != 0)
                    fail(name, "cursor replica %zu node %zu differs", index, j);
        }
        index++;
    }
    if (more || index != count) fail(name, "cursor list %u: %zu entries, info says %zu", list, index, count);
}

static bool same_text(mbr_text a, mbr_text b) { return a.ptr == b.ptr && a.len == b.len && a.has_escapes == b.has_escapes; }

/* Read a map of `snap` in batches (`capacity` entries, `node_capacity` node ids a call):
 * entry for entry the same views (the same pointers into the text) as a cursor walk of
 * `reference` (`snap` itself, or the same text parsed another way), the
 * batch cursor left on the last entry read, and `count` entries in all. A replica
 * entry with more node ids than `node_capacity` must be refused with its count, and
 * is then read alone. */
static void check_batches(const char *name, const mbr_snapshot *snap, const mbr_snapshot *reference, uint32_t list,
                          size_t count, size_t capacity, size_t node_capacity) {
    const bool primary = list == MBR_SNAPSHOT_PRIMARY_MAP;
    const uint32_t key_field = primary ? MBR_SNAPSHOT_PRIMARY_KEY : MBR_SNAPSHOT_REPLICA_KEY;
    mbr_snapshot_cursor batch, single;
    if (mbr_snapshot_cursor_init(snap, list, &batch) != MBR_OK ||
        mbr_snapshot_cursor_init(reference, list, &single) != MBR_OK) {
        fail(name, "batch: mbr_snapshot_cursor_init(%u)", list);
        return;
    }
    mbr_text keys[8], values[8], nodes[64], want;
    size_t node_ends[8], got = 0, total = 0;
    bool more = false;
    do {
        mbr_error err;
        uint32_t status = primary ? mbr_snapshot_cursor_read_primary(&batch, keys, values, capacity, &got)
                                  : mbr_snapshot_cursor_read_replica(&batch, keys, node_ends, capacity, nodes,
                                                                     node_capacity, &got, &err);
        if (status == MBR_BUFFER_TOO_SMALL && !primary) {
            size_t want_len = 0;
            mbr_snapshot_cursor peek = single;
            if (mbr_snapshot_cursor_next(&peek, &more) != MBR_OK || !more ||
                mbr_snapshot_cursor_replica_len(&peek, &want_len) != MBR_OK || err.needed != want_len ||
                want_len <= node_capacity || want_len > 64) {
                fail(name, "batch: a refused replica entry says it needs %llu node ids", (unsigned long long)err.needed);
                return;
            }
            status = mbr_snapshot_cursor_read_replica(&batch, keys, node_ends, 1, nodes, 64, &got, NULL);
        }
        if (status != MBR_OK) {
            fail(name, "batch read of list %u: %s", list, mbr_status_name(status));
            return;
        }
        for (size_t i = 0; i < got; i++) {
            if (mbr_snapshot_cursor_next(&single, &more) != MBR_OK || !more ||
                mbr_snapshot_cursor_text(&single, key_field, 0, &want) != MBR_OK || !same_text(keys[i], want)) {
                fail(name, "batch of list %u: key %zu differs", list, total + i);
                return;
            }
            if (primary) {
                if (mbr_snapshot_cursor_text(&single, MBR_SNAPSHOT_PRIMARY_NODE, 0, &want) != MBR_OK ||
                    !same_text(values[i], want))
                    fail(name, "batch: primary node %zu differs", total + i);
                continue;
            }
            size_t start = i == 0 ? 0 : node_ends[i - 1], len = 0;
            if (mbr_snapshot_cursor_replica_len(&single, &len) != MBR_OK || node_ends[i] - start != len)
                fail(name, "batch: replica entry %zu has %zu node ids, not %zu", total + i, node_ends[i] - start, len);
            for (size_t j = 0; j < len && j < node_ends[i] - start; j++)
                if (mbr_snapshot_cursor_text(&single, MBR_SNAPSHOT_REPLICA_NODE, j, &want) != MBR_OK ||
                    !same_text(nodes[start + j], want))
                    fail(name, "batch: replica entry %zu node %zu differs", total + i, j);
        }
        total += got;
        /* On the last entry read; past the end once a read gives none. */
        uint32_t on = mbr_snapshot_cursor_text(&batch, key_field, 0, &want);
        if (got > 0 ? on != MBR_OK || !same_text(want, keys[got - 1]) : on != MBR_INVALID_STATE)
            fail(name, "batch of list %u: the cursor is not on the last entry read", list);
    } while (got > 0);
    if (mbr_snapshot_cursor_next(&single, &more) != MBR_OK || more || total != count)
        fail(name, "batch of list %u: %zu entries, info says %zu", list, total, count);
}

/* Every value of `snap`; its maps read in batches against a cursor walk of `reference`. */
static void check_snapshot_values(const char *name, const mbr_snapshot *snap, const mbr_snapshot *reference) {
    mbr_snapshot_info info;
    if (mbr_snapshot_info_get(snap, &info) != MBR_OK) {
        fail(name, "mbr_snapshot_info_get");
        return;
    }
    if (info.schema_version != 5 && info.schema_version != 2) fail(name, "schema_version %lld", (long long)info.schema_version);
    char buf[MBR_ID_BUF_SIZE];
    size_t len;
    for (size_t i = 0; i < info.member_count; i++) {
        mbr_member m;
        if (mbr_snapshot_member(snap, i, &m) != MBR_OK) fail(name, "member %zu", i);
        if (mbr_snapshot_string(snap, MBR_SNAPSHOT_MEMBER_NODE_ID, i, 0, buf, sizeof buf, &len, NULL) != MBR_OK ||
            len == 0 || buf[len] != '\0')
            fail(name, "member %zu node_id", i);
    }
    mbr_member m;
    if (mbr_snapshot_member(snap, info.member_count, &m) != MBR_INVALID_ARGUMENT) fail(name, "member past the end");
    for (size_t i = 0; i < info.primary_count; i++) {
        if (mbr_snapshot_string(snap, MBR_SNAPSHOT_PRIMARY_KEY, i, 0, buf, sizeof buf, &len, NULL) != MBR_OK)
            fail(name, "primary key %zu", i);
    }
    for (size_t i = 0; i < info.replica_count; i++) {
        size_t nodes = 0;
        if (mbr_snapshot_replica_len(snap, i, &nodes) != MBR_OK) fail(name, "replica %zu", i);
        for (size_t j = 0; j < nodes; j++)
            if (mbr_snapshot_string(snap, MBR_SNAPSHOT_REPLICA_NODE, i, j, buf, sizeof buf, &len, NULL) != MBR_OK)
                fail(name, "replica %zu node %zu", i, j);
        if (nodes < 8 &&
            mbr_snapshot_string(snap, MBR_SNAPSHOT_REPLICA_NODE, i, nodes, buf, sizeof buf, &len, NULL) != MBR_INVALID_ARGUMENT)
            fail(name, "replica node past the end");
    }
    check_cursor(name, snap, MBR_SNAPSHOT_MEMBERSHIP, info.member_count);
    check_cursor(name, snap, MBR_SNAPSHOT_PRIMARY_MAP, info.primary_count);
    check_cursor(name, snap, MBR_SNAPSHOT_REPLICA_MAP, info.replica_count);
    static const size_t capacities[][2] = {{1, 1}, {2, 3}, {7, 2}, {8, 64}};
    for (size_t c = 0; c < sizeof capacities / sizeof capacities[0]; c++) {
        check_batches(name, snap, reference, MBR_SNAPSHOT_PRIMARY_MAP, info.primary_count, capacities[c][0],
                      capacities[c][1]);
        check_batches(name, snap, reference, MBR_SNAPSHOT_REPLICA_MAP, info.replica_count, capacities[c][0],
                      capacities[c][1]);
    }
}

/* mbr_snapshot_parse_indexed of a vector: the code of mbr_snapshot_parse (`code`); for
 * an accepted one, the number of index words it asks for is exactly what it needs, and
 * the maps read through the index are the maps of `plain`, view for view. */
static void check_indexed(const char *name, const char *json, size_t jlen, uint32_t code, const mbr_snapshot *plain) {
    mbr_snapshot indexed;
    mbr_error err;
    uint32_t status = mbr_snapshot_parse_indexed((const uint8_t *)json, jlen, NULL, 0, &indexed, &err);
    if (code != MBR_OK || status == MBR_OK) {
        if (status != code) fail(name, "mbr_snapshot_parse_indexed: %s, parse said %s", mbr_status_name(status), mbr_status_name(code));
        return;
    }
    if (status != MBR_BUFFER_TOO_SMALL || err.needed == 0) {
        fail(name, "mbr_snapshot_parse_indexed size query: %s", mbr_status_name(status));
        return;
    }
    size_t words = (size_t)err.needed;
    uint32_t *index = malloc(words * sizeof *index);
    if (index == NULL) abort();
    if (mbr_snapshot_parse_indexed((const uint8_t *)json, jlen, index, words - 1, &indexed, &err) != MBR_BUFFER_TOO_SMALL ||
        err.needed != words)
        fail(name, "an index a word short is not MBR_BUFFER_TOO_SMALL with the same size");
    else if (mbr_snapshot_parse_indexed((const uint8_t *)json, jlen, index, words, &indexed, &err) != MBR_OK)
        fail(name, "mbr_snapshot_parse_indexed with the words it asked for");
    else
        check_snapshot_values(name, &indexed, plain);
    free(index);
}

static int snapshot_case(const char *line) {
    size_t nlen, jlen, elen;
    char *name = string_member(line, "name", &nlen);
    char *json = string_member(line, "json", &jlen);
    char *expect = string_member(line, "expect", &elen);
    begin_case();
    if (name == NULL || json == NULL || expect == NULL) {
        fail(name ? name : "?", "malformed vector line");
        goto done;
    }
    uint32_t code = mbr_snapshot_check((const uint8_t *)json, jlen);
    if (!same_name(code, expect)) fail(name, "mbr_snapshot_check: %s, want %s", mbr_status_name(code), expect);
    mbr_snapshot snap;
    mbr_error err;
    uint32_t parsed = mbr_snapshot_parse((const uint8_t *)json, jlen, &snap, &err);
    if (parsed != code) fail(name, "mbr_snapshot_parse: %s, check said %s", mbr_status_name(parsed), mbr_status_name(code));
    check_indexed(name, json, jlen, parsed, &snap);
    if (parsed != MBR_OK) {
        if (err.status != parsed || (err.offset != MBR_NO_OFFSET && err.offset > jlen)) fail(name, "error detail");
        goto done;
    }
    accepted++;
    check_snapshot_values(name, &snap, &snap);
    size_t need = 0, got = 0;
    if (mbr_snapshot_write(&snap, NULL, 0, &need, &err) != MBR_BUFFER_TOO_SMALL || err.needed == 0) {
        fail(name, "length query");
        goto done;
    }
    need = (size_t)err.needed;
    uint8_t *first = malloc(need), *second = malloc(need);
    if (first == NULL || second == NULL) abort();
    mbr_snapshot again;
    bool canonical = false;
    if (mbr_snapshot_write(&snap, first, need, &got, NULL) != MBR_OK || got != need)
        fail(name, "mbr_snapshot_write");
    else if (mbr_snapshot_parse(first, got, &again, NULL) != MBR_OK)
        fail(name, "our own output is rejected");
    else if (mbr_snapshot_write(&again, second, need, &got, NULL) != MBR_OK || got != need ||
             memcmp(first, second, need) != 0)
        fail(name, "write -> parse -> write differs");
    else if (mbr_snapshot_is_canonical(&again, &canonical) != MBR_OK || !canonical)
        fail(name, "output not canonical");
    else
        reemitted_total++;
    free(first);
    free(second);
    mbr_snapshot_info info;
    if (mbr_snapshot_info_get(&snap, &info) == MBR_OK && info.cluster_epoch < UINT64_MAX - 2) {
        mbr_snapshot guarded;
        if (mbr_snapshot_parse_guarded((const uint8_t *)json, jlen, info.cluster_epoch + 1, &guarded, NULL) != MBR_OK)
            fail(name, "guard refuses one behind");
        if (mbr_snapshot_parse_guarded((const uint8_t *)json, jlen, info.cluster_epoch + 2, &guarded, NULL) !=
            MBR_STALE_EPOCH)
            fail(name, "guard accepts two behind");
        if (mbr_snapshot_epoch_check(info.cluster_epoch + 2, info.cluster_epoch, true) != MBR_STALE_EPOCH)
            fail(name, "mbr_snapshot_epoch_check");
    }
done:
    end_case();
    free(name);
    free(json);
    free(expect);
    return 1;
}

/* Merge a and b through a tombstone table over malloc'd storage and write its gossip. */
static uint32_t merge_via_table(const char *a, size_t alen, const char *b, size_t blen, double now, uint8_t **out,
                                size_t *out_len) {
    size_t slots_bytes = MBR_TOMBSTONE_STORAGE_BYTES(4096);
    void *slots = malloc(slots_bytes);
    mbr_tombstone_table table;
    uint32_t status = mbr_tombstone_table_init(&table, slots, slots_bytes, NULL, 0, 0x1234);
    size_t adopted;
    if (status == MBR_OK) status = mbr_tombstone_merge_gossip(&table, (const uint8_t *)a, alen, now, &adopted, NULL);
    if (status == MBR_OK) status = mbr_tombstone_merge_gossip(&table, (const uint8_t *)b, blen, now, &adopted, NULL);
    mbr_error err;
    *out = NULL;
    if (status == MBR_OK && mbr_tombstone_write_gossip(&table, now, NULL, 0, out_len, &err) == MBR_BUFFER_TOO_SMALL) {
        *out = malloc((size_t)err.needed);
        status = mbr_tombstone_write_gossip(&table, now, *out, (size_t)err.needed, out_len, NULL);
    }
    free(slots);
    return status;
}

static int gossip_case(const char *line) {
    size_t nlen, alen, blen, elen, mlen = 0;
    char *name = string_member(line, "name", &nlen);
    char *a = string_member(line, "a", &alen);
    char *b = string_member(line, "b", &blen);
    char *expect = string_member(line, "expect", &elen);
    char *merged = string_member(line, "merged", &mlen);
    double now;
    begin_case();
    if (name == NULL || a == NULL || b == NULL || expect == NULL || !f64_member(line, "now", &now)) {
        fail(name ? name : "?", "malformed vector line");
        goto done;
    }
    size_t written = 0;
    uint32_t code = mbr_gossip_merge((const uint8_t *)a, alen, (const uint8_t *)b, blen, now, NULL, 0, &written);
    if (code == MBR_BUFFER_TOO_SMALL) code = MBR_OK;
    if (!same_name(code, expect)) {
        fail(name, "mbr_gossip_merge: %s, want %s", mbr_status_name(code), expect);
        goto done;
    }
    uint8_t *table_text = NULL;
    size_t table_len = 0;
    uint32_t via_table = merge_via_table(a, alen, b, blen, now, &table_text, &table_len);
    if (via_table != code) fail(name, "table merge: %s, want %s", mbr_status_name(via_table), expect);
    if (code != MBR_OK) {
        free(table_text);
        goto done;
    }
    if (merged == NULL) {
        fail(name, "no merged text");
        free(table_text);
        goto done;
    }
    if (written != mlen) fail(name, "length query %zu, want %zu", written, mlen);
    uint8_t *out = malloc(mlen + 1);
    if (out == NULL) abort();
    for (int order = 0; order < 2; order++) {
        const char *x = order ? b : a, *y = order ? a : b;
        size_t xl = order ? blen : alen, yl = order ? alen : blen;
        written = 0;
        memset(out, 0xA5, mlen + 1);
        uint32_t st = mbr_gossip_merge((const uint8_t *)x, xl, (const uint8_t *)y, yl, now, out, mlen + 1, &written);
        if (st != MBR_OK || written != mlen || memcmp(out, merged, mlen) != 0 || out[mlen] != 0xA5)
            fail(name, "merged text differs (order %d): %s %.*s", order, mbr_status_name(st), (int)written, out);
    }
    if (mlen > 0) {
        memset(out, 0xA5, mlen + 1);
        written = 0;
        if (mbr_gossip_merge((const uint8_t *)a, alen, (const uint8_t *)b, blen, now, out, mlen - 1, &written) !=
                MBR_BUFFER_TOO_SMALL ||
            written != mlen || out[0] != 0xA5)
            fail(name, "one byte short");
    }
    if (table_len != mlen || table_text == NULL || memcmp(table_text, merged, mlen) != 0)
        fail(name, "table gossip differs: %.*s", (int)table_len, table_text ? (const char *)table_text : "");
    gossip_merged++;
    free(out);
    free(table_text);
done:
    end_case();
    free(name);
    free(a);
    free(b);
    free(expect);
    free(merged);
    return 1;
}

static int snapshots, gossips;
static int each_case(const char *dir, const char *line) {
    (void)dir;
    size_t len;
    char *kind = string_member(line, "kind", &len);
    int n = 0;
    if (kind != NULL && strcmp(kind, "snapshot") == 0) {
        snapshots++;
        n = snapshot_case(line);
    } else if (kind != NULL && strcmp(kind, "gossip") == 0) {
        gossips++;
        n = gossip_case(line);
    }
    free(kind);
    return n;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : getenv("MEMBRANE_VECTORS");
    char probe[1024];
    FILE *f = NULL;
    if (dir != NULL) {
        snprintf(probe, sizeof probe, "%s/metadata.jsonl", dir);
        f = fopen(probe, "r");
    }
    if (f == NULL) {
        printf("\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n");
        printf("!!! CONFORMANCE VECTORS NOT FOUND at %s\n", dir ? probe : "(no directory given)");
        printf("!!! Pass the folder holding metadata.jsonl, or set MEMBRANE_VECTORS. This test\n");
        printf("!!! FAILS rather than pass without checking anything.\n");
        printf("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\n");
        printf("test_metadata: 0 passed, 1 failed\n");
        return 1;
    }
    fclose(f);
    for_lines(dir, "metadata.jsonl", each_case);
    printf("test_metadata: %d snapshots (%d accepted, %d re-emitted canonically), %d gossip merges (%d merged)\n",
           snapshots, accepted, reemitted_total, gossips, gossip_merged);
    if (snapshots == 0 || gossips == 0 || accepted == 0 || gossip_merged == 0) {
        printf("FAIL: a kind of vector is missing\n");
        failures++;
    }
    printf("test_metadata: %d passed, %d failed\n", passes, failures);
    return failures == 0 ? 0 : 1;
}
