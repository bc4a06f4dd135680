/* nicc_doca_pcc_dev.h: nicc's own minimal stand-in for the DOCA PCC device API, the subset
 * nicc's DOCA source (RLCC_DOCA, rlcc_doca.h) uses, so the same source builds for the host
 * and for fwsim. Not NVIDIA's headers: written by nicc from NVIDIA's public DOCA PCC API
 * reference, and built with NICC_DOCA_SHIM defined. With DOCA's own toolchain (DPACC) the
 * source includes DOCA's <doca_pcc_dev.h>, <doca_pcc_dev_event.h> and
 * <doca_pcc_dev_algo_access.h> instead, and this file is not used.
 *
 * Checked against (each declaration names its page; "[ref]" below is this reference):
 *   [ref]   NVIDIA DOCA SDK API reference (Doxygen, generated 2025-08-13), group
 *           "DOCA PCC Device" (group__DOCA__PCC__DEVICE.html) and its modules "Device Event"
 *           (doca_pcc_dev_event.h), "Device Algorithm Access" (doca_pcc_dev_algo_access.h),
 *           "Device Common" (doca_pcc_dev_common.h), and the struct pages
 *           doca_pcc_dev_results, mlnx_cc_algo_ctxt_t, mlnx_cc_attr_t,
 *           mlnx_cc_event_general_attr_t, doca_pcc_dev_algo_meta_data.
 *   [guide] NVIDIA DOCA PCC programming guide, docs.nvidia.com/doca/sdk/doca-pcc (v2.5-v3.3
 *           pages): the entry points a user algorithm implements, DPACC, the PCC application.
 *
 * Where DOCA's types are opaque (the event) or hardware-specific (bit-field placement), the
 * layout here is nicc's own; code that follows the API (getters, named fields) does not
 * depend on it. C99 with -pedantic: no anonymous unions (DOCA's results struct has one:
 * here rtt_req is a plain field at the same place). */
#ifndef NICC_DOCA_PCC_DEV_H
#define NICC_DOCA_PCC_DEV_H

#include <stdint.h>

/* [ref] Device Common: enum doca_pcc_dev_error_t. */
typedef enum {
	DOCA_PCC_DEV_STATUS_OK = 0,
	DOCA_PCC_DEV_STATUS_FAIL = 1
} doca_pcc_dev_error_t;

/* [ref] Device Common: DOCA_PCC_DEV_MAX_NUM_PORTS is 4 on BlueField-3 (8 from CX8 on). */
#define DOCA_PCC_DEV_MAX_NUM_PORTS 4

/* [ref] DOCA PCC Device: enum doca_pcc_dev_event_type_enum (the values used). */
#define DOCA_PCC_DEV_EVNT_NULL 0
#define DOCA_PCC_DEV_EVNT_ROCE_CNP 2
#define DOCA_PCC_DEV_EVNT_ROCE_TX 3
#define DOCA_PCC_DEV_EVNT_ROCE_ACK 4
#define DOCA_PCC_DEV_EVNT_ROCE_NACK 5
#define DOCA_PCC_DEV_EVNT_RTT 6
#define DOCA_PCC_DEV_EVNT_ROCE_TX_FOR_ACK_NACK 31

/* [ref] DOCA PCC Device: the rate is fixed point with a 20-bit fraction, in (0, 1] of line
 * rate: DOCA_PCC_DEV_LOG_MAX_RATE 20, DOCA_PCC_DEV_MAX_RATE (1U << 20). */
#define DOCA_PCC_DEV_LOG_MAX_RATE 20
#define DOCA_PCC_DEV_MAX_RATE (1U << DOCA_PCC_DEV_LOG_MAX_RATE)

/* [ref] DOCA PCC Device: DOCA_PCC_DEV_MAX_NUM_USER_SLOTS 8, DOCA_PCC_DEV_MAX_NUM_PARAMS_PER_ALGO
 * 0x26, DOCA_PCC_DEV_MAX_NUM_COUNTERS_PER_ALGO 0x3F. */
#define DOCA_PCC_DEV_MAX_NUM_USER_SLOTS 8
#define DOCA_PCC_DEV_MAX_NUM_PARAMS_PER_ALGO 0x26
#define DOCA_PCC_DEV_MAX_NUM_COUNTERS_PER_ALGO 0x3F

/* [ref] mlnx_cc_algo_ctxt_t (doca_pcc_dev_algo_ctxt_t): uint32_t data[12], the flow's context,
 * kept by the library from one event of the flow to the next. */
typedef struct {
	uint32_t data[12];
} doca_pcc_dev_algo_ctxt_t;

/* [ref] mlnx_cc_attr_t (doca_pcc_dev_attr_t): algo_slot:4, overload:1, reserved:27. */
typedef struct {
	uint32_t algo_slot : 4;
	uint32_t overload : 1;
	uint32_t reserved_at_0 : 27;
} doca_pcc_dev_attr_t;

/* [ref] mlnx_cc_event_general_attr_t (doca_pcc_dev_event_general_attr_t): ev_type:8,
 * ev_subtype:8, port_num:8, flags:8. */
typedef struct {
	uint32_t ev_type : 8;
	uint32_t ev_subtype : 8;
	uint32_t port_num : 8;
	uint32_t flags : 8;
} doca_pcc_dev_event_general_attr_t;

/* doca_pcc_dev_event_t is opaque in [ref] ("should not be used directly through the struct";
 * read it with the getters). nicc's layout, 28 bytes (nicsdk.DOCAEvent.Bytes writes it):
 * word 0 the general attributes (ev_type bits 0-7, ev_subtype 8-15, port_num 16-23, flags
 * 24-31), then flow tag, serial number, timestamp, and the RTT event's three timestamps. */
typedef struct {
	uint32_t ev_attr;
	uint32_t flow_tag;
	uint32_t sn;
	uint32_t timestamp;
	uint32_t rtt_req_send_timestamp;
	uint32_t rtt_req_recv_timestamp;
	uint32_t rtt_resp_send_timestamp;
} doca_pcc_dev_event_t;

/* [ref] struct doca_pcc_dev_results (doca_pcc_dev_results_t): rate (the new rate, fxp20 in
 * (0, 1]), rtt_req (in a union with probe_req: request an RTT probe), probe_type_slot,
 * credits, reload_credits. */
typedef struct doca_pcc_dev_results {
	uint32_t rate;
	uint32_t rtt_req;
	uint32_t probe_type_slot;
	uint32_t credits;
	uint32_t reload_credits;
} doca_pcc_dev_results_t;

/* [ref] Device Event getters (FORCE_INLINE there too). */
/* doca_pcc_dev_get_ev_attr: "for all events", the general attributes. */
static inline doca_pcc_dev_event_general_attr_t doca_pcc_dev_get_ev_attr(doca_pcc_dev_event_t *event)
{
	doca_pcc_dev_event_general_attr_t a;
	uint32_t w = event->ev_attr;
	a.ev_type = w & 0xff;
	a.ev_subtype = (w >> 8) & 0xff;
	a.port_num = (w >> 16) & 0xff;
	a.flags = w >> 24;
	return a;
}

/* doca_pcc_dev_get_timestamp: "for all events", 32-bit, 1 ns granularity. */
static inline uint32_t doca_pcc_dev_get_timestamp(doca_pcc_dev_event_t *event)
{
	return event->timestamp;
}

/* doca_pcc_dev_get_rtt_req_send_timestamp: "for RTT events only", when the RTT request was
 * sent, 1 ns. */
static inline uint32_t doca_pcc_dev_get_rtt_req_send_timestamp(doca_pcc_dev_event_t *event)
{
	return event->rtt_req_send_timestamp;
}

/* [ref] Algorithm Access: struct doca_pcc_dev_algo_meta_data. */
struct doca_pcc_dev_algo_meta_data {
	uint32_t algo_id;
	uint32_t algo_major_version;
	uint32_t algo_minor_version;
	uint32_t algo_desc_size;
	uint64_t algo_desc_addr;
};

/* [ref] Algorithm Access functions, implemented for nicc's builds in nicc_doca_pcc_dev.c
 * (one algorithm index). */
doca_pcc_dev_error_t doca_pcc_dev_algo_init_metadata(uint32_t algo_idx, const struct doca_pcc_dev_algo_meta_data *user_def,
						     uint32_t param_num, uint32_t counter_num);
doca_pcc_dev_error_t doca_pcc_dev_algo_init_param(uint32_t algo_idx, uint32_t param_id, uint32_t default_value,
						  uint32_t max_value, uint32_t min_value, uint32_t permissions,
						  uint32_t param_desc_size, uint64_t param_desc_addr);
doca_pcc_dev_error_t doca_pcc_dev_algo_init_counter(uint32_t algo_idx, uint32_t counter_id, uint32_t max_value,
						    uint32_t permissions, uint32_t counter_desc_size,
						    uint64_t counter_desc_addr);
doca_pcc_dev_error_t doca_pcc_dev_init_algo_slot(uint32_t portid, uint32_t algo_slot, uint32_t algo_idx, uint32_t algo_en);

/* The stand-in's parameter and counter tables, one row per port and user slot (defined in
 * nicc_doca_pcc_dev.c), with room for NICC_DOCA_SHIM_PARAMS parameters and
 * NICC_DOCA_SHIM_COUNTERS counters. The two getters below are inline table reads here; in
 * DOCA's library they are functions, whose cost nicc cannot time. Out-of-range ports and
 * slots are folded in by masking, never read out of bounds. */
#define NICC_DOCA_SHIM_PARAMS 4
#define NICC_DOCA_SHIM_COUNTERS 4
extern uint32_t nicc_doca_params[DOCA_PCC_DEV_MAX_NUM_PORTS][DOCA_PCC_DEV_MAX_NUM_USER_SLOTS][NICC_DOCA_SHIM_PARAMS];
extern uint32_t nicc_doca_counters[DOCA_PCC_DEV_MAX_NUM_PORTS][DOCA_PCC_DEV_MAX_NUM_USER_SLOTS][NICC_DOCA_SHIM_COUNTERS];

/* [ref] Algorithm Access: doca_pcc_dev_get_algo_params(port_num, algo_slot), the current
 * parameters of the slot's algorithm on the port. */
static inline uint32_t *doca_pcc_dev_get_algo_params(uint32_t port_num, uint32_t algo_slot)
{
	return nicc_doca_params[port_num & (DOCA_PCC_DEV_MAX_NUM_PORTS - 1)][algo_slot & (DOCA_PCC_DEV_MAX_NUM_USER_SLOTS - 1)];
}

/* [ref] Algorithm Access: doca_pcc_dev_get_counters(port_num, algo_slot), the counters of the
 * slot's algorithm on the port. */
static inline uint32_t *doca_pcc_dev_get_counters(uint32_t port_num, uint32_t algo_slot)
{
	return nicc_doca_counters[port_num & (DOCA_PCC_DEV_MAX_NUM_PORTS - 1)][algo_slot & (DOCA_PCC_DEV_MAX_NUM_USER_SLOTS - 1)];
}

/* [ref] DOCA PCC Device: the library's built-in algorithm, for flows of a slot the user
 * algorithm does not serve. nicc's stand-in keeps the rate at DOCA_PCC_DEV_MAX_RATE: it is
 * not DOCA's algorithm, only something that links. */
void doca_pcc_dev_default_internal_algo(doca_pcc_dev_algo_ctxt_t *algo_ctxt, doca_pcc_dev_event_t *event,
					const doca_pcc_dev_attr_t *attr, doca_pcc_dev_results_t *results);

/* [ref] DOCA PCC Device: the user algorithm's entry points (defined by the DOCA source). */
void doca_pcc_dev_user_algo(doca_pcc_dev_algo_ctxt_t *algo_ctxt, doca_pcc_dev_event_t *event,
			    const doca_pcc_dev_attr_t *attr, doca_pcc_dev_results_t *results);
void doca_pcc_dev_user_init(uint32_t *disable_event_bitmask);
doca_pcc_dev_error_t doca_pcc_dev_user_set_algo_params(uint32_t port_num, uint32_t algo_slot, uint32_t param_id_base,
						       uint32_t param_num, const uint32_t *new_param_values,
						       uint32_t *params);

#endif /* NICC_DOCA_PCC_DEV_H */
