/* SPDX-License-Identifier: MIT */
/* memcheck's multipleinheritance heuristic: an object of a class with two polymorphic bases is held
 * only through a pointer to its second base, which points 16 bytes into the block (an interior
 * pointer), at that base's vtable pointer, with the object's first vtable pointer at the block's
 * start. memcheck counts such a pointer as a start pointer: still reachable, 32 bytes in 1 block.
 * A plain block held only through an interior pointer stays possibly lost (a malloc(64) held 8
 * bytes in), and a lost object of the class is definitely lost (32 bytes). */
#include <cstdlib>

struct First {
	virtual ~First() {}
	long a = 1;
};

struct Second {
	virtual ~Second() {}
	long b = 2;
};

struct Both : First, Second {
	~Both() override {}
};

static Second *held;
static char *interior;
static Both *volatile lost;

int main()
{
	held = new Both;
	interior = static_cast<char *>(malloc(64)) + 8;
	lost = new Both;
	lost = nullptr;
	return held && interior ? 0 : 1;
}
