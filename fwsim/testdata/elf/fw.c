// Test firmware for fwsim's loader and harness tests. gen.sh builds fw.elf (-O2), fw_O0.elf
// (-O0) and rv32.elf (a 32-bit build LoadELF must reject).
#include <stdint.h>

long counter;               // .sbss: reached through gp after linker relaxation
static const int16_t tbl[16] = {1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12, 13, -14, 15, -16};

long add(long a, long b) { return a + b; }

// bump adds x to a global and returns it: state persists across calls.
long bump(long x) { counter += x; return counter; }

long lookup(long i) { return tbl[i & 15]; }

long divs(long a, long b) { return a / b + a % b; }

long sum(const int32_t *p, long n) {
	long s = 0;
	for (long i = 0; i < n; i++) s += p[i];
	return s;
}

long load(const long *p) { return *p; }

void store(long *p, long v) { *p = v; }

long fib(long n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

// spin loops as long as *p is nonzero.
long spin(volatile long *p) { while (*p) {} return 0; }

// decide is a decision-sized handler: a flow context of 12 words, an event, fixed-point
// arithmetic, a small tree and a clamp. It returns the new rate in fxp20.
struct ctx { uint32_t w[12]; };

static uint32_t fxmul16(uint32_t a, uint32_t b) { return (uint32_t)(((uint64_t)a * b) >> 16); }

static uint32_t isqrt(uint64_t x) {
	uint64_t r = 0, bit = 1ull << 62;
	while (bit > x) bit >>= 2;
	while (bit) {
		if (x >= r + bit) { x -= r + bit; r = (r >> 1) + bit; } else r >>= 1;
		bit >>= 2;
	}
	return (uint32_t)r;
}

uint32_t decide(struct ctx *c, uint32_t rtt, uint32_t base_rtt) {
	uint32_t rate = c->w[0] ? c->w[0] : (1u << 20);
	uint32_t infl = base_rtt ? (uint32_t)(((uint64_t)rtt << 16) / base_rtt) : (1u << 16);
	int32_t over = (int32_t)infl - (3 << 15);
	if (over < 0) over = 0;
	uint32_t sq = isqrt((uint64_t)rate << 12);
	int32_t o = (int32_t)fxmul16((uint32_t)over, sq) - 4194;
	int32_t prev = (int32_t)c->w[1];
	int32_t y;
	if (o < 100) y = prev < 0 ? 3000 : 6000;
	else if (o < 2000) y = prev < 1000 ? 1000 : -2000;
	else if (o < 20000) y = -8000 - (o >> 4);
	else y = -13000;
	c->w[2] = c->w[3];
	c->w[3] = (uint32_t)o;
	c->w[1] = (uint32_t)y;
	uint32_t mult = y >= 0 ? 65536 + (uint32_t)(y * 13) / 1000 * 1 : (uint32_t)((65536ull * 65536) / (65536 + (uint32_t)(-y) * 13 / 1000)) ;
	uint64_t nr = ((uint64_t)rate * mult) >> 16;
	if (nr > (1u << 20)) nr = 1u << 20;
	if (nr < 64) nr = 64;
	c->w[0] = (uint32_t)nr;
	c->w[4] += 1;
	return (uint32_t)nr;
}

// getgp returns the global pointer the harness set (the ELF's __global_pointer$).
long getgp(void) {
	long v;
	__asm__ volatile("mv %0, gp" : "=r"(v));
	return v;
}

// getsp returns the stack pointer at entry.
long getsp(void) {
	long v;
	__asm__ volatile("mv %0, sp" : "=r"(v));
	return v;
}
