/*
 * abi_0_1.h: every MBR_* constant and function prototype of include/membrane_frame.h as
 * version 0.1 declared them in one header (commit 19be1d5), printed by
 * scripts/abi-snapshot.py. abi_check.c includes membrane_frame.h and then this: C accepts
 * a redeclaration only when its type is the same, and a macro redefinition only when it
 * is token for token the same, so the file compiles (with -Werror) exactly when every one
 * of these declarations still holds.
 */
#define MBR_ENVELOPE_SIZE 768
#define MBR_ENVELOPE_ALIGN 8
#define MBR_CONSISTENCY_STRONG 0
#define MBR_CONSISTENCY_QUORUM 1
#define MBR_CONSISTENCY_EVENTUAL 2
#define MBR_ENVELOPE_FIELD_TENANT_ID 1
#define MBR_ENVELOPE_FIELD_PAYLOAD_REF 3
#define MBR_ENVELOPE_FIELD_CONSISTENCY 8
#define MBR_ENVELOPE_FIELD_FINGERPRINT_COMPAT 10
#define MBR_LEVEL_LAYOUT 0
#define MBR_LEVEL_IDENTITY 1
#define MBR_LEVEL_TRAILER 2
#define MBR_LEVEL_FULL 3
#define MBR_MODE_EXACT 0
#define MBR_MODE_PREFIX 1
#define MBR_DEFAULT_IDENTITY_LIMIT 65536
#define MBR_DEFAULT_MAX_DEPTH 32
#define MBR_HEADER_LEN 14
#define MBR_FRAME_OVERHEAD 30
#define MBR_ELEMENT_U8 0
#define MBR_ELEMENT_I8 1
#define MBR_ELEMENT_U16 2
#define MBR_ELEMENT_I16 3
#define MBR_ELEMENT_I32 4
#define MBR_ELEMENT_I64 5
#define MBR_ELEMENT_F32 6
#define MBR_ELEMENT_F64 7
#define MBR_HLC_LOGICAL_BITS 16
#define MBR_HLC_MAX_PHYSICAL_MS (UINT64_MAX >> 16)
#define MBR_IDENTITY_SIZE 512
#define MBR_IDENTITY_ALIGN 8
#define MBR_MAX_SHAPE_DIMS 16
#define MBR_FIELD_PAYLOAD_HASH 0
#define MBR_FIELD_MODEL_ID 1
#define MBR_FIELD_MODEL_REVISION 2
#define MBR_FIELD_TOKENIZER_NAME 3
#define MBR_FIELD_TOKENIZER_REVISION 4
#define MBR_FIELD_LAYER_RANGE 5
#define MBR_FIELD_HEAD_RANGE 6
#define MBR_FIELD_TOKEN_SPAN 7
#define MBR_FIELD_DTYPE 8
#define MBR_FIELD_SHAPE 9
#define MBR_DTYPE_FLOAT16 0
#define MBR_DTYPE_BFLOAT16 1
#define MBR_DTYPE_FLOAT32 2
#define MBR_DTYPE_FLOAT64 3
#define MBR_DTYPE_INT8 4
#define MBR_DTYPE_INT16 5
#define MBR_DTYPE_INT32 6
#define MBR_DTYPE_INT64 7
#define MBR_DTYPE_UINT8 8
#define MBR_DTYPE_FP8_E4M3 9
#define MBR_DTYPE_FP8_E5M2 10
#define MBR_DTYPE_NF4 11
#define MBR_MIGRATION_ALREADY_V5 0
#define MBR_MIGRATION_LEGACY 1
#define MBR_MIGRATION_HALF_MIGRATED 2
#define MBR_REF_SLOT_SIZE 560
#define MBR_REF_SLOT_ALIGN 16
#define MBR_REFCOUNTS_SIZE 128
#define MBR_REFCOUNTS_ALIGN 8
#define MBR_SNAPSHOT_SIZE 256
#define MBR_SNAPSHOT_ALIGN 8
#define MBR_SNAPSHOT_MEMBER_NODE_ID 1
#define MBR_SNAPSHOT_MEMBER_HOST 2
#define MBR_SNAPSHOT_PRIMARY_KEY 3
#define MBR_SNAPSHOT_PRIMARY_NODE 4
#define MBR_SNAPSHOT_REPLICA_KEY 5
#define MBR_SNAPSHOT_REPLICA_NODE 6
#define MBR_SNAPSHOT_MEMBERSHIP 1
#define MBR_SNAPSHOT_PRIMARY_MAP 2
#define MBR_SNAPSHOT_REPLICA_MAP 3
#define MBR_SNAPSHOT_CURSOR_SIZE 512
#define MBR_SNAPSHOT_CURSOR_ALIGN 8
#define MBR_OK 0
#define MBR_TOO_SHORT 1
#define MBR_BAD_MAGIC 2
#define MBR_LEGACY_FRAME 3
#define MBR_SCHEMA_MISMATCH 4
#define MBR_RESERVED_NONZERO 5
#define MBR_IDENTITY_OVERRUN 6
#define MBR_IDENTITY_TOO_LARGE 7
#define MBR_IDENTITY_JSON 8
#define MBR_IDENTITY_FIELD 9
#define MBR_PAYLOAD_OVERRUN 10
#define MBR_TRAILING_BYTES 11
#define MBR_TRAILER_MISMATCH 12
#define MBR_PAYLOAD_HASH_MISMATCH 13
#define MBR_ENVELOPE_JSON 20
#define MBR_ENVELOPE_VERSION 21
#define MBR_ENVELOPE_MISSING_FIELD 22
#define MBR_ENVELOPE_FIELD 23
#define MBR_SNAPSHOT_JSON 30
#define MBR_SNAPSHOT_VERSION 31
#define MBR_SNAPSHOT_FIELD 32
#define MBR_STALE_EPOCH 33
#define MBR_TOMBSTONE_JSON 40
#define MBR_TOMBSTONE_FIELD 41
#define MBR_PROTO_DECODE 50
#define MBR_PROTO_FIELD 51
#define MBR_CHUNK_SEQUENCE 52
#define MBR_CHUNK_DIGEST 53
#define MBR_NULL_POINTER 100
#define MBR_BUFFER_TOO_SMALL 101
#define MBR_LENGTH_MISMATCH 102
#define MBR_TABLE_FULL 103
#define MBR_IO 104
#define MBR_INVALID_ARGUMENT 105
#define MBR_INVALID_STATE 106
#define MBR_MISALIGNED 107
#define MBR_PANIC 199
#define MBR_CLASS_NONE 0
#define MBR_CLASS_SCHEMA 1
#define MBR_CLASS_CORRUPT 2
#define MBR_CLASS_USAGE 3
#define MBR_CLASS_IO 4
#define MBR_NO_OFFSET UINT64_MAX
#define MBR_STREAM_VERIFIER_SIZE 512
#define MBR_STREAM_VERIFIER_ALIGN 8
#define MBR_TOMBSTONE_SLOT_SIZE 576
#define MBR_TOMBSTONE_SLOT_ALIGN 16
#define MBR_NODE_SLOT_SIZE 514
#define MBR_NODE_SLOT_ALIGN 2
#define MBR_ID_BUF_SIZE 513
#define MBR_TOMBSTONE_TABLE_SIZE 128
#define MBR_TOMBSTONE_TABLE_ALIGN 8
#define MBR_ABI_VERSION 1
#define MBR_MAX_PAYLOAD_ALIGN 4096
#define MBR_CHUNKED_WRITER_SIZE 256
#define MBR_CHUNKED_WRITER_ALIGN 8

uint32_t mbr_sha256(const uint8_t *data,
                    size_t len,
                    struct mbr_digest *out);

uint32_t mbr_envelope_check(const uint8_t *json,
                            size_t len);

uint32_t mbr_envelope_canonicalize(const uint8_t *json,
                                   size_t len,
                                   uint8_t *out,
                                   size_t cap,
                                   size_t *written);

uint32_t mbr_envelope_parse(const uint8_t *json,
                            size_t len,
                            struct mbr_envelope *out,
                            struct mbr_error *error);

uint32_t mbr_envelope_build(const struct mbr_envelope_values *values,
                            struct mbr_envelope *out,
                            struct mbr_error *error);

uint32_t mbr_envelope_get_fields(const struct mbr_envelope *envelope,
                                 struct mbr_envelope_fields *out);

uint32_t mbr_envelope_identity(const struct mbr_envelope *envelope,
                               struct mbr_identity *out);

uint32_t mbr_envelope_string_len(const struct mbr_envelope *envelope,
                                 uint32_t field,
                                 size_t *out_len);

uint32_t mbr_envelope_string(const struct mbr_envelope *envelope,
                             uint32_t field,
                             char *buf,
                             size_t capacity,
                             size_t *out_len);

uint32_t mbr_envelope_is_canonical(const struct mbr_envelope *envelope,
                                   bool *out);

uint32_t mbr_envelope_encoded_len(const struct mbr_envelope *envelope,
                                  size_t *out_len);

uint32_t mbr_envelope_write(const struct mbr_envelope *envelope,
                            uint8_t *buf,
                            size_t capacity,
                            size_t *out_len,
                            struct mbr_error *error);

const char *mbr_consistency_name(uint32_t consistency);

uint32_t mbr_compat_hash(const struct mbr_compat_inputs *inputs,
                         char *out);

uint32_t mbr_identity_compat_hash(const struct mbr_identity *identity,
                                  char *out);

struct mbr_read_options mbr_read_options_default(void);

uint32_t mbr_frame_payload_elements(const struct mbr_frame *frame,
                                    uint32_t element,
                                    struct mbr_payload_elements *out,
                                    struct mbr_error *error);

uint32_t mbr_frame_payload_is_aligned(const struct mbr_frame *frame,
                                      uint32_t align,
                                      bool *out);

uint32_t mbr_frame_check(const uint8_t *buf,
                         size_t len,
                         uint32_t level);

uint32_t mbr_frame_parse(const uint8_t *buf,
                         size_t len,
                         struct mbr_read_options options,
                         struct mbr_frame *out,
                         struct mbr_error *error);

uint32_t mbr_frame_verify_batch(const struct mbr_bytes *frames,
                                size_t count,
                                struct mbr_read_options options,
                                struct mbr_verdict *verdicts,
                                struct mbr_error *error);

uint32_t mbr_hlc_pack(uint64_t physical_ms,
                      uint16_t logical,
                      uint64_t *out);

uint32_t mbr_hlc_unpack(uint64_t hlc,
                        uint64_t *physical_ms,
                        uint16_t *logical);

uint32_t mbr_hlc_tick(uint64_t previous,
                      uint64_t now_ms,
                      uint64_t *out);

uint32_t mbr_hlc_merge(uint64_t local,
                       uint64_t remote,
                       uint64_t now_ms,
                       uint64_t *out);

uint32_t mbr_identity_parse(const uint8_t *json,
                            size_t len,
                            struct mbr_identity *out,
                            struct mbr_error *error);

uint32_t mbr_identity_build(const struct mbr_identity_values *values,
                            struct mbr_identity *out,
                            struct mbr_error *error);

uint32_t mbr_identity_with_payload_hash(const struct mbr_identity *identity,
                                        const char *hash,
                                        size_t hash_len,
                                        struct mbr_identity *out,
                                        struct mbr_error *error);

uint32_t mbr_identity_string_len(const struct mbr_identity *identity,
                                 uint32_t field,
                                 size_t *out_len);

uint32_t mbr_identity_string(const struct mbr_identity *identity,
                             uint32_t field,
                             char *buf,
                             size_t capacity,
                             size_t *out_len);

uint32_t mbr_identity_range(const struct mbr_identity *identity,
                            uint32_t field,
                            struct mbr_range *out);

uint32_t mbr_identity_dtype(const struct mbr_identity *identity,
                            uint32_t *out);

uint32_t mbr_identity_shape(const struct mbr_identity *identity,
                            int64_t *dims,
                            size_t capacity,
                            size_t *out_len);

uint32_t mbr_identity_tensor_bytes(const struct mbr_identity *identity,
                                   uint64_t *out);

uint32_t mbr_identity_is_canonical(const struct mbr_identity *identity,
                                   bool *out);

uint32_t mbr_identity_fingerprint(const struct mbr_identity *identity,
                                  struct mbr_digest *out);

uint32_t mbr_identity_fingerprint_hex(const uint8_t *json,
                                      size_t len,
                                      char *out);

uint32_t mbr_identity_canonical_len(const struct mbr_identity *identity,
                                    size_t *out_len);

uint32_t mbr_identity_write_canonical(const struct mbr_identity *identity,
                                      uint8_t *buf,
                                      size_t capacity,
                                      size_t *out_len,
                                      struct mbr_error *error);

const char *mbr_dtype_name(uint32_t dtype);

uint32_t mbr_dtype_bits(uint32_t dtype,
                        uint32_t *out);

uint32_t mbr_dtype_from_name(const char *name,
                             size_t len,
                             uint32_t *out);

uint32_t mbr_plan_frame_migration(const uint8_t *buf,
                                  size_t len,
                                  struct mbr_read_options options,
                                  struct mbr_frame_migration *out,
                                  struct mbr_error *error);

uint32_t mbr_migrate_frame_in_place(uint8_t *buf,
                                    size_t len,
                                    struct mbr_read_options options,
                                    struct mbr_frame_migration *out,
                                    struct mbr_error *error);

struct mbr_envelope_migration_options mbr_envelope_migration_options_default(void);

uint32_t mbr_migrate_envelope(const uint8_t *json,
                              size_t len,
                              struct mbr_envelope_migration_options options,
                              uint8_t *out,
                              size_t capacity,
                              struct mbr_envelope_migration *result,
                              struct mbr_error *error);

uint32_t mbr_refcounts_init(struct mbr_refcounts *counts,
                            void *slots,
                            size_t slots_bytes,
                            void *nodes,
                            size_t nodes_bytes,
                            uint64_t seed);

uint32_t mbr_refcounts_stats(struct mbr_refcounts *counts,
                             size_t *len,
                             size_t *capacity);

uint32_t mbr_refcounts_acquire(struct mbr_refcounts *counts,
                               struct mbr_str content_hash,
                               struct mbr_str node);

uint32_t mbr_refcounts_release(struct mbr_refcounts *counts,
                               struct mbr_str content_hash,
                               struct mbr_str node,
                               bool *emptied);

uint32_t mbr_refcounts_holders(struct mbr_refcounts *counts,
                               struct mbr_str content_hash,
                               mbr_id_callback callback,
                               void *userdata,
                               size_t *count);

uint32_t mbr_refcounts_forget(struct mbr_refcounts *counts,
                              struct mbr_str content_hash,
                              bool *forgotten);

uint32_t mbr_snapshot_check(const uint8_t *json,
                            size_t len);

uint32_t mbr_snapshot_parse(const uint8_t *json,
                            size_t len,
                            struct mbr_snapshot *out,
                            struct mbr_error *error);

uint32_t mbr_snapshot_parse_guarded(const uint8_t *json,
                                    size_t len,
                                    uint64_t live_epoch,
                                    struct mbr_snapshot *out,
                                    struct mbr_error *error);

uint32_t mbr_snapshot_epoch_check(uint64_t live_epoch,
                                  uint64_t persisted_epoch,
                                  bool has_persisted_epoch);

uint32_t mbr_snapshot_info_get(const struct mbr_snapshot *snapshot,
                               struct mbr_snapshot_info *out);

uint32_t mbr_snapshot_member(const struct mbr_snapshot *snapshot,
                             size_t index,
                             struct mbr_member *out);

uint32_t mbr_snapshot_replica_len(const struct mbr_snapshot *snapshot,
                                  size_t index,
                                  size_t *out);

uint32_t mbr_snapshot_string(const struct mbr_snapshot *snapshot,
                             uint32_t field,
                             size_t index,
                             size_t sub_index,
                             char *buf,
                             size_t capacity,
                             size_t *out_len,
                             struct mbr_error *error);

uint32_t mbr_snapshot_set_cluster_epoch(struct mbr_snapshot *snapshot,
                                        uint64_t cluster_epoch);

uint32_t mbr_snapshot_is_canonical(const struct mbr_snapshot *snapshot,
                                   bool *out);

uint32_t mbr_snapshot_write(const struct mbr_snapshot *snapshot,
                            uint8_t *buf,
                            size_t capacity,
                            size_t *out_len,
                            struct mbr_error *error);

uint32_t mbr_snapshot_cursor_init(const struct mbr_snapshot *snapshot,
                                  uint32_t list,
                                  struct mbr_snapshot_cursor *cursor);

uint32_t mbr_snapshot_cursor_next(struct mbr_snapshot_cursor *cursor,
                                  bool *has_entry);

uint32_t mbr_snapshot_cursor_member(const struct mbr_snapshot_cursor *cursor,
                                    struct mbr_member *out);

uint32_t mbr_snapshot_cursor_replica_len(const struct mbr_snapshot_cursor *cursor,
                                         size_t *out);

uint32_t mbr_snapshot_cursor_string(const struct mbr_snapshot_cursor *cursor,
                                    uint32_t field,
                                    size_t sub_index,
                                    char *buf,
                                    size_t capacity,
                                    size_t *out_len,
                                    struct mbr_error *error);

const char *mbr_status_name(uint32_t status);

const char *mbr_status_str(uint32_t status);

uint32_t mbr_status_class(uint32_t status);

const char *mbr_class_name(uint32_t class_);

uint32_t mbr_stream_verifier_init(struct mbr_stream_verifier *verifier,
                                  struct mbr_read_options options,
                                  uint8_t *identity_buf,
                                  size_t identity_capacity);

uint32_t mbr_stream_verifier_feed(struct mbr_stream_verifier *verifier,
                                  const uint8_t *chunk,
                                  size_t len,
                                  struct mbr_stream_progress *out,
                                  struct mbr_error *error);

uint32_t mbr_stream_verifier_received(const struct mbr_stream_verifier *verifier,
                                      uint64_t *out);

uint32_t mbr_stream_verifier_finish(struct mbr_stream_verifier *verifier,
                                    struct mbr_streamed_frame *out,
                                    struct mbr_error *error);

uint32_t mbr_gossip_check(const uint8_t *json,
                          size_t len);

uint32_t mbr_gossip_merge(const uint8_t *a,
                          size_t a_len,
                          const uint8_t *b,
                          size_t b_len,
                          double now,
                          uint8_t *out,
                          size_t cap,
                          size_t *written);

uint32_t mbr_tombstone_table_init(struct mbr_tombstone_table *table,
                                  void *slots,
                                  size_t slots_bytes,
                                  void *nodes,
                                  size_t nodes_bytes,
                                  uint64_t seed);

uint32_t mbr_tombstone_table_stats(struct mbr_tombstone_table *table,
                                   size_t *len,
                                   size_t *capacity,
                                   size_t *node_capacity);

uint32_t mbr_tombstone_record(struct mbr_tombstone_table *table,
                              struct mbr_str content_hash,
                              double until,
                              struct mbr_str node,
                              struct mbr_error *error);

uint32_t mbr_tombstone_merge_gossip(struct mbr_tombstone_table *table,
                                    const uint8_t *json,
                                    size_t len,
                                    double now,
                                    size_t *adopted,
                                    struct mbr_error *error);

uint32_t mbr_tombstone_merge_table(struct mbr_tombstone_table *table,
                                   struct mbr_tombstone_table *other,
                                   struct mbr_error *error);

uint32_t mbr_tombstone_get(struct mbr_tombstone_table *table,
                           struct mbr_str content_hash,
                           double *until,
                           bool *found);

uint32_t mbr_tombstone_is_active(struct mbr_tombstone_table *table,
                                 struct mbr_str content_hash,
                                 double now,
                                 bool *active);

uint32_t mbr_tombstone_remove(struct mbr_tombstone_table *table,
                              struct mbr_str content_hash,
                              bool *removed);

uint32_t mbr_tombstone_sweep(struct mbr_tombstone_table *table,
                             double now,
                             mbr_id_callback callback,
                             void *userdata,
                             size_t *removed);

uint32_t mbr_tombstone_write_gossip(struct mbr_tombstone_table *table,
                                    double now,
                                    uint8_t *buf,
                                    size_t capacity,
                                    size_t *out_len,
                                    struct mbr_error *error);

uint32_t mbr_tombstone_apply_op_tombstone(struct mbr_tombstone_table *table,
                                          const uint8_t *json,
                                          size_t len,
                                          struct mbr_error *error);

uint32_t mbr_tombstone_apply_op_delete(struct mbr_tombstone_table *table,
                                       const uint8_t *json,
                                       size_t len,
                                       double now,
                                       double *until,
                                       struct mbr_error *error);

uint32_t mbr_op_tombstone_parse(const uint8_t *json,
                                size_t len,
                                struct mbr_op_body *out,
                                struct mbr_error *error);

uint32_t mbr_op_delete_parse(const uint8_t *json,
                             size_t len,
                             struct mbr_op_body *out,
                             struct mbr_error *error);

uint32_t mbr_op_tombstone_write(struct mbr_str content_hash,
                                double until,
                                struct mbr_str node_id,
                                uint8_t *buf,
                                size_t capacity,
                                size_t *out_len,
                                struct mbr_error *error);

uint32_t mbr_op_delete_write(struct mbr_str content_hash,
                             struct mbr_str node_id,
                             bool has_until,
                             double until,
                             uint8_t *buf,
                             size_t capacity,
                             size_t *out_len,
                             struct mbr_error *error);

const char *mbr_version(void);

uint32_t mbr_abi_version(void);

struct mbr_write_options mbr_write_options_default(void);

uint32_t mbr_frame_plan(const struct mbr_identity *identity,
                        uint64_t payload_len,
                        struct mbr_write_options options,
                        struct mbr_frame_layout *out,
                        struct mbr_error *error);

uint32_t mbr_frame_encoded_len(const struct mbr_identity *identity,
                               uint64_t payload_len,
                               uint64_t *out_len,
                               struct mbr_error *error);

uint32_t mbr_frame_head_len(const struct mbr_identity *identity,
                            uint64_t payload_len,
                            size_t *out_len,
                            struct mbr_error *error);

uint32_t mbr_frame_write_head(const struct mbr_identity *identity,
                              uint64_t payload_len,
                              uint8_t *buf,
                              size_t capacity,
                              size_t *out_len,
                              struct mbr_error *error);

uint32_t mbr_frame_write_head_with(const struct mbr_identity *identity,
                                   uint64_t payload_len,
                                   struct mbr_write_options options,
                                   uint8_t *buf,
                                   size_t capacity,
                                   size_t *out_len,
                                   struct mbr_error *error);

uint32_t mbr_frame_encode(const struct mbr_identity *identity,
                          const uint8_t *payload,
                          size_t payload_len,
                          uint8_t *buf,
                          size_t capacity,
                          size_t *out_len,
                          struct mbr_error *error);

uint32_t mbr_frame_encode_with(const struct mbr_identity *identity,
                               const uint8_t *payload,
                               size_t payload_len,
                               struct mbr_write_options options,
                               uint8_t *buf,
                               size_t capacity,
                               size_t *out_len,
                               struct mbr_error *error);

uint32_t mbr_chunked_writer_begin(struct mbr_chunked_writer *writer,
                                  const struct mbr_identity *identity,
                                  uint64_t payload_len,
                                  mbr_write_callback callback,
                                  void *userdata,
                                  struct mbr_error *error);

uint32_t mbr_chunked_writer_begin_with(struct mbr_chunked_writer *writer,
                                       const struct mbr_identity *identity,
                                       uint64_t payload_len,
                                       struct mbr_write_options options,
                                       mbr_write_callback callback,
                                       void *userdata,
                                       struct mbr_error *error);

uint32_t mbr_chunked_writer_write(struct mbr_chunked_writer *writer,
                                  const uint8_t *chunk,
                                  size_t len,
                                  struct mbr_error *error);

uint32_t mbr_chunked_writer_remaining(const struct mbr_chunked_writer *writer,
                                      uint64_t *out);

uint32_t mbr_chunked_writer_finish(struct mbr_chunked_writer *writer,
                                   struct mbr_chunked_outcome *out,
                                   struct mbr_error *error);
