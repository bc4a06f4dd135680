package compiler

import (
	"fmt"
	"strings"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/nicsdk"
)

// docaRef is where the DOCA names nicc uses were checked: NVIDIA's public DOCA SDK API
// reference (Doxygen pages generated 2025-08-13, doca_pcc_dev*.h) and the DOCA PCC guide.
const (
	docaRefAPI   = "DOCA SDK API reference (Doxygen, 2025-08-13), "
	docaRefGuide = "DOCA PCC programming guide (docs.nvidia.com/doca/sdk/doca-pcc, v2.5 to v3.3)"
)

// docaNames lists every DOCA name the DOCA source and nicc's stand-in use, with the page
// it was checked against.
var docaNames = [][2]string{
	{"doca_pcc_dev_user_algo(algo_ctxt, event, attr, results)", docaRefAPI + "group DOCA PCC Device; " + docaRefGuide},
	{"doca_pcc_dev_user_init(uint32_t *disable_event_bitmask)", docaRefAPI + "group DOCA PCC Device"},
	{"doca_pcc_dev_user_set_algo_params(port_num, algo_slot, param_id_base, param_num, new_param_values, params)", docaRefAPI + "group DOCA PCC Device"},
	{"doca_pcc_dev_default_internal_algo", docaRefAPI + "group DOCA PCC Device"},
	{"doca_pcc_dev_algo_ctxt_t (mlnx_cc_algo_ctxt_t: uint32_t data[12])", docaRefAPI + "struct mlnx_cc_algo_ctxt_t"},
	{"doca_pcc_dev_attr_t (algo_slot:4, overload:1)", docaRefAPI + "struct mlnx_cc_attr_t"},
	{"doca_pcc_dev_event_t (opaque: read with getters)", docaRefAPI + "group DOCA PCC Device, doca_pcc_dev_user_algo"},
	{"doca_pcc_dev_event_general_attr_t (ev_type:8, ev_subtype:8, port_num:8, flags:8)", docaRefAPI + "struct mlnx_cc_event_general_attr_t"},
	{"doca_pcc_dev_results_t: rate, rtt_req (+ probe_type_slot, credits, reload_credits)", docaRefAPI + "struct doca_pcc_dev_results"},
	{"DOCA_PCC_DEV_LOG_MAX_RATE 20, DOCA_PCC_DEV_MAX_RATE (1U << 20): rate fxp20 in (0, 1] of line rate", docaRefAPI + "group DOCA PCC Device; doca_pcc_dev_user_algo's results"},
	{"DOCA_PCC_DEV_EVNT_NULL 0, DOCA_PCC_DEV_EVNT_ROCE_CNP 2, DOCA_PCC_DEV_EVNT_ROCE_TX 3, DOCA_PCC_DEV_EVNT_ROCE_ACK 4, " +
		"DOCA_PCC_DEV_EVNT_ROCE_NACK 5, DOCA_PCC_DEV_EVNT_RTT 6, DOCA_PCC_DEV_EVNT_ROCE_TX_FOR_ACK_NACK 31", docaRefAPI + "enum doca_pcc_dev_event_type_enum"},
	{"doca_pcc_dev_get_ev_attr(event)", docaRefAPI + "group DOCA PCC Device Event (doca_pcc_dev_event.h)"},
	{"doca_pcc_dev_get_timestamp(event): 32 bits, 1 ns", docaRefAPI + "group DOCA PCC Device Event"},
	{"doca_pcc_dev_get_rtt_req_send_timestamp(event): RTT events only, 1 ns", docaRefAPI + "group DOCA PCC Device Event"},
	{"doca_pcc_dev_error_t: DOCA_PCC_DEV_STATUS_OK 0, DOCA_PCC_DEV_STATUS_FAIL 1", docaRefAPI + "group DOCA PCC Device Common"},
	{"DOCA_PCC_DEV_MAX_NUM_PORTS (4 on BlueField-3)", docaRefAPI + "group DOCA PCC Device Common"},
	{"DOCA_PCC_DEV_MAX_NUM_USER_SLOTS 8, DOCA_PCC_DEV_MAX_NUM_PARAMS_PER_ALGO 0x26, DOCA_PCC_DEV_MAX_NUM_COUNTERS_PER_ALGO 0x3F", docaRefAPI + "group DOCA PCC Device"},
	{"struct doca_pcc_dev_algo_meta_data (algo_id, algo_major_version, algo_minor_version, algo_desc_size, algo_desc_addr)", docaRefAPI + "struct doca_pcc_dev_algo_meta_data"},
	{"doca_pcc_dev_algo_init_metadata, doca_pcc_dev_algo_init_param, doca_pcc_dev_algo_init_counter, doca_pcc_dev_init_algo_slot", docaRefAPI + "group DOCA PCC Device Algorithm Access"},
	{"doca_pcc_dev_get_algo_params(port_num, algo_slot), doca_pcc_dev_get_counters(port_num, algo_slot)", docaRefAPI + "group DOCA PCC Device Algorithm Access"},
	{"<doca_pcc_dev.h>, <doca_pcc_dev_event.h>, <doca_pcc_dev_algo_access.h>", docaRefAPI + "file list"},
	{"DPACC, the DOCA PCC application, mlxconfig USER_PROGRAMMABLE_CC=1", docaRefGuide},
}

// docaUnchecked lists what could not be checked without DOCA's SDK and a BlueField-3.
var docaUnchecked = []string{
	"That the source builds with DPACC and links with DOCA's device library: nicc builds it only against its own stand-in (nicc_doca_pcc_dev.h), whose declarations follow the reference but are not NVIDIA's headers.",
	"The event's layout (opaque in DOCA; nicc's stand-in has its own) and bit-field placement in doca_pcc_dev_attr_t and doca_pcc_dev_event_general_attr_t on the DPA compiler.",
	"That doca_pcc_dev_algo_ctxt_t is exactly 12 words with no padding (the source refuses to compile otherwise), and that the context of a new flow is all zeros (RL-CC initialises a flow whose flags word lacks its init bit).",
	"Which array doca_pcc_dev_user_set_algo_params' params points at: the reference says it holds \"beginning of the current parameters to be changed\"; the source reads the current values with doca_pcc_dev_get_algo_params and writes the new ones to params[0 .. param_num - 1].",
	"That the RTT is doca_pcc_dev_get_timestamp(event) - doca_pcc_dev_get_rtt_req_send_timestamp(event) on one clock, modulo 2^32, and whether the responder's turnaround should be subtracted.",
	"How the hardware treats rtt_req (requested here on a new flow's first event, on each RTT response and on CNP and NACK events) and whether a lost probe is retried.",
	"The disabled-event bitmask's meaning (bit n disables event type n, as in DOCA's samples), and that DPA threads may race on the counters (plain increments).",
	"The cycles on the DPA: fwsim's profile is an assumption; doca_pcc_dev_get_counters, the one DOCA library call in doca_pcc_dev_user_algo, is timed with nicc's stand-in, not DOCA's; doca_pcc_dev_user_set_algo_params and doca_pcc_dev_user_init are not timed.",
	"That DOCA changes the parameters only through doca_pcc_dev_user_set_algo_params and starts each slot at the declared defaults (doca_pcc_dev_init_algo_slot): the entry reads the port's precomputed terms (rlcc_doca_terms), which init and set_algo_params keep; parameters that DOCA's library wrote some other way (restored host-set values after a reload, say) would not reach the decisions, which would keep the values last accepted.",
	"Whether DOCA's library serialises doca_pcc_dev_user_set_algo_params against running decisions (the reference does not say), so the source assumes it does not: each port's precomputed terms (rlcc_doca.h, rlcc_doca_terms) have two copies, set_algo_params writes the spare one whole and publishes it with a release store of its index, and a decision reads the index with acquire order and then that copy, the old terms or the new, never a mix (nicc's tests stop set_algo_params at every instruction in fwsim and run a decision on what it left). It assumes one set_algo_params call at a time per port (two racing each other would write the same spare copy and could leave DOCA's parameter table and the terms with different accepted sets), and that a decision reads its copy before a second later call of the same port rewrites it (its reads follow its load of the index, before the policy runs). A port number the device does not have (DOCA_PCC_DEV_MAX_NUM_PORTS or more) is refused with DOCA_PCC_DEV_STATUS_FAIL.",
	"How the host sets parameters at run time (the PPCC access register, e.g. with mlxreg) and reads the counters: syntax not checked.",
}

// docaReadme is the README the DOCA target writes beside its source.
func docaReadme(p nicsdk.Params) string {
	var b strings.Builder
	fmt.Fprintf(&b, `# DOCA PCC user algorithm (generated by nicc compile --sdk doca)

%[1]s is a DOCA PCC device program: the RL-CC policy nicc compiled (%[2]s, included
from %[3]s) inside nicc's fixed-point RL-CC runtime (rlcc.h), behind DOCA's entry points
doca_pcc_dev_user_algo, doca_pcc_dev_user_init and doca_pcc_dev_user_set_algo_params
(rlcc_doca.h says what each does). It is the same policy and runtime as %[4]s's
%[5]s, and nicc verified it the same way: golden == host C == fwsim over event sequences
(see report.json, "doca").

## Files

- %[1]s: the entry points; with NICC_DOCA_SHIM defined it builds against nicc's stand-in,
  otherwise against DOCA's <doca_pcc_dev.h>, <doca_pcc_dev_event.h>, <doca_pcc_dev_algo_access.h>.
- rlcc_doca.h, rlcc.h, nicsdk.h, %[3]s, %[2]s.h: headers and the policy it includes.
- %[6]s, %[7]s: nicc's stand-in for DOCA's device API, for nicc's own builds only.
  Do not build them with DOCA's toolchain.

## Build with DOCA's toolchain

On a host with the DOCA SDK (DPACC under /opt/mellanox/doca/tools):

1. Enable programmable congestion control on the device and power-cycle:
   mlxconfig -d <mlx_device> -y s USER_PROGRAMMABLE_CC=1
2. Take DOCA's PCC application (/opt/mellanox/doca/applications/pcc) and replace its
   reaction-point device sources (the RTT template's device .c files) with %[1]s; put the
   headers and %[3]s on its device include path.
3. Build the application as DOCA's guide says (meson/ninja; its device build runs DPACC on
   the device sources with -I/opt/mellanox/doca/include and links the doca_pcc_dev library).
   Do not define NICC_DOCA_SHIM. The code is C99 with four GCC builtins (__builtin_clz,
   __builtin_clzll, and __atomic_load_n and __atomic_store_n on a uintptr_t) and the
   always_inline attribute.
4. Run the application on the device (doca_pcc -d <ib device>): it loads the DPA program and
   starts the algorithm in slot 0 of every port.

## Parameters and counters

| id | parameter | default (compiled) | range |
|---|---|---|---|
| 0 | target, Q16 | %[8]d (%.6[9]g) | [0, 2^20]; and ceil(target x scale / 2^16) <= %[10]d |
| 1 | beta, Q16 | %[11]d (%.6[12]g) | [0, 2^24] |
| 2 | scale, Q16 | %[13]d (%.6[14]g) | [1, 2^24]; and the target condition |

The target condition keeps the observation's lower clamp, -ceil(target x scale / 2^16), at or
above the compiled one, so the policy never sees an input outside the range it was proven
exact on. doca_pcc_dev_user_set_algo_params applies all new values or, when any is out of
range or the port is not one the device has, none (DOCA_PCC_DEV_STATUS_FAIL). Min rate %[15]d, init rate %[16]d (fxp20) and base RTT
%[17]d ns (0: learned) are compiled in.

Counters: 0 decisions (RTT events), 1 decisions whose new rate is at min rate or line rate.

## DOCA names used, and where each was checked

`, artifact.DOCASourceFile, artifact.EntryPolicy, artifact.EntryPolicy+".c", artifact.HandlerFile, artifact.EntryHandler, nicsdk.DOCAShimHeaderName,
		nicsdk.DOCAShimSourceName, p.Target, float64(p.Target)/nicsdk.Q16One, -nicsdk.ObsMin(p),
		p.Beta, float64(p.Beta)/nicsdk.Q16One, p.Scale, float64(p.Scale)/nicsdk.Q16One, p.MinRate, p.InitRate, p.BaseRTT)
	for _, n := range docaNames {
		fmt.Fprintf(&b, "- %s: %s\n", n[0], n[1])
	}
	b.WriteString("\n## Not checked without DOCA's SDK and hardware\n\n")
	for _, u := range docaUnchecked {
		fmt.Fprintf(&b, "- %s\n", u)
	}
	return b.String()
}
