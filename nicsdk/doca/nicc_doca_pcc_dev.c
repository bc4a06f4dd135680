/* nicc_doca_pcc_dev.c: nicc's stand-in for the DOCA PCC device library's algorithm-access
 * functions (nicc_doca_pcc_dev.h), for nicc's host and fwsim builds only: DOCA's toolchain
 * links DOCA's own library instead. The tables nicc_doca_pcc_dev.h's getters read, and the
 * functions that fill them. The metadata,
 * descriptions, permissions and min/max values are accepted and not kept: every check of a
 * new parameter value is the user callback's, which is what nicc verifies. */
#include <stdint.h>
#include "nicc_doca_pcc_dev.h"

static uint32_t nicc_doca_defaults[NICC_DOCA_SHIM_PARAMS];
uint32_t nicc_doca_params[DOCA_PCC_DEV_MAX_NUM_PORTS][DOCA_PCC_DEV_MAX_NUM_USER_SLOTS][NICC_DOCA_SHIM_PARAMS];
uint32_t nicc_doca_counters[DOCA_PCC_DEV_MAX_NUM_PORTS][DOCA_PCC_DEV_MAX_NUM_USER_SLOTS][NICC_DOCA_SHIM_COUNTERS];

doca_pcc_dev_error_t doca_pcc_dev_algo_init_metadata(uint32_t algo_idx, const struct doca_pcc_dev_algo_meta_data *user_def,
						     uint32_t param_num, uint32_t counter_num)
{
	(void)user_def;
	if (algo_idx != 0 || param_num > NICC_DOCA_SHIM_PARAMS || counter_num > NICC_DOCA_SHIM_COUNTERS)
		return DOCA_PCC_DEV_STATUS_FAIL;
	return DOCA_PCC_DEV_STATUS_OK;
}

doca_pcc_dev_error_t doca_pcc_dev_algo_init_param(uint32_t algo_idx, uint32_t param_id, uint32_t default_value,
						  uint32_t max_value, uint32_t min_value, uint32_t permissions,
						  uint32_t param_desc_size, uint64_t param_desc_addr)
{
	(void)max_value, (void)min_value, (void)permissions, (void)param_desc_size, (void)param_desc_addr;
	if (algo_idx != 0 || param_id >= NICC_DOCA_SHIM_PARAMS)
		return DOCA_PCC_DEV_STATUS_FAIL;
	nicc_doca_defaults[param_id] = default_value;
	return DOCA_PCC_DEV_STATUS_OK;
}

doca_pcc_dev_error_t doca_pcc_dev_algo_init_counter(uint32_t algo_idx, uint32_t counter_id, uint32_t max_value,
						    uint32_t permissions, uint32_t counter_desc_size,
						    uint64_t counter_desc_addr)
{
	(void)max_value, (void)permissions, (void)counter_desc_size, (void)counter_desc_addr;
	if (algo_idx != 0 || counter_id >= NICC_DOCA_SHIM_COUNTERS)
		return DOCA_PCC_DEV_STATUS_FAIL;
	return DOCA_PCC_DEV_STATUS_OK;
}

/* The slot's parameters take their defaults and its counters start at zero. */
doca_pcc_dev_error_t doca_pcc_dev_init_algo_slot(uint32_t portid, uint32_t algo_slot, uint32_t algo_idx, uint32_t algo_en)
{
	uint32_t i;
	(void)algo_en;
	if (portid >= DOCA_PCC_DEV_MAX_NUM_PORTS || algo_slot >= DOCA_PCC_DEV_MAX_NUM_USER_SLOTS || algo_idx != 0)
		return DOCA_PCC_DEV_STATUS_FAIL;
	for (i = 0; i < NICC_DOCA_SHIM_PARAMS; i++)
		nicc_doca_params[portid][algo_slot][i] = nicc_doca_defaults[i];
	for (i = 0; i < NICC_DOCA_SHIM_COUNTERS; i++)
		nicc_doca_counters[portid][algo_slot][i] = 0;
	return DOCA_PCC_DEV_STATUS_OK;
}

void doca_pcc_dev_default_internal_algo(doca_pcc_dev_algo_ctxt_t *algo_ctxt, doca_pcc_dev_event_t *event,
					const doca_pcc_dev_attr_t *attr, doca_pcc_dev_results_t *results)
{
	(void)algo_ctxt, (void)event, (void)attr;
	results->rate = DOCA_PCC_DEV_MAX_RATE;
	results->rtt_req = 0;
}
