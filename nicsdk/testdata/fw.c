/* fw.c: the RISC-V side of nicsdk's bit-identity tests (rlcc_test.go): each rlcc.h function
 * behind a plain entry point fwsim calls by name, plus the handler with the linear test
 * policy and with the stateful one (rlcc_ex_test.go), and the ABI's layout. */
#include <stddef.h>

#include "rlcc.h"
#include "testpolicy.h"

uint32_t t_fxpmul(uint32_t a, uint32_t b);
uint32_t t_fxpdiv(uint32_t a, uint32_t b);
uint32_t t_infl(uint32_t rtt, uint32_t base);
uint32_t t_div(uint32_t a, uint32_t d);
uint32_t t_sqrt(uint32_t rate);
uint32_t t_mult(int32_t y);
int32_t t_obsmin(const struct rlcc_params *p);
int32_t t_obs(uint32_t infl, uint32_t sqrt_rate, const struct rlcc_params *p);
int32_t t_obs_cmax(uint32_t infl, uint32_t sqrt_rate, const struct rlcc_params *p);
uint32_t t_update(uint32_t rate, uint32_t m, const struct rlcc_params *p);
uint32_t t_event(const struct nicc_event *ev, struct nicc_flow_ctx *ctx, const struct rlcc_params *p,
		 const int32_t *coef);
uint32_t t_event_ex(const struct nicc_event *ev, struct nicc_flow_ctx *ctx, const struct rlcc_params *p,
		    const int32_t *coef, uint32_t words, uint32_t out);
uint32_t t_event_layout(const struct nicc_event *ev, struct nicc_flow_ctx *ctx, const struct rlcc_params *p,
			const int32_t *coef, uint32_t words, uint32_t out, uint32_t hist, uint32_t feats);
uint64_t t_layout(void);

uint32_t t_fxpmul(uint32_t a, uint32_t b) { return nicc_fxp16_mul(a, b); }
uint32_t t_fxpdiv(uint32_t a, uint32_t b) { return nicc_fxp16_div(a, b); }
uint32_t t_infl(uint32_t rtt, uint32_t base) { return rlcc_rtt_infl(rtt, base); }
uint32_t t_div(uint32_t a, uint32_t d) { return (uint32_t)rlcc_div_q16(a, d); }
uint32_t t_sqrt(uint32_t rate) { return rlcc_sqrt_rate(rate); }
uint32_t t_mult(int32_t y) { return rlcc_multiplier(y); }
int32_t t_obsmin(const struct rlcc_params *p) { return rlcc_obs_min(p); }
int32_t t_obs(uint32_t infl, uint32_t sqrt_rate, const struct rlcc_params *p)
{
	return rlcc_observation(infl, sqrt_rate, p);
}
int32_t t_obs_cmax(uint32_t infl, uint32_t sqrt_rate, const struct rlcc_params *p)
{
	return test_obs_cmax(infl, sqrt_rate, p);
}
uint32_t t_update(uint32_t rate, uint32_t m, const struct rlcc_params *p) { return rlcc_update_rate(rate, m, p); }

uint32_t t_event(const struct nicc_event *ev, struct nicc_flow_ctx *ctx, const struct rlcc_params *p,
		 const int32_t *coef)
{
	int i;
	for (i = 0; i < 5; i++)
		test_coef[i] = coef[i];
	return rlcc_on_event(ev, ctx, p, test_policy);
}

uint32_t t_event_ex(const struct nicc_event *ev, struct nicc_flow_ctx *ctx, const struct rlcc_params *p,
		    const int32_t *coef, uint32_t words, uint32_t out)
{
	int i;
	for (i = 0; i < 5; i++)
		test_coef[i] = coef[i];
	test_words = words;
	test_out = (int)out;
	return rlcc_on_event_ex(ev, ctx, p, test_policy_st, test_words, test_out);
}

uint32_t t_event_layout(const struct nicc_event *ev, struct nicc_flow_ctx *ctx, const struct rlcc_params *p,
			const int32_t *coef, uint32_t words, uint32_t out, uint32_t hist, uint32_t feats)
{
	int i;
	for (i = 0; i <= RLCC_INPUTS_MAX; i++)
		test_lcoef[i] = coef[i];
	test_words = words;
	test_out = (int)out;
	test_n = RLCC_INPUTS(hist, feats);
	return rlcc_on_event_layout(ev, ctx, p, test_policy_layout, words, (int)out, hist, feats);
}

/* Sizes and offsets, a byte each: ctx, event, its five field offsets, params. */
uint64_t t_layout(void)
{
	return (uint64_t)sizeof(struct nicc_flow_ctx) | (uint64_t)sizeof(struct nicc_event) << 8 |
	       (uint64_t)offsetof(struct nicc_event, type) << 16 | (uint64_t)offsetof(struct nicc_event, rtt_ns) << 24 |
	       (uint64_t)offsetof(struct nicc_event, timestamp_ns) << 32 |
	       (uint64_t)offsetof(struct nicc_event, flow_id) << 40 |
	       (uint64_t)offsetof(struct nicc_event, tx_bytes) << 48 | (uint64_t)sizeof(struct rlcc_params) << 56;
}
