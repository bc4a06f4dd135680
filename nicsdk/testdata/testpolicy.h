/* testpolicy.h: the test policies the nicsdk tests run the RL-CC handler with, in C (here)
 * and in Go (linearPolicy and statePolicy in the tests), bit for bit.
 *
 * test_policy, stateless, the linear policy:
 *   y = clamp(bias + trunc((c0 x0 + c1 x1 + c2 x2 + c3 x3) / 2^16), -2^18, 2^18)
 * in 64-bit arithmetic (no overflow for int32 coefficients and inputs), with division
 * truncating toward zero in both languages. The clamp is wider than [-1, 1] in Q16, so the
 * handler's own clamp of y is exercised too.
 *
 * test_policy_state(x, state, words, out), stateful, keeps words (0..6) words:
 *   state[0] += (uint32)x[1]                     a running sum of o_t, wrapping (words >= 1)
 *   state[1..words-1]                            a byte-packed history, shifted left one byte
 *                                                across the words, the new byte
 *                                                ((uint32)x[1] >> 6) & 0xff entering state[1]
 *   h = hash of state[0..words-1] (after the update; 0 for no words)
 *   words >= 1 and h % 64 == 0:  return (int32)h, any int32 (the handler's clamps)
 *   v = bias + trunc(sum c_i x_i / 2^16)         the linear part, unclamped
 *     + trunc((int32)h / 2^(10 + h % 8))         (words >= 1): the state's part, either sign
 *     + 2^16                                     (out == RLCC_OUT_M: a multiplier near 1.0)
 *   return v clamped to [INT32_MIN, INT32_MAX]
 * test_policy_st is it with the words and output kind in test_words and test_out. */
#ifndef NICSDK_TESTPOLICY_H
#define NICSDK_TESTPOLICY_H

#include <stdint.h>

#include "rlcc.h"

static int32_t test_coef[5]; /* c0..c3, bias */
static unsigned test_words;  /* test_policy_st's state words */
static int test_out;         /* RLCC_OUT_Y or RLCC_OUT_M */

static inline int32_t test_policy(const int32_t *x)
{
	int64_t s = 0, y;
	int i;
	for (i = 0; i < 4; i++)
		s += (int64_t)test_coef[i] * x[i];
	y = test_coef[4] + s / 65536;
	if (y < -(1 << 18))
		y = -(1 << 18);
	if (y > (1 << 18))
		y = 1 << 18;
	return (int32_t)y;
}

static inline int32_t test_policy_state(const int32_t *x, uint32_t *state, unsigned words, int out)
{
	int64_t s = 0, v;
	uint32_t h = 0;
	unsigned i;
	for (i = 0; i < 4; i++)
		s += (int64_t)test_coef[i] * x[i];
	v = test_coef[4] + s / 65536;
	if (words > 0)
		state[0] += (uint32_t)x[1];
	for (i = words; i-- > 2;)
		state[i] = state[i] << 8 | state[i - 1] >> 24;
	if (words > 1)
		state[1] = state[1] << 8 | (((uint32_t)x[1] >> 6) & 0xff);
	for (i = 0; i < words; i++)
		h = h * 0x9e3779b1u + state[i];
	h ^= h >> 15;
	h *= 0x2c1b3c6du;
	h ^= h >> 12;
	if (words > 0) {
		if (h % 64 == 0)
			return rlcc_u32_to_i32(h);
		v += (int64_t)rlcc_u32_to_i32(h) / ((int64_t)1 << (10 + h % 8));
	}
	if (out == RLCC_OUT_M)
		v += 65536;
	if (v < INT32_MIN)
		v = INT32_MIN;
	if (v > INT32_MAX)
		v = INT32_MAX;
	return (int32_t)v;
}

static inline int32_t test_policy_st(const int32_t *x, uint32_t *state)
{
	return test_policy_state(x, state, test_words, test_out);
}

/* test_obs_cmax is rlcc_observation through rlcc_obs_u64 with the terms for c_max =
 * 2^28 (c's largest, at target 16.0 and scale 256.0) instead of p's own c, as a runtime
 * whose parameters change below the compiled ones computes it (rlcc_doca.h): the same
 * value for every p. */
static inline int32_t test_obs_cmax(uint32_t infl, uint32_t sqrt_rate, const struct rlcc_params *p)
{
	const uint64_t c_max = 1u << 28;
	struct rlcc_obs_terms t = rlcc_obs_terms_of(p, c_max);
	return rlcc_obs_u64(infl, nicc_min_u32(sqrt_rate, NICC_Q16_ONE), &t, c_max);
}

/* test_policy_layout(x, state), for a layout of test_n inputs (rlcc_layout_test.go,
 * layoutPolicy in Go), keeping test_words words and returning test_out:
 *   v = bias + trunc(sum_{i < test_n} c_i x_i / 2^16), clamped to [-2^18, 2^18]
 *   words >= 1: state[0] += (uint32)x[test_n - 1]; state[i] += state[i - 1] * 0x9e3779b1
 *               for i = 1 .. words-1 in turn; v += trunc((int32)state[words - 1] / 2^12)
 *   out == RLCC_OUT_M: v += 2^16
 * with c = test_lcoef[0 .. RLCC_INPUTS_MAX-1], bias = test_lcoef[RLCC_INPUTS_MAX]. test_policy_l
 * is its stateless form (no words). */
static int32_t test_lcoef[RLCC_INPUTS_MAX + 1];
static unsigned test_n;

static inline int32_t test_policy_layout(const int32_t *x, uint32_t *state)
{
	int64_t s = 0, v;
	unsigned i;
	for (i = 0; i < test_n; i++)
		s += (int64_t)test_lcoef[i] * x[i];
	v = test_lcoef[RLCC_INPUTS_MAX] + s / 65536;
	if (v < -(1 << 18))
		v = -(1 << 18);
	if (v > (1 << 18))
		v = 1 << 18;
	if (test_words > 0) {
		state[0] += (uint32_t)x[test_n - 1];
		for (i = 1; i < test_words; i++)
			state[i] += state[i - 1] * 0x9e3779b1u;
		v += (int64_t)rlcc_u32_to_i32(state[test_words - 1]) / 4096;
	}
	if (test_out == RLCC_OUT_M)
		v += 65536;
	return (int32_t)v;
}

static inline int32_t test_policy_l(const int32_t *x) { return test_policy_layout(x, (uint32_t *)0); }

#endif
