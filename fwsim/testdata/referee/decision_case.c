/* The compiled-C referee for the benchmark's decision function (decide, decision.c): case i
 * runs decide on hashed features and a flow context. */
#include "referee.h"

uint32_t decide(const int32_t *f, uint32_t *ctx);

void run_case(uint64_t i, uint64_t *out)
{
	results r = begin(out);
	int32_t f[8];
	uint32_t ctx[12];
	for (unsigned k = 0; k < 8; k++) {
		uint64_t h = mix64(i * 8 + k);
		f[k] = (h & 1) ? (int32_t)(h >> 32) : (int32_t)((h >> 40) & 0x1fffff) - 0x100000;
	}
	for (unsigned k = 0; k < 12; k++)
		ctx[k] = (uint32_t)mix64(~i - k);
	ctx[0] &= 0x1fffff; /* rates in and around (0, 1<<20] */
	for (unsigned k = 0; k < 3; k++)
		put(&r, decide(f, ctx));
	for (unsigned k = 0; k < 12; k++)
		put(&r, ctx[k]);
	finish(&r);
}
