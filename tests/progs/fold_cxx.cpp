/* SPDX-License-Identifier: MIT */
/* Leaks through allocator plumbing, for folding and grouping (tests/e2e/test_fold.py reads the
 * LINE markers): ns::Pool<int>::grow leaks new int[25] (100 bytes); fill_vector leaks a
 * std::vector<int> (24 bytes, NEWVEC) grown by 100 push_backs (capacities 1..128: the 512-byte
 * buffer leaks, PUSH); copy_name, called by caller_a (a 40-char string) and caller_b (60 chars),
 * leaks a malloc'd holder each (32 bytes, HOLD) and the copy's buffer (41 and 61 bytes, COPY).
 * Leaked: 100 + 24 + 512 + 2 * 32 + 41 + 61 = 802 bytes in 7. Exit 0. */
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#define NOINLINE __attribute__((noinline))

namespace ns {
template <typename T> struct Pool {
	T *block = nullptr;
	NOINLINE T *grow(unsigned long count)
	{
		block = new T[count]; /* LINE GROW */
		return block;
	}
};
} // namespace ns

static ns::Pool<int> pool;

NOINLINE static int *fill_pool()
{
	return pool.grow(25); /* LINE FILL */
}

NOINLINE static std::vector<int> *fill_vector()
{
	auto *v = new std::vector<int>(); /* LINE NEWVEC */
	for (int i = 0; i < 100; i++)
		v->push_back(i); /* LINE PUSH */
	return v;
}

NOINLINE static std::string *copy_name(const std::string &src)
{
	void *holder = malloc(sizeof(std::string)); /* LINE HOLD */
	return new (holder) std::string(src); /* LINE COPY */
}

NOINLINE static std::string *caller_a()
{
	std::string s(40, 'a');
	return copy_name(s); /* LINE CALLA */
}

NOINLINE static std::string *caller_b()
{
	std::string s(60, 'b');
	return copy_name(s); /* LINE CALLB */
}

int main()
{
	bool ok = fill_pool() && fill_vector() && caller_a() && caller_b();
	return ok ? 0 : 1;
}
