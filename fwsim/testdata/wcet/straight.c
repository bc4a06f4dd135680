/* Straight-line fixed-point code, the shape of nicc's feature computation: 16-bit fractional
   multiplies, a 64-bit division, shifts, and Zbb bit operations. No branches in the C (gcc
   may still emit some at -O0). */
#include <stdint.h>

typedef uint32_t u32;
typedef int32_t s32;
typedef uint64_t u64;
typedef int64_t s64;

static inline u32 fxp_mul(u32 a, u32 b) { return (u32)(((u64)a * b) >> 16); }

/* rtt, base_rtt in ns; rate in fxp20 (1<<20 is line rate). */
u32 features(u32 rtt, u32 base_rtt, u32 rate)
{
	u32 infl = (u32)(((u64)rtt << 16) / ((u64)base_rtt | 1));
	u32 s = fxp_mul(rate >> 4, rate >> 4) ^ (infl >> 3);
	u32 t = fxp_mul(infl, 0x1999) + (s >> 5);
	u32 lz = (u32)__builtin_clz(rtt | 1);
	u32 pc = (u32)__builtin_popcount(base_rtt);
	s64 o = (s64)t * 12 - (s64)(0x1062 * 12);
	u32 r = (u32)(o >> 8) + (lz << 3) + (pc << 1);
	r = (r >> 7) | (r << 25);
	return r ^ fxp_mul(r, rate);
}
