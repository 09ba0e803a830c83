/* SPDX-License-Identifier: MIT */
/* C++ names as a flame graph shows them: every allocation comes from one member function template of
 * a class template, Holder<std::vector<int>>::grow<long>(long), called by main (1000 blocks of 64
 * bytes, freed), so its box spans the whole graph. Demangled, its name carries a return type, the
 * template arguments and a parameter list; its short form is Holder<…>::grow<…>. */
#include <cstdlib>
#include <vector>

template <typename T> struct Holder {
	std::vector<void *> blocks;
	template <typename N> __attribute__((noinline)) std::vector<void *> &grow(N n)
	{
		for (N i = 0; i < n; i++)
			blocks.push_back(std::malloc(64));
		return blocks;
	}
};

int main()
{
	Holder<std::vector<int>> h;
	h.blocks.reserve(1000);
	for (void *p : h.grow<long>(1000))
		std::free(p);
	return 0;
}
