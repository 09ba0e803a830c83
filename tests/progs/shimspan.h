/* SPDX-License-Identifier: MIT */
/* shim_span(): where libctrack.so lies, for test programs whose signal handlers act only when the
 * signal interrupted the shim's own work (sigshim.c, check_deferred.c). */
#ifndef CTRACK_TESTS_SHIMSPAN_H
#define CTRACK_TESTS_SHIMSPAN_H

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

/* The span of libctrack.so, the object whose malloc the program calls when it is traced, into *lo
 * and *hi; both 0 untraced. */
static void shim_span(uintptr_t *lo, uintptr_t *hi)
{
	struct dl_find_object obj;
	void *sym = dlsym(RTLD_DEFAULT, "malloc");
	*lo = *hi = 0;
	if (!sym || _dl_find_object(sym, &obj) != 0 || !strstr(obj.dlfo_link_map->l_name, "/libctrack.so"))
		return;
	*lo = (uintptr_t)obj.dlfo_map_start;
	*hi = (uintptr_t)obj.dlfo_map_end;
}

#endif
