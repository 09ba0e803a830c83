/* SPDX-License-Identifier: MIT */
/* How `ctrack -p PID` (launcher/attach.c) and the shim it loads into PID (preload/attach.c) talk:
 * one connection on an abstract Unix socket, named after PID, that the launcher binds (so a second
 * launcher attaching to the same process finds the name taken) and the shim connects to.
 *  launcher -> shim: CT_ATTACH_HELLO_BYTES (magic, depth), with the trace's descriptor (SCM_RIGHTS);
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

#define CT_ATTACH_MAGIC 0x31415443u            /* "CTA1", little-endian */
#define CT_ATTACH_HELLO_BYTES 8                /* | magic u32 | depth u32 | */
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

#endif
