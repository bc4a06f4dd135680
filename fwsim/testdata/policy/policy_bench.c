/* The driver of BenchmarkPolicy: the RL-CC event handler around an emitted policy.
 *
 * Each subdirectory holds a pinned compile's nicc_policy.c, nicc_policy.h and handler.c,
 * copied verbatim (bench_test.go's policyFixtures); bench_test.go builds this file with one
 * of them and nicsdk's headers. bench_loop(n) delivers n events, cycling through NEV events over
 * NFLOW flows; qemu runs it from bench_main (`qemu-riscv64 policy.elf N`), fwsim runs the
 * same function, and fwsim's per-call benchmark calls nicc_on_event itself on the same
 * events and flows (bench_event, bench_flow). */
#include <stdint.h>
#include "nicsdk.h"

uint32_t nicc_on_event(const struct nicc_event *ev, struct nicc_flow_ctx *ctx);

#define NEV 256
#define NFLOW 16
static struct nicc_event events[NEV];
static struct nicc_flow_ctx flows[NFLOW];

static uint64_t hash(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Seven in eight events are RTT samples (the ones that run the policy), from an idle 8 µs
 * path up to about 16 times that, so the trees take many paths; the rest are TX events. */
void bench_init(void)
{
	for (unsigned v = 0; v < NEV; v++) {
		uint64_t h = hash(v);
		struct nicc_event *e = &events[v];
		e->type = (h & 7) == 0 ? NICC_EV_TX : NICC_EV_RTT;
		e->rtt_ns = e->type == NICC_EV_RTT ? 8000u + (uint32_t)((h >> 8) % 120000u) : 0;
		e->timestamp_ns = (uint64_t)v * 1000u;
		e->flow_id = v % NFLOW;
		e->tx_bytes = e->type == NICC_EV_TX ? 4096u : 0;
	}
	for (unsigned f = 0; f < NFLOW; f++)
		for (unsigned k = 0; k < NICC_CTX_WORDS; k++)
			flows[f].data[k] = 0;
}

const struct nicc_event *bench_event(uint64_t v) { return &events[v % NEV]; }

struct nicc_flow_ctx *bench_flow(uint64_t f) { return &flows[f % NFLOW]; }

uint64_t bench_loop(uint64_t n)
{
	uint64_t sum = 0;
	for (uint64_t k = 0; k < n; k++)
		sum += nicc_on_event(&events[k % NEV], &flows[k % NFLOW]);
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
