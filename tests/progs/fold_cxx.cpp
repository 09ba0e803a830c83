/* SPDX-License-Identifier: MIT */
/* Leaks through allocator plumbing, for folding and grouping (tests/e2e/test_fold.py reads the
 * LINE markers): ns::Pool<int>::grow leaks new int[25] (100 bytes); fill_vector leaks a
 * std::vector<int> (24 bytes, NEWVEC) grown by 100 push_backs (capacities 1..128: the 512-byte
 * buffer leaks, PUSH); copy_name, called by caller_a (a 40-char string) and caller_b (60 chars),
 * leaks a malloc'd holder each (32 bytes, HOLD) and the copy's buffer (41 and 61 bytes, COPY).
 * User frames above container frames, where folding must stop at the user's frame:
 * make_widgets leaks a std::vector<Widget> (24 bytes, NEWWV) and its buffer, reserve(4) of 8-byte
 * Widgets (32 bytes, RESERVE), and emplace_back(10 + i) for i = 0, 1, 2 constructs each Widget in
 * place: the constructor, called from std::vector<Widget>::emplace_back, leaks new int[n]
 * (40 + 44 + 48 = 132 bytes in 3, CTOR). sort_values sorts {3, 1, 2} (a vector freed on return)
 * with by_value, a comparator called from std::sort, which on its first call leaks a new
 * std::string (32 bytes, CMPNEW) and the 40 chars it holds (41 bytes, CMPSTR).
 * Leaked: 100 + 24 + 512 + 2 * 32 + 41 + 61 + 24 + 32 + 132 + 32 + 41 = 1063 bytes in 14. Exit 0. */
#include <algorithm>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#define NOINLINE __attribute__((noinline))

namespace ns
{
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
	return new (holder) std::string(src);       /* LINE COPY */
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

struct Widget {
	int *data;
	NOINLINE explicit Widget(int n)
	{
		data = new int[n]; /* LINE CTOR */
		data[0] = n;
	}
};

NOINLINE static std::vector<Widget> *make_widgets()
{
	auto *v = new std::vector<Widget>(); /* LINE NEWWV */
	v->reserve(4);                       /* LINE RESERVE */
	for (int i = 0; i < 3; i++)
		v->emplace_back(10 + i); /* LINE EMPLACE */
	return v;
}

static std::string *first_compare;

NOINLINE static bool by_value(int a, int b)
{
	if (!first_compare) {
		void *holder = operator new(sizeof(std::string));  /* LINE CMPNEW */
		first_compare = new (holder) std::string(40, 'c'); /* LINE CMPSTR */
	}
	return a < b;
}

NOINLINE static bool sort_values()
{
	std::vector<int> v{3, 1, 2};
	std::sort(v.begin(), v.end(), by_value); /* LINE SORT */
	return v[0] == 1 && v[1] == 2 && v[2] == 3;
}

int main()
{
	bool ok = fill_pool() && fill_vector() && caller_a() && caller_b() && make_widgets() && sort_values();
	return ok ? 0 : 1;
}
