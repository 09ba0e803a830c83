/* SPDX-License-Identifier: MIT */
/* The library of scan_tlsdyn.c: one __thread pointer, in dynamic TLS when the library is dlopened. */
__thread void *tls_slot;

void set_slot(void *p);
void set_slot(void *p)
{
	tls_slot = p;
}
