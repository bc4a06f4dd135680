/* handler_wcet.c: the handler skeleton for a layout's WCET (rlcc_layout_test.go): a policy of
 * HW_N inputs the handler calls rather than inlines, so every input of the window is computed
 * and stored, as for a policy that reads them all; harness_test.go writes hw_H_F.c, which
 * defines HW_N, includes this file and appends nicsdk.HandlerC's glue for the layout. */
#include "rlcc.h"

static __attribute__((noinline)) int32_t nicc_policy(const int32_t *x) { return x[0] - x[HW_N - 1] / 8; }
