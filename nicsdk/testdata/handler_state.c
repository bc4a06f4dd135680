/* handler_state.c: handler.c's skeleton for a stateful policy returning the multiplier
 * (RLCC_DEFINE_HANDLER_EX, two state words, RLCC_OUT_M), for its WCET (wcet_test.go).
 * handler_state_glue.h is nicsdk.HandlerExC(DefaultParams(), PolicyEntry, 2, OutM). */
#include "rlcc.h"

static int32_t nicc_policy(const int32_t *x, uint32_t *state)
{
	state[0] += (uint32_t)x[1];
	state[1] = state[1] << 8 | (((uint32_t)x[1] >> 6) & 0xff);
	return 65536 + x[0] - x[2] - x[1] / 8 + x[3] / 16 + (int32_t)(state[0] >> 20) - (int32_t)(state[1] >> 24);
}

#include "handler_state_glue.h"
