/* Loops. sum_window's trip count comes from its argument, so the analysis cannot see it and
   needs a bound from the user (n <= 8 by contract). popcount16 runs a constant 16 times.
   scale_all nests a loop over a window inside a loop over flows. */
#include <stdint.h>

typedef uint32_t u32;
typedef uint64_t u64;

u32 sum_window(const u32 *h, u32 n)
{
	u32 acc = 0;
	for (u32 i = 0; i < n; i++)
		acc += (u32)(((u64)h[i] * (i + 1)) >> 4);
	return acc;
}

u32 popcount16(u32 x)
{
	u32 c = 0;
	for (volatile int i = 0; i < 16; i++) {
		c += x & 1;
		x >>= 1;
	}
	return c;
}

u32 scale_all(u32 *flows, u32 nflows, u32 n)
{
	u32 total = 0;
	for (u32 f = 0; f < nflows; f++) {
		u32 acc = 0;
		for (u32 i = 0; i < n; i++)
			acc ^= flows[f * 8 + i] >> i;
		flows[f * 8] = acc;
		total += acc;
	}
	return total;
}

/* Loops with a constant trip count. At -O2 and -Os gcc emits them as `li t, 12; ...; addiw t,
   t, -1; bnez t` and `li t, 15; ...; addiw t, t, -1; bne t, u` with u = -1, which the
   analysis bounds by itself; at -O0 the counter lives on the stack and needs a user bound. */
u32 mix12(u32 x)
{
	for (int i = 0; i < 12; i++)
		x = x * 2654435761u + (x >> 7);
	return x;
}

u32 isqrt(u32 x)
{
	u32 r = 0;
	for (int i = 15; i >= 0; i--) {
		u32 t = r | (1u << i);
		if (t * t <= x && t < 65536)
			r = t;
	}
	return r;
}
