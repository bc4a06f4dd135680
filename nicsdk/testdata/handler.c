/* handler.c: the engine entry as the compiler emits it, around a trivial policy, for the
 * WCET of the handler skeleton (wcet_test.go). handler_glue.h is nicsdk.HandlerC of the
 * default parameters. The policy is static, so gcc inlines it, as it would a generated one. */
#include "rlcc.h"

static int32_t nicc_policy(const int32_t *x) { return x[0] - x[2] - x[1] / 8 + x[3] / 16; }

#include "handler_glue.h"
