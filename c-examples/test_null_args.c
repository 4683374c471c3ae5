/*
 * test_null_args: NULL for every pointer argument of every function returns a status
 * (MBR_NULL_POINTER) and never crashes; (NULL, 0) byte ranges are empty ranges; the
 * optional `mbr_error *` may be NULL; out-parameters are left untouched on failure;
 * storage that was never initialised, or is finished, is MBR_INVALID_STATE; unknown
 * numbers are MBR_INVALID_ARGUMENT; string queries never return NULL.
 *
 * check.sh verifies that every function declared in membrane_frame.h appears here.
 *   last line: "test_null_args: N passed, M failed"
 */
#define _POSIX_C_SOURCE 200809L /* fileno */
#include <stdio.h>
#include <string.h>

#include "membrane_frame.h"

static int passes, failures;

#define EXPECT(call, want)                                                                         \
    do {                                                                                           \
        uint32_t got_ = (call);                                                                    \
        if (got_ == (uint32_t)(want)) {                                                            \
            passes++;                                                                              \
        } else {                                                                                   \
            failures++;                                                                            \
            printf("FAIL line %d: %s\n  got %s, want %s\n", __LINE__, #call, mbr_status_name(got_), \
                   mbr_status_name(want));                                                         \
        }                                                                                          \
    } while (0)

#define EXPECT_TRUE(cond)                                                                          \
    do {                                                                                           \
        if (cond) {                                                                                \
            passes++;                                                                              \
        } else {                                                                                   \
            failures++;                                                                            \
            printf("FAIL line %d: %s\n", __LINE__, #cond);                                         \
        }                                                                                          \
    } while (0)

/* Fill an out-parameter with a sentinel; check it is still there after a failure. */
#define POISON(x) memset(&(x), 0xA5, sizeof(x))
static int poisoned(const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i] != 0xA5) return 0;
    return 1;
}
#define UNTOUCHED(x) EXPECT_TRUE(poisoned(&(x), sizeof(x)))

#define LIT(s) { (s), sizeof(s) - 1 }

static int sink_calls;
static int sink(void *userdata, const uint8_t *buf, size_t len) {
    (void)userdata;
    (void)buf;
    (void)len;
    sink_calls++;
    return 0;
}
static int failing_sink(void *userdata, const uint8_t *buf, size_t len) {
    (void)userdata;
    (void)buf;
    (void)len;
    return 5; /* EIO */
}

/* ---- cluster metadata: snapshots, gossip, tombstone tables, op bodies, ref counts ---- */
static int sweep_calls;
static void on_id(void *userdata, const char *id, size_t len) {
    (void)userdata;
    if (id != NULL && id[len] == '\0') sweep_calls++;
}

static void metadata(void) {
    static const char snap_json[] =
        "{\"captured_at\": 1.5, \"cluster_epoch\": 7, \"membership\": [{\"host\": \"h\", \"node_id\": \"n\\u00e9\", "
        "\"port\": 80}], \"schema_version\": 5, \"server\": {\"error_count\": 0, \"request_count\": 1}, "
        "\"shards\": {\"primary_map\": {\"k\": \"n1\"}, \"replica_map\": {\"k\": [\"n2\", \"n3\"]}}}";
    const uint8_t *st = (const uint8_t *)snap_json;
    size_t sl = sizeof snap_json - 1;
    uint8_t out[1024];
    size_t n = 12345;
    bool flag = false;
    mbr_error err;
    mbr_snapshot snap, zeroed;
    memset(&zeroed, 0, sizeof zeroed);

    EXPECT(mbr_snapshot_check(NULL, 5), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_check(NULL, 0), MBR_SNAPSHOT_JSON);
    EXPECT(mbr_snapshot_check(st, sl), MBR_OK);
    POISON(snap);
    EXPECT(mbr_snapshot_parse(NULL, sl, &snap, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_parse(st, sl, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_parse(st, sl - 1, &snap, &err), MBR_SNAPSHOT_JSON);
    UNTOUCHED(snap);
    /* The maps' index: four words for the primary entry, three and two a node for the
     * replica entry. */
    uint32_t index[11];
    POISON(snap);
    EXPECT(mbr_snapshot_parse_indexed(NULL, sl, index, 11, &snap, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_parse_indexed(st, sl, index, 11, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_parse_indexed(st, sl, NULL, 11, &snap, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_parse_indexed(st, sl - 1, NULL, 0, &snap, &err), MBR_SNAPSHOT_JSON);
    EXPECT(mbr_snapshot_parse_indexed(st, sl, NULL, 0, &snap, &err), MBR_BUFFER_TOO_SMALL);
    EXPECT_TRUE(err.needed == 11);
    EXPECT(mbr_snapshot_parse_indexed(st, sl, index, 10, &snap, NULL), MBR_BUFFER_TOO_SMALL);
    UNTOUCHED(snap);
    EXPECT(mbr_snapshot_parse_indexed(st, sl, index, 11, &snap, NULL), MBR_OK);
    POISON(snap);
    EXPECT(mbr_snapshot_parse_guarded(NULL, sl, 7, &snap, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_parse_guarded(st, sl, 7, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_parse_guarded(st, sl, 9, &snap, &err), MBR_STALE_EPOCH);
    UNTOUCHED(snap);
    EXPECT(mbr_snapshot_parse_guarded(st, sl, 8, &snap, NULL), MBR_OK);
    EXPECT(mbr_snapshot_parse(st, sl, &snap, NULL), MBR_OK);
    EXPECT(mbr_snapshot_epoch_check(10, 9, true), MBR_OK);
    EXPECT(mbr_snapshot_epoch_check(10, 8, true), MBR_STALE_EPOCH);
    EXPECT(mbr_snapshot_epoch_check(10, 10, false), MBR_STALE_EPOCH);

    mbr_snapshot_info info;
    POISON(info);
    EXPECT(mbr_snapshot_info_get(NULL, &info), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_info_get(&snap, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_info_get(&zeroed, &info), MBR_INVALID_STATE);
    UNTOUCHED(info);
    EXPECT(mbr_snapshot_info_get(&snap, &info), MBR_OK);
    EXPECT_TRUE(info.cluster_epoch == 7 && info.captured_at == 1.5 && info.member_count == 1 &&
                info.primary_count == 1 && info.replica_count == 1 && info.request_count == 1);
    mbr_member member;
    POISON(member);
    EXPECT(mbr_snapshot_member(NULL, 0, &member), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_member(&snap, 0, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_member(&snap, 1, &member), MBR_INVALID_ARGUMENT);
    UNTOUCHED(member);
    EXPECT(mbr_snapshot_member(&snap, 0, &member), MBR_OK);
    EXPECT_TRUE(member.port == 80 && !member.has_cluster_epoch && !member.has_healthy);
    EXPECT(mbr_snapshot_replica_len(NULL, 0, &n), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_replica_len(&snap, 0, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_replica_len(&snap, 1, &n), MBR_INVALID_ARGUMENT);
    EXPECT(mbr_snapshot_replica_len(&snap, 0, &n), MBR_OK);
    EXPECT_TRUE(n == 2);
    char id[MBR_ID_BUF_SIZE];
    n = 12345;
    EXPECT(mbr_snapshot_string(NULL, MBR_SNAPSHOT_MEMBER_NODE_ID, 0, 0, id, sizeof id, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_string(&snap, MBR_SNAPSHOT_MEMBER_NODE_ID, 0, 0, NULL, sizeof id, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_string(&snap, MBR_SNAPSHOT_MEMBER_NODE_ID, 0, 0, id, sizeof id, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_string(&snap, MBR_SNAPSHOT_MEMBER_NODE_ID, 0, 0, NULL, 0, &n, &err), MBR_BUFFER_TOO_SMALL);
    EXPECT_TRUE(err.needed == 4 && n == 12345);
    EXPECT(mbr_snapshot_string(&snap, 99, 0, 0, id, sizeof id, &n, NULL), MBR_INVALID_ARGUMENT);
    EXPECT(mbr_snapshot_string(&zeroed, MBR_SNAPSHOT_MEMBER_HOST, 0, 0, id, sizeof id, &n, NULL), MBR_INVALID_STATE);
    EXPECT(mbr_snapshot_string(&snap, MBR_SNAPSHOT_MEMBER_NODE_ID, 0, 0, id, sizeof id, &n, NULL), MBR_OK);
    EXPECT_TRUE(n == 3 && strcmp(id, "n\xc3\xa9") == 0);
    EXPECT(mbr_snapshot_string(&snap, MBR_SNAPSHOT_PRIMARY_NODE, 0, 0, id, sizeof id, &n, NULL), MBR_OK);
    EXPECT_TRUE(strcmp(id, "n1") == 0);
    EXPECT(mbr_snapshot_string(&snap, MBR_SNAPSHOT_REPLICA_NODE, 0, 1, id, sizeof id, &n, NULL), MBR_OK);
    EXPECT_TRUE(strcmp(id, "n3") == 0);
    EXPECT(mbr_snapshot_string(&snap, MBR_SNAPSHOT_REPLICA_NODE, 0, 2, id, sizeof id, &n, NULL), MBR_INVALID_ARGUMENT);

    /* The cursor: one pass over a list or map. */
    mbr_snapshot_cursor cursor, zeroed_cursor;
    memset(&zeroed_cursor, 0, sizeof zeroed_cursor);
    POISON(cursor);
    EXPECT(mbr_snapshot_cursor_init(NULL, MBR_SNAPSHOT_MEMBERSHIP, &cursor), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_init(&snap, MBR_SNAPSHOT_MEMBERSHIP, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_init(&zeroed, MBR_SNAPSHOT_MEMBERSHIP, &cursor), MBR_INVALID_STATE);
    EXPECT(mbr_snapshot_cursor_init(&snap, 99, &cursor), MBR_INVALID_ARGUMENT);
    UNTOUCHED(cursor);
    EXPECT(mbr_snapshot_cursor_init(&snap, MBR_SNAPSHOT_MEMBERSHIP, &cursor), MBR_OK);
    POISON(member);
    EXPECT(mbr_snapshot_cursor_member(&cursor, &member), MBR_INVALID_STATE); /* before the first next */
    UNTOUCHED(member);
    EXPECT(mbr_snapshot_cursor_next(NULL, &flag), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_next(&cursor, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_next(&zeroed_cursor, &flag), MBR_INVALID_STATE);
    flag = false;
    EXPECT(mbr_snapshot_cursor_next(&cursor, &flag), MBR_OK);
    EXPECT_TRUE(flag);
    EXPECT(mbr_snapshot_cursor_member(NULL, &member), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_member(&cursor, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_member(&zeroed_cursor, &member), MBR_INVALID_STATE);
    EXPECT(mbr_snapshot_cursor_member(&cursor, &member), MBR_OK);
    EXPECT_TRUE(member.port == 80 && !member.has_cluster_epoch);
    n = 12345;
    EXPECT(mbr_snapshot_cursor_string(NULL, MBR_SNAPSHOT_MEMBER_NODE_ID, 0, id, sizeof id, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_string(&cursor, MBR_SNAPSHOT_MEMBER_NODE_ID, 0, NULL, sizeof id, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_string(&cursor, MBR_SNAPSHOT_MEMBER_NODE_ID, 0, id, sizeof id, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_string(&zeroed_cursor, MBR_SNAPSHOT_MEMBER_HOST, 0, id, sizeof id, &n, NULL),
           MBR_INVALID_STATE);
    EXPECT(mbr_snapshot_cursor_string(&cursor, MBR_SNAPSHOT_PRIMARY_KEY, 0, id, sizeof id, &n, NULL), MBR_INVALID_ARGUMENT);
    EXPECT(mbr_snapshot_cursor_string(&cursor, MBR_SNAPSHOT_MEMBER_NODE_ID, 0, id, 3, &n, &err), MBR_BUFFER_TOO_SMALL);
    EXPECT_TRUE(err.needed == 4 && n == 12345);
    EXPECT(mbr_snapshot_cursor_string(&cursor, MBR_SNAPSHOT_MEMBER_NODE_ID, 0, id, sizeof id, &n, NULL), MBR_OK);
    EXPECT_TRUE(n == 3 && strcmp(id, "n\xc3\xa9") == 0);
    mbr_text node_text;
    POISON(node_text);
    EXPECT(mbr_snapshot_cursor_text(NULL, MBR_SNAPSHOT_MEMBER_NODE_ID, 0, &node_text), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_text(&cursor, MBR_SNAPSHOT_MEMBER_NODE_ID, 0, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_text(&zeroed_cursor, MBR_SNAPSHOT_MEMBER_NODE_ID, 0, &node_text), MBR_INVALID_STATE);
    EXPECT(mbr_snapshot_cursor_text(&cursor, MBR_SNAPSHOT_PRIMARY_KEY, 0, &node_text), MBR_INVALID_ARGUMENT);
    UNTOUCHED(node_text);
    EXPECT(mbr_snapshot_cursor_text(&cursor, MBR_SNAPSHOT_MEMBER_NODE_ID, 0, &node_text), MBR_OK);
    EXPECT(mbr_text_decode(node_text, id, sizeof id, &n, NULL), MBR_OK); /* the same value, escaped or not */
    EXPECT_TRUE(n == 3 && strcmp(id, "n\xc3\xa9") == 0);
    EXPECT(mbr_snapshot_cursor_replica_len(&cursor, &n), MBR_INVALID_ARGUMENT); /* a membership cursor */
    EXPECT(mbr_snapshot_cursor_next(&cursor, &flag), MBR_OK);
    EXPECT_TRUE(!flag);
    EXPECT(mbr_snapshot_cursor_next(&cursor, &flag), MBR_OK); /* stays at the end */
    EXPECT_TRUE(!flag);
    EXPECT(mbr_snapshot_cursor_member(&cursor, &member), MBR_INVALID_STATE);
    EXPECT(mbr_snapshot_cursor_init(&snap, MBR_SNAPSHOT_REPLICA_MAP, &cursor), MBR_OK);
    EXPECT(mbr_snapshot_cursor_next(&cursor, &flag), MBR_OK);
    EXPECT(mbr_snapshot_cursor_replica_len(NULL, &n), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_replica_len(&cursor, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_replica_len(&zeroed_cursor, &n), MBR_INVALID_STATE);
    EXPECT(mbr_snapshot_cursor_replica_len(&cursor, &n), MBR_OK);
    EXPECT_TRUE(n == 2);
    EXPECT(mbr_snapshot_cursor_member(&cursor, &member), MBR_INVALID_ARGUMENT); /* a map cursor */
    EXPECT(mbr_snapshot_cursor_string(&cursor, MBR_SNAPSHOT_REPLICA_NODE, 1, id, sizeof id, &n, NULL), MBR_OK);
    EXPECT_TRUE(strcmp(id, "n3") == 0);
    EXPECT(mbr_snapshot_cursor_string(&cursor, MBR_SNAPSHOT_REPLICA_NODE, 2, id, sizeof id, &n, NULL), MBR_INVALID_ARGUMENT);
    EXPECT(mbr_snapshot_cursor_text(&cursor, MBR_SNAPSHOT_REPLICA_NODE, 1, &node_text), MBR_OK);
    EXPECT_TRUE(node_text.len == 2 && !node_text.has_escapes && memcmp(node_text.ptr, "n3", 2) == 0);
    EXPECT(mbr_snapshot_cursor_text(&cursor, MBR_SNAPSHOT_REPLICA_NODE, 2, &node_text), MBR_INVALID_ARGUMENT);
    mbr_text node_texts[2];
    POISON(node_texts);
    n = 12345;
    EXPECT(mbr_snapshot_cursor_replica_texts(NULL, node_texts, 2, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_replica_texts(&cursor, NULL, 2, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_replica_texts(&cursor, node_texts, 2, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_replica_texts(&zeroed_cursor, node_texts, 2, &n, NULL), MBR_INVALID_STATE);
    EXPECT(mbr_snapshot_cursor_replica_texts(&cursor, node_texts, 1, &n, &err), MBR_BUFFER_TOO_SMALL);
    EXPECT_TRUE(err.needed == 2 && n == 12345);
    EXPECT(mbr_snapshot_cursor_replica_texts(&cursor, NULL, 0, &n, &err), MBR_BUFFER_TOO_SMALL); /* the count */
    UNTOUCHED(node_texts);
    EXPECT(mbr_snapshot_cursor_replica_texts(&cursor, node_texts, 2, &n, NULL), MBR_OK);
    EXPECT_TRUE(n == 2 && node_texts[1].len == 2 && memcmp(node_texts[1].ptr, "n3", 2) == 0);
    EXPECT(mbr_snapshot_cursor_string(&cursor, MBR_SNAPSHOT_REPLICA_KEY, 0, id, sizeof id, &n, NULL), MBR_OK);
    EXPECT_TRUE(strcmp(id, "k") == 0);
    EXPECT(mbr_snapshot_cursor_init(&snap, MBR_SNAPSHOT_PRIMARY_MAP, &cursor), MBR_OK);
    EXPECT(mbr_snapshot_cursor_next(&cursor, &flag), MBR_OK);
    EXPECT(mbr_snapshot_cursor_string(&cursor, MBR_SNAPSHOT_PRIMARY_NODE, 0, id, sizeof id, &n, NULL), MBR_OK);
    EXPECT_TRUE(strcmp(id, "n1") == 0);

    /* batch reads of the maps */
    mbr_text keys[2], values[2];
    size_t node_ends[2];
    n = 12345;
    EXPECT(mbr_snapshot_cursor_init(&snap, MBR_SNAPSHOT_PRIMARY_MAP, &cursor), MBR_OK);
    EXPECT(mbr_snapshot_cursor_read_primary(NULL, keys, values, 2, &n), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_read_primary(&cursor, NULL, values, 2, &n), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_read_primary(&cursor, keys, NULL, 2, &n), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_read_primary(&cursor, keys, values, 2, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_read_primary(&zeroed_cursor, keys, values, 2, &n), MBR_INVALID_STATE);
    EXPECT(mbr_snapshot_cursor_read_primary(&cursor, keys, values, 0, &n), MBR_INVALID_ARGUMENT);
    EXPECT(mbr_snapshot_cursor_read_replica(&cursor, keys, node_ends, 2, node_texts, 2, &n, NULL),
           MBR_INVALID_ARGUMENT); /* a primary map cursor */
    EXPECT_TRUE(n == 12345);
    EXPECT(mbr_snapshot_cursor_read_primary(&cursor, keys, values, 2, &n), MBR_OK);
    EXPECT_TRUE(n == 1 && values[0].len == 2 && !values[0].has_escapes && memcmp(values[0].ptr, "n1", 2) == 0);
    EXPECT(mbr_snapshot_cursor_string(&cursor, MBR_SNAPSHOT_PRIMARY_NODE, 0, id, sizeof id, &n, NULL), MBR_OK);
    EXPECT_TRUE(strcmp(id, "n1") == 0); /* on the last entry read */
    EXPECT(mbr_snapshot_cursor_read_primary(&cursor, keys, values, 2, &n), MBR_OK);
    EXPECT_TRUE(n == 0); /* the end, and past it */
    EXPECT(mbr_snapshot_cursor_text(&cursor, MBR_SNAPSHOT_PRIMARY_KEY, 0, &node_text), MBR_INVALID_STATE);
    EXPECT(mbr_snapshot_cursor_read_primary(&cursor, keys, values, 2, &n), MBR_OK);
    EXPECT_TRUE(n == 0);
    n = 12345;
    EXPECT(mbr_snapshot_cursor_init(&snap, MBR_SNAPSHOT_REPLICA_MAP, &cursor), MBR_OK);
    EXPECT(mbr_snapshot_cursor_read_replica(NULL, keys, node_ends, 2, node_texts, 2, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_read_replica(&cursor, NULL, node_ends, 2, node_texts, 2, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_read_replica(&cursor, keys, NULL, 2, node_texts, 2, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_read_replica(&cursor, keys, node_ends, 2, NULL, 2, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_read_replica(&cursor, keys, node_ends, 2, node_texts, 2, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_cursor_read_replica(&zeroed_cursor, keys, node_ends, 2, node_texts, 2, &n, NULL),
           MBR_INVALID_STATE);
    EXPECT(mbr_snapshot_cursor_read_replica(&cursor, keys, node_ends, 0, node_texts, 2, &n, NULL), MBR_INVALID_ARGUMENT);
    EXPECT(mbr_snapshot_cursor_read_primary(&cursor, keys, values, 2, &n), MBR_INVALID_ARGUMENT); /* a replica cursor */
    EXPECT(mbr_snapshot_cursor_read_replica(&cursor, keys, node_ends, 2, node_texts, 1, &n, &err), MBR_BUFFER_TOO_SMALL);
    EXPECT_TRUE(err.needed == 2 && n == 12345);
    EXPECT(mbr_snapshot_cursor_text(&cursor, MBR_SNAPSHOT_REPLICA_KEY, 0, &node_text), MBR_INVALID_STATE); /* not moved */
    EXPECT(mbr_snapshot_cursor_read_replica(&cursor, keys, node_ends, 2, node_texts, 2, &n, NULL), MBR_OK);
    EXPECT_TRUE(n == 1 && node_ends[0] == 2 && keys[0].len == 1 && memcmp(keys[0].ptr, "k", 1) == 0);
    EXPECT_TRUE(node_texts[1].len == 2 && memcmp(node_texts[1].ptr, "n3", 2) == 0);
    EXPECT(mbr_snapshot_cursor_replica_len(&cursor, &n), MBR_OK);
    EXPECT_TRUE(n == 2); /* on the last entry read */
    EXPECT(mbr_snapshot_cursor_read_replica(&cursor, keys, node_ends, 2, node_texts, 2, &n, NULL), MBR_OK);
    EXPECT_TRUE(n == 0);

    EXPECT(mbr_snapshot_is_canonical(NULL, &flag), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_is_canonical(&snap, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_is_canonical(&snap, &flag), MBR_OK);
    EXPECT_TRUE(flag);
    EXPECT(mbr_snapshot_set_cluster_epoch(NULL, 8), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_set_cluster_epoch(&zeroed, 8), MBR_INVALID_STATE);
    EXPECT(mbr_snapshot_set_cluster_epoch(&snap, 8), MBR_OK);
    n = 12345;
    memset(out, 0xA5, sizeof out);
    EXPECT(mbr_snapshot_write(NULL, out, sizeof out, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_write(&snap, NULL, sizeof out, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_write(&snap, out, sizeof out, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_snapshot_write(&zeroed, out, sizeof out, &n, NULL), MBR_INVALID_STATE);
    EXPECT(mbr_snapshot_write(&snap, out, 10, &n, &err), MBR_BUFFER_TOO_SMALL);
    EXPECT_TRUE(err.needed == sl && n == 12345 && poisoned(out, sizeof out));
    EXPECT(mbr_snapshot_write(&snap, out, sizeof out, &n, NULL), MBR_OK);
    EXPECT_TRUE(n == sl && memcmp(out, "{\"captured_at\": 1.5, \"cluster_epoch\": 8,", 40) == 0);

    /* gossip */
    static const char ga[] = "{\"h2\": 20.5, \"h1\": 10}", gb[] = "{\"h1\": 30, \"h0\": 1}";
    const uint8_t *a = (const uint8_t *)ga, *b = (const uint8_t *)gb;
    size_t al = sizeof ga - 1, bl = sizeof gb - 1;
    EXPECT(mbr_gossip_check(NULL, 1), MBR_NULL_POINTER);
    EXPECT(mbr_gossip_check(NULL, 0), MBR_TOMBSTONE_JSON);
    EXPECT(mbr_gossip_check((const uint8_t *)"{\"h\": \"x\"}", 10), MBR_TOMBSTONE_FIELD);
    EXPECT(mbr_gossip_check(a, al), MBR_OK);
    n = 12345;
    EXPECT(mbr_gossip_merge(NULL, al, b, bl, 5.0, out, sizeof out, &n), MBR_NULL_POINTER);
    EXPECT(mbr_gossip_merge(a, al, NULL, bl, 5.0, out, sizeof out, &n), MBR_NULL_POINTER);
    EXPECT(mbr_gossip_merge(a, al, b, bl, 5.0, NULL, sizeof out, &n), MBR_NULL_POINTER);
    EXPECT(mbr_gossip_merge(a, al, b, bl, 5.0, out, sizeof out, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_gossip_merge(a, al - 1, b, bl, 5.0, out, sizeof out, &n), MBR_TOMBSTONE_JSON);
    EXPECT_TRUE(n == 12345);
    EXPECT(mbr_gossip_merge(NULL, 0, b, bl, 5.0, out, sizeof out, &n), MBR_TOMBSTONE_JSON);
    memset(out, 0xA5, sizeof out);
    EXPECT(mbr_gossip_merge(a, al, b, bl, 5.0, NULL, 0, &n), MBR_BUFFER_TOO_SMALL);
    EXPECT_TRUE(n == 24);
    EXPECT(mbr_gossip_merge(a, al, b, bl, 5.0, out, 23, &n), MBR_BUFFER_TOO_SMALL);
    EXPECT_TRUE(n == 24 && poisoned(out, sizeof out));
    EXPECT(mbr_gossip_merge(a, al, b, bl, 5.0, out, 24, &n), MBR_OK);
    EXPECT_TRUE(n == 24 && memcmp(out, "{\"h1\": 30.0, \"h2\": 20.5}", 24) == 0);

    /* tombstone tables */
    static uint64_t slots[MBR_TOMBSTONE_STORAGE_BYTES(4) / 8 + 1], slots2[MBR_TOMBSTONE_STORAGE_BYTES(4) / 8 + 1];
    static uint64_t nodes[MBR_NODE_STORAGE_BYTES(2) / 8 + 1];
    mbr_tombstone_table table, other, zt;
    memset(&zt, 0, sizeof zt);
    mbr_str h1 = LIT("h1"), h4 = LIT("h4"), h9 = LIT("h9"), na = LIT("node-a"), none = {NULL, 0};
    EXPECT(mbr_tombstone_table_init(NULL, slots, sizeof slots, nodes, sizeof nodes, 0), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_table_init(&table, NULL, sizeof slots, nodes, sizeof nodes, 0), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_table_init(&table, slots, 0, nodes, sizeof nodes, 0), MBR_INVALID_ARGUMENT);
    EXPECT(mbr_tombstone_table_init(&table, slots, sizeof slots, NULL, 8, 0), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_table_init(&table, slots, sizeof slots, nodes, sizeof nodes, 42), MBR_OK);
    EXPECT(mbr_tombstone_table_init(&other, slots2, sizeof slots2, NULL, 0, 0), MBR_OK);
    size_t len = 9, cap = 9, ncap = 9;
    EXPECT(mbr_tombstone_table_stats(NULL, &len, &cap, &ncap), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_table_stats(&table, NULL, &cap, &ncap), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_table_stats(&table, &len, NULL, &ncap), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_table_stats(&table, &len, &cap, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_table_stats(&zt, &len, &cap, &ncap), MBR_INVALID_STATE);
    EXPECT(mbr_tombstone_table_stats(&table, &len, &cap, &ncap), MBR_OK);
    EXPECT_TRUE(len == 0 && cap >= 4 && ncap >= 2);
    EXPECT(mbr_tombstone_record(NULL, h1, 10.0, na, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_record(&zt, h1, 10.0, na, NULL), MBR_INVALID_STATE);
    EXPECT(mbr_tombstone_record(&table, none, 10.0, na, &err), MBR_TOMBSTONE_FIELD);
    EXPECT(mbr_tombstone_record(&table, h1, 1.0 / 0.0, na, NULL), MBR_TOMBSTONE_FIELD);
    mbr_str dangling = {NULL, 3};
    EXPECT(mbr_tombstone_record(&table, dangling, 10.0, na, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_record(&table, h1, 10.0, na, NULL), MBR_OK);
    EXPECT(mbr_tombstone_record(&table, h1, 5.0, none, NULL), MBR_OK);
    size_t adopted = 12345;
    EXPECT(mbr_tombstone_merge_gossip(NULL, a, al, 0.0, &adopted, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_merge_gossip(&table, NULL, al, 0.0, &adopted, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_merge_gossip(&table, a, al, 0.0, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_merge_gossip(&table, a, al - 1, 0.0, &adopted, NULL), MBR_TOMBSTONE_JSON);
    EXPECT_TRUE(adopted == 12345);
    EXPECT(mbr_tombstone_merge_gossip(&table, a, al, 0.0, &adopted, NULL), MBR_OK);
    EXPECT_TRUE(adopted == 1);
    EXPECT(mbr_tombstone_merge_table(NULL, &table, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_merge_table(&other, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_merge_table(&other, &other, NULL), MBR_INVALID_ARGUMENT);
    EXPECT(mbr_tombstone_merge_table(&other, &zt, NULL), MBR_INVALID_STATE);
    EXPECT(mbr_tombstone_merge_table(&other, &table, &err), MBR_TABLE_FULL); /* other has no node list */
    double until = -1;
    EXPECT(mbr_tombstone_get(NULL, h1, &until, &flag), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_get(&table, h1, NULL, &flag), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_get(&table, h1, &until, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_get(&table, h1, &until, &flag), MBR_OK);
    EXPECT_TRUE(flag && until == 10.0);
    EXPECT(mbr_tombstone_get(&table, h9, &until, &flag), MBR_OK);
    EXPECT_TRUE(!flag);
    EXPECT(mbr_tombstone_is_active(NULL, h1, 9.0, &flag), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_is_active(&table, h1, 9.0, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_is_active(&table, h1, 9.0, &flag), MBR_OK);
    EXPECT_TRUE(flag);
    EXPECT(mbr_tombstone_is_active(&table, h1, 10.0, &flag), MBR_OK);
    EXPECT_TRUE(!flag); /* expired at now == until */
    n = 12345;
    memset(out, 0xA5, sizeof out);
    EXPECT(mbr_tombstone_write_gossip(NULL, 0.0, out, sizeof out, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_write_gossip(&table, 0.0, NULL, sizeof out, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_write_gossip(&table, 0.0, out, sizeof out, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_write_gossip(&table, 0.0, out, 5, &n, &err), MBR_BUFFER_TOO_SMALL);
    EXPECT_TRUE(err.needed == 24 && n == 12345 && poisoned(out, sizeof out));
    EXPECT(mbr_tombstone_write_gossip(&table, 0.0, out, sizeof out, &n, NULL), MBR_OK);
    EXPECT_TRUE(n == 24 && memcmp(out, "{\"h1\": 10.0, \"h2\": 20.5}", 24) == 0);

    static const char opt[] = "{\"content_hash\": \"h3\", \"until\": 50, \"node_id\": \"node-b\"}";
    static const char opd[] = "{\"content_hash\": \"h4\", \"node_id\": \"node-a\", \"tombstone_until\": null}";
    EXPECT(mbr_tombstone_apply_op_tombstone(NULL, (const uint8_t *)opt, sizeof opt - 1, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_apply_op_tombstone(&table, NULL, 3, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_apply_op_tombstone(&table, NULL, 0, NULL), MBR_TOMBSTONE_JSON);
    EXPECT(mbr_tombstone_apply_op_tombstone(&table, (const uint8_t *)opt, sizeof opt - 1, NULL), MBR_OK);
    until = -1;
    EXPECT(mbr_tombstone_apply_op_delete(NULL, (const uint8_t *)opd, sizeof opd - 1, 100.0, &until, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_apply_op_delete(&table, NULL, 3, 100.0, &until, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_apply_op_delete(&table, (const uint8_t *)opd, sizeof opd - 1, 100.0, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_apply_op_delete(&table, (const uint8_t *)"{\"content_hash\": \"h4\"}", 22, 100.0, &until, NULL),
           MBR_TOMBSTONE_FIELD); /* no node_id */
    EXPECT_TRUE(until == -1);
    EXPECT(mbr_tombstone_apply_op_delete(&table, (const uint8_t *)opd, sizeof opd - 1, 100.0, &until, NULL), MBR_OK);
    EXPECT_TRUE(until == 160.0);
    EXPECT(mbr_tombstone_record(&table, h9, 1.0, none, &err), MBR_TABLE_FULL); /* 4 slots: h1 h2 h3 h4 */
    n = 12345;
    sweep_calls = 0;
    EXPECT(mbr_tombstone_sweep(NULL, 30.0, on_id, NULL, &n), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_sweep(&table, 30.0, on_id, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_sweep(&zt, 30.0, on_id, NULL, &n), MBR_INVALID_STATE);
    EXPECT(mbr_tombstone_sweep(&table, 30.0, on_id, NULL, &n), MBR_OK);
    EXPECT_TRUE(n == 2 && sweep_calls == 2);
    EXPECT(mbr_tombstone_sweep(&table, 55.0, NULL, NULL, &n), MBR_OK); /* callback optional */
    EXPECT_TRUE(n == 1);
    EXPECT(mbr_tombstone_remove(NULL, h1, &flag), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_remove(&table, h1, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_tombstone_remove(&table, h4, &flag), MBR_OK);
    EXPECT_TRUE(flag);
    EXPECT(mbr_tombstone_remove(&table, h1, &flag), MBR_OK);
    EXPECT_TRUE(!flag);

    /* op bodies */
    mbr_op_body body;
    POISON(body);
    EXPECT(mbr_op_tombstone_parse(NULL, 3, &body, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_op_tombstone_parse((const uint8_t *)opt, sizeof opt - 1, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_op_tombstone_parse((const uint8_t *)opd, sizeof opd - 1, &body, &err), MBR_TOMBSTONE_FIELD);
    UNTOUCHED(body);
    EXPECT(mbr_op_tombstone_parse((const uint8_t *)opt, sizeof opt - 1, &body, NULL), MBR_OK);
    EXPECT_TRUE(strcmp(body.content_hash, "h3") == 0 && strcmp(body.node_id, "node-b") == 0 && body.has_until &&
                body.until == 50.0);
    EXPECT(mbr_op_delete_parse(NULL, 3, &body, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_op_delete_parse((const uint8_t *)opd, sizeof opd - 1, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_op_delete_parse(NULL, 0, &body, NULL), MBR_TOMBSTONE_JSON);
    EXPECT(mbr_op_delete_parse((const uint8_t *)opd, sizeof opd - 1, &body, NULL), MBR_OK);
    EXPECT_TRUE(strcmp(body.content_hash, "h4") == 0 && !body.has_until);
    n = 12345;
    EXPECT(mbr_op_tombstone_write(h1, 1.5, na, NULL, 10, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_op_tombstone_write(h1, 1.5, na, out, sizeof out, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_op_tombstone_write(dangling, 1.5, na, out, sizeof out, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_op_tombstone_write(none, 1.5, na, out, sizeof out, &n, NULL), MBR_TOMBSTONE_FIELD);
    EXPECT(mbr_op_tombstone_write(h1, 1.5, na, out, 5, &n, &err), MBR_BUFFER_TOO_SMALL);
    EXPECT_TRUE(n == 12345 && err.needed > 5);
    EXPECT(mbr_op_tombstone_write(h1, 1.5, na, out, sizeof out, &n, NULL), MBR_OK);
    EXPECT(mbr_op_tombstone_parse(out, n, &body, NULL), MBR_OK);
    EXPECT(mbr_op_delete_write(h1, na, false, 0.0, NULL, 10, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_op_delete_write(h1, na, false, 0.0, out, sizeof out, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_op_delete_write(h1, none, false, 0.0, out, sizeof out, &n, NULL), MBR_TOMBSTONE_FIELD);
    EXPECT(mbr_op_delete_write(h1, na, false, 0.0, out, sizeof out, &n, NULL), MBR_OK);
    EXPECT(mbr_op_delete_parse(out, n, &body, NULL), MBR_OK);
    EXPECT_TRUE(!body.has_until);
    EXPECT(mbr_op_delete_write(h1, na, true, 7.0, out, sizeof out, &n, NULL), MBR_OK);
    EXPECT(mbr_op_delete_parse(out, n, &body, NULL), MBR_OK);
    EXPECT_TRUE(body.has_until && body.until == 7.0);

    /* ref counts */
    static uint64_t rslots[MBR_REF_STORAGE_BYTES(4) / 8 + 1], rnodes[MBR_NODE_STORAGE_BYTES(4) / 8 + 1];
    mbr_refcounts rc, zrc;
    memset(&zrc, 0, sizeof zrc);
    mbr_str nb = LIT("node-b");
    EXPECT(mbr_refcounts_init(NULL, rslots, sizeof rslots, rnodes, sizeof rnodes, 0), MBR_NULL_POINTER);
    EXPECT(mbr_refcounts_init(&rc, NULL, sizeof rslots, rnodes, sizeof rnodes, 0), MBR_NULL_POINTER);
    EXPECT(mbr_refcounts_init(&rc, rslots, sizeof rslots, NULL, sizeof rnodes, 0), MBR_NULL_POINTER);
    EXPECT(mbr_refcounts_init(&rc, rslots, sizeof rslots, rnodes, 1, 0), MBR_INVALID_ARGUMENT);
    EXPECT(mbr_refcounts_init(&rc, rslots, sizeof rslots, rnodes, sizeof rnodes, 7), MBR_OK);
    EXPECT(mbr_refcounts_stats(NULL, &len, &cap), MBR_NULL_POINTER);
    EXPECT(mbr_refcounts_stats(&rc, NULL, &cap), MBR_NULL_POINTER);
    EXPECT(mbr_refcounts_stats(&rc, &len, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_refcounts_stats(&zrc, &len, &cap), MBR_INVALID_STATE);
    EXPECT(mbr_refcounts_acquire(NULL, h1, na), MBR_NULL_POINTER);
    EXPECT(mbr_refcounts_acquire(&rc, dangling, na), MBR_NULL_POINTER);
    EXPECT(mbr_refcounts_acquire(&rc, none, na), MBR_INVALID_ARGUMENT);
    EXPECT(mbr_refcounts_acquire(&rc, h1, na), MBR_OK);
    EXPECT(mbr_refcounts_acquire(&rc, h1, nb), MBR_OK);
    EXPECT(mbr_refcounts_stats(&rc, &len, &cap), MBR_OK);
    EXPECT_TRUE(len == 1 && cap >= 4);
    sweep_calls = 0;
    EXPECT(mbr_refcounts_holders(NULL, h1, on_id, NULL, &n), MBR_NULL_POINTER);
    EXPECT(mbr_refcounts_holders(&rc, h1, on_id, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_refcounts_holders(&rc, h1, on_id, NULL, &n), MBR_OK);
    EXPECT_TRUE(n == 2 && sweep_calls == 2);
    EXPECT(mbr_refcounts_release(NULL, h1, na, &flag), MBR_NULL_POINTER);
    EXPECT(mbr_refcounts_release(&rc, h1, na, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_refcounts_release(&rc, h1, na, &flag), MBR_OK);
    EXPECT_TRUE(!flag); /* node-b still holds it */
    EXPECT(mbr_refcounts_release(&rc, h9, na, &flag), MBR_OK);
    EXPECT_TRUE(flag); /* unknown */
    EXPECT(mbr_refcounts_forget(NULL, h1, &flag), MBR_NULL_POINTER);
    EXPECT(mbr_refcounts_forget(&rc, h1, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_refcounts_forget(&zrc, h1, &flag), MBR_INVALID_STATE);
    EXPECT(mbr_refcounts_forget(&rc, h1, &flag), MBR_OK);
    EXPECT_TRUE(flag);
    EXPECT(mbr_refcounts_holders(&rc, h1, NULL, NULL, &n), MBR_OK);
    EXPECT_TRUE(n == 0);
}

int main(void) {
    static const char json[] =
        "{\"dtype\":\"float16\",\"head_range\":[-1,-1],\"layer_range\":[0,31],\"model_id\":\"llama-3-8b\","
        "\"model_revision\":\"\",\"payload_hash\":\"x\",\"shape\":[1,32,8,128,64],\"token_span\":[0,127],"
        "\"tokenizer_name\":\"llama-3-8b\",\"tokenizer_revision\":\"\"}";
    const uint8_t *text = (const uint8_t *)json;
    size_t text_len = sizeof json - 1;
    const uint8_t payload[5] = {'h', 'e', 'l', 'l', 'o'};
    uint8_t buf[4096];
    size_t n;
    uint64_t n64;
    uint32_t u32;
    bool flag;
    mbr_error err;
    mbr_digest digest;
    mbr_identity identity, out_identity;
    mbr_range range;
    int64_t dims[MBR_MAX_SHAPE_DIMS];
    char hex65[65];
    mbr_read_options options = mbr_read_options_default();

    EXPECT(mbr_identity_parse(text, text_len, &identity, NULL), MBR_OK);

    /* ---- status, version: values, never NULL ---- */
    EXPECT_TRUE(strcmp(mbr_status_name(MBR_OK), "ok") == 0);
    EXPECT_TRUE(strcmp(mbr_status_name(MBR_TRAILER_MISMATCH), "trailer_mismatch") == 0);
    EXPECT_TRUE(strcmp(mbr_status_name(MBR_NULL_POINTER), "null_pointer") == 0);
    EXPECT_TRUE(strcmp(mbr_status_name(12345), "unknown") == 0);
    EXPECT_TRUE(mbr_status_str(12345) != NULL && mbr_status_str(MBR_IDENTITY_FIELD) != NULL);
    EXPECT(mbr_status_class(MBR_PAYLOAD_OVERRUN), MBR_CLASS_CORRUPT);
    EXPECT(mbr_status_class(MBR_LEGACY_FRAME), MBR_CLASS_SCHEMA);
    EXPECT(mbr_status_class(MBR_NULL_POINTER), MBR_CLASS_USAGE);
    EXPECT(mbr_status_class(MBR_IO), MBR_CLASS_IO);
    EXPECT(mbr_status_class(MBR_OK), MBR_CLASS_NONE);
    EXPECT_TRUE(strcmp(mbr_class_name(MBR_CLASS_CORRUPT), "corrupt") == 0 && strcmp(mbr_class_name(99), "unknown") == 0);
    EXPECT_TRUE(mbr_version() != NULL && mbr_version()[0] != '\0');
    EXPECT(mbr_abi_version(), MBR_ABI_VERSION);
    EXPECT_TRUE(strcmp(mbr_dtype_name(MBR_DTYPE_NF4), "nf4") == 0 && strcmp(mbr_dtype_name(99), "unknown") == 0);
    EXPECT(options.level, MBR_LEVEL_TRAILER);

    /* ---- mbr_sha256 ---- */
    EXPECT(mbr_sha256(payload, 5, NULL), MBR_NULL_POINTER);
    POISON(digest);
    EXPECT(mbr_sha256(NULL, 5, &digest), MBR_NULL_POINTER);
    UNTOUCHED(digest);
    EXPECT(mbr_sha256(NULL, 0, &digest), MBR_OK); /* (NULL, 0) is empty */
    EXPECT_TRUE(strcmp(digest.hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0);

    /* ---- incremental SHA-256 and byte ranges ---- */
    {
        mbr_sha256_state state, zeroed_state;
        memset(&zeroed_state, 0, sizeof zeroed_state);
        mbr_digest whole, stepped, joined;
        EXPECT(mbr_sha256(payload, 5, &whole), MBR_OK);
        EXPECT(mbr_sha256_init(NULL), MBR_NULL_POINTER);
        EXPECT(mbr_sha256_update(&zeroed_state, payload, 1), MBR_INVALID_STATE);
        EXPECT(mbr_sha256_update(NULL, payload, 1), MBR_NULL_POINTER);
        EXPECT(mbr_sha256_init(&state), MBR_OK);
        EXPECT(mbr_sha256_update(&state, NULL, 3), MBR_NULL_POINTER);
        EXPECT(mbr_sha256_update(&state, NULL, 0), MBR_OK);
        EXPECT(mbr_sha256_update(&state, payload, 2), MBR_OK);
        mbr_sha256_state copy = state; /* a copy is an independent computation */
        EXPECT(mbr_sha256_update(&state, payload + 2, 3), MBR_OK);
        EXPECT(mbr_sha256_final(&state, NULL), MBR_NULL_POINTER); /* the state is kept */
        POISON(stepped);
        EXPECT(mbr_sha256_final(&zeroed_state, &stepped), MBR_INVALID_STATE);
        UNTOUCHED(stepped);
        EXPECT(mbr_sha256_final(&state, &stepped), MBR_OK);
        EXPECT_TRUE(memcmp(stepped.sha256, whole.sha256, 32) == 0);
        EXPECT(mbr_sha256_final(&state, &stepped), MBR_INVALID_STATE); /* finished */
        EXPECT(mbr_sha256_update(&copy, payload + 2, 3), MBR_OK);
        EXPECT(mbr_sha256_final(&copy, &stepped), MBR_OK);
        EXPECT_TRUE(memcmp(stepped.sha256, whole.sha256, 32) == 0);

        mbr_bytes ranges[3] = {{payload, 1}, {NULL, 0}, {payload + 1, 4}};
        mbr_bytes bad_ranges[2] = {{payload, 1}, {NULL, 4}};
        EXPECT(mbr_sha256_ranges(NULL, 2, &joined), MBR_NULL_POINTER);
        EXPECT(mbr_sha256_ranges(ranges, 3, NULL), MBR_NULL_POINTER);
        POISON(joined);
        EXPECT(mbr_sha256_ranges(bad_ranges, 2, &joined), MBR_NULL_POINTER);
        UNTOUCHED(joined);
        EXPECT(mbr_sha256_ranges(ranges, 3, &joined), MBR_OK);
        EXPECT_TRUE(memcmp(joined.sha256, whole.sha256, 32) == 0);
        EXPECT(mbr_sha256_ranges(NULL, 0, &joined), MBR_OK);
        EXPECT_TRUE(strcmp(joined.hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0);
    }

    /* ---- frames ---- */
    size_t frame_len = 0;
    EXPECT(mbr_frame_encode(&identity, payload, 5, buf, sizeof buf, &frame_len, NULL), MBR_OK);
    EXPECT(mbr_frame_check(NULL, 10, MBR_LEVEL_FULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_check(NULL, 0, MBR_LEVEL_FULL), MBR_TOO_SHORT);
    EXPECT(mbr_frame_check(buf, frame_len, 7), MBR_INVALID_ARGUMENT);
    EXPECT(mbr_frame_check(buf, frame_len, MBR_LEVEL_TRAILER), MBR_OK);
    EXPECT(mbr_frame_check(buf, frame_len, MBR_LEVEL_FULL), MBR_PAYLOAD_HASH_MISMATCH); /* payload_hash "x" */
    mbr_frame frame;
    POISON(frame);
    POISON(err);
    EXPECT(mbr_frame_parse(NULL, frame_len, options, &frame, &err), MBR_NULL_POINTER);
    UNTOUCHED(frame);
    EXPECT(err.status, MBR_NULL_POINTER);
    EXPECT_TRUE(strcmp(err.field, "buf") == 0);
    EXPECT(mbr_frame_parse(buf, frame_len, options, NULL, &err), MBR_NULL_POINTER);
    EXPECT(mbr_frame_parse(buf, frame_len, options, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_parse(NULL, 0, options, &frame, NULL), MBR_TOO_SHORT);
    UNTOUCHED(frame);
    options.mode = 9;
    EXPECT(mbr_frame_parse(buf, frame_len, options, &frame, NULL), MBR_INVALID_ARGUMENT);
    options = mbr_read_options_default();
    options.level = MBR_LEVEL_FULL;
    POISON(err);
    EXPECT(mbr_frame_parse(buf, frame_len, options, &frame, &err), MBR_PAYLOAD_HASH_MISMATCH);
    UNTOUCHED(frame);
    EXPECT_TRUE(err.error_class == MBR_CLASS_CORRUPT && err.offset != MBR_NO_OFFSET && strcmp(err.field, "payload_hash") == 0);
    options = mbr_read_options_default();
    POISON(err);
    EXPECT(mbr_frame_parse(buf, frame_len, options, &frame, &err), MBR_OK);
    UNTOUCHED(err); /* the detail is written only on failure */
    EXPECT_TRUE(frame.has_identity && frame.payload_len == 5 && memcmp(frame.payload, payload, 5) == 0);
    EXPECT_TRUE(frame.payload == frame.bytes + frame.payload_offset && frame.padding == 0);

    /* ---- the payload in place: its alignment, typed views ---- */
    flag = false;
    EXPECT(mbr_frame_payload_is_aligned(NULL, 8, &flag), MBR_NULL_POINTER);
    EXPECT(mbr_frame_payload_is_aligned(&frame, 8, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_payload_is_aligned(&frame, 6, &flag), MBR_INVALID_ARGUMENT);
    EXPECT(mbr_frame_payload_is_aligned(&frame, 8192, &flag), MBR_INVALID_ARGUMENT);
    EXPECT(mbr_frame_payload_is_aligned(&frame, 1, &flag), MBR_OK);
    EXPECT_TRUE(flag);
    mbr_payload_elements elements;
    POISON(elements);
    EXPECT(mbr_frame_payload_elements(NULL, MBR_ELEMENT_U8, &elements, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_payload_elements(&frame, MBR_ELEMENT_U8, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_payload_elements(&frame, 99, &elements, NULL), MBR_INVALID_ARGUMENT);
    POISON(err);
    EXPECT(mbr_frame_payload_elements(&frame, MBR_ELEMENT_F32, &elements, &err), MBR_MISALIGNED); /* float16 */
    EXPECT_TRUE(err.offset == frame.payload_offset && strcmp(err.field, "payload") == 0);
    EXPECT(mbr_frame_payload_elements(&frame, MBR_ELEMENT_U16, &elements, NULL), MBR_MISALIGNED); /* 5 bytes */
    UNTOUCHED(elements);
    EXPECT(mbr_status_class(MBR_MISALIGNED), MBR_CLASS_USAGE);
    EXPECT(mbr_frame_payload_elements(&frame, MBR_ELEMENT_U8, &elements, NULL), MBR_OK);
    EXPECT_TRUE(elements.data == frame.payload && elements.count == 5);
    options.level = MBR_LEVEL_LAYOUT;
    EXPECT(mbr_frame_parse(buf, frame_len, options, &frame, NULL), MBR_OK);
    EXPECT_TRUE(!frame.has_identity && !frame.has_payload_sha256);
    EXPECT(mbr_identity_dtype(&frame.identity, &u32), MBR_INVALID_STATE); /* no identity at layout level */
    options = mbr_read_options_default();

    /* ---- mbr_frame_verify_batch ---- */
    mbr_bytes batch[3] = {{buf, frame_len}, {buf, frame_len - 1}, {NULL, 0}};
    mbr_verdict verdicts[3];
    POISON(verdicts);
    EXPECT(mbr_frame_verify_batch(NULL, 3, options, verdicts, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_verify_batch(batch, 3, options, NULL, NULL), MBR_NULL_POINTER);
    batch[2].len = 4;
    POISON(err);
    EXPECT(mbr_frame_verify_batch(batch, 3, options, verdicts, &err), MBR_NULL_POINTER); /* {NULL, 4} */
    UNTOUCHED(verdicts);
    EXPECT_TRUE(strcmp(err.field, "frames") == 0);
    batch[2].len = 0;
    options.mode = 9;
    EXPECT(mbr_frame_verify_batch(batch, 3, options, verdicts, NULL), MBR_INVALID_ARGUMENT);
    UNTOUCHED(verdicts);
    options = mbr_read_options_default();
    EXPECT(mbr_frame_verify_batch(NULL, 0, options, NULL, NULL), MBR_OK);
    EXPECT(mbr_frame_verify_batch(batch, 3, options, verdicts, NULL), MBR_OK);
    EXPECT(verdicts[0].status, MBR_OK);
    EXPECT_TRUE(verdicts[0].frame_len == frame_len && verdicts[0].offset == MBR_NO_OFFSET);
    EXPECT_TRUE(verdicts[1].status != MBR_OK && verdicts[1].frame_len == 0);
    EXPECT(verdicts[2].status, MBR_TOO_SHORT);
    options.level = MBR_LEVEL_FULL;
    EXPECT(mbr_frame_verify_batch(batch, 1, options, verdicts, NULL), MBR_OK);
    EXPECT(verdicts[0].status, MBR_PAYLOAD_HASH_MISMATCH); /* payload_hash "x" */
    options = mbr_read_options_default();

    /* ---- identity: parse, build, with_payload_hash ---- */
    POISON(out_identity);
    EXPECT(mbr_identity_parse(NULL, text_len, &out_identity, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_parse(text, text_len, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_parse(NULL, 0, &out_identity, NULL), MBR_IDENTITY_JSON);
    EXPECT(mbr_identity_parse(text, text_len - 1, &out_identity, &err), MBR_IDENTITY_JSON);
    UNTOUCHED(out_identity);

    int64_t shape[2] = {4, 4};
    mbr_identity_values values = {
        LIT("x"), LIT("m"), LIT(""), LIT("t"), LIT(""), {0, 1}, {-1, -1}, {0, 7}, MBR_DTYPE_INT8, shape, 2,
    };
    EXPECT(mbr_identity_build(NULL, &out_identity, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_build(&values, NULL, NULL), MBR_NULL_POINTER);
    UNTOUCHED(out_identity);
    mbr_identity_values bad = values;
    bad.model_id.ptr = NULL;
    EXPECT(mbr_identity_build(&bad, &out_identity, &err), MBR_NULL_POINTER);
    EXPECT_TRUE(strcmp(err.field, "model_id") == 0);
    bad = values;
    bad.model_revision.ptr = NULL; /* {NULL, 0} is "" */
    EXPECT(mbr_identity_build(&bad, &out_identity, NULL), MBR_OK);
    bad = values;
    bad.shape = NULL;
    EXPECT(mbr_identity_build(&bad, &out_identity, NULL), MBR_NULL_POINTER);
    bad.shape_len = 0;
    EXPECT(mbr_identity_build(&bad, &out_identity, NULL), MBR_IDENTITY_FIELD); /* empty shape */
    bad = values;
    bad.dtype = 12;
    EXPECT(mbr_identity_build(&bad, &out_identity, NULL), MBR_INVALID_ARGUMENT);
    bad = values;
    bad.model_id.ptr = "\xff";
    bad.model_id.len = 1;
    EXPECT(mbr_identity_build(&bad, &out_identity, NULL), MBR_INVALID_ARGUMENT); /* not UTF-8 */
    bad = values;
    bad.layer_range.start = 2;
    EXPECT(mbr_identity_build(&bad, &out_identity, &err), MBR_IDENTITY_FIELD);
    EXPECT_TRUE(strcmp(err.field, "layer_range") == 0);
    EXPECT(mbr_identity_build(&values, &out_identity, NULL), MBR_OK);

    mbr_identity changed;
    POISON(changed);
    EXPECT(mbr_identity_with_payload_hash(NULL, "abc", 3, &changed, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_with_payload_hash(&identity, NULL, 3, &changed, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_with_payload_hash(&identity, "abc", 3, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_with_payload_hash(&identity, NULL, 0, &changed, NULL), MBR_IDENTITY_FIELD); /* empty */
    UNTOUCHED(changed);
    EXPECT(mbr_identity_with_payload_hash(&identity, "abc", 3, &changed, NULL), MBR_OK);

    /* ---- identity accessors ---- */
    mbr_identity zeroed;
    memset(&zeroed, 0, sizeof zeroed);
    n = 12345;
    EXPECT(mbr_identity_string_len(NULL, MBR_FIELD_MODEL_ID, &n), MBR_NULL_POINTER);
    EXPECT(mbr_identity_string_len(&identity, MBR_FIELD_MODEL_ID, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_string_len(&zeroed, MBR_FIELD_MODEL_ID, &n), MBR_INVALID_STATE);
    EXPECT(mbr_identity_string_len(&identity, MBR_FIELD_SHAPE, &n), MBR_INVALID_ARGUMENT);
    EXPECT_TRUE(n == 12345);
    EXPECT(mbr_identity_string_len(&identity, MBR_FIELD_MODEL_ID, &n), MBR_OK);
    EXPECT_TRUE(n == 10);

    mbr_str view = {NULL, 12345};
    EXPECT(mbr_identity_string_view(NULL, MBR_FIELD_MODEL_ID, &view), MBR_NULL_POINTER);
    EXPECT(mbr_identity_string_view(&identity, MBR_FIELD_MODEL_ID, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_string_view(&zeroed, MBR_FIELD_MODEL_ID, &view), MBR_INVALID_STATE);
    EXPECT(mbr_identity_string_view(&identity, MBR_FIELD_SHAPE, &view), MBR_INVALID_ARGUMENT);
    EXPECT_TRUE(view.ptr == NULL && view.len == 12345);
    EXPECT(mbr_identity_string_view(&identity, MBR_FIELD_MODEL_ID, &view), MBR_OK);
    EXPECT_TRUE(view.len == 10 && memcmp(view.ptr, "llama-3-8b", 10) == 0);
    EXPECT(mbr_identity_string_view(&identity, MBR_FIELD_DTYPE, &view), MBR_OK);
    EXPECT_TRUE(view.len == 7 && memcmp(view.ptr, "float16", 7) == 0);
    EXPECT_TRUE(strcmp(mbr_field_name(MBR_FIELD_LAYER_RANGE), "layer_range") == 0 &&
                strcmp(mbr_field_name(MBR_FIELD_SHAPE), "shape") == 0 && strcmp(mbr_field_name(10), "unknown") == 0);

    uint32_t differing = 12345;
    EXPECT(mbr_identity_compare(NULL, &identity, MBR_FIELDS_ALL, &differing), MBR_NULL_POINTER);
    EXPECT(mbr_identity_compare(&identity, NULL, MBR_FIELDS_ALL, &differing), MBR_NULL_POINTER);
    EXPECT(mbr_identity_compare(&identity, &identity, MBR_FIELDS_ALL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_compare(&zeroed, &identity, MBR_FIELDS_ALL, &differing), MBR_INVALID_STATE);
    EXPECT(mbr_identity_compare(&identity, &zeroed, MBR_FIELDS_ALL, &differing), MBR_INVALID_STATE);
    EXPECT(mbr_identity_compare(&identity, &identity, 1u << 10, &differing), MBR_INVALID_ARGUMENT);
    EXPECT_TRUE(differing == 12345);
    EXPECT(mbr_identity_compare(&identity, &identity, MBR_FIELDS_ALL, &differing), MBR_OK);
    EXPECT_TRUE(differing == 0);
    EXPECT(mbr_identity_compare(&changed, &identity, MBR_FIELDS_ALL, &differing), MBR_OK);
    EXPECT_TRUE(differing == (1u << MBR_FIELD_PAYLOAD_HASH));
    EXPECT(mbr_identity_compare(&changed, &identity, MBR_FIELDS_MODEL, &differing), MBR_OK);
    EXPECT_TRUE(differing == 0);

    char name[32];
    POISON(name);
    n = 12345;
    EXPECT(mbr_identity_string(NULL, MBR_FIELD_MODEL_ID, name, sizeof name, &n), MBR_NULL_POINTER);
    EXPECT(mbr_identity_string(&identity, MBR_FIELD_MODEL_ID, NULL, sizeof name, &n), MBR_NULL_POINTER);
    EXPECT(mbr_identity_string(&identity, MBR_FIELD_MODEL_ID, name, sizeof name, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_string(&identity, MBR_FIELD_MODEL_ID, NULL, 0, &n), MBR_BUFFER_TOO_SMALL);
    EXPECT(mbr_identity_string(&identity, MBR_FIELD_MODEL_ID, name, 10, &n), MBR_BUFFER_TOO_SMALL); /* no room for NUL */
    EXPECT(mbr_identity_string(&zeroed, MBR_FIELD_MODEL_ID, name, sizeof name, &n), MBR_INVALID_STATE);
    EXPECT(mbr_identity_string(&identity, 77, name, sizeof name, &n), MBR_INVALID_ARGUMENT);
    UNTOUCHED(name);
    EXPECT_TRUE(n == 12345);
    EXPECT(mbr_identity_string(&identity, MBR_FIELD_MODEL_ID, name, 11, &n), MBR_OK);
    EXPECT_TRUE(n == 10 && strcmp(name, "llama-3-8b") == 0);
    EXPECT(mbr_identity_string(&identity, MBR_FIELD_DTYPE, name, sizeof name, &n), MBR_OK);
    EXPECT_TRUE(strcmp(name, "float16") == 0);

    POISON(range);
    EXPECT(mbr_identity_range(NULL, MBR_FIELD_LAYER_RANGE, &range), MBR_NULL_POINTER);
    EXPECT(mbr_identity_range(&identity, MBR_FIELD_LAYER_RANGE, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_range(&identity, MBR_FIELD_MODEL_ID, &range), MBR_INVALID_ARGUMENT);
    EXPECT(mbr_identity_range(&zeroed, MBR_FIELD_HEAD_RANGE, &range), MBR_INVALID_STATE);
    UNTOUCHED(range);
    EXPECT(mbr_identity_range(&identity, MBR_FIELD_HEAD_RANGE, &range), MBR_OK);
    EXPECT_TRUE(range.start == -1 && range.end == -1);

    EXPECT(mbr_identity_dtype(NULL, &u32), MBR_NULL_POINTER);
    EXPECT(mbr_identity_dtype(&identity, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_dtype(&identity, &u32), MBR_OK);
    EXPECT(u32, MBR_DTYPE_FLOAT16);

    POISON(dims);
    n = 12345;
    EXPECT(mbr_identity_shape(NULL, dims, MBR_MAX_SHAPE_DIMS, &n), MBR_NULL_POINTER);
    EXPECT(mbr_identity_shape(&identity, NULL, MBR_MAX_SHAPE_DIMS, &n), MBR_NULL_POINTER);
    EXPECT(mbr_identity_shape(&identity, dims, MBR_MAX_SHAPE_DIMS, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_shape(&identity, NULL, 0, &n), MBR_BUFFER_TOO_SMALL);
    EXPECT(mbr_identity_shape(&identity, dims, 4, &n), MBR_BUFFER_TOO_SMALL);
    UNTOUCHED(dims);
    EXPECT_TRUE(n == 12345);
    EXPECT(mbr_identity_shape(&identity, dims, 5, &n), MBR_OK);
    EXPECT_TRUE(n == 5 && dims[4] == 64);

    EXPECT(mbr_identity_tensor_bytes(NULL, &n64), MBR_NULL_POINTER);
    EXPECT(mbr_identity_tensor_bytes(&identity, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_tensor_bytes(&identity, &n64), MBR_OK);
    EXPECT_TRUE(n64 == 1ull * 32 * 8 * 128 * 64 * 2);

    EXPECT(mbr_identity_is_canonical(NULL, &flag), MBR_NULL_POINTER);
    EXPECT(mbr_identity_is_canonical(&identity, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_is_canonical(&identity, &flag), MBR_OK);
    EXPECT_TRUE(flag);

    EXPECT(mbr_identity_fingerprint(NULL, &digest), MBR_NULL_POINTER);
    EXPECT(mbr_identity_fingerprint(&identity, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_fingerprint(&zeroed, &digest), MBR_INVALID_STATE);
    EXPECT(mbr_identity_fingerprint(&identity, &digest), MBR_OK);

    POISON(hex65);
    EXPECT(mbr_identity_fingerprint_hex(NULL, text_len, hex65), MBR_NULL_POINTER);
    EXPECT(mbr_identity_fingerprint_hex(text, text_len, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_fingerprint_hex(NULL, 0, hex65), MBR_IDENTITY_JSON);
    UNTOUCHED(hex65);
    EXPECT(mbr_identity_fingerprint_hex(text, text_len, hex65), MBR_OK);
    EXPECT_TRUE(strlen(hex65) == 64 && strcmp(hex65, digest.hex) == 0);

    EXPECT(mbr_identity_canonical_len(NULL, &n), MBR_NULL_POINTER);
    EXPECT(mbr_identity_canonical_len(&identity, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_canonical_len(&identity, &n), MBR_OK);
    EXPECT_TRUE(n == text_len);

    n = 12345;
    POISON(err);
    EXPECT(mbr_identity_write_canonical(NULL, buf, sizeof buf, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_write_canonical(&identity, NULL, sizeof buf, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_write_canonical(&identity, buf, sizeof buf, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_write_canonical(&identity, NULL, 0, &n, &err), MBR_BUFFER_TOO_SMALL);
    EXPECT_TRUE(err.needed == text_len);
    EXPECT_TRUE(n == 12345);
    EXPECT(mbr_identity_write_canonical(&identity, buf, sizeof buf, &n, NULL), MBR_OK);
    EXPECT_TRUE(n == text_len && memcmp(buf, json, n) == 0);

    EXPECT(mbr_dtype_bits(MBR_DTYPE_NF4, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_dtype_bits(99, &u32), MBR_INVALID_ARGUMENT);
    EXPECT(mbr_dtype_bits(MBR_DTYPE_NF4, &u32), MBR_OK);
    EXPECT(u32, 4);
    EXPECT(mbr_dtype_from_name(NULL, 4, &u32), MBR_NULL_POINTER);
    EXPECT(mbr_dtype_from_name("int8", 4, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_dtype_from_name(NULL, 0, &u32), MBR_INVALID_ARGUMENT);
    EXPECT(mbr_dtype_from_name("Int8", 4, &u32), MBR_INVALID_ARGUMENT);
    EXPECT(mbr_dtype_from_name("int8", 4, &u32), MBR_OK);
    EXPECT(u32, MBR_DTYPE_INT8);

    /* ---- writing ---- */
    EXPECT(mbr_frame_encoded_len(NULL, 5, &n64, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_encoded_len(&identity, 5, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_encoded_len(&zeroed, 5, &n64, NULL), MBR_INVALID_STATE);
    EXPECT(mbr_frame_encoded_len(&identity, UINT64_MAX, &n64, NULL), MBR_INVALID_ARGUMENT);
    EXPECT(mbr_frame_encoded_len(&identity, 5, &n64, NULL), MBR_OK);
    EXPECT_TRUE(n64 == frame_len);

    EXPECT(mbr_frame_head_len(NULL, 5, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_head_len(&identity, 5, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_head_len(&identity, 5, &n, NULL), MBR_OK);
    EXPECT_TRUE(n == 22 + text_len);

    size_t head_len = n;
    n = 12345;
    EXPECT(mbr_frame_write_head(NULL, 5, buf, sizeof buf, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_write_head(&identity, 5, NULL, sizeof buf, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_write_head(&identity, 5, buf, sizeof buf, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_write_head(&identity, 5, buf, head_len - 1, &n, &err), MBR_BUFFER_TOO_SMALL);
    EXPECT_TRUE(err.needed == head_len && n == 12345);
    EXPECT(mbr_frame_write_head(&identity, 5, buf, head_len, &n, NULL), MBR_OK);
    EXPECT_TRUE(n == head_len);

    n = 12345;
    EXPECT(mbr_frame_encode(NULL, payload, 5, buf, sizeof buf, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_encode(&identity, NULL, 5, buf, sizeof buf, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_encode(&identity, payload, 5, NULL, sizeof buf, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_encode(&identity, payload, 5, buf, sizeof buf, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_encode(&identity, payload, 5, buf, frame_len - 1, &n, &err), MBR_BUFFER_TOO_SMALL);
    EXPECT_TRUE(err.needed == frame_len && n == 12345);
    EXPECT(mbr_frame_encode(&identity, NULL, 0, buf, sizeof buf, &n, NULL), MBR_OK); /* empty payload */
    EXPECT_TRUE(n == frame_len - 5);

    /* ---- writers with options: alignment (SPEC 1.5) ---- */
    mbr_write_options write = mbr_write_options_default();
    EXPECT_TRUE(write.align == 1 && write.base == 0 && write.identity_limit == MBR_DEFAULT_IDENTITY_LIMIT);
    mbr_frame_layout layout;
    POISON(layout);
    EXPECT(mbr_frame_plan(NULL, 5, write, &layout, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_plan(&identity, 5, write, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_plan(&zeroed, 5, write, &layout, NULL), MBR_INVALID_STATE);
    write.align = 3;
    EXPECT(mbr_frame_plan(&identity, 5, write, &layout, &err), MBR_INVALID_ARGUMENT);
    EXPECT_TRUE(strcmp(err.field, "align") == 0);
    write.align = 64;
    write.identity_limit = (uint32_t)text_len;
    EXPECT(mbr_frame_plan(&identity, 5, write, &layout, NULL), MBR_IDENTITY_TOO_LARGE); /* the padding counts */
    UNTOUCHED(layout);
    write.identity_limit = MBR_DEFAULT_IDENTITY_LIMIT;
    write.base = 10;
    EXPECT(mbr_frame_plan(&identity, 5, write, &layout, NULL), MBR_OK);
    EXPECT_TRUE((10 + layout.head_len) % 64 == 0 && layout.padding < 64 &&
                layout.identity_len == text_len + layout.padding && layout.frame_len == 30 + layout.identity_len + 5);
    n = 12345;
    EXPECT(mbr_frame_write_head_with(NULL, 5, write, buf, sizeof buf, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_write_head_with(&identity, 5, write, NULL, sizeof buf, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_write_head_with(&identity, 5, write, buf, sizeof buf, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_write_head_with(&identity, 5, write, buf, layout.head_len - 1, &n, &err), MBR_BUFFER_TOO_SMALL);
    EXPECT_TRUE(err.needed == layout.head_len && n == 12345);
    EXPECT(mbr_frame_write_head_with(&identity, 5, write, buf, sizeof buf, &n, NULL), MBR_OK);
    EXPECT_TRUE(n == layout.head_len && buf[14 + text_len] == ' ' && buf[n - 9] == ' ');
    EXPECT(mbr_frame_encode_with(NULL, payload, 5, write, buf, sizeof buf, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_encode_with(&identity, NULL, 5, write, buf, sizeof buf, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_encode_with(&identity, payload, 5, write, NULL, sizeof buf, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_encode_with(&identity, payload, 5, write, buf, sizeof buf, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_frame_encode_with(&identity, payload, 5, write, buf, sizeof buf, &n, NULL), MBR_OK);
    EXPECT_TRUE(n == layout.frame_len && mbr_frame_check(buf, n, MBR_LEVEL_TRAILER) == MBR_OK);
    mbr_frame padded;
    EXPECT(mbr_frame_parse(buf, n, mbr_read_options_default(), &padded, NULL), MBR_OK);
    EXPECT_TRUE(padded.padding == layout.padding && padded.payload_offset == layout.head_len);
    write.align = 0;
    EXPECT(mbr_frame_encode_with(&identity, payload, 5, write, buf, sizeof buf, &n, NULL), MBR_INVALID_ARGUMENT);
    EXPECT(mbr_frame_write_head_with(&identity, 5, write, buf, sizeof buf, &n, NULL), MBR_INVALID_ARGUMENT);
    EXPECT(mbr_frame_encode(&identity, payload, 5, buf, sizeof buf, &frame_len, NULL), MBR_OK); /* buf as before */
    write.align = 64;

    /* ---- writev to a file descriptor (hosted builds: not in the no_std library that
     * scripts/ffi-panic-check.sh links this test against, with MBR_TEST_NO_STD) ---- */
#ifndef MBR_TEST_NO_STD
    {
        mbr_digest hello;
        mbr_identity hashed;
        EXPECT(mbr_sha256(payload, 5, &hello), MBR_OK);
        EXPECT(mbr_identity_with_payload_hash(&identity, hello.hex, 64, &hashed, NULL), MBR_OK);
        mbr_bytes parts[2] = {{payload, 2}, {payload + 2, 3}};
        mbr_bytes bad_parts[1] = {{NULL, 5}};
        mbr_frame_layout written;
        FILE *file = tmpfile();
        int fd = file != NULL ? fileno(file) : -1;
        EXPECT_TRUE(fd >= 0);
        POISON(written);
        EXPECT(mbr_frame_write_fd(fd, NULL, parts, 2, write, NULL, &written, NULL), MBR_NULL_POINTER);
        EXPECT(mbr_frame_write_fd(fd, &hashed, NULL, 2, write, NULL, &written, NULL), MBR_NULL_POINTER);
        EXPECT(mbr_frame_write_fd(fd, &hashed, bad_parts, 1, write, NULL, &written, NULL), MBR_NULL_POINTER);
        EXPECT(mbr_frame_write_fd(fd, &hashed, parts, 2, write, NULL, NULL, NULL), MBR_NULL_POINTER);
        EXPECT(mbr_frame_write_fd(fd, &zeroed, parts, 2, write, NULL, &written, NULL), MBR_INVALID_STATE);
        EXPECT(mbr_frame_write_fd(-1, &hashed, parts, 2, write, NULL, &written, NULL), MBR_INVALID_ARGUMENT);
        EXPECT(mbr_frame_write_fd(fd, &identity, parts, 2, write, NULL, &written, &err), MBR_PAYLOAD_HASH_MISMATCH);
        EXPECT_TRUE(strcmp(err.field, "payload_hash") == 0);
        UNTOUCHED(written);
        EXPECT_TRUE(fd < 0 || ftell(file) == 0); /* nothing written by any refusal */
        EXPECT(mbr_frame_write_fd(fd, &hashed, parts, 2, write, NULL, &written, NULL), MBR_OK);
        EXPECT(mbr_frame_write_fd(fd, &hashed, parts, 2, write, &hello, &written, NULL), MBR_OK);
        uint8_t expected[1024], back[2048];
        size_t expected_len = 0;
        EXPECT(mbr_frame_encode_with(&hashed, payload, 5, write, expected, sizeof expected, &expected_len, NULL), MBR_OK);
        EXPECT_TRUE(written.frame_len == expected_len);
        size_t got = 0;
        if (file != NULL) {
            rewind(file);
            got = fread(back, 1, sizeof back, file);
            fclose(file);
        }
        EXPECT_TRUE(got == 2 * expected_len && memcmp(back, expected, expected_len) == 0 &&
                    memcmp(back + expected_len, expected, expected_len) == 0);
    }
#endif

    /* ---- chunked writer ---- */
    mbr_chunked_writer writer, zeroed_writer;
    memset(&zeroed_writer, 0, sizeof zeroed_writer);
    mbr_chunked_outcome outcome;
    sink_calls = 0;
    EXPECT(mbr_chunked_writer_begin(NULL, &identity, 5, sink, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_chunked_writer_begin(&writer, NULL, 5, sink, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_chunked_writer_begin(&writer, &identity, 5, NULL, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_chunked_writer_begin(&writer, &zeroed, 5, sink, NULL, NULL), MBR_INVALID_STATE);
    EXPECT_TRUE(sink_calls == 0);
    EXPECT(mbr_chunked_writer_begin(&writer, &identity, 5, failing_sink, NULL, &err), MBR_IO);
    EXPECT_TRUE(err.error_class == MBR_CLASS_IO);
    EXPECT(mbr_chunked_writer_write(&zeroed_writer, payload, 5, NULL), MBR_INVALID_STATE);
    EXPECT(mbr_chunked_writer_begin(&writer, &identity, 5, sink, NULL, NULL), MBR_OK); /* userdata may be NULL */
    EXPECT(mbr_chunked_writer_write(NULL, payload, 2, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_chunked_writer_write(&writer, NULL, 2, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_chunked_writer_write(&writer, NULL, 0, NULL), MBR_OK);
    EXPECT(mbr_chunked_writer_write(&writer, payload, 2, NULL), MBR_OK);
    EXPECT(mbr_chunked_writer_write(&writer, payload, 4, &err), MBR_LENGTH_MISMATCH); /* 6 > 5 */
    n64 = 12345;
    EXPECT(mbr_chunked_writer_remaining(NULL, &n64), MBR_NULL_POINTER);
    EXPECT(mbr_chunked_writer_remaining(&writer, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_chunked_writer_remaining(&zeroed_writer, &n64), MBR_INVALID_STATE);
    EXPECT_TRUE(n64 == 12345);
    EXPECT(mbr_chunked_writer_remaining(&writer, &n64), MBR_OK);
    EXPECT_TRUE(n64 == 3);
    POISON(outcome);
    EXPECT(mbr_chunked_writer_finish(NULL, &outcome, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_chunked_writer_finish(&writer, NULL, NULL), MBR_NULL_POINTER); /* writer not consumed */
    EXPECT(mbr_chunked_writer_finish(&zeroed_writer, &outcome, NULL), MBR_INVALID_STATE);
    UNTOUCHED(outcome);
    EXPECT(mbr_chunked_writer_write(&writer, payload + 2, 3, NULL), MBR_OK);
    EXPECT(mbr_chunked_writer_finish(&writer, &outcome, NULL), MBR_OK);
    EXPECT_TRUE(outcome.frame_len == frame_len && !outcome.payload_hash_matches);
    EXPECT(mbr_chunked_writer_write(&writer, payload, 1, NULL), MBR_INVALID_STATE); /* finished */
    EXPECT(mbr_chunked_writer_finish(&writer, &outcome, NULL), MBR_INVALID_STATE);
    EXPECT(mbr_chunked_writer_begin(&writer, &identity, 5, sink, NULL, NULL), MBR_OK);
    EXPECT(mbr_chunked_writer_finish(&writer, &outcome, &err), MBR_LENGTH_MISMATCH); /* too little */
    EXPECT(mbr_chunked_writer_finish(&writer, &outcome, NULL), MBR_INVALID_STATE);
    sink_calls = 0;
    EXPECT(mbr_chunked_writer_begin_with(NULL, &identity, 5, write, sink, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_chunked_writer_begin_with(&writer, NULL, 5, write, sink, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_chunked_writer_begin_with(&writer, &identity, 5, write, NULL, NULL, NULL), MBR_NULL_POINTER);
    write.align = 48;
    EXPECT(mbr_chunked_writer_begin_with(&writer, &identity, 5, write, sink, NULL, NULL), MBR_INVALID_ARGUMENT);
    EXPECT_TRUE(sink_calls == 0);
    write.align = 64;
    EXPECT(mbr_chunked_writer_begin_with(&writer, &identity, 5, write, sink, NULL, NULL), MBR_OK);
    EXPECT(mbr_chunked_writer_write(&writer, payload, 5, NULL), MBR_OK);
    EXPECT(mbr_chunked_writer_finish(&writer, &outcome, NULL), MBR_OK);
    EXPECT_TRUE(outcome.frame_len == layout.frame_len);

    /* ---- stream verifier ---- */
    static uint8_t identity_buf[MBR_DEFAULT_IDENTITY_LIMIT];
    mbr_stream_verifier verifier, zeroed_verifier;
    memset(&zeroed_verifier, 0, sizeof zeroed_verifier);
    mbr_stream_progress progress;
    mbr_streamed_frame verdict;
    EXPECT(mbr_frame_encode(&identity, payload, 5, buf, sizeof buf, &frame_len, NULL), MBR_OK);
    EXPECT(mbr_stream_verifier_init(NULL, options, identity_buf, sizeof identity_buf), MBR_NULL_POINTER);
    EXPECT(mbr_stream_verifier_init(&verifier, options, NULL, sizeof identity_buf), MBR_NULL_POINTER);
    options.level = 4;
    EXPECT(mbr_stream_verifier_init(&verifier, options, identity_buf, sizeof identity_buf), MBR_INVALID_ARGUMENT);
    options = mbr_read_options_default();
    EXPECT(mbr_stream_verifier_feed(&zeroed_verifier, buf, 1, &progress, NULL), MBR_INVALID_STATE);
    EXPECT(mbr_stream_verifier_init(&verifier, options, identity_buf, sizeof identity_buf), MBR_OK);
    POISON(progress);
    EXPECT(mbr_stream_verifier_feed(NULL, buf, 10, &progress, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_stream_verifier_feed(&verifier, NULL, 10, &progress, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_stream_verifier_feed(&verifier, buf, 10, NULL, NULL), MBR_NULL_POINTER);
    UNTOUCHED(progress);
    EXPECT(mbr_stream_verifier_feed(&verifier, NULL, 0, &progress, NULL), MBR_OK);
    EXPECT_TRUE(!progress.complete && progress.consumed == 0);
    EXPECT(mbr_stream_verifier_feed(&verifier, buf, 10, &progress, NULL), MBR_OK);
    n64 = 12345;
    EXPECT(mbr_stream_verifier_received(NULL, &n64), MBR_NULL_POINTER);
    EXPECT(mbr_stream_verifier_received(&verifier, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_stream_verifier_received(&zeroed_verifier, &n64), MBR_INVALID_STATE);
    EXPECT_TRUE(n64 == 12345);
    EXPECT(mbr_stream_verifier_received(&verifier, &n64), MBR_OK);
    EXPECT_TRUE(n64 == 10);
    EXPECT(mbr_stream_verifier_feed(&verifier, buf + 10, frame_len - 10, &progress, NULL), MBR_OK);
    EXPECT_TRUE(progress.complete && progress.consumed == frame_len - 10);
    POISON(verdict);
    EXPECT(mbr_stream_verifier_finish(NULL, &verdict, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_stream_verifier_finish(&verifier, NULL, NULL), MBR_NULL_POINTER); /* not consumed */
    EXPECT(mbr_stream_verifier_finish(&zeroed_verifier, &verdict, NULL), MBR_INVALID_STATE);
    UNTOUCHED(verdict);
    EXPECT(mbr_stream_verifier_finish(&verifier, &verdict, NULL), MBR_OK);
    EXPECT_TRUE(verdict.frame_len == frame_len && verdict.payload_len == 5 && verdict.has_identity);
    EXPECT(mbr_stream_verifier_finish(&verifier, &verdict, NULL), MBR_INVALID_STATE); /* finished */
    EXPECT(mbr_stream_verifier_feed(&verifier, buf, 1, &progress, NULL), MBR_INVALID_STATE);
    /* A too-small identity buffer at the identity level, and (NULL, 0) at the layout level. */
    EXPECT(mbr_stream_verifier_init(&verifier, options, identity_buf, 8), MBR_OK);
    EXPECT(mbr_stream_verifier_feed(&verifier, buf, frame_len, &progress, &err), MBR_BUFFER_TOO_SMALL);
    options.level = MBR_LEVEL_LAYOUT;
    EXPECT(mbr_stream_verifier_init(&verifier, options, NULL, 0), MBR_OK);
    EXPECT(mbr_stream_verifier_feed(&verifier, buf, frame_len, &progress, NULL), MBR_OK);
    EXPECT(mbr_stream_verifier_finish(&verifier, &verdict, NULL), MBR_OK);
    EXPECT_TRUE(verdict.identity_json == NULL && !verdict.has_identity);

    /* ---- envelopes: check, canonicalize ---- */
    static const char envelope_json[] =
        "{\"schema_version\": 5, \"tenant_id\": \"acme\", \"identity\": {\"payload_hash\": \"x\", \"model_id\": \"m\", "
        "\"model_revision\": \"\", \"tokenizer_name\": \"t\", \"tokenizer_revision\": \"\", \"layer_range\": [0, 1], "
        "\"head_range\": [-1, -1], \"token_span\": [0, 7], \"dtype\": \"int8\", \"shape\": [1]}, \"payload_ref\": null, "
        "\"payload_size\": 0, \"ttl\": 60.0, \"reuse_score\": 0.5, \"version_id\": 1, \"consistency\": \"strong\", "
        "\"hlc\": 0, \"fingerprint_compat\": \"\"}";
    static const char legacy_json[] =
        "{\"schema_version\": 4, \"identity\": {\"payload_hash\": \"x\", \"model_id\": \"m\", \"model_revision\": \"\", "
        "\"tokenizer_name\": \"t\", \"tokenizer_revision\": \"\", \"layer_range\": [0, 1], \"head_range\": [-1, -1], "
        "\"token_span\": [0, 7], \"dtype\": \"int8\", \"shape\": [1]}, \"payload_ref\": null, \"payload_size\": 0, "
        "\"ttl\": 60, \"reuse_score\": 0.5, \"version_id\": 1}";
    const uint8_t *env_text = (const uint8_t *)envelope_json;
    const size_t env_len = sizeof envelope_json - 1;
    const uint8_t *legacy_text = (const uint8_t *)legacy_json;
    const size_t legacy_len = sizeof legacy_json - 1;

    EXPECT(mbr_envelope_check(NULL, 5), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_check(NULL, 0), MBR_ENVELOPE_JSON); /* (NULL, 0) is the empty text */
    EXPECT(mbr_envelope_check(env_text, env_len - 1), MBR_ENVELOPE_JSON);
    EXPECT(mbr_envelope_check(legacy_text, legacy_len), MBR_ENVELOPE_VERSION);
    EXPECT(mbr_envelope_check(env_text, env_len), MBR_OK);

    n = 12345;
    memset(buf, 0xA5, sizeof buf);
    EXPECT(mbr_envelope_canonicalize(NULL, env_len, buf, sizeof buf, &n), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_canonicalize(env_text, env_len, NULL, sizeof buf, &n), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_canonicalize(env_text, env_len, buf, sizeof buf, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_canonicalize(NULL, 0, buf, sizeof buf, &n), MBR_ENVELOPE_JSON);
    EXPECT(mbr_envelope_canonicalize(legacy_text, legacy_len, buf, sizeof buf, &n), MBR_ENVELOPE_VERSION);
    EXPECT_TRUE(n == 12345 && poisoned(buf, sizeof buf)); /* untouched on failure... */
    EXPECT(mbr_envelope_canonicalize(env_text, env_len, NULL, 0, &n), MBR_BUFFER_TOO_SMALL);
    EXPECT_TRUE(n == env_len); /* ...except that a too-small buffer reports the length needed */
    n = 12345;
    EXPECT(mbr_envelope_canonicalize(env_text, env_len, buf, env_len - 1, &n), MBR_BUFFER_TOO_SMALL);
    EXPECT_TRUE(n == env_len && poisoned(buf, sizeof buf));
    EXPECT(mbr_envelope_canonicalize(env_text, env_len, buf, env_len, &n), MBR_OK);
    EXPECT_TRUE(n == env_len && memcmp(buf, envelope_json, n) == 0);

    /* ---- envelopes: parse, build ---- */
    mbr_envelope envelope, out_envelope, zeroed_envelope;
    memset(&zeroed_envelope, 0, sizeof zeroed_envelope);
    POISON(out_envelope);
    EXPECT(mbr_envelope_parse(NULL, env_len, &out_envelope, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_parse(env_text, env_len, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_parse(NULL, 0, &out_envelope, NULL), MBR_ENVELOPE_JSON);
    POISON(err);
    EXPECT(mbr_envelope_parse(legacy_text, legacy_len, &out_envelope, &err), MBR_ENVELOPE_VERSION);
    EXPECT_TRUE(err.status == MBR_ENVELOPE_VERSION && err.error_class == MBR_CLASS_SCHEMA && err.offset != MBR_NO_OFFSET);
    UNTOUCHED(out_envelope);
    POISON(err);
    EXPECT(mbr_envelope_parse(env_text, env_len, &envelope, &err), MBR_OK);
    UNTOUCHED(err);

    mbr_identity env_identity;
    POISON(env_identity);
    EXPECT(mbr_envelope_identity(NULL, &env_identity), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_identity(&envelope, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_identity(&zeroed_envelope, &env_identity), MBR_INVALID_STATE);
    UNTOUCHED(env_identity);
    EXPECT(mbr_envelope_identity(&envelope, &env_identity), MBR_OK);
    EXPECT(mbr_identity_string(&env_identity, MBR_FIELD_TOKENIZER_NAME, name, sizeof name, &n), MBR_OK);
    EXPECT_TRUE(n == 1 && strcmp(name, "t") == 0);

    mbr_str acme = LIT("acme"), empty = {NULL, 0}, dangling = {NULL, 3}, bad_hex = LIT("ABC"), not_utf8 = LIT("\xff");
    mbr_envelope_values ev;
    memset(&ev, 0, sizeof ev);
    ev.tenant_id = acme;
    ev.identity = &env_identity;
    ev.has_payload_ref = false;
    ev.payload_ref = dangling; /* ignored: has_payload_ref is false */
    ev.ttl = 60.0;
    ev.reuse_score = 0.5;
    ev.version_id = 1;
    ev.consistency = MBR_CONSISTENCY_STRONG;
    ev.fingerprint_compat = empty;
    EXPECT(mbr_envelope_build(NULL, &out_envelope, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_build(&ev, NULL, NULL), MBR_NULL_POINTER);
    mbr_envelope_values bad_ev = ev;
    bad_ev.identity = NULL;
    EXPECT(mbr_envelope_build(&bad_ev, &out_envelope, &err), MBR_NULL_POINTER);
    EXPECT_TRUE(strcmp(err.field, "identity") == 0);
    bad_ev.identity = &zeroed;
    EXPECT(mbr_envelope_build(&bad_ev, &out_envelope, NULL), MBR_INVALID_STATE);
    bad_ev = ev;
    bad_ev.tenant_id.ptr = NULL;
    EXPECT(mbr_envelope_build(&bad_ev, &out_envelope, &err), MBR_NULL_POINTER);
    EXPECT_TRUE(strcmp(err.field, "tenant_id") == 0);
    bad_ev.tenant_id = empty;
    EXPECT(mbr_envelope_build(&bad_ev, &out_envelope, &err), MBR_ENVELOPE_FIELD);
    EXPECT_TRUE(strcmp(err.field, "tenant_id") == 0);
    bad_ev.tenant_id = not_utf8;
    EXPECT(mbr_envelope_build(&bad_ev, &out_envelope, NULL), MBR_INVALID_ARGUMENT);
    bad_ev = ev;
    bad_ev.has_payload_ref = true;
    EXPECT(mbr_envelope_build(&bad_ev, &out_envelope, NULL), MBR_NULL_POINTER); /* payload_ref {NULL, 3} */
    bad_ev = ev;
    bad_ev.consistency = 3;
    EXPECT(mbr_envelope_build(&bad_ev, &out_envelope, NULL), MBR_INVALID_ARGUMENT);
    bad_ev = ev;
    bad_ev.ttl = -1.0;
    EXPECT(mbr_envelope_build(&bad_ev, &out_envelope, &err), MBR_ENVELOPE_FIELD);
    EXPECT_TRUE(strcmp(err.field, "ttl") == 0);
    bad_ev = ev;
    bad_ev.version_id = 0;
    EXPECT(mbr_envelope_build(&bad_ev, &out_envelope, NULL), MBR_ENVELOPE_FIELD);
    bad_ev = ev;
    bad_ev.fingerprint_compat = bad_hex;
    EXPECT(mbr_envelope_build(&bad_ev, &out_envelope, &err), MBR_ENVELOPE_FIELD);
    EXPECT_TRUE(strcmp(err.field, "fingerprint_compat") == 0);
    bad_ev.fingerprint_compat = dangling;
    EXPECT(mbr_envelope_build(&bad_ev, &out_envelope, NULL), MBR_NULL_POINTER);
    UNTOUCHED(out_envelope);
    bad_ev.derive_fingerprint_compat = true; /* fingerprint_compat is ignored then */
    EXPECT(mbr_envelope_build(&bad_ev, &out_envelope, NULL), MBR_OK);
    EXPECT(mbr_envelope_build(&ev, &out_envelope, NULL), MBR_OK);
    EXPECT(mbr_envelope_write(&out_envelope, buf, sizeof buf, &n, NULL), MBR_OK);
    EXPECT_TRUE(n == env_len && memcmp(buf, envelope_json, n) == 0); /* built = parsed */

    /* ---- envelopes: accessors, writing ---- */
    mbr_envelope_fields fields;
    POISON(fields);
    EXPECT(mbr_envelope_get_fields(NULL, &fields), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_get_fields(&envelope, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_get_fields(&zeroed_envelope, &fields), MBR_INVALID_STATE);
    UNTOUCHED(fields);
    EXPECT(mbr_envelope_get_fields(&envelope, &fields), MBR_OK);
    EXPECT_TRUE(fields.payload_size == 0 && fields.ttl == 60.0 && fields.reuse_score == 0.5 && fields.version_id == 1);
    EXPECT_TRUE(fields.hlc == 0 && fields.consistency == MBR_CONSISTENCY_STRONG && !fields.has_payload_ref);
    EXPECT_TRUE(!fields.has_fingerprint_compat && fields.fingerprint_compat_hex[0] == '\0');
    EXPECT(mbr_identity_string(&fields.identity, MBR_FIELD_MODEL_ID, name, sizeof name, &n), MBR_OK);
    EXPECT_TRUE(n == 1 && strcmp(name, "m") == 0);
    EXPECT(mbr_envelope_build(&bad_ev, &out_envelope, NULL), MBR_OK); /* derived fingerprint_compat */
    EXPECT(mbr_envelope_get_fields(&out_envelope, &fields), MBR_OK);
    EXPECT_TRUE(fields.has_fingerprint_compat && strlen(fields.fingerprint_compat_hex) == 64);

    /* ---- views: every field in one struct, strings in place ---- */
    mbr_envelope_view env_view;
    mbr_identity_view id_view;
    mbr_error view_err;
    POISON(env_view);
    EXPECT(mbr_envelope_parse_view(NULL, 1, &env_view, &view_err), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_parse_view(env_text, env_len, NULL, &view_err), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_parse_view(NULL, 0, &env_view, NULL), MBR_ENVELOPE_JSON); /* the empty text */
    EXPECT(mbr_envelope_get_view(NULL, &env_view), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_get_view(&envelope, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_get_view(&zeroed_envelope, &env_view), MBR_INVALID_STATE);
    UNTOUCHED(env_view);
    EXPECT(mbr_envelope_parse_view(env_text, env_len, &env_view, NULL), MBR_OK);
    EXPECT_TRUE(env_view.tenant_id.len == 4 && memcmp(env_view.tenant_id.ptr, "acme", 4) == 0 && !env_view.has_payload_ref);
    EXPECT_TRUE(env_view.ttl == 60.0 && env_view.version_id == 1 && env_view.identity.shape_len == 1);
    EXPECT(mbr_envelope_get_view(&envelope, &env_view), MBR_OK);
    EXPECT_TRUE(env_view.identity.model_id.len == 1 && env_view.identity.model_id.ptr[0] == 'm');
    /* The decoded views: a room without its pointer, no room at all, and a room. */
    char room[8];
    POISON(env_view);
    EXPECT(mbr_envelope_parse_view_decoded(NULL, 1, room, sizeof room, &env_view, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_parse_view_decoded(env_text, env_len, NULL, 1, &env_view, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_parse_view_decoded(env_text, env_len, room, sizeof room, NULL, NULL), MBR_NULL_POINTER);
    UNTOUCHED(env_view);
    EXPECT(mbr_envelope_parse_view_decoded(env_text, env_len, NULL, 0, &env_view, NULL), MBR_OK);
    EXPECT(mbr_envelope_parse_view_decoded(env_text, env_len, room, sizeof room, &env_view, NULL), MBR_OK);
    EXPECT_TRUE(env_view.tenant_id.len == 4 && memcmp(env_view.tenant_id.ptr, "acme", 4) == 0);
    static const char escaped_identity[] =
        "{\"payload_hash\": \"x\", \"model_id\": \"caf\\u00e9\", \"model_revision\": \"\", \"tokenizer_name\": \"t\", "
        "\"tokenizer_revision\": \"\", \"layer_range\": [0, 1], \"head_range\": [-1, -1], \"token_span\": [0, 7], "
        "\"dtype\": \"int8\", \"shape\": [1]}";
    const uint8_t *id_text = (const uint8_t *)escaped_identity;
    POISON(id_view);
    EXPECT(mbr_identity_parse_view_decoded(NULL, 1, room, sizeof room, &id_view, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_parse_view_decoded(id_text, sizeof escaped_identity - 1, NULL, 1, &id_view, NULL),
           MBR_NULL_POINTER);
    EXPECT(mbr_identity_parse_view_decoded(id_text, sizeof escaped_identity - 1, room, sizeof room, NULL, NULL),
           MBR_NULL_POINTER);
    UNTOUCHED(id_view);
    EXPECT(mbr_identity_parse_view_decoded(id_text, sizeof escaped_identity - 1, NULL, 0, &id_view, NULL), MBR_OK);
    EXPECT_TRUE(id_view.model_id.has_escapes && id_view.model_id.len == 9);
    EXPECT(mbr_identity_parse_view_decoded(id_text, sizeof escaped_identity - 1, room, sizeof room, &id_view, NULL),
           MBR_OK);
    EXPECT_TRUE(!id_view.model_id.has_escapes && id_view.model_id.ptr == room && id_view.model_id.len == 5 &&
                memcmp(room, "caf\xc3\xa9", 5) == 0);
    POISON(id_view);
    EXPECT(mbr_identity_get_view(NULL, &id_view), MBR_NULL_POINTER);
    EXPECT(mbr_identity_get_view(&fields.identity, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_parse_view(NULL, 1, &id_view, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_parse_view(env_text, env_len, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_parse_view(env_text, env_len, &id_view, NULL), MBR_IDENTITY_FIELD); /* not an identity */
    UNTOUCHED(id_view);
    EXPECT(mbr_identity_get_view(&fields.identity, &id_view), MBR_OK);
    EXPECT_TRUE(id_view.dtype == MBR_DTYPE_INT8 && id_view.token_span.end == 7);
    mbr_text escaped = {"caf\\u00e9", 9, true};
    n = 12345;
    EXPECT(mbr_text_decode(escaped, NULL, 0, &n, &view_err), MBR_BUFFER_TOO_SMALL);
    EXPECT_TRUE(view_err.needed == 6 && n == 12345);
    EXPECT(mbr_text_decode(escaped, name, sizeof name, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_text_decode(escaped, NULL, 5, &n, NULL), MBR_NULL_POINTER);
    mbr_text dangling_text = {NULL, 3, false};
    EXPECT(mbr_text_decode(dangling_text, name, sizeof name, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_text_decode(escaped, name, sizeof name, &n, NULL), MBR_OK);
    EXPECT_TRUE(n == 5 && memcmp(name, "caf\xc3\xa9", 6) == 0);

    n = 12345;
    EXPECT(mbr_envelope_string_len(NULL, MBR_ENVELOPE_FIELD_TENANT_ID, &n), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_string_len(&envelope, MBR_ENVELOPE_FIELD_TENANT_ID, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_string_len(&zeroed_envelope, MBR_ENVELOPE_FIELD_TENANT_ID, &n), MBR_INVALID_STATE);
    EXPECT(mbr_envelope_string_len(&envelope, 2, &n), MBR_INVALID_ARGUMENT); /* identity: not a string */
    EXPECT_TRUE(n == 12345);
    EXPECT(mbr_envelope_string_len(&envelope, MBR_ENVELOPE_FIELD_TENANT_ID, &n), MBR_OK);
    EXPECT_TRUE(n == 4);
    EXPECT(mbr_envelope_string_len(&envelope, MBR_ENVELOPE_FIELD_PAYLOAD_REF, &n), MBR_OK);
    EXPECT_TRUE(n == 0); /* null reads as "" */

    POISON(name);
    n = 12345;
    EXPECT(mbr_envelope_string(NULL, MBR_ENVELOPE_FIELD_TENANT_ID, name, sizeof name, &n), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_string(&envelope, MBR_ENVELOPE_FIELD_TENANT_ID, NULL, sizeof name, &n), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_string(&envelope, MBR_ENVELOPE_FIELD_TENANT_ID, name, sizeof name, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_string(&envelope, MBR_ENVELOPE_FIELD_TENANT_ID, NULL, 0, &n), MBR_BUFFER_TOO_SMALL);
    EXPECT(mbr_envelope_string(&envelope, MBR_ENVELOPE_FIELD_TENANT_ID, name, 4, &n), MBR_BUFFER_TOO_SMALL);
    EXPECT(mbr_envelope_string(&zeroed_envelope, MBR_ENVELOPE_FIELD_TENANT_ID, name, sizeof name, &n), MBR_INVALID_STATE);
    EXPECT(mbr_envelope_string(&envelope, 99, name, sizeof name, &n), MBR_INVALID_ARGUMENT);
    UNTOUCHED(name);
    EXPECT_TRUE(n == 12345);
    EXPECT(mbr_envelope_string(&envelope, MBR_ENVELOPE_FIELD_TENANT_ID, name, 5, &n), MBR_OK);
    EXPECT_TRUE(n == 4 && strcmp(name, "acme") == 0);
    EXPECT(mbr_envelope_string(&envelope, MBR_ENVELOPE_FIELD_CONSISTENCY, name, sizeof name, &n), MBR_OK);
    EXPECT_TRUE(strcmp(name, "strong") == 0);
    EXPECT(mbr_envelope_string(&envelope, MBR_ENVELOPE_FIELD_FINGERPRINT_COMPAT, name, sizeof name, &n), MBR_OK);
    EXPECT_TRUE(n == 0 && name[0] == '\0');

    EXPECT(mbr_envelope_is_canonical(NULL, &flag), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_is_canonical(&envelope, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_is_canonical(&zeroed_envelope, &flag), MBR_INVALID_STATE);
    EXPECT(mbr_envelope_is_canonical(&envelope, &flag), MBR_OK);
    EXPECT_TRUE(flag);

    n = 12345;
    EXPECT(mbr_envelope_encoded_len(NULL, &n), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_encoded_len(&envelope, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_encoded_len(&zeroed_envelope, &n), MBR_INVALID_STATE);
    EXPECT_TRUE(n == 12345);
    EXPECT(mbr_envelope_encoded_len(&envelope, &n), MBR_OK);
    EXPECT_TRUE(n == env_len);

    n = 12345;
    memset(buf, 0xA5, sizeof buf);
    EXPECT(mbr_envelope_write(NULL, buf, sizeof buf, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_write(&envelope, NULL, sizeof buf, &n, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_write(&envelope, buf, sizeof buf, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_envelope_write(&zeroed_envelope, buf, sizeof buf, &n, NULL), MBR_INVALID_STATE);
    EXPECT(mbr_envelope_write(&envelope, buf, env_len - 1, &n, &err), MBR_BUFFER_TOO_SMALL);
    EXPECT_TRUE(err.needed == env_len && n == 12345 && poisoned(buf, sizeof buf));
    EXPECT(mbr_envelope_write(&envelope, buf, env_len, &n, NULL), MBR_OK);
    EXPECT_TRUE(n == env_len && memcmp(buf, envelope_json, n) == 0);

    EXPECT_TRUE(strcmp(mbr_consistency_name(MBR_CONSISTENCY_QUORUM), "quorum") == 0);
    EXPECT_TRUE(strcmp(mbr_consistency_name(MBR_CONSISTENCY_EVENTUAL), "eventual") == 0);
    EXPECT_TRUE(strcmp(mbr_consistency_name(3), "unknown") == 0);

    /* ---- compatibility hash ---- */
    mbr_compat_inputs compat = {LIT("llama-3-8b"), LIT(""), 0, LIT("llama-3-8b"), LIT(""), 0, LIT("float16"), LIT("")};
    mbr_compat_inputs bad_compat = compat;
    char compat_hex[65];
    POISON(hex65);
    EXPECT(mbr_compat_hash(NULL, hex65), MBR_NULL_POINTER);
    EXPECT(mbr_compat_hash(&compat, NULL), MBR_NULL_POINTER);
    bad_compat.config_hash = dangling;
    EXPECT(mbr_compat_hash(&bad_compat, hex65), MBR_NULL_POINTER);
    bad_compat.config_hash = not_utf8;
    EXPECT(mbr_compat_hash(&bad_compat, hex65), MBR_INVALID_ARGUMENT);
    UNTOUCHED(hex65);
    EXPECT(mbr_compat_hash(&compat, hex65), MBR_OK);
    EXPECT_TRUE(strlen(hex65) == 64);
    POISON(compat_hex);
    EXPECT(mbr_identity_compat_hash(NULL, compat_hex), MBR_NULL_POINTER);
    EXPECT(mbr_identity_compat_hash(&identity, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_identity_compat_hash(&zeroed, compat_hex), MBR_INVALID_STATE);
    UNTOUCHED(compat_hex);
    EXPECT(mbr_identity_compat_hash(&identity, compat_hex), MBR_OK); /* the same model, tokenizer and dtype */
    EXPECT_TRUE(strcmp(compat_hex, hex65) == 0);

    /* ---- HLC ---- */
    uint64_t hlc = 12345, hlc2 = 12345, physical = 12345;
    uint16_t logical = 123;
    EXPECT(mbr_hlc_pack(1735600000000ull, 0, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_hlc_pack(MBR_HLC_MAX_PHYSICAL_MS + 1, 0, &hlc), MBR_INVALID_ARGUMENT);
    EXPECT_TRUE(hlc == 12345);
    EXPECT(mbr_hlc_pack(1735600000000ull, 0, &hlc), MBR_OK);
    EXPECT_TRUE(hlc == (1735600000000ull << MBR_HLC_LOGICAL_BITS));
    EXPECT(mbr_hlc_unpack(hlc, NULL, &logical), MBR_NULL_POINTER);
    EXPECT(mbr_hlc_unpack(hlc, &physical, NULL), MBR_NULL_POINTER);
    EXPECT_TRUE(physical == 12345 && logical == 123);
    EXPECT(mbr_hlc_tick(hlc, 1735600000000ull, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_hlc_tick(hlc, MBR_HLC_MAX_PHYSICAL_MS + 1, &hlc2), MBR_INVALID_ARGUMENT);
    EXPECT(mbr_hlc_tick(UINT64_MAX, 0, &hlc2), MBR_INVALID_ARGUMENT);
    EXPECT_TRUE(hlc2 == 12345);
    EXPECT(mbr_hlc_tick(hlc, 1735600000000ull, &hlc2), MBR_OK); /* the clock did not advance */
    EXPECT(mbr_hlc_unpack(hlc2, &physical, &logical), MBR_OK);
    EXPECT_TRUE(physical == 1735600000000ull && logical == 1);
    EXPECT(mbr_hlc_tick(hlc2, 1735600000005ull, &hlc), MBR_OK); /* it did: logical resets */
    EXPECT(mbr_hlc_unpack(hlc, &physical, &logical), MBR_OK);
    EXPECT_TRUE(physical == 1735600000005ull && logical == 0);
    EXPECT(mbr_hlc_pack(1735600000009ull, 4, &hlc2), MBR_OK);
    EXPECT(mbr_hlc_merge(hlc, hlc2, 1735600000006ull, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_hlc_merge(hlc, hlc2, MBR_HLC_MAX_PHYSICAL_MS + 1, &n64), MBR_INVALID_ARGUMENT);
    EXPECT(mbr_hlc_merge(hlc, UINT64_MAX, 0, &n64), MBR_INVALID_ARGUMENT);
    EXPECT(mbr_hlc_merge(hlc, hlc2, 1735600000006ull, &n64), MBR_OK); /* remote is ahead: bump its logical */
    EXPECT(mbr_hlc_unpack(n64, &physical, &logical), MBR_OK);
    EXPECT_TRUE(physical == 1735600000009ull && logical == 5 && n64 > hlc && n64 > hlc2);

    /* ---- migration: frames ---- */
    static uint8_t legacy_frame[4096];
    EXPECT(mbr_frame_encode(&identity, payload, 5, buf, sizeof buf, &frame_len, NULL), MBR_OK);
    memcpy(legacy_frame, buf, frame_len);
    legacy_frame[3] = 0x04; /* a v4 frame: magic C0DE0104 ... */
    legacy_frame[4] = 0x04; /* ... and schema 4 */
    EXPECT(mbr_frame_check(legacy_frame, frame_len, MBR_LEVEL_TRAILER), MBR_LEGACY_FRAME);
    mbr_frame_migration migration;
    POISON(migration);
    options = mbr_read_options_default();
    EXPECT(mbr_plan_frame_migration(NULL, frame_len, options, &migration, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_plan_frame_migration(legacy_frame, frame_len, options, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_plan_frame_migration(NULL, 0, options, &migration, NULL), MBR_TOO_SHORT);
    options.mode = MBR_MODE_PREFIX;
    EXPECT(mbr_plan_frame_migration(legacy_frame, frame_len, options, &migration, &err), MBR_INVALID_ARGUMENT);
    EXPECT_TRUE(strcmp(err.field, "mode") == 0);
    options = mbr_read_options_default();
    options.level = 9;
    EXPECT(mbr_plan_frame_migration(legacy_frame, frame_len, options, &migration, NULL), MBR_INVALID_ARGUMENT);
    options = mbr_read_options_default();
    options.level = MBR_LEVEL_FULL;
    EXPECT(mbr_plan_frame_migration(legacy_frame, frame_len, options, &migration, NULL), MBR_PAYLOAD_HASH_MISMATCH);
    options = mbr_read_options_default();
    UNTOUCHED(migration);
    EXPECT(mbr_plan_frame_migration(legacy_frame, frame_len, options, &migration, NULL), MBR_OK);
    EXPECT_TRUE(migration.kind == MBR_MIGRATION_LEGACY && migration.from_version == 4 && migration.rewrites);
    EXPECT_TRUE(legacy_frame[3] == 0x04); /* a dry run */

    POISON(migration);
    EXPECT(mbr_migrate_frame_in_place(NULL, frame_len, options, &migration, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_migrate_frame_in_place(legacy_frame, frame_len, options, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_migrate_frame_in_place(NULL, 0, options, &migration, NULL), MBR_TOO_SHORT);
    EXPECT(mbr_migrate_frame_in_place(legacy_frame, frame_len - 1, options, &migration, NULL), MBR_PAYLOAD_OVERRUN);
    options.mode = MBR_MODE_PREFIX;
    EXPECT(mbr_migrate_frame_in_place(legacy_frame, frame_len, options, &migration, NULL), MBR_INVALID_ARGUMENT);
    options = mbr_read_options_default();
    UNTOUCHED(migration);
    EXPECT_TRUE(legacy_frame[3] == 0x04 && legacy_frame[4] == 0x04); /* untouched on failure */
    EXPECT(mbr_migrate_frame_in_place(legacy_frame, frame_len, options, &migration, NULL), MBR_OK);
    EXPECT_TRUE(migration.kind == MBR_MIGRATION_LEGACY && migration.from_version == 4);
    EXPECT_TRUE(memcmp(legacy_frame, buf, frame_len) == 0);
    EXPECT(mbr_migrate_frame_in_place(legacy_frame, frame_len, options, &migration, NULL), MBR_OK);
    EXPECT_TRUE(migration.kind == MBR_MIGRATION_ALREADY_V5 && migration.from_version == 5 && !migration.rewrites);
    legacy_frame[4] = 0x02; /* half migrated by the original tool: v5 magic, schema 2 */
    EXPECT(mbr_migrate_frame_in_place(legacy_frame, frame_len, options, &migration, NULL), MBR_OK);
    EXPECT_TRUE(migration.kind == MBR_MIGRATION_HALF_MIGRATED && migration.from_version == 2);
    EXPECT_TRUE(memcmp(legacy_frame, buf, frame_len) == 0);

    /* ---- migration: envelopes ---- */
    mbr_envelope_migration_options mopts = mbr_envelope_migration_options_default();
    EXPECT_TRUE(mopts.default_tenant.len == 6 && memcmp(mopts.default_tenant.ptr, "public", 6) == 0);
    EXPECT(mopts.max_depth, MBR_DEFAULT_MAX_DEPTH);
    mbr_envelope_migration migrated;
    POISON(migrated);
    memset(buf, 0xA5, sizeof buf);
    EXPECT(mbr_migrate_envelope(NULL, legacy_len, mopts, buf, sizeof buf, &migrated, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_migrate_envelope(legacy_text, legacy_len, mopts, NULL, sizeof buf, &migrated, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_migrate_envelope(legacy_text, legacy_len, mopts, buf, sizeof buf, NULL, NULL), MBR_NULL_POINTER);
    EXPECT(mbr_migrate_envelope(NULL, 0, mopts, buf, sizeof buf, &migrated, NULL), MBR_ENVELOPE_JSON);
    mbr_envelope_migration_options bad_mopts = mopts;
    bad_mopts.default_tenant = dangling;
    EXPECT(mbr_migrate_envelope(legacy_text, legacy_len, bad_mopts, buf, sizeof buf, &migrated, &err), MBR_NULL_POINTER);
    EXPECT_TRUE(strcmp(err.field, "default_tenant") == 0);
    bad_mopts.default_tenant = empty; /* not a valid tenant */
    EXPECT(mbr_migrate_envelope(legacy_text, legacy_len, bad_mopts, buf, sizeof buf, &migrated, NULL),
           MBR_INVALID_ARGUMENT);
    bad_mopts.default_tenant = not_utf8;
    EXPECT(mbr_migrate_envelope(legacy_text, legacy_len, bad_mopts, buf, sizeof buf, &migrated, NULL),
           MBR_INVALID_ARGUMENT);
    EXPECT(mbr_migrate_envelope(legacy_text, legacy_len, mopts, NULL, 0, &migrated, &err), MBR_BUFFER_TOO_SMALL);
    size_t migrated_len = (size_t)err.needed;
    EXPECT(mbr_migrate_envelope(legacy_text, legacy_len, mopts, buf, migrated_len - 1, &migrated, &err),
           MBR_BUFFER_TOO_SMALL);
    EXPECT_TRUE(err.needed == migrated_len);
    UNTOUCHED(migrated);
    EXPECT_TRUE(poisoned(buf, sizeof buf)); /* the buffer is written only on success */
    EXPECT(mbr_migrate_envelope(legacy_text, legacy_len, mopts, buf, migrated_len, &migrated, NULL), MBR_OK);
    EXPECT_TRUE(migrated.kind == MBR_MIGRATION_LEGACY && migrated.from_version == 4 && migrated.len == migrated_len);
    EXPECT(mbr_envelope_check(buf, migrated.len), MBR_OK);
    EXPECT(mbr_envelope_parse(buf, migrated.len, &out_envelope, NULL), MBR_OK);
    EXPECT(mbr_envelope_string(&out_envelope, MBR_ENVELOPE_FIELD_TENANT_ID, name, sizeof name, &n), MBR_OK);
    EXPECT_TRUE(strcmp(name, "public") == 0);
    mopts.default_tenant = acme;
    EXPECT(mbr_migrate_envelope(legacy_text, legacy_len, mopts, buf, sizeof buf, &migrated, NULL), MBR_OK);
    EXPECT(mbr_envelope_parse(buf, migrated.len, &out_envelope, NULL), MBR_OK);
    EXPECT(mbr_envelope_string(&out_envelope, MBR_ENVELOPE_FIELD_TENANT_ID, name, sizeof name, &n), MBR_OK);
    EXPECT_TRUE(strcmp(name, "acme") == 0);
    EXPECT(mbr_migrate_envelope(env_text, env_len, mopts, NULL, 0, &migrated, NULL), MBR_OK); /* v5: nothing to do */
    EXPECT_TRUE(migrated.kind == MBR_MIGRATION_ALREADY_V5 && migrated.from_version == 5 && migrated.len == 0);

    metadata();

    printf("test_null_args: %d passed, %d failed\n", passes, failures);
    return failures == 0 ? 0 : 1;
}
