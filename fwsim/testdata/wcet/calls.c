/* Calls to helpers: a fixed-point multiply, the action -> multiplier map with a division on
   one side, a clamp with early returns, and a helper that calls another. At -O2 the last call
   of update becomes a tail call. */
#include <stdint.h>

typedef uint32_t u32;
typedef int32_t s32;
typedef uint64_t u64;
typedef int64_t s64;

#define NOINLINE __attribute__((noinline))

NOINLINE u32 fxp_mul(u32 a, u32 b) { return (u32)(((u64)a * b) >> 16); }

/* y in [-1<<16, 1<<16]: 1 + 0.2y for y >= 0, 1/(1 - 0.2y) for y < 0, in fxp16. */
NOINLINE u32 multiplier(s32 y)
{
	if (y >= 0)
		return (1u << 16) + fxp_mul((u32)y, 13107);
	u32 d = (1u << 16) + fxp_mul((u32)-y, 13107);
	return (u32)((1ull << 32) / d);
}

NOINLINE u32 clamp_rate(s64 r)
{
	if (r < 1)
		return 1;
	if (r > (1 << 20))
		return 1u << 20;
	return (u32)r;
}

NOINLINE u32 smooth(u32 prev, u32 next)
{
	return fxp_mul(prev, 0xc000) + fxp_mul(next, 0x4000);
}

u32 update(u32 rate, s32 y, u32 prev)
{
	u32 m = multiplier(y);
	s64 r = ((s64)rate * m) >> 16;
	if (prev != 0)
		r = smooth(prev, (u32)(r > 0x7fffffff ? 0x7fffffff : r));
	return clamp_rate(r);
}
