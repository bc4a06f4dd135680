package lab

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/compiler"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/memlimit"
	"github.com/nicc-dev/nicc/simfw"
	"github.com/nicc-dev/nicc/target"
	"github.com/nicc-dev/nicc/target/abi"
	"github.com/nicc-dev/nicc/target/doca"
	"github.com/nicc-dev/nicc/termtext"

	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/netsim"
	"github.com/nicc-dev/nicc/nicsdk"
)

// SimOptions say what nicc sim runs: a scenario, a policy deciding for every flow, the
// network and the run.
type SimOptions struct {
	Scenario string // many-to-one, all-to-all, long-short or workload
	// Flows is many-to-one's flow count, all-to-all's and workload's host count, long-short's
	// short flows; 0 takes DefaultSimFlows (workload: DefaultWorkloadHosts).
	Flows int
	// StartWindowNs, when set, starts each flow later by its own seeded draw, uniform in
	// [lo, hi] ns (CCsim starts its flows in U(1, 2) ms); zero starts them as the scenario
	// does.
	StartWindowNs [2]int64
	// Sizes and Load are a workload's flow-size distribution (netsim.SizeCDFs by name; ""
	// websearch) and its offered load per host link (0: DefaultWorkloadLoad).
	Sizes string
	Load  float64
	// Policy is a model file (the float teacher), a compile output directory (its firmware in
	// fwsim, or with Golden its integer model), or swift or dcqcn.
	Policy string
	Golden bool
	// SDK is the target whose program a compile directory runs: nil or abi.Target its
	// firmware.elf (nicc_on_event), doca.Target its DOCA PCC program, doca_firmware.elf
	// (compiled with --sdk doca).
	SDK target.Target
	// DOCASet are the --rlcc-* flags given with doca.Target: target, beta and scale (their values
	// Params') are set through doca_pcc_dev_user_set_algo_params after init on every NIC.
	DOCASet []DOCASetting
	// DOCASetAtNs, when set, sets DOCASet at that simulated time, in (0, the duration), on
	// every NIC's live engine instead (decisions that start from then on see them).
	DOCASetAtNs int64
	Format      *model.FileFormat // a model file's format; nil detects it
	Inputs      []string          // renames a model file's inputs
	Model       string            // a compile directory's model file, when it has moved
	// Params are a model file's RL-CC parameters: those ParamSources names (the flags set)
	// over the file's over the defaults (see CompileOptions.Params); a compile runs under its
	// own. A base RTT of 0 runs as the scenario's path RTT, for every RL-CC policy alike
	// (simBaseRTT), unless learnBaseRTT.
	Params       golden.Params
	ParamSources artifact.ParamSources
	// learnBaseRTT leaves a base RTT of 0 learned by each flow: diff --closed-loop's teacher
	// beside a DOCA program, which nicc sim cannot provision. PathRTTNs, when set, is the base
	// RTT 0 becomes instead of the network's empty-path RTT (an agent's simulator's).
	learnBaseRTT bool
	PathRTTNs    uint32
	// Handler is how a model file's inputs are read: HandlerAuto by their names, HandlerRLCC
	// as the RL-CC window by position (a compile's --handler rlcc); HandlerNone is refused.
	Handler artifact.Handler
	// noHandlerFlag: the command has no --handler (diff --closed-loop), so errors do not
	// suggest it.
	noHandlerFlag bool
	// LatencyNs fixes every decision's latency; 0 is the firmware's measured cycles at the
	// core's clock (× the threads sharing its pipeline), and no latency for other policies.
	LatencyNs int64
	Threads   int    // engine threads per NIC; 0 is the core profile's
	Core      string // the core profile; "" is a compile directory's, else DefaultCore
	// Net is the network and the run: zero fields take netsim's defaults (ClockPPM 0: every
	// NIC on one ideal clock; nicc sim's default is netsim.StandardClockPPM).
	Net netsim.Config
	// Progress, if set, hears of the simulated time done, in µs.
	Progress compiler.ProgressFunc
	// PFC is PFCAuto ("" too: on for DCQCN only), PFCOn, PFCPort or PFCOff.
	PFC string
	// ECN is the switch's marking: "auto" ("" too: netsim.DefaultECN for DCQCN only, none
	// for the others), "off", or KMIN,KMAX,PMAX (bytes, with a KB or MB suffix of 1024s,
	// and the marking probability at KMAX).
	ECN string
	// Swift and DCQCN set the references' parameters (--policy swift, dcqcn): NAME=VALUE,...
	// of the controller's Params, the others at netsim.DefaultSwift's or DefaultDCQCN's.
	Swift, DCQCN string
	// Health are the limits the run is judged by (SimReport.Health); nil is DefaultHealth.
	Health *HealthLimits
	// PlotDir, when set, gets the flows' rates and the queue over time (SimPlotBase .png, .svg).
	PlotDir string
}

// nicc sim's --pfc: whether the switch pauses the senders before its buffer fills.
const (
	PFCAuto = "auto" // on for DCQCN, which RoCE runs lossless; off for every other policy
	PFCOn   = "on"   // every sender pauses while the buffer is past Xoff
	PFCPort = "port" // per ingress port, as PFC pauses (netsim.Config.PFCPerPort)
	PFCOff  = "off"
)

// clocksText says what clocks the NICs ran on (SimNet.ClockPPM).
func clocksText(ppm float64) string {
	if ppm > 0 {
		return "NIC clocks ±" + termtext.Num(ppm) + " ppm"
	}
	return "one ideal clock for every NIC"
}

// SimNet is the network and run options of nicc sim (netsim.Config).
type SimNet = netsim.Config

// nicc sim's --clock-ppm: SimNet.ClockPPM's default, IEEE 802.3's ±100 ppm, and its bound;
// and the bounds of --link-gbps, of every time flag and of --threads (netsim's).
const (
	StandardClockPPM = netsim.StandardClockPPM
	MaxClockPPM      = netsim.MaxClockPPM
	MinLinkGbps      = netsim.MinLinkGbps
	MaxLinkGbps      = netsim.MaxLinkGbps
	MaxSimTimeNs     = int64(netsim.MaxDurationNs)
	MaxSimThreads    = netsim.MaxThreads
)

// SimProbes are nicc sim's --probe values: when a flow's RTT probe leaves (SimNet.Probe).
var SimProbes = netsim.Probes

// DefaultSimFlows is the flow count when none is given: 16 flows into one receiver.
const DefaultSimFlows = 16

// SimReport is a run's result with what ran.
type SimReport struct {
	Policy string `json:"policy"` // what was given
	// PolicySHA256 identifies what decided: a model file's model (model.Hash), a compile's
	// report.json and the ELF it runs; absent for swift and dcqcn.
	PolicySHA256 string `json:"policy_sha256,omitempty"`
	Decides      string `json:"decides"` // what made the decisions
	Latency      string `json:"latency"` // how long a decision took
	Threads      int    `json:"threads"` // engine threads per NIC
	Core         string `json:"core"`    // the profile the engine's threads and clock come from
	// SimNetworkReport is the network the run had (its fields inline in --json).
	SimNetworkReport
	// Reference is the parameters of Swift or DCQCN when one decides, in its Params' order.
	Reference ReferenceParams `json:"reference_params,omitempty"`
	Plots     []string        `json:"plots,omitempty"`
	// Warnings are the sanity probe's on the policy's float model (probeWarnings).
	Warnings []string `json:"warnings,omitempty"`
	DOCA     *SimDOCA `json:"doca,omitempty"` // with doca.Target: the DOCA program's parameters and counters
	// Cycles are the firmware's decisions' cycles, when a firmware decides in fwsim.
	Cycles *simfw.Cycles `json:"decision_cycles,omitempty"`
	// Layout is how the policy's inputs map onto the RL-CC handler's window: a model file's,
	// or the one a compile directory's report.json records.
	Layout *artifact.InputLayout `json:"rlcc_layout,omitempty"`
	// Params are the RL-CC parameters the policy decided under, with where each came from;
	// absent for swift and dcqcn.
	Params *artifact.RLCCParams `json:"rlcc_params,omitempty"`
	// Health is whether the policy controlled congestion in the window: drops, the queue
	// against Eq. 2 and utilization, against SimOptions.Health.
	Health *Health `json:"health"`
	*netsim.Result
}

// SimNetworkReport is the network a nicc sim run had, as its report says it.
type SimNetworkReport struct {
	LinkGbps float64 `json:"link_gbps"`
	// FatTree is the network when it is a fat tree (SimNet.FatTree), absent on one switch.
	FatTree *netsim.FatTree `json:"fat_tree,omitempty"`
	// BufferAlpha is the ports' dynamic threshold (SimNet.BufferAlpha), absent when they share
	// the buffer drop-tail.
	BufferAlpha float64 `json:"buffer_alpha,omitempty"`
	// StartWindowUs is when the flows started, each later by a draw within it (SimOptions.
	// StartWindowNs); absent: as the scenario starts them.
	StartWindowUs *[2]float64 `json:"start_window_us,omitempty"`
	// Probe is when a flow's RTT probe left its NIC (SimNet.Probe), absent for tx: with its
	// next TX burst.
	Probe netsim.Probe `json:"probe,omitempty"`
	// PFCPerPort says PFC paused per ingress port (--pfc port), not every sender at once.
	PFCPerPort bool `json:"pfc_per_port,omitempty"`
	// HostDelayUs is each NIC's pipeline delay (SimNet.HostDelayNs), absent when none.
	HostDelayUs float64 `json:"host_delay_us,omitempty"`
	// TurnaroundUs is how long a probe's reply takes to reach its sender's engine
	// (SimNet.TurnaroundNs), TXLeadNs how much sooner than its rate a burst leaves
	// (SimNet.TXLeadNs); absent when none.
	TurnaroundUs float64 `json:"rtt_turnaround_us,omitempty"`
	TXLeadNs     int64   `json:"tx_lead_ns,omitempty"`
	// TXEvents says the engines had a TX event for every burst (SimNet.TXEvents).
	TXEvents bool `json:"tx_events,omitempty"`
	// ECN is the switch's marking profile, absent when it marks nothing.
	ECN      *netsim.ECN `json:"ecn,omitempty"`
	ClockPPM float64     `json:"clock_ppm"` // each NIC's clock within ± this of nominal; 0 one ideal clock
}

// Sim runs nicc sim. Bad input (an unknown scenario or policy, a non-positive duration, rate
// or buffer, a policy whose inputs are not RL-CC's) is an error; a firmware trap during the
// run is a *CheckError naming the flow, the time and the pc, with no result.
func Sim(opt SimOptions) (*SimReport, error) {
	if err := checkDOCASetAt(opt); err != nil {
		return nil, err
	}
	scen, err := simScenario(opt)
	if err != nil {
		return nil, err
	}
	if w := opt.StartWindowNs; w != [2]int64{} {
		if err := scen.Stagger(w[0], w[1], opt.Net.Seed); err != nil {
			return nil, err
		}
	}
	lim := DefaultHealth
	if opt.Health != nil {
		lim = *opt.Health
	}
	if err := checkHealthLimits(lim); err != nil {
		return nil, err
	}
	rep := &SimReport{Policy: opt.Policy}
	ctrl, core, err := simController(opt, scen, rep)
	if err != nil {
		return nil, err
	}
	prof, err := fwsim.LookupProfile(core)
	if err != nil {
		return nil, err
	}
	cfg := opt.Net
	if opt.Scenario == "long-short" && cfg.WarmupNs == 0 {
		// The window opens before the short flows join (a quarter in), so it holds their drops.
		cfg.WarmupNs = cmp.Or(cfg.DurationNs, netsim.Defaults.DurationNs) / 8
	}
	cfg.Threads = cmp.Or(opt.Threads, prof.Threads)
	cfg.LatencyNs = opt.LatencyNs
	if cfg.ECN, err = simECN(opt.ECN, ctrl.Name() == "dcqcn"); err != nil {
		return nil, err
	}
	if cfg.TXEvents && ctrl.TimerNs() > 0 {
		return nil, fmt.Errorf("--tx-events: %s's timer ticks are its TX events; run it without", ctrl.Name())
	}
	if ctrl.Name() == "dcqcn" {
		cfg.PFC = true // DCQCN as RoCE deploys it: ECN at the switch, PFC keeping the network lossless
	}
	rep.ECN, rep.BufferAlpha, rep.FatTree, rep.Probe, rep.TXEvents = cfg.ECN, cfg.BufferAlpha, cfg.FatTree, cfg.Probe, cfg.TXEvents
	rep.HostDelayUs, rep.TurnaroundUs, rep.TXLeadNs = float64(cfg.HostDelayNs)/1000, float64(cfg.TurnaroundNs)/1000, cfg.TXLeadNs
	if w := opt.StartWindowNs; w != [2]int64{} {
		rep.StartWindowUs = &[2]float64{float64(w[0]) / 1000, float64(w[1]) / 1000}
	}
	switch opt.PFC {
	case PFCOn:
		cfg.PFC = true
	case PFCPort:
		cfg.PFC, cfg.PFCPerPort = true, true
	case PFCOff:
		cfg.PFC = false
	case PFCAuto, "":
	default:
		return nil, fmt.Errorf("--pfc %q: want %s, %s, %s or %s", opt.PFC, PFCAuto, PFCOn, PFCPort, PFCOff)
	}
	rep.PFCPerPort = cfg.PFCPerPort
	if ctrl.Name() == "dcqcn" && !cfg.PFC {
		rep.Decides = "DCQCN (" + rep.Reference.text() + "), ECN at the switch, no PFC (lossy, --pfc off)"
	}
	rep.Threads, rep.Core, rep.LinkGbps, rep.ClockPPM = cfg.Threads, prof.Name, cmp.Or(cfg.LinkGbps, netsim.Defaults.LinkGbps), cfg.ClockPPM
	if opt.PlotDir != "" {
		cfg.TraceNs = simTraceNs(cmp.Or(cfg.DurationNs, netsim.Defaults.DurationNs))
	}
	if opt.Progress != nil {
		cfg.Progress = func(done, total int64) { opt.Progress("sim", int(done/1000), int(total/1000)) }
	}
	var kept float64 // the controller's memory beside the network's
	if d, ok := ctrl.(*docaController); ok {
		kept = d.bytes()
		if opt.DOCASetAtNs > 0 {
			cfg.Actions = append(cfg.Actions, netsim.Action{AtNs: opt.DOCASetAtNs, Do: d.setOnEveryNIC})
		}
	}
	fp, err := netsim.Estimate(scen, cfg, ctrl.TimerNs())
	if err != nil {
		return nil, err
	}
	if err := memlimit.CheckSimFootprint(memlimit.SimWhat(scen, cfg), cfg, fp, kept, "the NICs' copies of the DOCA program's memory",
		"a shorter --duration or --link-delay, fewer flows, a larger --mtu or a slower --link-gbps"); err != nil {
		return nil, err
	}
	r, err := netsim.Run(scen, ctrl, cfg)
	if errors.Is(err, netsim.ErrStopped) {
		return nil, &budget.CheckError{Err: err}
	}
	if err != nil {
		return nil, err
	}
	rep.Result = r
	params, err := simParams(opt)
	if err != nil {
		return nil, err
	}
	rep.Health = judgeHealth(r, params, opt.Policy != "swift" && opt.Policy != "dcqcn", lim)
	switch c := ctrl.(type) {
	case *simfw.Controller:
		rep.Cycles = c.Cycles()
	case *docaController:
		rep.Cycles = c.Cycles()
		if rep.DOCA, err = c.summary(); err != nil {
			return nil, err
		}
	}
	if opt.PlotDir != "" {
		if rep.Plots, err = plotSim(rep, opt.PlotDir); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// checkDOCASetAt refuses a --set-at that has nothing to set or no time to set it in.
func checkDOCASetAt(opt SimOptions) error {
	at := opt.DOCASetAtNs
	if at == 0 {
		return nil
	}
	if opt.SDK != doca.Target {
		return fmt.Errorf("--set-at sets a DOCA program's run-time parameters on the live NICs: it takes --sdk doca")
	}
	if len(opt.DOCASet) == 0 {
		return fmt.Errorf("--set-at has nothing to set: give --rlcc-target, --rlcc-beta or --rlcc-scale")
	}
	if dur := cmp.Or(opt.Net.DurationNs, netsim.Defaults.DurationNs); at < 0 || at >= dur {
		return fmt.Errorf("--set-at %s µs: want a time inside the run, (0, the duration %s µs)", termtext.Num(float64(at)/1000), termtext.Num(float64(dur)/1000))
	}
	return nil
}

// ParseFatTree reads --fat-tree: nic-paper (netsim.NICPaperFatTree) or TORS,HOSTS,SPINES,LINKS.
func ParseFatTree(s string) (*netsim.FatTree, error) {
	if s == "nic-paper" {
		t := netsim.NICPaperFatTree
		return &t, nil
	}
	bad := fmt.Errorf("--fat-tree %q: want nic-paper or TORS,HOSTS,SPINES,LINKS (hosts a ToR; links between a ToR and a spine), such as 4,16,3,4", s)
	f := strings.Split(s, ",")
	if len(f) != 4 {
		return nil, bad
	}
	var v [4]int
	for i := range v {
		n, err := strconv.Atoi(strings.TrimSpace(f[i]))
		if err != nil || n < 1 || n > 4096 {
			return nil, bad
		}
		v[i] = n
	}
	t := netsim.FatTree{ToRs: v[0], HostsPerToR: v[1], Spines: v[2], Links: v[3]}
	if _, err := netsim.FatTreeManyToOne(t, 1); err != nil {
		return nil, fmt.Errorf("--fat-tree %q: %v", s, err)
	}
	return &t, nil
}

// simECN is the marking profile --ecn gives (nil: none); auto marks for DCQCN alone, which
// reacts to marks only.
func simECN(s string, dcqcn bool) (*netsim.ECN, error) {
	switch s {
	case "", "auto":
		if !dcqcn {
			return nil, nil
		}
		e := netsim.DefaultECN
		return &e, nil
	case "off":
		if dcqcn {
			return nil, fmt.Errorf("--ecn off: DCQCN reacts to ECN marks alone; give it a profile, or auto")
		}
		return nil, nil
	}
	bad := fmt.Errorf("--ecn %q: want auto, off or KMIN,KMAX,PMAX, such as 100KB,400KB,0.2 (0 <= KMIN <= KMAX, PMAX in (0, 1])", s)
	f := strings.Split(s, ",")
	if len(f) != 3 {
		return nil, bad
	}
	var k [2]int
	for i, v := range f[:2] {
		mul, num := 1, v
		for suf, m := range map[string]int{"KB": 1 << 10, "MB": 1 << 20} {
			if strings.HasSuffix(v, suf) {
				mul, num = m, strings.TrimSuffix(v, suf)
			}
		}
		n, err := strconv.Atoi(strings.TrimSpace(num))
		if err != nil || n < 0 || n > 1<<30/mul {
			return nil, bad
		}
		k[i] = n * mul
	}
	p, err := strconv.ParseFloat(strings.TrimSpace(f[2]), 64)
	if err != nil || k[0] > k[1] || !(p > 0 && p <= 1) {
		return nil, bad
	}
	return &netsim.ECN{KminBytes: k[0], KmaxBytes: k[1], Pmax: p}, nil
}

// SimScenarios are the scenarios nicc sim knows.
var SimScenarios = []string{"many-to-one", "all-to-all", "long-short", "workload"}

// A workload's defaults: the NIC paper's 64-host cluster at half load.
const (
	DefaultWorkloadHosts = 64
	DefaultWorkloadLoad  = 0.5
	MinWorkloadLoad      = netsim.MinWorkloadLoad
	MaxWorkloadLoad      = netsim.MaxWorkloadLoad
)

func simScenario(opt SimOptions) (netsim.Scenario, error) {
	if opt.Flows < 0 {
		return netsim.Scenario{}, fmt.Errorf("--flows %d: want a positive count", opt.Flows)
	}
	if opt.Scenario != "workload" && (opt.Sizes != "" || opt.Load != 0) {
		return netsim.Scenario{}, fmt.Errorf("--sizes and --load describe a workload; %s takes neither", opt.Scenario)
	}
	n := cmp.Or(opt.Flows, DefaultSimFlows)
	if t := opt.Net.FatTree; t != nil {
		switch opt.Scenario {
		case "many-to-one":
			return netsim.FatTreeManyToOne(*t, cmp.Or(opt.Flows, t.Hosts()-t.HostsPerToR))
		case "all-to-all":
			if opt.Flows != 0 {
				return netsim.Scenario{}, fmt.Errorf("--flows %d: on a fat tree, all-to-all is every host to every host of the other racks", opt.Flows)
			}
			return netsim.FatTreeAllToAll(*t)
		case "workload":
			if opt.Flows != 0 && opt.Flows != t.Hosts() {
				return netsim.Scenario{}, fmt.Errorf("--flows %d: on a fat tree, a workload runs on its %d hosts", opt.Flows, t.Hosts())
			}
			opt.Flows = t.Hosts()
		default:
			return netsim.Scenario{}, fmt.Errorf("%s runs on one switch, not a fat tree", opt.Scenario)
		}
	}
	switch opt.Scenario {
	case "many-to-one":
		return netsim.ManyToOne(n)
	case "all-to-all":
		return netsim.AllToAll(cmp.Or(opt.Flows, 4))
	case "long-short":
		dur := cmp.Or(opt.Net.DurationNs, netsim.Defaults.DurationNs)
		return netsim.LongShort(cmp.Or(opt.Flows, 2), 2<<20, dur/4)
	case "workload":
		sizes, err := netsim.LookupSizeCDF(cmp.Or(opt.Sizes, netsim.WebSearch.Name))
		if err != nil {
			return netsim.Scenario{}, err
		}
		return netsim.Workload(cmp.Or(opt.Flows, DefaultWorkloadHosts), sizes, cmp.Or(opt.Load, DefaultWorkloadLoad),
			cmp.Or(opt.Net.LinkGbps, netsim.Defaults.LinkGbps), cmp.Or(opt.Net.DurationNs, netsim.Defaults.DurationNs), opt.Net.Seed)
	}
	return netsim.Scenario{}, fmt.Errorf("unknown scenario %q (want one of %s)", opt.Scenario, strings.Join(SimScenarios, ", "))
}

// simController is the controller opt.Policy names and the core profile its engine runs on.
func simController(opt SimOptions, scen netsim.Scenario, rep *SimReport) (netsim.Controller, string, error) {
	core := cmp.Or(opt.Core, budget.DefaultCore)
	if opt.SDK == doca.Target {
		if opt.Golden {
			return nil, "", fmt.Errorf("--sdk doca runs the compile's DOCA program, --golden its golden model: give one of them")
		}
		if !artifact.IsCompileDir(opt.Policy) {
			return nil, "", fmt.Errorf("--sdk doca takes a compile output directory (nicc compile --sdk doca), not %q", opt.Policy)
		}
	}
	for _, f := range []struct{ flag, spec, policy string }{{"--swift", opt.Swift, "swift"}, {"--dcqcn", opt.DCQCN, "dcqcn"}} {
		if f.spec != "" && opt.Policy != f.policy {
			return nil, "", fmt.Errorf("%s sets the parameters of --policy %s; the policy is %q", f.flag, f.policy, opt.Policy)
		}
	}
	if opt.Handler != artifact.HandlerAuto && (opt.Policy == "swift" || opt.Policy == "dcqcn" || artifact.IsCompileDir(opt.Policy)) {
		return nil, "", fmt.Errorf("--handler %s reads a model file's inputs; policy %s is not a model file (a compile directory keeps the handler it was compiled with)", opt.Handler, opt.Policy)
	}
	switch opt.Policy {
	case "swift":
		c := netsim.DefaultSwift
		var err error
		rep.Reference, err = setReferenceParams("--swift", opt.Swift, c.Params())
		rep.Decides, rep.Latency = "Swift ("+rep.Reference.text()+")", simfw.LatencyText(opt.LatencyNs)
		return c, core, err
	case "dcqcn":
		c := netsim.DefaultDCQCN
		var err error
		rep.Reference, err = setReferenceParams("--dcqcn", opt.DCQCN, c.Params())
		rep.Decides, rep.Latency = "DCQCN ("+rep.Reference.text()+"), ECN at the switch, PFC (lossless)", simfw.LatencyText(opt.LatencyNs)
		return c, core, err
	case "":
		return nil, "", fmt.Errorf("sim needs --policy: a model file, a compile directory, swift or dcqcn")
	}
	if artifact.IsCompileDir(opt.Policy) {
		ctrl, core, err := compiledController(opt, scen, rep)
		if err != nil {
			return nil, "", err
		}
		rep.PolicySHA256, err = filesHash(opt.Policy, artifact.ReportFile, opt.sdk().ELF())
		return ctrl, core, err
	}
	if opt.Golden {
		return nil, "", fmt.Errorf("--golden takes a compile output directory, not %s", opt.Policy)
	}
	return floatController(opt, rep, core)
}

// OpenController is opt.Policy's controller for scen's flows, read and checked as nicc sim
// reads it, for an agent answering another simulator, and the report's account of it.
func OpenController(opt SimOptions, scen netsim.Scenario) (netsim.Controller, *SimReport, error) {
	rep := &SimReport{Policy: opt.Policy}
	ctrl, core, err := simController(opt, scen, rep)
	rep.Core = core
	return ctrl, rep, err
}

// filesHash is the hex SHA-256 of the hashes of dir's files names, in order.
func filesHash(dir string, names ...string) (string, error) {
	h := sha256.New()
	for _, n := range names {
		fh, err := artifact.FileHash(filepath.Join(dir, n))
		if err != nil {
			return "", err
		}
		h.Write([]byte(fh))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// floatController is the float teacher in the RL-CC handler's real-number twin.
func floatController(opt SimOptions, rep *SimReport, core string) (netsim.Controller, string, error) {
	if opt.Handler == artifact.HandlerNone {
		return nil, "", fmt.Errorf("%s: --handler none: a model decides in nicc sim only as an RL-CC policy (--handler rlcc or auto)", opt.Policy)
	}
	lp, err := golden.LoadPolicy(opt.Policy, opt.Format, opt.Inputs, opt.Handler, "")
	if err != nil {
		return nil, "", err
	}
	m := lp.Model
	if lp.Handler != artifact.HandlerRLCC {
		hint := golden.RLCCHint
		if opt.noHandlerFlag {
			hint = golden.InputsHint
		}
		return nil, "", fmt.Errorf("%s: model %s's inputs (%s) are not the RL-CC observation window (not named in an RL-CC layout): %s", opt.Policy, m.Name, strings.Join(m.Inputs, ", "), hint)
	}
	rep.Layout = lp.Layout
	if m.NumOutputs() != 1 {
		return nil, "", fmt.Errorf("%s: model %s has %d outputs; an RL-CC policy has one", opt.Policy, m.Name, m.NumOutputs())
	}
	p, src, err := golden.ResolveParams(opt.Policy, m, opt.Params, opt.ParamSources)
	if err != nil {
		return nil, "", err
	}
	if p, err = rep.simParams(p, src, opt); err != nil {
		return nil, "", err
	}
	if rep.PolicySHA256, err = model.Hash(m); err != nil {
		return nil, "", err
	}
	rep.Warnings = golden.ProbeWarnings(m, p)
	states := map[uint32]*model.State{}
	policy := func(flow uint32, x []float64) float64 {
		st, ok := states[flow]
		if !ok {
			st = m.NewState()
			states[flow] = st
		}
		return m.Eval(st, x)[0]
	}
	rep.Decides = fmt.Sprintf("the float model %s (float64, the handler's real-number twin)", m.Name)
	rep.Latency = simfw.LatencyText(opt.LatencyNs)
	return &netsim.FloatRLCC{Label: "float " + m.Name, Params: p, Layout: lp.Layout.Layout(), Policy: policy}, core, nil
}

// compiledController is a compile's golden model (Golden) or its firmware in fwsim.
func compiledController(opt SimOptions, scen netsim.Scenario, rep *SimReport) (netsim.Controller, string, error) {
	rb, err := readCompiled(opt)
	if err != nil {
		return nil, "", err
	}
	rep.Layout = rb.report.Layout
	core := cmp.Or(opt.Core, rb.report.Budget.Core.Name)
	src := golden.SourcesAll(artifact.SourceCompile)
	if opt.SDK == doca.Target {
		// The DOCA program inits its flows itself: nothing provisions their base RTT.
		opt.learnBaseRTT = true
	}
	p, err := rep.simParams(rb.params, src, opt)
	if err != nil {
		return nil, "", err
	}
	rep.Warnings = rb.warnings
	if cp := rb.golden; cp != nil {
		golden := simfw.Golden(cp, p)
		rep.Decides = fmt.Sprintf("the golden model (quantize.%s inside nicsdk.OnEventEx) of %s", cp.Policy().Golden(), opt.Policy)
		rep.Latency = simfw.LatencyText(opt.LatencyNs)
		return golden, core, nil
	}
	elf := filepath.Join(opt.Policy, opt.sdk().ELF()) // readCompiled checked it
	fw, err := simfw.Open(opt.sdk(), elf, "firmware "+rb.report.Model.Name, rb.layout, p, core, opt.Threads, opt.LatencyNs)
	if err != nil {
		return nil, "", err
	}
	rep.Latency = fw.LatencyAbout()
	if opt.SDK == doca.Target {
		fw.Label = "DOCA " + rb.report.Model.Name
		d, err := newDOCAController(fw, scen, opt, rep)
		return d, core, err
	}
	rep.Decides = fmt.Sprintf("the firmware %s in fwsim (%s)", elf, fw.Entry())
	return fw, core, nil
}

// sdk is the target whose program a compile directory runs: opt.SDK, nicc's own by default.
func (opt SimOptions) sdk() target.Target { return cmp.Or(opt.SDK, abi.Target) }

// simParams are p, with where each came from (src), as the run gives them to the policy,
// recorded in the report: a base RTT of 0 becomes the scenario's empty-path RTT, which the
// host provisions in each flow's context at flow start (rlcc_init's base RTT word; the
// handler still lowers it to any smaller RTT it sees), so that a float teacher and a
// compile's firmware or golden model run under the same base RTT, never the teacher under
// the path's and the firmware under a learned one. A flow that learns its base RTT from
// the smallest RTT it sees learns an inflated one under incast (flows starting at line rate
// never see an empty path), and a policy trained under the path's RTT fails. learnBaseRTT
// (a DOCA program, which inits its flows itself) leaves it learned.
func (r *SimReport) simParams(p golden.Params, src artifact.ParamSources, opt SimOptions) (golden.Params, error) {
	src = maps.Clone(src)
	if p.BaseRTT == 0 && !opt.learnBaseRTT {
		ns, err := opt.Net.BaseRTTNs()
		if err != nil {
			return golden.Params{}, err
		}
		ns = cmp.Or(opt.PathRTTNs, ns)
		p.BaseRTT, src["base_rtt_us"] = ns, artifact.SourcePathRTT
	}
	r.Params = artifact.NewRLCCParams(p).WithSources(src)
	return p, p.Validate()
}

// WriteText prints the run's figures for a terminal.
func (r *SimReport) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	res := r.Result
	termtext.Printf(tw, "scenario\t%s: %d flows on %d hosts, %s Gb/s links, %s, seed %d\n", res.Scenario, res.Flows, res.Hosts, termtext.Num(r.LinkGbps), clocksText(r.ClockPPM), res.Seed)
	termtext.Printf(tw, "policy\t%s\n", r.Decides)
	if r.Params != nil {
		termtext.Printf(tw, "rl-cc\t%s\n", r.Params)
	}
	if r.Layout != nil {
		termtext.Printf(tw, "inputs\t%s\n", r.Layout)
	}
	termtext.Printf(tw, "engine\t%d hardware thread(s) per NIC (%s); latency %s\n", r.Threads, r.Core, r.Latency)
	if t := r.FatTree; t != nil {
		termtext.Printf(tw, "network\ta fat tree: %d ToRs of %d hosts, %d spines, %d links between each ToR and spine, each switch its own buffer; a flow between racks on one spine and link each way, by a hash of the flow (ECMP)\n", t.ToRs, t.HostsPerToR, t.Spines, t.Links)
	}
	if a := r.BufferAlpha; a > 0 {
		termtext.Printf(tw, "buffer\teach port's queue at most %s × the buffer still free (a dynamic threshold)\n", termtext.Num3(a))
	}
	if r.PFCPerPort {
		termtext.Printf(tw, "PFC\tper ingress port: a host's data pauses while its bytes in its switch pass its port's share of the buffer\n")
	}
	if d := r.HostDelayUs; d > 0 {
		termtext.Printf(tw, "hosts\teach NIC's pipeline delays every packet it sends and receives by %s µs (base RTT %s µs)\n", termtext.Num(d), termtext.Num3(r.BaseRTTUs))
	}
	if d := r.TurnaroundUs; d > 0 {
		termtext.Printf(tw, "replies\tan RTT probe's reply reaches its sender's CC engine %s µs after it arrives, and the flow's next probe waits as long\n", termtext.Num(d))
	}
	if d := r.TXLeadNs; d > 0 {
		termtext.Printf(tw, "TX\teach burst leaves %d ns sooner than its flow's rate allows\n", d)
	}
	if r.Probe != netsim.ProbeWithTX {
		termtext.Printf(tw, "probes\t%s (--probe %s)\n", r.Probe.About(), r.Probe)
	}
	if r.TXEvents {
		termtext.Printf(tw, "TX events\tone for every burst, at the sender's engine\n")
	}
	if w := r.StartWindowUs; w != nil {
		termtext.Printf(tw, "starts\teach flow later by a seeded draw in [%s, %s] µs\n", termtext.Num(w[0]), termtext.Num(w[1]))
	}
	if e := r.ECN; e != nil {
		termtext.Printf(tw, "ECN\tmarking at the switch: none below %d bytes queued, all above %d, up to %s between\n", e.KminBytes, e.KmaxBytes, termtext.Num3(e.Pmax))
	}
	termtext.Printf(tw, "window\t%s µs to %s µs (the first %s µs are warm-up)%s\n", termtext.Num(res.WindowStartUs), termtext.Num(res.DurationUs), termtext.Num(res.WindowStartUs), r.setAtText())
	termtext.Printf(tw, "SU\t%.2f%% switch utilization (normalized goodput %.4f)\n", res.Utilization, res.Goodput)
	if res.FCT == nil { // a workload's flows come and go: FCT, below, says how they fared
		termtext.Printf(tw, "FR\t%.1f (min/max × 100; flows %s to %s Gb/s), Jain %.4f\n", res.Fairness, termtext.Num3(res.MinFlowGbps), termtext.Num3(res.MaxFlowGbps), res.Jain)
	}
	termtext.Printf(tw, "QL\tmean %s µs, p99 %s µs\n", termtext.Num3(res.QueueMeanUs), termtext.Num3(res.QueueP99Us))
	termtext.Printf(tw, "DR\t%s Gb/s dropped (%s MB over the whole run, warm-up included)\n", termtext.Num3(res.DropGbps), termtext.Num3(res.DroppedAllRunMB))
	if rc := res.Recovery; rc != nil {
		termtext.Printf(tw, "recovery\tgo-back-N: %s Gb/s sent again, %s Gb/s discarded by the receivers, %d NACKs, %d timeouts (RTO %s µs)\n",
			termtext.Num3(rc.ResentGbps), termtext.Num3(rc.DiscardedGbps), rc.NACKs, rc.Timeouts, termtext.Num(rc.RTOUs))
	}
	if res.RecoveryUs != nil {
		rec := "did not recover before the run ended"
		if *res.RecoveryUs >= 0 {
			rec = termtext.Num3(*res.RecoveryUs) + " µs"
		}
		termtext.Printf(tw, "recovery\t%s (the long flow back to 95%% of line rate after the short flows)\n", rec)
	}
	if f := res.FCT; f != nil {
		termtext.Printf(tw, "FCT\tslowdown (completion time over the flow's alone at line rate) of the flows started in the window: mean, p99 (flows; unfinished at the end)\n")
		for _, b := range append(slices.Clone(f.Buckets), f.All) {
			if b.Flows+b.Unfinished > 0 {
				termtext.Printf(tw, "  %s\t%s, %s (%d; %d)\n", b.Label, termtext.Num3(b.MeanSlowdown), termtext.Num3(b.P99Slowdown), b.Flows, b.Unfinished)
			}
		}
	}
	termtext.Printf(tw, "CC events\t%d decisions, %d dropped by full engines (in the window)\n", res.Decisions, res.EventsDropped)
	if c := r.Cycles; c != nil {
		termtext.Printf(tw, "fwsim\t%d decisions (the whole run): mean %.1f cycles = %s ns, max %d = %s ns at the core's clock × the threads sharing\n",
			c.Decisions, c.Mean, termtext.Num3(c.MeanNs), c.Max, termtext.Num3(c.MaxNs))
	}
	if d := r.DOCA; d != nil {
		termtext.Printf(tw, "DOCA counters\t%d decisions, %d at min or line rate (slot %d, port 0, the whole run, summed over %d NICs); the loop gave %s %d RTT events (%d events in all)\n",
			d.Decisions, d.Clamps, nicsdk.DOCASlot, d.NICs, nicsdk.DOCAEntryAlgo, d.RTTEvents, d.Events)
	}
	termtext.Printf(tw, "health\t%s\n", r.Health.text())
	if res.PFCPauses > 0 {
		termtext.Printf(tw, "PFC\t%d pauses of the senders (in the window)\n", res.PFCPauses)
	}
	if len(r.Plots) > 0 {
		termtext.Printf(tw, "plots\t%s\n", strings.Join(r.Plots, ", "))
	}
	return tw.Flush()
}

// setAtText says, after the window, when a DOCA program's parameters were set during the run
// and whether the window holds decisions under the old ones.
func (r *SimReport) setAtText() string {
	if r.DOCA == nil || r.DOCA.SetAtNs == 0 {
		return ""
	}
	at := float64(r.DOCA.SetAtNs) / 1000
	if at > r.WindowStartUs {
		return fmt.Sprintf("; the parameters were set at %s µs, inside the window (--warmup %sus or later measures after it)", termtext.Num(at), termtext.Num(at))
	}
	return fmt.Sprintf("; the parameters were set at %s µs, by its start", termtext.Num(at))
}
