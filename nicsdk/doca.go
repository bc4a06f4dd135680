package nicsdk

import (
	"embed"
	"encoding/binary"
	"fmt"
	"path"
)

//go:embed doca/rlcc_doca.h doca/nicc_doca_pcc_dev.h doca/nicc_doca_pcc_dev.c
var docaFiles embed.FS

// Names of the files DOCASources holds.
const (
	DOCAHeaderName     = "rlcc_doca.h"         // the DOCA entry points' bodies; includes rlcc.h
	DOCAShimHeaderName = "nicc_doca_pcc_dev.h" // nicc's stand-in for DOCA's device headers
	DOCAShimSourceName = "nicc_doca_pcc_dev.c" // the stand-in's library functions
)

// DOCASources returns the files the DOCA source compiles against beside Sources', by name:
// rlcc_doca.h, and nicc's stand-in for DOCA's device API (header and library source), which
// only nicc's own builds use. The map is a fresh copy.
func DOCASources() map[string][]byte {
	m := map[string][]byte{}
	for _, n := range []string{DOCAHeaderName, DOCAShimHeaderName, DOCAShimSourceName} {
		b, err := docaFiles.ReadFile(path.Join("doca", n))
		if err != nil {
			panic(err)
		}
		m[n] = b
	}
	return m
}

// The DOCA PCC target (doca/rlcc_doca.h around rlcc.h, built against nicc's stand-in for
// DOCA's device API, doca/nicc_doca_pcc_dev.h and .c), mirrored in Go: DOCARuntime is the
// bit-identical twin of the three entry points and of the stand-in library's tables.

// DOCA PCC event types (DOCA_PCC_DEV_EVNT_*) the DOCA entry tells apart.
const (
	DOCAEvNull           = 0
	DOCAEvCNP            = 2
	DOCAEvTX             = 3
	DOCAEvACK            = 4
	DOCAEvNACK           = 5
	DOCAEvRTT            = 6
	DOCAEvTXForAckNack   = 31
	DOCAStatusOK         = 0 // DOCA_PCC_DEV_STATUS_OK
	DOCAStatusFail       = 1 // DOCA_PCC_DEV_STATUS_FAIL
	DOCAPorts            = 4 // DOCA_PCC_DEV_MAX_NUM_PORTS (BlueField-3)
	DOCASlots            = 8 // DOCA_PCC_DEV_MAX_NUM_USER_SLOTS
	docaShimParams       = 4 // NICC_DOCA_SHIM_PARAMS
	docaShimCounters     = 4 // NICC_DOCA_SHIM_COUNTERS
	DOCAEventBytes       = 28
	DOCAResultsBytes     = 20
	DOCASlot             = 0 // RLCC_DOCA_SLOT
	DOCAParamTarget      = 0 // RLCC_DOCA_PARAM_TARGET
	DOCAParamBeta        = 1
	DOCAParamScale       = 2
	DOCAParams           = 3
	DOCACounterDecisions = 0 // RLCC_DOCA_COUNTER_DECISIONS
	DOCACounterClamps    = 1
	DOCACounters         = 2
	DOCADisabledEvents   = 1<<DOCAEvACK | 1<<DOCAEvTXForAckNack // rlcc_doca_init's bitmask
	DOCAEntryAlgo        = "doca_pcc_dev_user_algo"
	DOCAEntryInit        = "doca_pcc_dev_user_init"
	DOCAEntrySetParams   = "doca_pcc_dev_user_set_algo_params"
	// DOCAParamsTable and DOCACountersTable are the stand-in's tables in the ELF,
	// uint32_t [DOCAPorts][DOCASlots][4]: DOCATableRow is a port's and slot's row's offset.
	DOCAParamsTable       = "nicc_doca_params"
	DOCACountersTable     = "nicc_doca_counters"
	docaShimInternalAlgoR = LineRate // the stand-in's doca_pcc_dev_default_internal_algo rate
)

// DOCAEntries are the DOCA program's entry points, which its ELF must define.
var DOCAEntries = []string{DOCAEntryInit, DOCAEntryAlgo, DOCAEntrySetParams}

// DOCAShimGlobals are the global symbols nicc's stand-in library (nicc_doca_pcc_dev.c)
// defines: DOCA's device functions the entry points call, and the stand-in's tables.
var DOCAShimGlobals = []string{"doca_pcc_dev_algo_init_metadata", "doca_pcc_dev_algo_init_param", "doca_pcc_dev_algo_init_counter",
	"doca_pcc_dev_init_algo_slot", "doca_pcc_dev_default_internal_algo", DOCAParamsTable, DOCACountersTable}

// DOCAEvent is doca_pcc_dev_event_t in nicc's stand-in layout (nicc_doca_pcc_dev.h).
type DOCAEvent struct {
	Type, Subtype, Port, Flags uint8
	FlowTag, SN, Timestamp     uint32
	ReqSend, ReqRecv, RespSend uint32 // an RTT event's timestamps
}

// Bytes is the event as the stand-in lays it out.
func (e DOCAEvent) Bytes() []byte {
	b := make([]byte, DOCAEventBytes)
	attr := uint32(e.Type) | uint32(e.Subtype)<<8 | uint32(e.Port)<<16 | uint32(e.Flags)<<24
	for i, w := range []uint32{attr, e.FlowTag, e.SN, e.Timestamp, e.ReqSend, e.ReqRecv, e.RespSend} {
		binary.LittleEndian.PutUint32(b[4*i:], w)
	}
	return b
}

// DOCAEventType is the DOCA event type of a nicc event type: DOCA_PCC_DEV_EVNT_RTT,
// ROCE_CNP, ROCE_NACK or ROCE_TX; false for a type DOCA has no event for.
func DOCAEventType(t EventType) (uint8, bool) {
	switch t {
	case EvRTT:
		return DOCAEvRTT, true
	case EvCNP:
		return DOCAEvCNP, true
	case EvNACK:
		return DOCAEvNACK, true
	case EvTX:
		return DOCAEvTX, true
	}
	return 0, false
}

// DOCATableRow is the byte offset of port's and slot's row in the stand-in's parameter or
// counter table (indices masked as doca_pcc_dev_get_algo_params masks them).
func DOCATableRow(port, slot uint32) uint64 {
	return uint64((port&(DOCAPorts-1))*DOCASlots+slot&(DOCASlots-1)) * 4 * docaShimParams
}

// DOCAAttrBytes is doca_pcc_dev_attr_t with algo_slot slot (4 bits) and the overload bit.
func DOCAAttrBytes(slot uint32, overload bool) []byte {
	w := slot & 0xf
	if overload {
		w |= 1 << 4
	}
	return binary.LittleEndian.AppendUint32(nil, w)
}

// DOCARuntime is the DOCA entry points and the stand-in library's state: every port's
// parameter and counter table (indices folded by masking, as the stand-in does). Its zero
// value is the firmware's tables before doca_pcc_dev_user_init. The C entry reads a port's
// parameters as the terms init and set_algo_params work out from them (rlcc_doca_terms);
// the twin decides from the parameters themselves, so terms that do not follow the
// parameters show as a mismatch. Decisions before Init are outside the twin (DOCA runs
// init first): the C terms are still zero then.
type DOCARuntime struct {
	Compiled Params // the compiled parameters: defaults, and min rate, init rate, base RTT
	Params   [DOCAPorts][DOCASlots][docaShimParams]uint32
	Counters [DOCAPorts][DOCASlots][docaShimCounters]uint32
}

// Init is doca_pcc_dev_user_init: every port's slot DOCASlot takes the compiled target,
// beta and scale, and its counters start at zero. It returns the disabled-event bitmask.
func (r *DOCARuntime) Init() uint32 {
	var defaults [docaShimParams]uint32
	defaults[DOCAParamTarget] = r.Compiled.Target
	defaults[DOCAParamBeta] = r.Compiled.Beta
	defaults[DOCAParamScale] = r.Compiled.Scale
	for port := range DOCAPorts {
		r.Params[port][DOCASlot] = defaults
		r.Counters[port][DOCASlot] = [docaShimCounters]uint32{}
	}
	return DOCADisabledEvents
}

// ParamsOf is doca_pcc_dev_get_algo_params(port, slot)'s first DOCAParams words.
func (r *DOCARuntime) ParamsOf(port, slot uint32) [DOCAParams]uint32 {
	p := r.Params[port&(DOCAPorts-1)][slot&(DOCASlots-1)]
	return [DOCAParams]uint32{p[0], p[1], p[2]}
}

// CountersOf is doca_pcc_dev_get_counters(port, slot)'s first DOCACounters words.
func (r *DOCARuntime) CountersOf(port, slot uint32) [DOCACounters]uint32 {
	c := r.Counters[port&(DOCAPorts-1)][slot&(DOCASlots-1)]
	return [DOCACounters]uint32{c[0], c[1]}
}

// DOCAParamsOK is rlcc_doca_params_ok: target, beta and scale in rlcc.h's ranges (Validate,
// compiled being valid), and the observation's lower clamp no lower than the compiled
// policy's.
func DOCAParamsOK(target, beta, scale uint32, compiled Params) bool {
	p := compiled
	p.Target, p.Beta, p.Scale = target, beta, scale
	return p.Validate() == nil && ObsMin(p) >= ObsMin(compiled)
}

// SetParams is doca_pcc_dev_user_set_algo_params(port, slot, base, len(values), values,
// get_algo_params(port, slot) + base): all of values are applied, or (DOCAStatusFail) none;
// a port the device does not have (DOCAPorts or more) is refused.
func (r *DOCARuntime) SetParams(port, slot, base uint32, values []uint32) uint32 {
	num := uint32(len(values))
	if port >= DOCAPorts || slot != DOCASlot || base > DOCAParams || num > DOCAParams-base {
		return DOCAStatusFail
	}
	row := &r.Params[port&(DOCAPorts-1)][slot&(DOCASlots-1)]
	v := [DOCAParams]uint32{row[0], row[1], row[2]}
	copy(v[base:], values)
	if !DOCAParamsOK(v[DOCAParamTarget], v[DOCAParamBeta], v[DOCAParamScale], r.Compiled) {
		return DOCAStatusFail
	}
	copy(row[base:], values)
	return DOCAStatusOK
}

// Algo is doca_pcc_dev_user_algo on ctx, the flow's algorithm context, for an event of
// algorithm slot slot: the results' rate and rtt_req (rlcc_doca.h says what it does). The
// policy, its words and its output are OnEventEx's.
func (r *DOCARuntime) Algo(ev DOCAEvent, slot uint32, ctx *FlowCtx, words int, out PolicyOut,
	policy func(x [4]int32, state []uint32) int32) (rate, rttReq uint32) {
	if slot != DOCASlot {
		return docaShimInternalAlgoR, 0
	}
	p := r.Compiled
	cur := r.ParamsOf(uint32(ev.Port), slot)
	p.Target, p.Beta, p.Scale = cur[DOCAParamTarget], cur[DOCAParamBeta], cur[DOCAParamScale]
	fresh := ctx[CtxFlags]&FlagInit == 0
	nev := Event{Type: EvTX}
	if ev.Type == DOCAEvRTT {
		nev = Event{Type: EvRTT, RTTNs: ev.Timestamp - ev.ReqSend}
	}
	rate = OnEventEx(nev, ctx, p, words, out, policy)
	if fresh || ev.Type == DOCAEvRTT || ev.Type == DOCAEvCNP || ev.Type == DOCAEvNACK {
		rttReq = 1
	}
	if ev.Type == DOCAEvRTT {
		c := &r.Counters[ev.Port&(DOCAPorts-1)][slot&(DOCASlots-1)]
		c[DOCACounterDecisions]++
		if rate == p.MinRate || rate == LineRate {
			c[DOCACounterClamps]++
		}
	}
	return rate, rttReq
}

// DOCAEntriesC is the C that defines the three DOCA entry points around a policy, after
// #include "rlcc_doca.h" and the policy's definition: p as ParamsName, then each entry
// calling rlcc_doca.h's body. words and out are HandlerExC's; a stateless policy (words 0)
// is called as int32_t policy(const int32_t *x). It panics on words or out HandlerExC
// refuses.
func DOCAEntriesC(p Params, policy string, words int, out PolicyOut) string {
	checkEx(words, out)
	fns := policy + ", (rlcc_policy_state_fn)0"
	if words > 0 {
		fns = "(rlcc_policy_fn)0, " + policy
	}
	return p.C(ParamsName) + fmt.Sprintf(`
RLCC_DOCA_ENTRY void doca_pcc_dev_user_algo(doca_pcc_dev_algo_ctxt_t *algo_ctxt, doca_pcc_dev_event_t *event,
			    const doca_pcc_dev_attr_t *attr, doca_pcc_dev_results_t *results)
{
	rlcc_doca_algo(algo_ctxt, event, attr, results, &%[1]s, %[2]s, %[3]d, %[4]s);
}

void doca_pcc_dev_user_init(uint32_t *disable_event_bitmask)
{
	rlcc_doca_init(disable_event_bitmask, &%[1]s);
}

doca_pcc_dev_error_t doca_pcc_dev_user_set_algo_params(uint32_t port_num, uint32_t algo_slot, uint32_t param_id_base,
						       uint32_t param_num, const uint32_t *new_param_values,
						       uint32_t *params)
{
	return rlcc_doca_set_params(port_num, algo_slot, param_id_base, param_num, new_param_values, params, &%[1]s);
}
`, ParamsName, fns, words, out.C())
}
