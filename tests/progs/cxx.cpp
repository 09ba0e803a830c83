/* SPDX-License-Identifier: MIT */
/* C++ allocations: new/delete of an int (4), new[]/delete[] of 100 ints (400), a std::vector<int>
 * grown by 100 push_backs (capacities 1..128: 8 allocations, all freed), a 100-char std::string
 * (101 bytes, freed), a thrown and caught std::runtime_error (the exception object and its message,
 * freed). Leaked: leak_new: new Node (48 bytes) and leak_array: new int[10] (40 bytes) = 88 bytes in
 * 2. libstdc++'s emergency exception pool is allocated at start and freed by __gnu_cxx::__freeres:
 * valgrind counts it in the totals (1 alloc + 1 free), never as a leak. Exit 0. */
#include <stdexcept>
#include <string>
#include <vector>

#define NOINLINE __attribute__((noinline))

struct Node {
	long v[6];
};

NOINLINE static Node *leak_new()
{
	return new Node();
}

NOINLINE static int *leak_array()
{
	return new int[10];
}

NOINLINE static void thrower()
{
	throw std::runtime_error("a message long enough to need a heap block of its own");
}

int main()
{
	int *one = new int(5);
	delete one;
	int *many = new int[100];
	delete[] many;
	int sum = 0;
	{
		std::vector<int> v;
		for (int i = 0; i < 100; i++)
			v.push_back(i);
		std::string s(100, 'x');
		sum = v[99] + s[0];
	}
	try {
		thrower();
	} catch (const std::runtime_error &e) {
		sum += e.what()[0];
	}
	return leak_new() && leak_array() && sum > 0 ? 0 : 1;
}
