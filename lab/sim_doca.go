package lab

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/memlimit"
	"github.com/nicc-dev/nicc/simfw"
	"github.com/nicc-dev/nicc/target/doca"
	"github.com/nicc-dev/nicc/termtext"

	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/netsim"
	"github.com/nicc-dev/nicc/nicsdk"
)

// nicc sim --sdk doca: a compile's DOCA PCC program (doca_firmware.elf, nicc's stand-in for
// DOCA's device library linked in) decides in the loop, each NIC with its own engine state.

// DOCASetting is a --rlcc-* flag given to nicc sim --sdk doca.
type DOCASetting struct {
	Flag  string  `json:"flag"`  // rlcc-target, rlcc-beta or rlcc-scale (others are compiled into the program)
	Given float64 `json:"given"` // the value as given; SimOptions.Params holds it in fixed point
}

// docaRunParams are the DOCA program's run-time parameters by flag: their index
// (RLCC_DOCA_PARAM_*) and their field in nicsdk.Params.
var docaRunParams = map[string]struct {
	id    uint32
	field func(*nicsdk.Params) *uint32
}{
	"rlcc-target": {nicsdk.DOCAParamTarget, func(p *nicsdk.Params) *uint32 { return &p.Target }},
	"rlcc-beta":   {nicsdk.DOCAParamBeta, func(p *nicsdk.Params) *uint32 { return &p.Beta }},
	"rlcc-scale":  {nicsdk.DOCAParamScale, func(p *nicsdk.Params) *uint32 { return &p.Scale }},
}

// SimDOCA is what nicc sim --sdk doca reports of the DOCA program: the parameters set, and
// its counters at the end of the run (slot 0, port 0), summed over the NICs, beside the
// events the loop gave it.
type SimDOCA struct {
	Firmware  string         `json:"firmware"`
	NICs      int            `json:"nics"` // each with its own tables, as doca_pcc_dev_user_init left them
	SetParams []SimDOCAParam `json:"set_params,omitempty"`
	// SetAtNs is when SetParams were set on every NIC's live engine (SimOptions.DOCASetAtNs);
	// 0: right after init.
	SetAtNs int64 `json:"set_at_ns,omitempty"`
	// Decisions and Clamps are the counters RLCC_DOCA_COUNTER_DECISIONS and _CLAMPS.
	Decisions uint64 `json:"counter_decisions"`
	Clamps    uint64 `json:"counter_clamps"`
	// RTTEvents and Events are the RTT events and all events the loop gave the entry.
	RTTEvents int64 `json:"rtt_events"`
	Events    int64 `json:"events"`
}

// SimDOCAParam is a parameter set through doca_pcc_dev_user_set_algo_params.
type SimDOCAParam struct {
	Flag  string  `json:"flag"`
	Given float64 `json:"given"`
	Q16   uint32  `json:"q16"`
}

// docaController runs a compile's DOCA program in fwsim for every decision, through
// doca.Target's engine (each CC event a DOCA event of slot 0, port 0 on the flow's 48-byte
// context, the rate the results' rate). One emulator holds the code; each NIC's writable
// memory (the stand-in's parameter and counter tables, the program's per-port terms) is its
// own, swapped in for its decisions.
type docaController struct {
	*simfw.Controller
	fw     *doca.Firmware
	nicOf  []int           // each flow's sender NIC
	segs   []fwsim.Segment // the program's writable memory
	mem    [][]byte        // each NIC's copy of it
	cur    int             // the NIC whose memory fw holds
	report SimDOCA
}

// newDOCAController gives each of scen's NICs its own engine state around fw, the DOCA
// program opened through doca.Target.
func newDOCAController(fw *simfw.Controller, scen netsim.Scenario, opt SimOptions, rep *SimReport) (*docaController, error) {
	elf := filepath.Join(opt.Policy, artifact.DOCAFirmwareFile)
	set, err := docaSettings(opt)
	if err != nil {
		return nil, err
	}
	d := &docaController{Controller: fw, fw: fw.Engine().(*doca.Firmware),
		report: SimDOCA{Firmware: elf, NICs: scen.Hosts, SetParams: set}}
	for _, f := range scen.Flows {
		d.nicOf = append(d.nicOf, f.Src)
	}
	for _, s := range d.fw.Machine().Image().Segments() {
		if s.Write {
			d.segs = append(d.segs, s)
		}
	}
	pristine, err := d.save(nil)
	if err != nil {
		return nil, err
	}
	atInit := set
	if opt.DOCASetAtNs > 0 {
		// Set later on live engines, the parameters are tried now on a freshly initialised
		// one, so that a refusal is bad input before the run, not a run stopped half way.
		if err := d.setUp(pristine, set); err != nil {
			return nil, err
		}
		atInit = nil
		d.report.SetAtNs = opt.DOCASetAtNs
	}
	// Setting up is deterministic: every NIC's engine starts from the one state it leaves.
	if err := d.setUp(pristine, atInit); err != nil {
		return nil, err
	}
	mem, err := d.save(nil)
	if err != nil {
		return nil, err
	}
	if b := float64(len(mem)) * float64(scen.Hosts); b > memlimit.Limit {
		return nil, fmt.Errorf("%s: %d NICs, each with its own copy of the DOCA program's %d bytes of writable memory, need about %.1f GiB, over nicc's %d GiB memory limit",
			scen.Name, scen.Hosts, len(mem), b/(1<<30), memlimit.Limit>>30)
	}
	for range scen.Hosts {
		d.mem = append(d.mem, slices.Clone(mem))
	}
	d.cur = 0
	rep.Decides = fmt.Sprintf("the DOCA program %s in fwsim (%s, slot %d, port 0; each of %d NICs with its own tables as %s leaves them; %s)", elf,
		nicsdk.DOCAEntryAlgo, nicsdk.DOCASlot, scen.Hosts, nicsdk.DOCAEntryInit, docaParamsText(set, opt.DOCASetAtNs))
	return d, nil
}

// docaSettings are the parameters opt.DOCASet gives, in index order; a flag the program takes
// no run-time parameter for is an error.
func docaSettings(opt SimOptions) ([]SimDOCAParam, error) {
	var set []SimDOCAParam
	for _, s := range opt.DOCASet {
		p, ok := docaRunParams[s.Flag]
		if !ok {
			return nil, fmt.Errorf("--%s %v: compiled into the DOCA program; its run-time parameters are --rlcc-target, --rlcc-beta and --rlcc-scale", s.Flag, s.Given)
		}
		set = append(set, SimDOCAParam{Flag: s.Flag, Given: s.Given, Q16: *p.field(&opt.Params)})
	}
	slices.SortFunc(set, func(a, b SimDOCAParam) int { return int(docaRunParams[a.Flag].id) - int(docaRunParams[b.Flag].id) })
	return set, nil
}

func docaParamsText(set []SimDOCAParam, atNs int64) string {
	if len(set) == 0 {
		return "the compiled parameters"
	}
	var s []string
	for _, p := range set {
		s = append(s, fmt.Sprintf("%s %v (Q16 %d)", strings.TrimPrefix(p.Flag, "rlcc-"), p.Given, p.Q16))
	}
	when := "set after init"
	if atNs > 0 {
		when = fmt.Sprintf("the compiled parameters until %s µs, then set on every NIC", termtext.Num(float64(atNs)/1000))
	}
	return when + " through " + nicsdk.DOCAEntrySetParams + ": " + strings.Join(s, ", ")
}

// setUp starts a NIC's engine from the image's memory: doca_pcc_dev_user_init, then, unless
// they are set later (SimOptions.DOCASetAtNs), the parameters set.
func (d *docaController) setUp(pristine []byte, set []SimDOCAParam) error {
	if err := d.load(pristine); err != nil {
		return err
	}
	if err := d.fw.Boot(); err != nil {
		return &budget.CheckError{Err: err}
	}
	return d.setParams(set)
}

// setParams sets the parameters on the NIC whose memory the emulator holds, in one call of
// doca_pcc_dev_user_set_algo_params on slot 0 of port 0 (from the first parameter set to the
// last, the ones between keeping their values), as the host sets them.
func (d *docaController) setParams(set []SimDOCAParam) error {
	if len(set) == 0 {
		return nil
	}
	base := docaRunParams[set[0].Flag].id
	cur, err := d.fw.Params(0, nicsdk.DOCASlot)
	if err != nil {
		return err
	}
	var given []string
	for _, p := range set {
		cur[docaRunParams[p.Flag].id] = p.Q16
		given = append(given, fmt.Sprintf("--%s %v", p.Flag, p.Given))
	}
	values := cur[base : docaRunParams[set[len(set)-1].Flag].id+1]
	status, _, err := d.fw.SetParams(0, nicsdk.DOCASlot, base, values)
	if err != nil {
		return &budget.CheckError{Err: fmt.Errorf("%s: %w", nicsdk.DOCAEntrySetParams, err)}
	}
	if status != nicsdk.DOCAStatusOK {
		return fmt.Errorf("%s: the DOCA program refused it (%s returned DOCA_PCC_DEV_STATUS_FAIL): it takes target, beta and scale in rlcc.h's ranges with target × scale at most the compiled policy's",
			strings.Join(given, " "), nicsdk.DOCAEntrySetParams)
	}
	return nil
}

// setOnEveryNIC is the action at SimOptions.DOCASetAtNs: the parameters set on every NIC's
// live engine.
func (d *docaController) setOnEveryNIC() error {
	for n := range d.mem {
		if err := d.use(n); err != nil {
			return err
		}
		if err := d.setParams(d.report.SetParams); err != nil {
			return err
		}
	}
	return nil
}

// bytes is the memory of the NICs' copies of the program's writable memory.
func (d *docaController) bytes() float64 {
	return float64(len(d.mem)) * float64(len(d.mem[0]))
}

// save copies the program's writable memory into buf (nil: a new one).
func (d *docaController) save(buf []byte) ([]byte, error) {
	off := 0
	for _, s := range d.segs {
		buf = slices.Grow(buf, int(s.Size))[:off+int(s.Size)]
		if err := d.fw.Machine().ReadBytes(s.Addr, buf[off:]); err != nil {
			return nil, err
		}
		off += int(s.Size)
	}
	return buf, nil
}

// load puts mem into the program's writable memory.
func (d *docaController) load(mem []byte) error {
	off := 0
	for _, s := range d.segs {
		if err := d.fw.Machine().WriteBytes(s.Addr, mem[off:off+int(s.Size)]); err != nil {
			return err
		}
		off += int(s.Size)
	}
	return nil
}

// use makes NIC n's memory the emulator's.
func (d *docaController) use(n int) error {
	if n == d.cur {
		return nil
	}
	if _, err := d.save(d.mem[d.cur][:0]); err != nil {
		return err
	}
	if err := d.load(d.mem[n]); err != nil {
		return err
	}
	d.cur = n
	return nil
}

// Decide hands ev to the engine of the flow's NIC.
func (d *docaController) Decide(ev nicsdk.Event, ctx *nicsdk.FlowCtx) (uint32, int64, error) {
	if err := d.use(d.nicOf[ev.FlowID]); err != nil {
		return 0, 0, err
	}
	if ev.Type == nicsdk.EvRTT {
		d.report.RTTEvents++
	}
	d.report.Events++
	return d.Controller.Decide(ev, ctx)
}

// summary is the report, with every NIC's counters summed.
func (d *docaController) summary() (*SimDOCA, error) {
	r := d.report
	for n := range d.mem {
		if err := d.use(n); err != nil {
			return nil, err
		}
		c, err := d.fw.Counters(0, nicsdk.DOCASlot)
		if err != nil {
			return nil, err
		}
		r.Decisions += uint64(c[nicsdk.DOCACounterDecisions])
		r.Clamps += uint64(c[nicsdk.DOCACounterClamps])
	}
	return &r, nil
}
