/* Integer arithmetic edge cases: every pair (a, b) of edge values, NV*NV cases.
 *
 * 64- and 32-bit add/sub/mul/mulh, division and remainder including division by zero and
 * MIN / -1 (undefined in C, but both emulators run the same machine code, so the referee
 * compares what the div/rem instructions do), shifts by register, sign and zero extension,
 * comparisons, min/max, and the Zbb shapes gcc recognises (clz, ctz, popcount, rotates,
 * byte swap, andn/orn/xnor).
 */
#include "referee.h"

static const uint64_t V[] = {
	0, 1, 2, 3, 7, 10, 0xffffffffffffffffull, 0xfffffffffffffffeull, 0xfffffffffffffff9ull,
	0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff,
	0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ull, 0xffffffff80000000ull,
	0x8000000000000000ull, 0x7fffffffffffffffull, 0x8000000000000001ull,
	0x123456789abcdef0ull, 0xfedcba9876543210ull, 0x5555555555555555ull,
	31, 32, 63, 64, 0xffffffff7fffffffull, 0x00000001fffffffeull,
};
#define NV (sizeof V / sizeof V[0])
_Static_assert(NCASES == NV * NV, "NCASES must be the number of pairs");

/* 32-bit operands through memory: a register holding a uint32_t is then the sign-extended
 * word the ABI promises. (qemu 7.2's ctzw is wrong when the upper word of the register is
 * not the sign extension of a zero low word; see TestQemuCtzwBug.) */
static uint32_t NOINLINE word(uint64_t x)
{
	volatile uint32_t w = (uint32_t)x;
	return w;
}

static uint64_t NOINLINE mulhs(int64_t a, int64_t b) { return (uint64_t)(((__int128)a * b) >> 64); }
static uint64_t NOINLINE mulhu(uint64_t a, uint64_t b) { return (uint64_t)(((unsigned __int128)a * b) >> 64); }
static uint64_t NOINLINE mulhsu(int64_t a, uint64_t b) { return (uint64_t)(((__int128)a * (__int128)b) >> 64); }

static int64_t NOINLINE sdiv(int64_t a, int64_t b) { return a / b; }
static int64_t NOINLINE srem(int64_t a, int64_t b) { return a % b; }
static uint64_t NOINLINE udiv(uint64_t a, uint64_t b) { return a / b; }
static uint64_t NOINLINE urem(uint64_t a, uint64_t b) { return a % b; }
static int32_t NOINLINE sdivw(int32_t a, int32_t b) { return a / b; }
static int32_t NOINLINE sremw(int32_t a, int32_t b) { return a % b; }
static uint32_t NOINLINE udivw(uint32_t a, uint32_t b) { return a / b; }
static uint32_t NOINLINE uremw(uint32_t a, uint32_t b) { return a % b; }

static uint64_t rotl(uint64_t x, unsigned r) { return (x << (r & 63)) | (x >> (-r & 63)); }
static uint64_t rotr(uint64_t x, unsigned r) { return (x >> (r & 63)) | (x << (-r & 63)); }
static uint32_t rotl32(uint32_t x, unsigned r) { return (x << (r & 31)) | (x >> (-r & 31)); }
static uint32_t rotr32(uint32_t x, unsigned r) { return (x >> (r & 31)) | (x << (-r & 31)); }

void run_case(uint64_t i, uint64_t *out)
{
	results r = begin(out);
	uint64_t a = V[i % NV], b = V[(i / NV) % NV];
	int64_t sa = (int64_t)a, sb = (int64_t)b;
	uint32_t ua = word(a), ub = word(b);
	int32_t wa = (int32_t)ua, wb = (int32_t)ub;

	/* add, sub, mul */
	put(&r, a + b);
	put(&r, a - b);
	put(&r, a * b);
	put(&r, (uint64_t)(int64_t)(int32_t)(ua + ub));
	put(&r, (uint64_t)(int64_t)(int32_t)(ua - ub));
	put(&r, (uint64_t)(int64_t)(int32_t)(ua * ub));
	put(&r, mulhs(sa, sb));
	put(&r, mulhu(a, b));
	put(&r, mulhsu(sa, b));
	put(&r, (uint64_t)ua * ub);
	put(&r, (uint64_t)((int64_t)wa * wb));
	put(&r, (uint32_t)(((uint64_t)ua * ub) >> 16));

	/* division, remainder: zero divisors and MIN / -1 included */
	put(&r, (uint64_t)sdiv(sa, sb));
	put(&r, (uint64_t)srem(sa, sb));
	put(&r, udiv(a, b));
	put(&r, urem(a, b));
	put(&r, (uint64_t)(int64_t)sdivw(wa, wb));
	put(&r, (uint64_t)(int64_t)sremw(wa, wb));
	put(&r, (uint64_t)udivw(ua, ub));
	put(&r, (uint64_t)uremw(ua, ub));
	put(&r, (uint64_t)(sa / 7));
	put(&r, (uint64_t)(sa % 10));
	put(&r, a / 1000);
	put(&r, (uint64_t)(int64_t)(wa / 3));
	put(&r, (uint64_t)(ua % 60));

	/* shifts by register: amounts from the low bits */
	put(&r, a << (b & 63));
	put(&r, a >> (b & 63));
	put(&r, (uint64_t)(sa >> (b & 63)));
	put(&r, (uint64_t)(int64_t)(int32_t)(ua << (ub & 31)));
	put(&r, (uint64_t)(int64_t)(int32_t)(ua >> (ub & 31)));
	put(&r, (uint64_t)(int64_t)(wa >> (ub & 31)));
	put(&r, a << 1 | a >> 63);

	/* sign and zero extension */
	put(&r, (uint64_t)(int64_t)(int8_t)a);
	put(&r, (uint64_t)(uint8_t)a);
	put(&r, (uint64_t)(int64_t)(int16_t)a);
	put(&r, (uint64_t)(uint16_t)a);
	put(&r, (uint64_t)(int64_t)(int32_t)a);
	put(&r, (uint64_t)(uint32_t)a);
	put(&r, (uint64_t)(int64_t)(int8_t)(ua + 1));

	/* comparisons, min, max */
	put(&r, sa < sb);
	put(&r, a < b);
	put(&r, wa < wb);
	put(&r, ua < ub);
	put(&r, sa == sb);
	put(&r, sa >= sb ? 100 : 200);
	put(&r, (uint64_t)(sa < sb ? sa : sb));
	put(&r, (uint64_t)(sa > sb ? sa : sb));
	put(&r, a < b ? a : b);
	put(&r, a > b ? a : b);
	put(&r, (uint64_t)(int64_t)(wa < wb ? wa : wb));
	put(&r, (uint64_t)(sa < 0 ? -(uint64_t)sa : (uint64_t)sa));

	/* Zbb shapes */
	put(&r, a ? (uint64_t)__builtin_clzll(a) : 64);
	put(&r, a ? (uint64_t)__builtin_ctzll(a) : 64);
	put(&r, (uint64_t)__builtin_popcountll(a));
	put(&r, ua ? (uint64_t)__builtin_clz(ua) : 32);
	put(&r, ua ? (uint64_t)__builtin_ctz(ua) : 32);
	put(&r, (uint64_t)__builtin_popcount(ua));
	put(&r, rotl(a, (unsigned)b));
	put(&r, rotr(a, (unsigned)b));
	put(&r, (uint64_t)(int64_t)(int32_t)rotl32(ua, ub));
	put(&r, (uint64_t)(int64_t)(int32_t)rotr32(ua, ub));
	put(&r, rotr(a, 13));
	put(&r, __builtin_bswap64(a));
	put(&r, (uint64_t)__builtin_bswap32(ua));
	put(&r, (uint64_t)__builtin_bswap16((uint16_t)a));
	put(&r, a & ~b);
	put(&r, a | ~b);
	put(&r, ~(a ^ b));

	/* overflow checks */
	{
		int64_t s;
		int32_t w;
		put(&r, __builtin_add_overflow(sa, sb, &s));
		put(&r, (uint64_t)s);
		put(&r, __builtin_mul_overflow(sa, sb, &s));
		put(&r, (uint64_t)s);
		put(&r, __builtin_sub_overflow(wa, wb, &w));
		put(&r, (uint64_t)(int64_t)w);
	}
	finish(&r);
}
