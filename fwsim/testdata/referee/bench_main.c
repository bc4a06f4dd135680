/* The benchmark's driver around decide (generated into decision.c by bench_test.go).
 *
 * bench_loop(n) makes n decisions for one flow, cycling through NVEC feature vectors; qemu
 * runs it from bench_main (`qemu-riscv64 bench.elf N`), fwsim runs the same function, and
 * fwsim's per-call benchmark calls decide itself on the same vectors (bench_features,
 * bench_flow). */
#include <stdint.h>

uint32_t decide(const int32_t *f, uint32_t *ctx);

#define NVEC 64
static int32_t feats[NVEC][8];
static uint32_t flow[12];

static uint64_t hash(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

void bench_init(void)
{
	for (unsigned v = 0; v < NVEC; v++)
		for (unsigned k = 0; k < 8; k++) {
			uint64_t h = hash(v * 8 + k);
			feats[v][k] = (int32_t)((h >> 40) & 0x1fffff) - 0x100000;
		}
	for (unsigned k = 0; k < 12; k++)
		flow[k] = 0;
	flow[0] = 1u << 19;
}

const int32_t *bench_features(uint64_t v) { return feats[v % NVEC]; }

uint32_t *bench_flow(void) { return flow; }

uint64_t bench_loop(uint64_t n)
{
	uint64_t sum = 0;
	for (uint64_t k = 0; k < n; k++)
		sum += decide(feats[k % NVEC], flow);
	return sum;
}

volatile uint64_t bench_sum; /* keeps the loop's result observable */

long bench_main(long argc, char **argv)
{
	uint64_t n = 0;
	if (argc > 1)
		for (const char *p = argv[1]; *p >= '0' && *p <= '9'; p++)
			n = n * 10 + (uint64_t)(*p - '0');
	bench_init();
	bench_sum = bench_loop(n);
	return 0;
}
