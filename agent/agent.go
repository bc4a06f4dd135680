// Package agent answers another simulator's congestion-control requests with a policy nicc
// reads (a compile's firmware or DOCA program in fwsim, its golden model, a model file's float
// teacher): today NVIDIA's CCsim, through package ccsim. Each of the simulator's flows keeps
// its own 48-byte context and each host its own engine, as on a NIC.
package agent

import (
	"cmp"
	"fmt"
	"math"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/ccsim"
	"github.com/nicc-dev/nicc/lab"
	"github.com/nicc-dev/nicc/netsim"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/simfw"
)

// CCsimBaseRTTNs is the base RTT NVlabs/RLCC's agent divides CCsim's RTTs by (BASE_RTT in its
// env/utils): the RTT inflation its policies were trained on.
const CCsimBaseRTTNs = 8192

// Bounds on what one agent keeps, whatever its requests say: CCsim's largest scenarios are
// 64 sending hosts, 16,384 QPs a host (all-to-all) and 8,192 flows in all. A host's engine is
// a firmware image in fwsim, about 10 MB (64 of them: 637 MB resident).
const (
	MaxHosts     = 128
	MaxHostFlows = 1 << 14
	MaxFlows     = 1 << 17
)

// Options are what answers CCsim's requests.
type Options struct {
	// Sim names the policy as nicc sim does: Policy (a model file, a compile directory), Golden,
	// SDK, Format, Inputs, Model, Params, ParamSources, Handler, Core. Its network is unused.
	Sim lab.SimOptions
	// BaseRTTNs is the base RTT a policy whose parameters leave it 0 decides under; 0 is
	// CCsimBaseRTTNs.
	BaseRTTNs uint32
	// Multiplier, when set, answers every request with it (Q16) and runs no policy.
	Multiplier uint32
}

// Agent answers CCsim's requests with a policy: each (host, flow tag) a flow with its own
// 48-byte context, started as nicc sim starts a flow; each request an RTT event of that flow,
// decided on the context after its rate word was set to the rate CCsim reports (the rate in
// force is the simulator's); the answer the multiplier from that rate to the one the decision
// set (a_t within the handler's clamps), in Q16. A compile's firmware or DOCA program runs
// in fwsim, one engine per CCsim host, as each host is a NIC.
type Agent struct {
	Report Report
	opt    Options
	shared netsim.Controller  // golden or float: one for every host
	hosts  map[uint32]*engine // firmware: each host's own
	spare  *engine            // the engine New opened (checking the policy), for the first host
	flows  map[ccsim.Flow]*agentFlow
	// seenHosts are the hosts whose flows reported.
	seenHosts map[uint32]bool
}

// Report says what decides, and what the agent saw.
type Report struct {
	Policy       string                `json:"policy"`
	PolicySHA256 string                `json:"policy_sha256,omitempty"`
	Decides      string                `json:"decides"`
	Core         string                `json:"core,omitempty"`
	Layout       *artifact.InputLayout `json:"rlcc_layout,omitempty"`
	Params       *artifact.RLCCParams  `json:"rlcc_params,omitempty"`
	Warnings     []string              `json:"warnings,omitempty"`
	Hosts        int                   `json:"hosts"`
	Flows        int                   `json:"flows"`
	Decisions    int64                 `json:"decisions"`
	// RateDrift counts requests whose rate is not the one the flow's last answer asked for
	// (its rate times the multiplier, within CCsim's clamps and 1 LSB): answers the simulator
	// did not apply.
	RateDrift int64 `json:"rate_drift"`
	// Cycles are the fwsim cycles of the firmware's decisions.
	Cycles *simfw.Cycles `json:"decision_cycles,omitempty"`
}

type agentFlow struct {
	id     uint32 // dense over the agent (shared controllers) or the host (engines)
	host   *engine
	ctx    nicsdk.FlowCtx
	nowNs  uint64 // the flow's clock: the sum of its reports' intervals
	asked  uint64 // the rate the last answer asked for, fxp20 × 2^16; 0 none yet
	lastIn uint32 // the rate the last request reported
}

// engine is one host's NIC running a compile's program.
type engine struct {
	ctrl  netsim.Controller
	fw    timed
	flows uint32
}

// timed is a controller running firmware in fwsim: its cycles.
type timed interface {
	LastCycles() uint64
	Cycles() *simfw.Cycles
}

// New reads the policy opt names, checked as nicc sim checks it.
func New(opt Options) (*Agent, error) {
	a := &Agent{opt: opt, hosts: map[uint32]*engine{}, flows: map[ccsim.Flow]*agentFlow{}, seenHosts: map[uint32]bool{}}
	a.opt.Sim.PathRTTNs = cmp.Or(opt.BaseRTTNs, CCsimBaseRTTNs)
	if opt.Multiplier != 0 {
		if opt.Sim.Policy != "" {
			return nil, fmt.Errorf("a fixed multiplier answers every request: it takes no policy (%s)", opt.Sim.Policy)
		}
		a.Report.Decides = fmt.Sprintf("the fixed multiplier %s (Q16 %d)", fmtQ16(opt.Multiplier), opt.Multiplier)
		return a, nil
	}
	switch opt.Sim.Policy {
	case "swift", "dcqcn":
		return nil, fmt.Errorf("the agent answers with an RL-CC policy (a model file or a compile directory), not %s: CCsim runs its own reference algorithms", opt.Sim.Policy)
	}
	ctrl, rep, err := a.controller()
	if err != nil {
		return nil, err
	}
	a.Report = Report{Policy: opt.Sim.Policy, PolicySHA256: rep.PolicySHA256, Decides: rep.Decides, Core: rep.Core,
		Layout: rep.Layout, Params: rep.Params, Warnings: rep.Warnings}
	switch c := ctrl.(type) {
	case *netsim.RLCC, *netsim.FloatRLCC:
		a.shared = ctrl
	case timed:
		a.Report.Decides += ", each CCsim host its own engine"
		a.spare = &engine{ctrl: ctrl, fw: c}
	default:
		return nil, fmt.Errorf("%s: a %T cannot answer CCsim", opt.Sim.Policy, ctrl)
	}
	return a, nil
}

// controller is the policy's controller on a host of its own, under a scenario of one NIC
// whose flows are CCsim's flows of one host.
func (a *Agent) controller() (netsim.Controller, *lab.SimReport, error) {
	scen := netsim.Scenario{Name: "a CCsim host", Hosts: 1, Flows: make([]netsim.Flow, MaxHostFlows), Long: -1}
	return lab.OpenController(a.opt.Sim, scen)
}

// engine is host's NIC, opened on its first flow: the first host takes the one New opened.
func (a *Agent) engine(host uint32) (*engine, error) {
	if e, ok := a.hosts[host]; ok {
		return e, nil
	}
	if e := a.spare; e != nil {
		a.spare, a.hosts[host] = nil, e
		return e, nil
	}
	if len(a.hosts) >= MaxHosts {
		return nil, fmt.Errorf("more than %d hosts", MaxHosts)
	}
	ctrl, _, err := a.controller()
	if err != nil {
		return nil, err
	}
	e := &engine{ctrl: ctrl, fw: ctrl.(timed)}
	a.hosts[host] = e
	return e, nil
}

// flow is the flow r reports on, started on its first request.
func (a *Agent) flow(r ccsim.Request) (*agentFlow, error) {
	key := r.Flow()
	if f, ok := a.flows[key]; ok {
		return f, nil
	}
	if len(a.flows) >= MaxFlows {
		return nil, fmt.Errorf("more than %d flows", MaxFlows)
	}
	f := &agentFlow{id: uint32(len(a.flows))}
	ctrl := a.shared
	if a.shared == nil && a.opt.Multiplier == 0 {
		e, err := a.engine(r.Host)
		if err != nil {
			return nil, err
		}
		if e.flows >= MaxHostFlows {
			return nil, fmt.Errorf("more than %d flows on host %d", MaxHostFlows, r.Host)
		}
		f.host, f.id, ctrl = e, e.flows, e.ctrl
		e.flows++
	}
	if ctrl != nil {
		ctrl.Init(&f.ctx)
	}
	a.flows[key] = f
	a.seenHosts[r.Host] = true
	a.Report.Flows, a.Report.Hosts = len(a.flows), len(a.seenHosts)
	return f, nil
}

// Decide answers one request.
func (a *Agent) Decide(r ccsim.Request) (ccsim.Decision, error) {
	f, err := a.flow(r)
	if err != nil {
		return ccsim.Decision{}, err
	}
	a.Report.Decisions++
	a.checkApplied(f, r)
	f.nowNs += uint64(r.IntervalNs)
	ev := nicsdk.Event{Type: nicsdk.EvRTT, RTTNs: r.RTTNs, TimestampNs: f.nowNs, FlowID: f.id}
	var d ccsim.Decision
	switch {
	case a.opt.Multiplier != 0:
		d.MultiplierQ16 = a.opt.Multiplier
	case a.shared != nil:
		if d, err = a.decideShared(ev, f, r.RateFxp20); err != nil {
			return d, err
		}
	default:
		if d, err = a.decideEngine(ev, f, r.RateFxp20); err != nil {
			return d, err
		}
	}
	f.asked = uint64(r.RateFxp20) * uint64(d.MultiplierQ16)
	return d, nil
}

// checkApplied counts a request whose rate is not what the flow's last answer asked for.
func (a *Agent) checkApplied(f *agentFlow, r ccsim.Request) {
	defer func() { f.lastIn = r.RateFxp20 }()
	if f.asked == 0 {
		return
	}
	want := float64(f.asked) / ccsim.Q16One
	got := float64(r.RateFxp20)
	switch {
	case math.Abs(got-want) <= 1:
	case want >= nicsdk.LineRate && got == nicsdk.LineRate: // clamped at line rate
	case want < got && got <= float64(f.lastIn): // clamped at the simulator's min rate
	default:
		a.Report.RateDrift++
	}
}

// decideShared runs the golden model or the float teacher on the flow's context.
func (a *Agent) decideShared(ev nicsdk.Event, f *agentFlow, rate uint32) (ccsim.Decision, error) {
	if c, ok := a.shared.(*netsim.FloatRLCC); ok {
		c.SetRate(&f.ctx, rate)
	} else {
		f.ctx[nicsdk.CtxRate] = rate
	}
	set, _, err := a.shared.Decide(ev, &f.ctx)
	return ccsim.Decision{MultiplierQ16: answer(set, rate)}, err
}

// decideEngine runs the flow's host's program in fwsim on its context.
func (a *Agent) decideEngine(ev nicsdk.Event, f *agentFlow, rate uint32) (ccsim.Decision, error) {
	if f.ctx[nicsdk.CtxFlags]&nicsdk.FlagInit != 0 {
		f.ctx[nicsdk.CtxRate] = rate
	}
	set, _, err := f.host.ctrl.Decide(ev, &f.ctx)
	return ccsim.Decision{MultiplierQ16: answer(set, rate), Cycles: f.host.fw.LastCycles()}, err
}

// answer is the multiplier that takes CCsim's rate cur to the rate the decision set, in Q16:
// the policy's a_t within the handler's clamps. Sending a_t itself would let CCsim's own
// clamps decide, and its min rate is below the compiled one. A rate of 0 is held.
func answer(set, cur uint32) uint32 {
	if cur == 0 {
		return ccsim.Q16One
	}
	return uint32(min(math.Round(float64(set)*ccsim.Q16One/float64(cur)), math.MaxUint32))
}

// Finish is the report, with the firmware's cycles over every host.
func (a *Agent) Finish() Report {
	r := a.Report
	var sum, ns float64
	for _, e := range a.hosts {
		c := e.fw.Cycles()
		if c.Decisions == 0 {
			continue
		}
		if r.Cycles == nil {
			r.Cycles = &simfw.Cycles{}
		}
		r.Cycles.Decisions += c.Decisions
		r.Cycles.Max, r.Cycles.MaxNs = max(r.Cycles.Max, c.Max), max(r.Cycles.MaxNs, c.MaxNs)
		sum += c.Mean * float64(c.Decisions)
		ns += c.MeanNs * float64(c.Decisions)
	}
	if r.Cycles != nil {
		r.Cycles.Mean, r.Cycles.MeanNs = sum/float64(r.Cycles.Decisions), ns/float64(r.Cycles.Decisions)
	}
	return r
}

// fmtQ16 is a Q16 multiplier as a real number.
func fmtQ16(q uint32) string { return fmt.Sprintf("%.6g", float64(q)/ccsim.Q16One) }
