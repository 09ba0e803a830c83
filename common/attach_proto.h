/* SPDX-License-Identifier: MIT */
/* How `ctrack -p PID` (launcher/attach.c) and the shim it loads into PID (preload/attach.c) talk:
 * one connection on an abstract Unix socket, named after PID, that the launcher binds (so a second
 * launcher attaching to the same process finds the name taken) and the shim connects to.
 *  launcher -> shim: CT_ATTACH_HELLO_BYTES (magic, depth), with the trace's descriptor (SCM_RIGHTS);
 *                    with CT_ATTACH_MAGIC_SETTINGS as its magic, CT_ATTACH_SETTINGS_BYTES follow
 *                    (sampling, aggregating). The launcher sends them only when a setting is on, so
 *                    a plain attach reaches a shim of an older build (still loaded from an earlier
 *                    attach) as before; such a shim answers EPROTO to the longer hello;
 *  shim -> launcher: a 4-byte little-endian answer, 0 (tracing) or a positive errno;
 *  launcher -> shim: any byte, or the end of the connection: detach;
 *  shim -> launcher: the end of the connection once the trace is complete (END written), at a
 *                    detach or at the process's exit.
 * The descriptor travels over the socket (not a path the target opens) so that a trace made by root
 * in root's directory, mode 0600, can be written by a process of another user, and the name can
 * never be swapped for a symlink between the launcher's creation and the target's open. */
#ifndef CTRACK_ATTACH_PROTO_H
#define CTRACK_ATTACH_PROTO_H

#include <stdint.h>

#define CT_ATTACH_MAGIC 0x31415443u          /* "CTA1", little-endian */
#define CT_ATTACH_HELLO_BYTES 8              /* | magic u32 | depth u32 | */
#define CT_ATTACH_MAGIC_SETTINGS 0x32415443u /* "CTA2": the hello, then the settings */
/* | sample rate u64 (0: every allocation) | seed u64 | seeded u32 (1: the seed is given, 0: the
 * shim takes one from the clock) | snapshot interval ms u32 (0: a full trace, else aggregated) | */
#define CT_ATTACH_SETTINGS_BYTES 24
#define CT_ATTACH_NAME_PREFIX "ctrack-attach." /* then the target's pid: the abstract name */
#define CT_ATTACH_NAME_MAX 64                  /* bytes of a name, its NUL included */

static inline void ct_attach_put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t ct_attach_get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void ct_attach_put_u64(uint8_t *p, uint64_t v)
{
	ct_attach_put_u32(p, (uint32_t)v);
	ct_attach_put_u32(p + 4, (uint32_t)(v >> 32));
}

static inline uint64_t ct_attach_get_u64(const uint8_t *p)
{
	return (uint64_t)ct_attach_get_u32(p) | (uint64_t)ct_attach_get_u32(p + 4) << 32;
}

/* What CT_ATTACH_SETTINGS_BYTES carry; all zero for a plain attach (CT_ATTACH_MAGIC). */
struct ct_attach_settings {
	uint64_t sample_rate; /* --sample: bytes, 1 to CT_SAMPLE_MAX; 0: every allocation */
	uint64_t seed;        /* CTRACK_SAMPLE_SEED, when seeded */
	uint32_t seeded;
	uint32_t snapshot_ms; /* --aggregate: CT_SNAPSHOT_MS_MIN to _MAX; 0: a full trace */
};

static inline void ct_attach_settings_put(uint8_t *p, const struct ct_attach_settings *s)
{
	ct_attach_put_u64(p, s->sample_rate);
	ct_attach_put_u64(p + 8, s->seed);
	ct_attach_put_u32(p + 16, s->seeded);
	ct_attach_put_u32(p + 20, s->snapshot_ms);
}

static inline void ct_attach_settings_get(const uint8_t *p, struct ct_attach_settings *s)
{
	s->sample_rate = ct_attach_get_u64(p);
	s->seed = ct_attach_get_u64(p + 8);
	s->seeded = ct_attach_get_u32(p + 16);
	s->snapshot_ms = ct_attach_get_u32(p + 20);
}

#endif
