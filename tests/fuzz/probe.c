/* SPDX-License-Identifier: MIT */
/* The smallest libFuzzer target: meson links it to learn whether clang's fuzzer runtime (Debian's
 * libclang-rt-14-dev) is installed before building fuzz_reader.c. */
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void)data, (void)size;
	return 0;
}
