/* rlcc_doca.h: the RL-CC runtime (rlcc.h) behind DOCA PCC's device entry points. Header
 * only, freestanding C99; included by the DOCA source nicc compile --sdk doca writes, after
 * DOCA's device headers (or nicc's stand-in, nicc_doca_pcc_dev.h) and rlcc.h.
 *
 * Every function here has a bit-identical Go twin in github.com/nicc-dev/nicc/nicsdk
 * (doca.go: DOCARuntime), which nicc's verify runs beside the host and fwsim builds.
 *
 * What the DOCA entry does with one event (rlcc_doca_algo):
 *   - The flow's state is the algorithm context, algo_ctxt->data[12], laid out as rlcc.h's
 *     struct nicc_flow_ctx (RLCC_CTX_*: words 0..5, a stateful policy's words after them).
 *   - RL-CC's target, beta and scale are the algorithm's parameters 0, 1, 2 (RLCC_DOCA_PARAM_*)
 *     of the event's port; the other parameters (min and init rate, base RTT) are the
 *     compiled ones. The entry reads them as the port's rlcc_doca_terms, which init and
 *     set_algo_params work out whenever the parameters change.
 *   - An RTT event (DOCA_PCC_DEV_EVNT_RTT) runs the decision with the RTT
 *     doca_pcc_dev_get_timestamp(event) - doca_pcc_dev_get_rtt_req_send_timestamp(event)
 *     (ns, modulo 2^32); any other event does what rlcc.h does with a non-RTT event (the
 *     flow's clamped rate is kept).
 *   - results->rate is the new rate, fxp20 of line rate in [min_rate, 1 << 20];
 *     results->rtt_req asks for an RTT probe on a new flow's first event, on each RTT response
 *     (one probe in flight) and on CNP and NACK events (a probe may have been lost).
 *   - Counters (doca_pcc_dev_get_counters): 0 counts decisions (RTT events), 1 the decisions
 *     whose new rate is at a bound (min_rate or line rate). Plain increments: DPA threads
 *     handling flows of the same port may race and lose a count; the counters are statistics.
 *   - Flows of a slot other than RLCC_DOCA_SLOT get DOCA's built-in algorithm. */
#ifndef NICC_RLCC_DOCA_H
#define NICC_RLCC_DOCA_H

#include <stdint.h>
#include "rlcc.h"

/* The algorithm's index and slot (doca_pcc_dev_init_algo_slot), its parameters and counters. */
#define RLCC_DOCA_ALGO_IDX 0
#define RLCC_DOCA_SLOT 0
#define RLCC_DOCA_PARAM_TARGET 0 /* Q16, RL-CC's target */
#define RLCC_DOCA_PARAM_BETA 1   /* Q16, RL-CC's beta */
#define RLCC_DOCA_PARAM_SCALE 2  /* Q16, RL-CC's scale */
#define RLCC_DOCA_PARAMS 3
#define RLCC_DOCA_COUNTER_DECISIONS 0
#define RLCC_DOCA_COUNTER_CLAMPS 1
#define RLCC_DOCA_COUNTERS 2

/* Parameter ranges: rlcc.h's (its arithmetic is exact in them), and one more that keeps the
 * compiled policy's inputs in the ranges it was proven on: the observation's lower clamp,
 * rlcc_obs_min = -ceil(target * scale / 2^16), may not fall below the compiled one, i.e.
 * ceil(target * scale / 2^16) <= ceil(compiled target * scale / 2^16). */
#define RLCC_DOCA_TARGET_MAX (1u << 20) /* 16.0 */
#define RLCC_DOCA_BETA_MAX (1u << 24)   /* 256.0 */
#define RLCC_DOCA_SCALE_MIN 1u          /* 2^-16 */
#define RLCC_DOCA_SCALE_MAX (1u << 24)  /* 256.0 */

/* rlcc_doca_terms[rlcc_doca_live[port]] is the observation's terms (rlcc.h, struct
 * rlcc_obs_terms) of the port's parameters, with c_max the compiled policy's c
 * (rlcc_doca_port_terms). They are worked out when the parameters change (rlcc_doca_init,
 * rlcc_doca_set_params), as DOCA's PCC sample suggests for values derived from parameters,
 * rather than on every event: the entry then loads three words where it would load three and
 * multiply, and its registers do not hold the derived values through the decision (measured
 * with nicc's stand-in in fwsim: rlcc_xgb's WCET 353 cycles deriving them per event, 341 with
 * this).
 *
 * Port p has two copies, rlcc_doca_terms[2p] and [2p + 1], and rlcc_doca_live[p] is the
 * index of the one its decisions read, so that no decision reads a half-written set: the
 * public API reference does not say whether DOCA runs doca_pcc_dev_user_set_algo_params
 * while other DPA threads run decisions, so the terms are changed as if it did.
 * set_algo_params writes the other copy, whole, then publishes it by one aligned store of
 * its index (a uintptr_t, one machine word) with release order (RISC-V: fence; sd); a
 * decision loads the index with acquire order (ld; fence) and reads that copy after it. A
 * decision thus sees the copy its index names as it was when the index was published: the
 * old terms or the new, never a mix. The index is only ever 2p or 2p + 1 (init stores 2p,
 * set_algo_params the other one), or 0 before init. What this assumes:
 *   - One writer at a time per port: set_algo_params calls are not run concurrently with
 *     each other for the same port (two would write the same spare copy). The reference does
 *     not say; without the A extension there is no compare-and-swap to guard it with.
 *   - A decision reads its copy before a second later set_algo_params of the same port
 *     rewrites it: between a decision's load of the index and its reads of the copy (before
 *     the policy runs: the observation), another whole call (its checks, the getter, the
 *     computation and the publish) would have to complete.
 * The cost, WCET cycles with one copy and plain reads, then with this (nicc's stand-in in
 * fwsim): rlcc_xgb 338, 342; rlcc_xgb_seed2 331, 338; the int MLP of rlcc_teacher 925, 932;
 * the int LSTM of rlcc_adpg_lstm 2868, 2874. */
static struct rlcc_obs_terms rlcc_doca_terms[2 * DOCA_PCC_DEV_MAX_NUM_PORTS];
static uintptr_t rlcc_doca_live[DOCA_PCC_DEV_MAX_NUM_PORTS];

/* rlcc_doca_live_terms is the port's published copy of its terms (port < the port count). */
static inline RLCC_ALWAYS_INLINE const struct rlcc_obs_terms *rlcc_doca_live_terms(uint32_t port)
{
	return &rlcc_doca_terms[__atomic_load_n(&rlcc_doca_live[port], __ATOMIC_ACQUIRE)];
}

typedef char rlcc_doca_ctx_is_48_bytes[sizeof(doca_pcc_dev_algo_ctxt_t) == NICC_CTX_BYTES ? 1 : -1];

/* rlcc_doca_params_ok says whether target, beta and scale may be the parameters of a policy
 * compiled with *compiled (the ranges above). */
static inline int rlcc_doca_params_ok(uint32_t target, uint32_t beta, uint32_t scale, const struct rlcc_params *compiled)
{
	uint64_t ts = (uint64_t)target * scale, cts = (uint64_t)compiled->target * compiled->scale;
	return target <= RLCC_DOCA_TARGET_MAX && beta <= RLCC_DOCA_BETA_MAX && scale >= RLCC_DOCA_SCALE_MIN &&
	       scale <= RLCC_DOCA_SCALE_MAX && ((ts + 0xffff) >> 16) <= ((cts + 0xffff) >> 16);
}

/* rlcc_doca_port_terms returns rlcc_doca_terms' entry for the parameters target, beta and
 * scale of a policy compiled with *compiled (rlcc_doca_params_ok holds: their c is at most
 * the compiled one). */
static inline struct rlcc_obs_terms rlcc_doca_port_terms(uint32_t target, uint32_t beta, uint32_t scale,
							 const struct rlcc_params *compiled)
{
	struct rlcc_params q = *compiled;
	q.target = target;
	q.beta = beta;
	q.scale = scale;
	return rlcc_obs_terms_of(&q, rlcc_obs_c(compiled));
}

/* rlcc_doca_set_params is doca_pcc_dev_user_set_algo_params' body: parameters
 * param_id_base .. param_id_base + param_num - 1 of the algorithm in slot algo_slot of port
 * port_num are to take new_values. The values they would give together with the current ones
 * (doca_pcc_dev_get_algo_params) are checked first; only when all are in range
 * (rlcc_doca_params_ok) are they written, into params[0 .. param_num - 1] (the array DOCA
 * passes, which starts at the first parameter changed), the port's rlcc_doca_terms updated,
 * and DOCA_PCC_DEV_STATUS_OK returned. Otherwise, or for a port the device does not have
 * (port_num >= DOCA_PCC_DEV_MAX_NUM_PORTS) or parameters or a slot this algorithm does not
 * have, nothing is written and the result is DOCA_PCC_DEV_STATUS_FAIL, the API's one error
 * status. The port's terms are changed as the comment on rlcc_doca_terms says. */
static inline doca_pcc_dev_error_t rlcc_doca_set_params(uint32_t port_num, uint32_t algo_slot, uint32_t param_id_base,
							 uint32_t param_num, const uint32_t *new_values, uint32_t *params,
							 const struct rlcc_params *compiled)
{
	uint32_t v[RLCC_DOCA_PARAMS], i;
	uintptr_t spare;
	const uint32_t *cur;
	if (port_num >= DOCA_PCC_DEV_MAX_NUM_PORTS || algo_slot != RLCC_DOCA_SLOT || param_id_base > RLCC_DOCA_PARAMS || param_num > RLCC_DOCA_PARAMS - param_id_base)
		return DOCA_PCC_DEV_STATUS_FAIL;
	cur = doca_pcc_dev_get_algo_params(port_num, algo_slot);
	for (i = 0; i < RLCC_DOCA_PARAMS; i++)
		v[i] = cur[i];
	for (i = 0; i < param_num; i++)
		v[param_id_base + i] = new_values[i];
	if (!rlcc_doca_params_ok(v[RLCC_DOCA_PARAM_TARGET], v[RLCC_DOCA_PARAM_BETA], v[RLCC_DOCA_PARAM_SCALE], compiled))
		return DOCA_PCC_DEV_STATUS_FAIL;
	for (i = 0; i < param_num; i++)
		params[i] = new_values[i];
	/* The one writer (see rlcc_doca_terms): its plain read of the index is the last value it
	 * stored. The spare copy is written whole before the release store publishes it. */
	spare = 2u * port_num + ((rlcc_doca_live[port_num] & 1u) ^ 1u);
	rlcc_doca_terms[spare] =
		rlcc_doca_port_terms(v[RLCC_DOCA_PARAM_TARGET], v[RLCC_DOCA_PARAM_BETA], v[RLCC_DOCA_PARAM_SCALE], compiled);
	__atomic_store_n(&rlcc_doca_live[port_num], spare, __ATOMIC_RELEASE);
	return DOCA_PCC_DEV_STATUS_OK;
}

/* rlcc_doca_init is doca_pcc_dev_user_init's body: it declares the algorithm (index
 * RLCC_DOCA_ALGO_IDX, its three parameters with the compiled values as defaults and their
 * single-value ranges, its two read-only counters), puts it in slot RLCC_DOCA_SLOT of every
 * port, and disables the events it does nothing with (RoCE ACK, and TX for ACK/NACK). */
static inline void rlcc_doca_init(uint32_t *disable_event_bitmask, const struct rlcc_params *compiled)
{
	static const char algo_desc[] = "nicc RL-CC policy";
	static const char target_desc[] = "RL-CC target, Q16";
	static const char beta_desc[] = "RL-CC beta, Q16";
	static const char scale_desc[] = "RL-CC scale, Q16";
	static const char decisions_desc[] = "decisions (RTT events)";
	static const char clamps_desc[] = "decisions whose rate is at min rate or line rate";
	struct doca_pcc_dev_algo_meta_data meta;
	uint32_t port;

	meta.algo_id = 0x6e696363; /* "nicc" */
	meta.algo_major_version = 1;
	meta.algo_minor_version = 0;
	meta.algo_desc_size = sizeof algo_desc;
	meta.algo_desc_addr = (uint64_t)(uintptr_t)algo_desc;
	doca_pcc_dev_algo_init_metadata(RLCC_DOCA_ALGO_IDX, &meta, RLCC_DOCA_PARAMS, RLCC_DOCA_COUNTERS);
	doca_pcc_dev_algo_init_param(RLCC_DOCA_ALGO_IDX, RLCC_DOCA_PARAM_TARGET, compiled->target, RLCC_DOCA_TARGET_MAX, 0, 1,
				     sizeof target_desc, (uint64_t)(uintptr_t)target_desc);
	doca_pcc_dev_algo_init_param(RLCC_DOCA_ALGO_IDX, RLCC_DOCA_PARAM_BETA, compiled->beta, RLCC_DOCA_BETA_MAX, 0, 1,
				     sizeof beta_desc, (uint64_t)(uintptr_t)beta_desc);
	doca_pcc_dev_algo_init_param(RLCC_DOCA_ALGO_IDX, RLCC_DOCA_PARAM_SCALE, compiled->scale, RLCC_DOCA_SCALE_MAX,
				     RLCC_DOCA_SCALE_MIN, 1, sizeof scale_desc, (uint64_t)(uintptr_t)scale_desc);
	doca_pcc_dev_algo_init_counter(RLCC_DOCA_ALGO_IDX, RLCC_DOCA_COUNTER_DECISIONS, UINT32_MAX, 0,
				       sizeof decisions_desc, (uint64_t)(uintptr_t)decisions_desc);
	doca_pcc_dev_algo_init_counter(RLCC_DOCA_ALGO_IDX, RLCC_DOCA_COUNTER_CLAMPS, UINT32_MAX, 0, sizeof clamps_desc,
				       (uint64_t)(uintptr_t)clamps_desc);
	for (port = 0; port < DOCA_PCC_DEV_MAX_NUM_PORTS; port++) {
		doca_pcc_dev_init_algo_slot(port, RLCC_DOCA_SLOT, RLCC_DOCA_ALGO_IDX, 1);
		rlcc_doca_terms[2 * port] = rlcc_doca_port_terms(compiled->target, compiled->beta, compiled->scale, compiled);
		__atomic_store_n(&rlcc_doca_live[port], 2u * port, __ATOMIC_RELEASE);
	}
	*disable_event_bitmask = (1u << DOCA_PCC_DEV_EVNT_ROCE_ACK) | (1u << DOCA_PCC_DEV_EVNT_ROCE_TX_FOR_ACK_NACK);
}

/* RLCC_DOCA_ENTRY goes on doca_pcc_dev_user_algo's definition. Under GCC it turns two
 * passes off in that function. Tree PRE hoists what rlcc_doca_algo's two inlined runtime
 * calls share above their branch, and those values then live through the policy and
 * spill. CSE following the slot check's jump ties the entry's arguments to values it
 * finds there, and the register allocator then moves them out of their argument
 * registers. Measured with nicc's stand-in in fwsim (WCET cycles, rlcc_xgb, rlcc_xgb_seed2,
 * the int8 MLP, the int8 LSTM): with both passes 354, 349, 932, 2584; without PRE 341, 334,
 * 928, 2488; without either 338, 331, 925, 2482. A hint only; other compilers leave it out. */
#if defined(__GNUC__) && !defined(__clang__)
#define RLCC_DOCA_ENTRY __attribute__((optimize("no-tree-pre","no-cse-follow-jumps")))
#else
#define RLCC_DOCA_ENTRY
#endif

/* rlcc_doca_algo is doca_pcc_dev_user_algo's body (see the top of this file), around the
 * policy as rlcc_on_event_core takes it; inlined so that the constants fold. */
static inline RLCC_ALWAYS_INLINE void rlcc_doca_algo(doca_pcc_dev_algo_ctxt_t *algo_ctxt, doca_pcc_dev_event_t *event,
						     const doca_pcc_dev_attr_t *attr, doca_pcc_dev_results_t *results,
						     const struct rlcc_params *compiled, rlcc_policy_fn policy,
						     rlcc_policy_state_fn policy_st, unsigned words, int out)
{
	doca_pcc_dev_event_general_attr_t ev_attr;
	struct nicc_flow_ctx *ctx;
	struct nicc_event ev = {0, 0, 0, 0, 0};
	const struct rlcc_obs_terms *terms;
	uint32_t *counter, slot = attr->algo_slot, type, rate, fresh, port;

	if (RLCC_UNLIKELY(slot != RLCC_DOCA_SLOT)) {
		doca_pcc_dev_default_internal_algo(algo_ctxt, event, attr, results);
		return;
	}
	ev_attr = doca_pcc_dev_get_ev_attr(event);
	type = ev_attr.ev_type;
	port = ev_attr.port_num % DOCA_PCC_DEV_MAX_NUM_PORTS;
	/* The context is 12 words either way (checked above); rlcc.h names them. */
	ctx = (struct nicc_flow_ctx *)(void *)algo_ctxt;
	/* Two calls of the runtime, each inlined with the event type a constant: the RTT one is
	 * the decision alone, the other keeps the clamped rate. */
	if (RLCC_LIKELY(type == DOCA_PCC_DEV_EVNT_RTT)) {
		ev.type = NICC_EV_RTT;
		ev.rtt_ns = doca_pcc_dev_get_timestamp(event) - doca_pcc_dev_get_rtt_req_send_timestamp(event);
		terms = rlcc_doca_live_terms(port);
		rate = rlcc_on_event_terms(&ev, ctx, compiled, terms, policy, policy_st, words, out);
		results->rate = rate;
		results->rtt_req = 1;
		counter = doca_pcc_dev_get_counters(ev_attr.port_num, slot);
		counter[RLCC_DOCA_COUNTER_DECISIONS]++;
		/* rate is in [min_rate, 1 << 20]: at line rate exactly when rate >> 20 is 1, at
		 * min_rate when rate <= min_rate. */
		counter[RLCC_DOCA_COUNTER_CLAMPS] += (rate >> NICC_FXP20_SHIFT) | (rate <= compiled->min_rate);
		return;
	}
	fresh = !(ctx->data[RLCC_CTX_FLAGS] & RLCC_FLAG_INIT);
	ev.type = NICC_EV_TX; /* rlcc.h treats every non-RTT event alike */
	terms = rlcc_doca_live_terms(port);
	results->rate = rlcc_on_event_terms(&ev, ctx, compiled, terms, policy, policy_st, words, out);
	results->rtt_req = fresh | (type == DOCA_PCC_DEV_EVNT_ROCE_CNP) | (type == DOCA_PCC_DEV_EVNT_ROCE_NACK);
}

#endif /* NICC_RLCC_DOCA_H */
