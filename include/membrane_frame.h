/*
 * membrane_frame.h: the C ABI of membrane-frame, a no_std, allocation-free reader,
 * verifier and writer of Membrane v5 KV-cache fragment frames and JSON envelopes, with
 * SHA-256, the compatibility hash, HLC values and migration to v5, and of the cluster
 * metadata (snapshots, gossip maps, tombstone tables, ref counts) (SPEC.md §1-3, §5-9).
 *
 * It includes the two parts, which can also be included alone:
 *   membrane_frame_core.h     the frame path: status codes and errors, identities,
 *                             frames (read, verify, write, stream), SHA-256,
 *                             envelopes, HLC, migration, versions; the conventions
 *                             every function follows are written at its top
 *   membrane_frame_cluster.h  the cluster metadata (includes membrane_frame_core.h)
 * Both are generated from ffi/src by cbindgen; this file is written by hand.
 */
#ifndef MEMBRANE_FRAME_H
#define MEMBRANE_FRAME_H

#include "membrane_frame_core.h"
#include "membrane_frame_cluster.h"

#endif /* MEMBRANE_FRAME_H */
