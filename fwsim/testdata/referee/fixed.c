/* The fixed-point and control shapes nicc's generated firmware uses, on inputs derived from
 * the case number (the first cases are edge values, the rest hashed):
 *
 *   - the engine's 16-bit fractional multiply (uint32_t)(((uint64_t)a*b) >> 16);
 *   - saturating clamps, int32 accumulation with a rounding shift (acc + (1<<(s-1))) >> s;
 *   - int8 table lookups tbl[(uint8_t)(x+128)];
 *   - nested if/else trees over int32 features against constants;
 *   - an integer square root with a bounded number of iterations;
 *   - a switch (a jump table at -O2), loops with small bounds, an int8 dot product,
 *     struct copies (memcpy from rt.c).
 */
#include "referee.h"

#define FXP20_ONE (1u << 20)

static const int32_t EDGE32[] = {
	0, 1, -1, 2, -2, 0x7fffffff, -0x7fffffff - 1, 0x8000, -0x8000, 0xffff, 0x10000, -0x10000,
	FXP20_ONE, FXP20_ONE - 1, FXP20_ONE + 1, 127, -128, 255, 65535, -65536,
};
#define NEDGE (sizeof EDGE32 / sizeof EDGE32[0])

/* input k of case i */
static int32_t input(uint64_t i, unsigned k)
{
	if (i < NEDGE * NEDGE)
		return k & 1 ? EDGE32[(i / NEDGE) % NEDGE] : EDGE32[i % NEDGE];
	uint64_t h = mix64(i * 16 + k);
	switch (h & 3) {
	case 0:
		return (int32_t)(h >> 32);             /* full range */
	case 1:
		return (int32_t)(h >> 40) & 0xfffff;   /* an fxp20 rate */
	case 2:
		return (int32_t)((h >> 32) & 0xffff) - 0x8000; /* 16-bit signed */
	}
	return (int32_t)(h >> 56) - 128;               /* int8 range */
}

static uint32_t NOINLINE fxp_mul16(uint32_t a, uint32_t b) { return (uint32_t)(((uint64_t)a * b) >> 16); }

static int32_t NOINLINE sat_i32(int64_t x)
{
	if (x > INT32_MAX)
		return INT32_MAX;
	if (x < INT32_MIN)
		return INT32_MIN;
	return (int32_t)x;
}

static int8_t NOINLINE sat_i8(int32_t x) { return x > 127 ? 127 : x < -128 ? -128 : (int8_t)x; }

static uint32_t NOINLINE clamp_rate(int64_t r)
{
	if (r < 1)
		return 1;
	if (r > FXP20_ONE)
		return FXP20_ONE;
	return (uint32_t)r;
}

static int32_t NOINLINE round_shift(int32_t acc, unsigned s)
{
	return (acc + (1 << (s - 1))) >> s; /* s in [1, 30]; acc kept in range by the caller */
}

static const int16_t TANH_Q12[256] = {
#define T(k) (int16_t)(((k) - 128) * 31 + (((k) * 7) & 15))
#define T8(k) T(k), T(k + 1), T(k + 2), T(k + 3), T(k + 4), T(k + 5), T(k + 6), T(k + 7)
	T8(0), T8(8), T8(16), T8(24), T8(32), T8(40), T8(48), T8(56),
	T8(64), T8(72), T8(80), T8(88), T8(96), T8(104), T8(112), T8(120),
	T8(128), T8(136), T8(144), T8(152), T8(160), T8(168), T8(176), T8(184),
	T8(192), T8(200), T8(208), T8(216), T8(224), T8(232), T8(240), T8(248),
#undef T8
#undef T
};

static int32_t NOINLINE lookup(int8_t x) { return TANH_Q12[(uint8_t)(x + 128)]; }

/* A depth-4 tree as codegen prints it. */
static int32_t NOINLINE tree(const int32_t *f)
{
	if (f[0] < 524288) {
		if (f[1] <= -1200) {
			if (f[2] < 77)
				return f[3] < 0 ? -4096 : -2048;
			return f[3] < 1048576 ? -1024 : 512;
		}
		if (f[2] < -30000)
			return f[0] < -5 ? 100 : 200;
		return f[1] < 2147483647 ? 300 : -300;
	}
	if (f[3] >= 65536) {
		if (f[1] < 0)
			return f[2] < 0 ? 4000 : 3000;
		return f[0] < 1048577 ? 2000 : -2147483647 - 1;
	}
	return f[2] > 12 ? 17 : -17;
}

/* floor(sqrt(x)), 16 iterations of the bit-by-bit method. */
static uint32_t NOINLINE isqrt32(uint32_t x)
{
	uint32_t res = 0, bit = 1u << 30;
	for (int k = 0; k < 16; k++) {
		if (x >= res + bit) {
			x -= res + bit;
			res = (res >> 1) + bit;
		} else {
			res >>= 1;
		}
		bit >>= 2;
	}
	return res;
}

/* Newton's method with a bounded iteration count, on fxp20 (result in fxp10). */
static uint32_t NOINLINE isqrt_newton(uint32_t x)
{
	if (x == 0)
		return 0;
	uint32_t y = x > 65535 ? x >> 8 : x;
	for (int k = 0; k < 8 && y; k++)
		y = (y + x / y) >> 1;
	return y;
}

static int32_t NOINLINE event(uint32_t kind, int32_t v)
{
	switch (kind & 7) {
	case 0:
		return v + 1;
	case 1:
		return (int32_t)((uint32_t)v * 3u);
	case 2:
		return v >> 2;
	case 3:
		return (int32_t)(0u - (uint32_t)v);
	case 4:
		return v ^ 0x5a5a;
	case 5:
		return v & 0xff00;
	case 6:
		return v < 0;
	default:
		return 42;
	}
}

static int32_t NOINLINE dot8(const int8_t *w, const int8_t *x, int n)
{
	int32_t acc = 0;
	for (int k = 0; k < n; k++)
		acc += (int32_t)w[k] * x[k];
	return acc;
}

typedef struct {
	uint32_t data[12]; /* the engine's 48-byte flow context */
} flow_ctx;

static void NOINLINE update_ctx(flow_ctx *dst, const flow_ctx *src, uint32_t rate)
{
	*dst = *src;
	for (int k = 11; k > 0; k--)
		dst->data[k] = dst->data[k - 1];
	dst->data[0] = rate;
}

static uint32_t NOINLINE sort_median(const int32_t *in)
{
	int32_t a[7];
	for (int k = 0; k < 7; k++)
		a[k] = in[k];
	for (int p = 0; p < 7; p++)
		for (int q = 0; q + 1 < 7 - p; q++)
			if (a[q] > a[q + 1]) {
				int32_t t = a[q];
				a[q] = a[q + 1];
				a[q + 1] = t;
			}
	return (uint32_t)a[3];
}

void run_case(uint64_t i, uint64_t *out)
{
	results r = begin(out);
	int32_t f[8];
	for (unsigned k = 0; k < 8; k++)
		f[k] = input(i, k);
	uint32_t u0 = (uint32_t)f[0], u1 = (uint32_t)f[1];

	put(&r, fxp_mul16(u0, u1));
	put(&r, fxp_mul16(u0 & 0xfffff, u1 & 0x1ffff));
	put(&r, (uint64_t)(int64_t)sat_i32((int64_t)f[0] + f[1]));
	put(&r, (uint64_t)(int64_t)sat_i32((int64_t)f[0] * f[1]));
	put(&r, (uint64_t)(int64_t)sat_i8(f[2]));
	put(&r, clamp_rate((int64_t)f[3] * 2 - f[4]));
	put(&r, clamp_rate(((int64_t)(f[3] & 0xfffff) * (65536 + (f[5] & 0x3fff))) >> 16));

	int32_t acc = 0;
	for (unsigned k = 0; k < 8; k++)
		acc += f[k] >> 5; /* 8 terms of at most 2^26 each: no overflow */
	for (unsigned s = 1; s <= 20; s += 3)
		put(&r, (uint64_t)(int64_t)round_shift(acc, s));

	for (unsigned k = 0; k < 4; k++)
		put(&r, (uint64_t)(int64_t)lookup((int8_t)f[k]));
	put(&r, (uint64_t)(int64_t)lookup(sat_i8(f[6] >> 8)));

	put(&r, (uint64_t)(int64_t)tree(f));
	put(&r, (uint64_t)(int64_t)tree(f + 4));

	put(&r, isqrt32(u0));
	put(&r, isqrt32(u1 & 0xfffff));
	put(&r, isqrt_newton(u0 & 0xfffff));
	put(&r, isqrt_newton(u1));

	for (unsigned k = 0; k < 4; k++)
		put(&r, (uint64_t)(int64_t)event((uint32_t)f[k + 2], f[k]));

	int8_t w[8], x[8];
	for (unsigned k = 0; k < 8; k++) {
		w[k] = (int8_t)f[k];
		x[k] = (int8_t)(f[k] >> 8);
	}
	put(&r, (uint64_t)(int64_t)dot8(w, x, 8));
	put(&r, (uint64_t)(int64_t)dot8(w, x, (int)(u1 & 7)));

	flow_ctx c0, c1;
	for (unsigned k = 0; k < 12; k++)
		c0.data[k] = (uint32_t)f[k & 7] + k;
	update_ctx(&c1, &c0, fxp_mul16(u0, 0x10000 + (u1 & 0xffff)));
	for (unsigned k = 0; k < 12; k += 3)
		put(&r, c1.data[k]);

	put(&r, sort_median(f));
	finish(&r);
}
