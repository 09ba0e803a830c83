/* SPDX-License-Identifier: MIT */
/* ct_unwind against libunwind from C++ stacks: templates, std::function, virtual calls, and a
 * destructor run while an exception unwinds (libgcc's unwinder frames sit on the stack). */
#include <functional>
#include <stdexcept>

#include "check.h"

static volatile int keep = 1;

template <int N> __attribute__((noinline)) int nest(const std::function<void()> &f)
{
	int r = nest<N - 1>(f);
	return r + keep;
}

template <> __attribute__((noinline)) int nest<0>(const std::function<void()> &f)
{
	f();
	return keep;
}

struct shape {
	virtual ~shape() = default;
	virtual int area() const = 0;
};

struct square : shape {
	int area() const override
	{
		ctt_check("virtual", 64);
		return keep;
	}
};

struct checks_on_unwind {
	~checks_on_unwind() { ctt_check("destructor during unwinding", 64); }
};

__attribute__((noinline)) static void thrower(int depth)
{
	checks_on_unwind guard;
	if (depth == 0)
		throw std::runtime_error("unwind");
	thrower(depth - 1);
	keep = keep + 0;
}

int main(int, char **argv)
{
	square sq;
	const shape *s = &sq;

	for (int i = 0; i < 3; i++) {
		nest<5>([] { ctt_check("lambda", 64); });
		nest<3>([s] { s->area(); });
		try {
			thrower(3);
		} catch (const std::exception &) {
			ctt_check("catch", 64);
		}
	}
	return ctt_report(argv[0]);
}
