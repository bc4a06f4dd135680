/* Code the WCET analysis must refuse: recursion, and a call through a function pointer. */
#include <stdint.h>

typedef uint32_t u32;

/* Two recursive calls: gcc turns at most one into a loop. */
__attribute__((noinline)) u32 depth(u32 n)
{
	if (n < 2)
		return n;
	return depth(n / 2) * 3 + depth(n / 3);
}

__attribute__((noinline)) u32 twice(u32 x) { return x * 2; }
__attribute__((noinline)) u32 thrice(u32 x) { return x * 3; }

u32 (*volatile pick)(u32) = twice;

u32 indirect(u32 x)
{
	if (x & 1)
		pick = thrice;
	return pick(x);
}
