/* Compile-only check: membrane_frame.h is valid C99 and C11 under -Wall -Wextra
 * -Wpedantic -Werror, and its storage sizes match the ABI constants (the header
 * asserts them itself; this file uses every type so nothing is left unchecked). */
#include "membrane_frame.h"

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
    return (int)options.level + (sizeof(mbr_identity) == MBR_IDENTITY_SIZE ? 0 : 1);
}
