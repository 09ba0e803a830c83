/* SPDX-License-Identifier: MIT */
/* Whether a program is out of LD_PRELOAD's reach: a static or static-pie ELF executable, which the
 * dynamic loader never runs. Reads the file's ELF headers only (both classes, host byte order). */
#ifndef CTRACK_ELF_STATIC_H
#define CTRACK_ELF_STATIC_H

/* 1 if path is an ELF program the dynamic loader never runs: no PT_INTERP, and either no
 * PT_DYNAMIC (static) or a dynamic section flagged DF_1_PIE (static-pie, which relocates itself).
 * The loader itself (ld.so: no PT_INTERP, no DF_1_PIE) does run programs with LD_PRELOAD: 0.
 * Anything that cannot be read or parsed (scripts, exec-only files) is 0 too: exec will tell. */
int ct_elf_is_static(const char *path);

#endif
