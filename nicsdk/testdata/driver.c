/* driver.c: the host side of nicsdk's bit-identity tests. Built with host gcc, strict
 * warnings and -fsanitize=undefined -fno-sanitize-recover=all (rlcc_test.go).
 *
 *   driver layout            prints the ABI's sizes and offsets
 *   driver ubsan             overflows a signed int on purpose (must die under the sanitizer)
 *   driver divsweep LO HI    checks rlcc_div_q16(a, d) against its bound around the 64-bit
 *                            division (rlcc.h) for every
 *                            d in [LO, HI] at 16 dividends a each (the largest, its
 *                            neighbours, the smallest, multiples of d and pseudo-random ones);
 *                            prints "checked N bad M", then the first few bad ones
 *   driver MODE < in > out   for each record of little-endian 32-bit words on stdin, writes
 *                            the result words of the rlcc.h function MODE
 *
 * Records (in words -> out words):
 *   fxpmul  a b -> r          fxpdiv  a b -> r
 *   infl    rtt base -> r     sqrt    rate -> r       mult  y -> m
 *   div     a d -> q          (rlcc_div_q16: d != 0, a < d * 2^16)
 *   obsmin  params[6] -> o    obs     infl sqrt params[6] -> o
 *   obscmax infl sqrt params[6] -> o  (test_obs_cmax)
 *   update  rate m params[6] -> r
 *   event   params[6] coef[5] ctx[12] event[6] -> rate ctx[12]
 *   eventx  params[6] coef[5] words out ctx[12] event[6] -> rate ctx[12]
 *           (rlcc_on_event_ex with test_policy_st keeping words words, returning out)
 *   eventl  params[6] hist feats words out coef[13] ctx[12] event[6] -> rate ctx[12]
 *           (rlcc_on_event_layout with test_policy_layout fed the window hist x feats)
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rlcc.h"
#include "testpolicy.h"

#define PW 6 /* words of struct rlcc_params on the input line */

static struct rlcc_params params_of(const uint32_t *w)
{
	struct rlcc_params p;
	p.target = w[0];
	p.beta = w[1];
	p.scale = w[2];
	p.min_rate = w[3];
	p.init_rate = w[4];
	p.base_rtt_ns = w[5];
	return p;
}

/* divsweep: see the top. The reference is ((uint64_t)a << 16) / d, which is what the Go twin
 * (FxpDiv16) computes for these inputs. */
static int divsweep(uint64_t lo, uint64_t hi)
{
	uint64_t d, checked = 0, bad = 0, seed = 0x9e3779b97f4a7c15u;
	for (d = lo; d <= hi; d++) {
		uint64_t amax = d << 16 > 0xffffffffu ? 0xffffffffu : (d << 16) - 1, as[16];
		int k;
		as[0] = amax;
		as[1] = amax - 1;
		as[2] = amax - 2;
		as[3] = amax / 2;
		as[4] = 0;
		as[5] = 1;
		as[6] = d - 1;
		as[7] = d;
		as[8] = d + 1 <= amax ? d + 1 : amax;
		as[9] = (amax / d) * d; /* a multiple of d */
		as[10] = as[9] - (as[9] > 0);
		for (k = 11; k < 16; k++) {
			seed = seed * 6364136223846793005u + 1442695040888963407u;
			as[k] = (seed >> 32) % (amax + 1);
		}
		for (k = 0; k < 16; k++) {
			uint64_t a = as[k], want = (a << 16) / d, got = rlcc_div_q16(a, d);
			checked++;
			if (got > want || want - got > ((want * 8322) >> 30) + 2) {
				if (bad < 5)
					fprintf(stderr, "rlcc_div_q16(%llu, %llu) = %llu, want %llu less at most %llu\n",
						(unsigned long long)a, (unsigned long long)d, (unsigned long long)got,
						(unsigned long long)want, (unsigned long long)(((want * 8322) >> 30) + 2));
				bad++;
			}
		}
	}
	printf("checked %llu bad %llu\n", (unsigned long long)checked, (unsigned long long)bad);
	return bad == 0 ? 0 : 1;
}

static int record(const char *mode, const uint32_t *in, uint32_t *out, size_t *nin, size_t *nout)
{
	struct rlcc_params p;
	*nout = 1;
	if (strcmp(mode, "fxpmul") == 0) {
		*nin = 2;
		if (in) out[0] = nicc_fxp16_mul(in[0], in[1]);
	} else if (strcmp(mode, "fxpdiv") == 0) {
		*nin = 2;
		if (in) out[0] = nicc_fxp16_div(in[0], in[1]);
	} else if (strcmp(mode, "infl") == 0) {
		*nin = 2;
		if (in) out[0] = rlcc_rtt_infl(in[0], in[1]);
	} else if (strcmp(mode, "div") == 0) {
		*nin = 2;
		if (in) out[0] = (uint32_t)rlcc_div_q16(in[0], in[1]);
	} else if (strcmp(mode, "sqrt") == 0) {
		*nin = 1;
		if (in) out[0] = rlcc_sqrt_rate(in[0]);
	} else if (strcmp(mode, "mult") == 0) {
		*nin = 1;
		if (in) out[0] = rlcc_multiplier(rlcc_u32_to_i32(in[0]));
	} else if (strcmp(mode, "obsmin") == 0) {
		*nin = PW;
		if (in) {
			p = params_of(in);
			out[0] = (uint32_t)rlcc_obs_min(&p);
		}
	} else if (strcmp(mode, "obs") == 0) {
		*nin = 2 + PW;
		if (in) {
			p = params_of(in + 2);
			out[0] = (uint32_t)rlcc_observation(in[0], in[1], &p);
		}
	} else if (strcmp(mode, "obscmax") == 0) {
		*nin = 2 + PW;
		if (in) {
			p = params_of(in + 2);
			out[0] = (uint32_t)test_obs_cmax(in[0], in[1], &p);
		}
	} else if (strcmp(mode, "update") == 0) {
		*nin = 2 + PW;
		if (in) {
			p = params_of(in + 2);
			out[0] = rlcc_update_rate(in[0], in[1], &p);
		}
	} else if (strcmp(mode, "event") == 0) {
		*nin = PW + 5 + NICC_CTX_WORDS + NICC_EVENT_BYTES / 4;
		*nout = 1 + NICC_CTX_WORDS;
		if (in) {
			struct nicc_flow_ctx ctx;
			struct nicc_event ev;
			int i;
			p = params_of(in);
			for (i = 0; i < 5; i++)
				test_coef[i] = rlcc_u32_to_i32(in[PW + i]);
			memcpy(ctx.data, in + PW + 5, sizeof ctx.data);
			memcpy(&ev, in + PW + 5 + NICC_CTX_WORDS, sizeof ev);
			out[0] = rlcc_on_event(&ev, &ctx, &p, test_policy);
			memcpy(out + 1, ctx.data, sizeof ctx.data);
		}
	} else if (strcmp(mode, "eventx") == 0) {
		*nin = PW + 5 + 2 + NICC_CTX_WORDS + NICC_EVENT_BYTES / 4;
		*nout = 1 + NICC_CTX_WORDS;
		if (in) {
			struct nicc_flow_ctx ctx;
			struct nicc_event ev;
			int i;
			p = params_of(in);
			for (i = 0; i < 5; i++)
				test_coef[i] = rlcc_u32_to_i32(in[PW + i]);
			test_words = in[PW + 5];
			test_out = (int)in[PW + 6];
			memcpy(ctx.data, in + PW + 7, sizeof ctx.data);
			memcpy(&ev, in + PW + 7 + NICC_CTX_WORDS, sizeof ev);
			out[0] = rlcc_on_event_ex(&ev, &ctx, &p, test_policy_st, test_words, test_out);
			memcpy(out + 1, ctx.data, sizeof ctx.data);
		}
	} else if (strcmp(mode, "eventl") == 0) {
		*nin = PW + 4 + RLCC_INPUTS_MAX + 1 + NICC_CTX_WORDS + NICC_EVENT_BYTES / 4;
		*nout = 1 + NICC_CTX_WORDS;
		if (in) {
			struct nicc_flow_ctx ctx;
			struct nicc_event ev;
			unsigned hist = in[PW], feats = in[PW + 1];
			int i;
			p = params_of(in);
			test_words = in[PW + 2];
			test_out = (int)in[PW + 3];
			test_n = RLCC_INPUTS(hist, feats);
			for (i = 0; i <= RLCC_INPUTS_MAX; i++)
				test_lcoef[i] = rlcc_u32_to_i32(in[PW + 4 + i]);
			memcpy(ctx.data, in + PW + 5 + RLCC_INPUTS_MAX, sizeof ctx.data);
			memcpy(&ev, in + PW + 5 + RLCC_INPUTS_MAX + NICC_CTX_WORDS, sizeof ev);
			out[0] = rlcc_on_event_layout(&ev, &ctx, &p, test_policy_layout, test_words, test_out, hist, feats);
			memcpy(out + 1, ctx.data, sizeof ctx.data);
		}
	} else {
		return 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	static uint32_t in[64], out[64];
	size_t nin, nout;
	if (argc == 4 && strcmp(argv[1], "divsweep") == 0)
		return divsweep(strtoull(argv[2], NULL, 0), strtoull(argv[3], NULL, 0));
	if (argc != 2) {
		fprintf(stderr, "usage: driver layout|ubsan|divsweep LO HI|MODE\n");
		return 2;
	}
	if (strcmp(argv[1], "layout") == 0) {
		printf("ctx %u %u\n", (unsigned)sizeof(struct nicc_flow_ctx), (unsigned)offsetof(struct nicc_flow_ctx, data));
		printf("event %u type %u rtt_ns %u timestamp_ns %u flow_id %u tx_bytes %u\n",
		       (unsigned)sizeof(struct nicc_event), (unsigned)offsetof(struct nicc_event, type),
		       (unsigned)offsetof(struct nicc_event, rtt_ns), (unsigned)offsetof(struct nicc_event, timestamp_ns),
		       (unsigned)offsetof(struct nicc_event, flow_id), (unsigned)offsetof(struct nicc_event, tx_bytes));
		printf("params %u\n", (unsigned)sizeof(struct rlcc_params));
		return 0;
	}
	if (strcmp(argv[1], "ubsan") == 0) {
		volatile int32_t big = INT32_MAX;
		int32_t r = big + (int32_t)argc; /* signed overflow: the sanitizer must stop here */
		printf("%d\n", (int)r);
		return 0;
	}
	if (!record(argv[1], NULL, out, &nin, &nout)) {
		fprintf(stderr, "driver: unknown mode %s\n", argv[1]);
		return 2;
	}
	while (fread(in, 4, nin, stdin) == nin) {
		record(argv[1], in, out, &nin, &nout);
		if (fwrite(out, 4, nout, stdout) != nout)
			return 1;
	}
	return ferror(stdin) ? 1 : 0;
}
