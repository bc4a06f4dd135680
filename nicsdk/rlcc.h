/* rlcc.h: the RL-CC event-handler runtime in fixed point: features (RTT inflation,
 * sqrt(rate), the observation o, the two-state history), the action -> multiplier map and the
 * rate update. Freestanding C99, header only (static inline), integer arithmetic only.
 *
 * Every function here has a bit-identical Go twin in github.com/nicc-dev/nicc/nicsdk
 * (rlcc.go), proven by its tests: exhaustively where the domain allows, else on millions of
 * random and edge inputs, on the host and in fwsim.
 *
 * Formats (nicsdk.h): rates are fxp20 (1<<20 = line rate), everything else Q16. Rounding is
 * floor everywhere: a product is shifted right (unsigned), a quotient is truncated (unsigned),
 * and a negative result is formed as minus the ceiling of a non-negative one.
 *
 * The model sees x[4] = (a_{t-1}, o_t, a_{t-2}, o_{t-1}), each int32 Q16, and returns y in Q16.
 * Declared ranges of x, which the quantizer relies on and the handler enforces by clamping
 * whatever the context holds:
 *   a_{t-1}, a_{t-2}  [RLCC_A_MIN, RLCC_A_MAX] = [54613, 78643] = [0.83333, 1.19999]
 *   o_t, o_{t-1}      [rlcc_obs_min(p), RLCC_O_MAX]; rlcc_obs_min(p) = -ceil(target*scale/2^16)
 *                     in Q16 (-50328 = -0.76794 with the defaults), RLCC_O_MAX = 128 - 2^-16.
 *
 * The engine entry the compiler emits is, with the generated int32_t nicc_policy(const
 * int32_t *x) and a const struct rlcc_params NAME in the same file:
 *
 *     RLCC_DEFINE_HANDLER(NAME)
 *
 * which defines uint32_t nicc_on_event(const struct nicc_event *, struct nicc_flow_ctx *).
 */
#ifndef NICC_RLCC_H
#define NICC_RLCC_H

#include <stdint.h>
#include "nicsdk.h"

/* Flow context words (struct nicc_flow_ctx.data[i]) used by RL-CC: words 0..5, 24 bytes.
 * Words 6..11 are left untouched for other runtimes (the LSTM state). */
#define RLCC_CTX_RATE 0     /* uint32 fxp20: the current rate, in [min_rate, 1<<20] */
#define RLCC_CTX_BASE_RTT 1 /* uint32 ns: the smallest nonzero RTT seen; 0 = none yet */
#define RLCC_CTX_A1 2       /* uint32 Q16: a_{t-1}, the last multiplier */
#define RLCC_CTX_A2 3       /* uint32 Q16: a_{t-2}, the one before */
#define RLCC_CTX_O1 4       /* int32 Q16 (two's complement): o_{t-1}, the last observation */
#define RLCC_CTX_FLAGS 5    /* bit 0: initialised (RLCC_FLAG_INIT); bits 1..31 reserved, kept */
#define RLCC_CTX_WORDS 6    /* words RL-CC uses: data[0..5] */
#define RLCC_FLAG_INIT 1u

/* The action -> multiplier map's constants. */
#define RLCC_Y_MIN (-65536)   /* model output clamp, Q16 -1.0 */
#define RLCC_Y_MAX 65536      /* Q16 1.0 */
#define RLCC_K_Q16 13107u     /* 0.2 in Q16: floor(0.2 * 2^16) = 13107 = 0.1999969 */
#define RLCC_A_MIN 54613u     /* floor(2^32 / (65536 + 13107)) = 0.83333 (~1/1.2) */
#define RLCC_A_MAX 78643u     /* 65536 + 13107 = 1.19999 (~1.2) */
#define RLCC_O_MAX 8388607    /* (128 << 16) - 1: the observation's upper clamp, 127.99998 */

/* Policy parameters. The arithmetic below is exact (no overflow) for parameters in these
 * ranges, which nicsdk.Params.Validate checks before the compiler emits them:
 *   target     Q16, [0, 16.0]       (0 <= target <= 1<<20)
 *   beta       Q16, [0, 256.0]      (0 <= beta <= 1<<24)
 *   scale      Q16, [2^-16, 256.0]  (1 <= scale <= 1<<24)
 *   min_rate   fxp20, [1, init_rate]
 *   init_rate  fxp20, [min_rate, 1<<20]: the rate of a new flow
 * Defaults (DESIGN.md: the NIC paper's target and beta, the published network's scale):
 *   { 4194 (0.064), 98304 (1.5), 786432 (12), 1049 (1/1000 of line rate), 1<<20 } */
struct rlcc_params {
	uint32_t target;
	uint32_t beta;
	uint32_t scale;
	uint32_t min_rate;
	uint32_t init_rate;
};

/* rlcc_u32_to_i32 reinterprets a stored word as two's complement without relying on
 * implementation-defined conversion (gcc compiles it to nothing). */
static inline int32_t rlcc_u32_to_i32(uint32_t v)
{
	return v <= (uint32_t)INT32_MAX ? (int32_t)v : -(int32_t)(~v) - 1;
}

/* rlcc_rtt_infl returns the RTT inflation rtt/base in Q16: floor(rtt * 2^16 / base),
 * saturated to 0xffffffff (65536.0); base == 0 (no baseline yet) gives 1.0. One 64-bit
 * division. */
static inline uint32_t rlcc_rtt_infl(uint32_t rtt_ns, uint32_t base_ns)
{
	if (base_ns == 0)
		return NICC_Q16_ONE;
	return nicc_fxp16_div(rtt_ns, base_ns);
}

/* rlcc_isqrt returns floor(sqrt(x)) for x <= 2^32 (a larger x gives a wrong result): the
 * digit-by-digit method, 17 branch-free steps of a constant-count loop. */
static inline uint32_t rlcc_isqrt(uint64_t x)
{
	uint64_t r = 0, bit = (uint64_t)1 << 32;
	int i;
	for (i = 0; i < 17; i++) {
		uint64_t t = r + bit;
		uint64_t ge = (uint64_t)0 - (uint64_t)(x >= t);
		x -= t & ge;
		r = (r >> 1) + (bit & ge);
		bit >>= 2;
	}
	return (uint32_t)r;
}

/* rlcc_sqrt_rate returns sqrt(rate) in Q16 for a rate in fxp20: floor(sqrt(rate * 2^12)),
 * exact, with the rate first clamped to [1, 1<<20]. The result is in [64, 65536]. */
static inline uint32_t rlcc_sqrt_rate(uint32_t rate)
{
	return rlcc_isqrt((uint64_t)nicc_clamp_u32(rate, 1, NICC_LINE_RATE) << 12);
}

/* rlcc_obs_min returns the smallest observation, the one at zero excess inflation:
 * -ceil(target * scale / 2^16) in Q16. */
static inline int32_t rlcc_obs_min(const struct rlcc_params *p)
{
	uint64_t ts = (uint64_t)p->target * p->scale;
	return -(int32_t)((ts + 0xffff) >> 16);
}

/* rlcc_observation returns o = (max(infl - beta, 0) * sqrt_rate - target) * scale in Q16,
 * clamped to [rlcc_obs_min(p), RLCC_O_MAX]:
 *   e    = infl - beta if infl > beta, else 0                 (Q16, exact)
 *   prod = floor(e * sqrt_rate / 2^16)                         (Q16)
 *   o    = floor((prod * scale - target * scale) / 2^16)       (Q16, one rounding)
 *   o    = min(o, RLCC_O_MAX)
 * infl is rlcc_rtt_infl's result, sqrt_rate rlcc_sqrt_rate's (at most 65536; a larger value
 * is taken as 65536). */
static inline int32_t rlcc_observation(uint32_t infl, uint32_t sqrt_rate, const struct rlcc_params *p)
{
	uint64_t e = infl > p->beta ? (uint64_t)(infl - p->beta) : 0;
	uint64_t prod = (e * nicc_min_u32(sqrt_rate, NICC_Q16_ONE)) >> 16;
	uint64_t big = prod * p->scale;
	uint64_t ts = (uint64_t)p->target * p->scale;
	if (big >= ts) {
		uint64_t v = (big - ts) >> 16;
		return v > (uint64_t)RLCC_O_MAX ? RLCC_O_MAX : (int32_t)v;
	}
	return -(int32_t)((ts - big + 0xffff) >> 16);
}

/* rlcc_multiplier maps the model output y (Q16, clamped to [-1, 1]) to the rate multiplier in
 * Q16, in [RLCC_A_MIN, RLCC_A_MAX]:
 *   y >= 0:  m = 2^16 + floor(K * y / 2^16)                   (1 + 0.2 y)
 *   y <  0:  m = floor(2^32 / (2^16 + floor(K * -y / 2^16)))   (1 / (1 - 0.2 y))
 * with K = RLCC_K_Q16 (0.2). The divisor is at least 2^16, so the division never traps. */
static inline uint32_t rlcc_multiplier(int32_t y)
{
	y = nicc_clamp_i32(y, RLCC_Y_MIN, RLCC_Y_MAX);
	if (y >= 0)
		return NICC_Q16_ONE + (((uint32_t)y * RLCC_K_Q16) >> 16);
	return (uint32_t)(((uint64_t)1 << 32) / (NICC_Q16_ONE + (((uint32_t)-y * RLCC_K_Q16) >> 16)));
}

/* rlcc_update_rate returns the next rate, clamp(floor(rate * m / 2^16), min_rate, 1<<20), in
 * fxp20, for any rate and m. */
static inline uint32_t rlcc_update_rate(uint32_t rate, uint32_t m, const struct rlcc_params *p)
{
	uint64_t r = ((uint64_t)rate * m) >> 16;
	if (r > NICC_LINE_RATE)
		r = NICC_LINE_RATE;
	return nicc_max_u32((uint32_t)r, p->min_rate);
}

/* rlcc_init sets up a new flow's words: rate = init_rate, no base RTT, a_{t-1} = a_{t-2} = 1.0,
 * o_{t-1} = rlcc_obs_min(p) (an idle link), the init flag set (other flag bits kept). */
static inline void rlcc_init(struct nicc_flow_ctx *ctx, const struct rlcc_params *p)
{
	ctx->data[RLCC_CTX_RATE] = p->init_rate;
	ctx->data[RLCC_CTX_BASE_RTT] = 0;
	ctx->data[RLCC_CTX_A1] = NICC_Q16_ONE;
	ctx->data[RLCC_CTX_A2] = NICC_Q16_ONE;
	ctx->data[RLCC_CTX_O1] = (uint32_t)rlcc_obs_min(p);
	ctx->data[RLCC_CTX_FLAGS] |= RLCC_FLAG_INIT;
}

/* rlcc_on_event is the whole RL-CC decision for one event:
 *   1. A context without RLCC_FLAG_INIT is initialised (rlcc_init) first.
 *   2. The stored rate is clamped to [min_rate, 1<<20], as are a_{t-1}, a_{t-2} to
 *      [RLCC_A_MIN, RLCC_A_MAX] and o_{t-1} to [rlcc_obs_min(p), RLCC_O_MAX], so the model's
 *      inputs are in their declared ranges whatever the context held.
 *   3. Not an RTT event (CNP, NACK, TX, or an unknown type): the clamped rate is stored and
 *      returned; nothing else changes.
 *   4. RTT event: base_rtt = rtt_ns if rtt_ns != 0 and (base_rtt == 0 or rtt_ns < base_rtt);
 *      infl = rlcc_rtt_infl(rtt_ns, base_rtt); o_t = rlcc_observation(infl,
 *      rlcc_sqrt_rate(rate), p); y = policy(x) with x = (a_{t-1}, o_t, a_{t-2}, o_{t-1});
 *      m = rlcc_multiplier(y); rate = rlcc_update_rate(rate, m, p); then the history shifts
 *      (a_{t-2} = a_{t-1}, a_{t-1} = m, o_{t-1} = o_t) and the new rate is stored and
 *      returned.
 * The result is in [min_rate, 1<<20]. */
static inline uint32_t rlcc_on_event(const struct nicc_event *ev, struct nicc_flow_ctx *ctx,
				     const struct rlcc_params *p, int32_t (*policy)(const int32_t *x))
{
	uint32_t *w = ctx->data;
	uint32_t rate, base, rtt, m;
	int32_t x[4], o;

	if (!(w[RLCC_CTX_FLAGS] & RLCC_FLAG_INIT))
		rlcc_init(ctx, p);
	rate = nicc_clamp_u32(w[RLCC_CTX_RATE], p->min_rate, NICC_LINE_RATE);
	if (ev->type != NICC_EV_RTT) {
		w[RLCC_CTX_RATE] = rate;
		return rate;
	}
	rtt = ev->rtt_ns;
	base = w[RLCC_CTX_BASE_RTT];
	if (rtt != 0 && (base == 0 || rtt < base))
		base = rtt;
	o = rlcc_observation(rlcc_rtt_infl(rtt, base), rlcc_sqrt_rate(rate), p);
	x[0] = (int32_t)nicc_clamp_u32(w[RLCC_CTX_A1], RLCC_A_MIN, RLCC_A_MAX);
	x[1] = o;
	x[2] = (int32_t)nicc_clamp_u32(w[RLCC_CTX_A2], RLCC_A_MIN, RLCC_A_MAX);
	x[3] = nicc_clamp_i32(rlcc_u32_to_i32(w[RLCC_CTX_O1]), rlcc_obs_min(p), RLCC_O_MAX);
	m = rlcc_multiplier(policy(x));
	rate = rlcc_update_rate(rate, m, p);
	w[RLCC_CTX_RATE] = rate;
	w[RLCC_CTX_BASE_RTT] = base;
	w[RLCC_CTX_A2] = (uint32_t)x[0];
	w[RLCC_CTX_A1] = m;
	w[RLCC_CTX_O1] = (uint32_t)o;
	return rate;
}

/* RLCC_DEFINE_HANDLER(PARAMS) defines the engine entry over the generated model
 * int32_t nicc_policy(const int32_t *x) and the const struct rlcc_params PARAMS. */
#define RLCC_DEFINE_HANDLER(PARAMS)                                                              \
	uint32_t nicc_on_event(const struct nicc_event *ev, struct nicc_flow_ctx *ctx);          \
	uint32_t nicc_on_event(const struct nicc_event *ev, struct nicc_flow_ctx *ctx)           \
	{                                                                                        \
		return rlcc_on_event(ev, ctx, &(PARAMS), nicc_policy);                           \
	}

#endif /* NICC_RLCC_H */
