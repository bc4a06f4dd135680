/* testpolicy.h: the linear test policy the nicsdk tests run the RL-CC handler with, in C
 * (here) and in Go (linearPolicy in rlcc_test.go), bit for bit:
 *   y = clamp(bias + trunc((c0 x0 + c1 x1 + c2 x2 + c3 x3) / 2^16), -2^18, 2^18)
 * in 64-bit arithmetic (no overflow for int32 coefficients and inputs), with division
 * truncating toward zero in both languages. The clamp is wider than [-1, 1] in Q16, so the
 * handler's own clamp of y is exercised too. */
#ifndef NICSDK_TESTPOLICY_H
#define NICSDK_TESTPOLICY_H

#include <stdint.h>

static int32_t test_coef[5]; /* c0..c3, bias */

static int32_t test_policy(const int32_t *x)
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

#endif
