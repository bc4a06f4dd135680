/* handler_ex.c: the engine entry RLCC_DEFINE_HANDLER_EX defines, around the stateful test
 * policy (testpolicy.h), for rlcc_ex_test.go. harness_test.go writes one file per
 * configuration, hx_WORDS_OUT.c, which defines HX_WORDS, HX_OUT and HX_GLUE (its glue header:
 * nicsdk.HandlerExC(DefaultParams(), "test_policy_st", WORDS, OUT)) and includes this one.
 * set_policy sets the policy's coefficients; its words and output kind are the handler's. */
#include "rlcc.h"
#include "testpolicy.h"

void set_policy(const int32_t *coef);

void set_policy(const int32_t *coef)
{
	int i;
	for (i = 0; i < 5; i++)
		test_coef[i] = coef[i];
	test_words = HX_WORDS;
	test_out = HX_OUT;
}

#include HX_GLUE
