/* Compile-only check: membrane_frame.h is valid C99 and C11 under -Wall -Wextra
 * -Wpedantic -Werror, and its storage sizes match the ABI constants (the header
 * asserts them itself; this file uses every type so nothing is left unchecked). */
#include "membrane_frame.h"
#include "membrane_frame.h" /* twice: the header must survive being included again */

int header_check(void);
int header_check(void) {
    mbr_identity identity;
    mbr_stream_verifier verifier;
    mbr_chunked_writer writer;
    mbr_frame frame;
    mbr_streamed_frame streamed;
    mbr_identity_values values;
    mbr_stream_progress progress;
    mbr_chunked_outcome outcome;
    mbr_error error;
    mbr_digest digest;
    mbr_read_options options = mbr_read_options_default();
    mbr_write_callback callback = 0;
    mbr_envelope envelope;
    mbr_envelope_values envelope_values;
    mbr_envelope_fields envelope_fields;
    mbr_compat_inputs compat_inputs;
    mbr_frame_migration frame_migration;
    mbr_envelope_migration envelope_migration;
    mbr_envelope_migration_options migration_options = mbr_envelope_migration_options_default();
    mbr_sha256_state sha_state;
    /* The typed enums hold the constants' values. */
    enum mbr_dtype dtype = MBR_DTYPE_INT8;
    enum mbr_verify_level level = MBR_LEVEL_FULL;
    enum mbr_status_code code = MBR_TRAILER_MISMATCH;
    (void)sha_state;
    (void)dtype;
    (void)level;
    (void)code;
    (void)identity;
    (void)verifier;
    (void)writer;
    (void)frame;
    (void)streamed;
    (void)values;
    (void)progress;
    (void)outcome;
    (void)error;
    (void)digest;
    (void)callback;
    (void)envelope;
    (void)envelope_values;
    (void)envelope_fields;
    (void)compat_inputs;
    (void)frame_migration;
    (void)envelope_migration;
    return (int)options.level + (int)migration_options.max_depth + (sizeof(mbr_identity) == MBR_IDENTITY_SIZE ? 0 : 1) +
           (sizeof(mbr_envelope) == MBR_ENVELOPE_SIZE ? 0 : 1);
}
