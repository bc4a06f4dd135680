/* handler.c: the engine entry as the compiler emits it, with a trivial policy, for the WCET
 * of the handler skeleton (rlcc_test.go appends the parameters from nicsdk.Params.C). */
#include "rlcc.h"

int32_t nicc_policy(const int32_t *x);
int32_t nicc_policy(const int32_t *x) { return x[0] - x[2] - x[1] / 8; }

#include "params.h"
RLCC_DEFINE_HANDLER(nicc_params)
