/* SPDX-License-Identifier: MIT */
/* Symbolization while the trace is read: a thread of its own resolves each stack node into a
 * symbolizer's cache as the model gets it (the reader's thread hands nodes over in batches), so the
 * reports that follow find their frames resolved. Until ct_presym_finish returns it, nothing else may
 * use that symbolizer. */
#ifndef CTRACK_PRESYM_H
#define CTRACK_PRESYM_H

#include <stdint.h>

#include "model.h"
#include "symbolize.h"

struct ct_presym;

/* A symbolizer and its thread, set as m's frame_added hook (m initialised, nothing read yet). NULL
 * when either cannot be had: then nothing is resolved ahead. */
struct ct_presym *ct_presym_start(struct ct_model *m);

/* Hands over the nodes not yet handed, waits until the thread has resolved every one, unhooks m and
 * frees p. Returns the symbolizer (the caller's to free), or NULL when p is NULL. */
struct ct_symbolizer *ct_presym_finish(struct ct_presym *p, struct ct_model *m);

#endif
