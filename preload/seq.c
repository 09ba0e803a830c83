/* SPDX-License-Identifier: MIT */
/* The per-address sequence counters (event.h): taken by the program's threads, read by the writer.
 * Their own file, so that the matcher links and is tested without the tracker. */
#include "event.h"

_Atomic uint32_t ct_seq[CT_SEQ_BUCKETS];
