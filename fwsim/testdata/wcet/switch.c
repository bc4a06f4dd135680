/* A switch on an event type: dense enough that gcc emits a jump table at -O0 and -O2. Each
   case does different fixed-point work. */
#include <stdint.h>

static inline uint32_t fxp_mul(uint32_t a, uint32_t b) { return (uint32_t)(((uint64_t)a * b) >> 16); }

uint32_t on_event(uint32_t kind, uint32_t rate, uint32_t x)
{
	switch (kind) {
	case 0: return rate;
	case 1: return fxp_mul(rate, x);
	case 2: return rate / (x | 1);
	case 3: return fxp_mul(fxp_mul(rate, x), x) + 7;
	case 4: return rate > x ? rate - x : x - rate;
	case 5: return (rate << 3) ^ (x >> 2);
	case 6: return fxp_mul(rate, 0xe666) + (x & 0xff);
	case 7: return (rate * 3 + x * 5) >> 1;
	case 9: return rate % (x | 1);
	default: return 1u << 20;
	}
}
