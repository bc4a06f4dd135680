/* handler_layout.c: the engine entry RLCC_DEFINE_HANDLER_L or RLCC_DEFINE_HANDLER_EX_L defines
 * (the layout, words and output kind constants) around testpolicy.h's test_policy_l or
 * test_policy_layout, for rlcc_layout_test.go. harness_test.go writes one file per
 * configuration, hl_NAME.c, which defines HL_WORDS, HL_OUT, HL_N (the layout's inputs) and
 * HL_GLUE (its glue header: nicsdk.HandlerC, HandlerMC or HandlerExC of DefaultParams()) and
 * includes this one. set_policy sets the policy's coefficients (RLCC_INPUTS_MAX + 1). */
#include "rlcc.h"
#include "testpolicy.h"

void set_policy(const int32_t *coef);

void set_policy(const int32_t *coef)
{
	int i;
	for (i = 0; i <= RLCC_INPUTS_MAX; i++)
		test_lcoef[i] = coef[i];
	test_n = HL_N;
	test_words = HL_WORDS;
	test_out = HL_OUT;
}

#include HL_GLUE
