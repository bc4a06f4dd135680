package lab

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/compiler"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/termtext"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/netsim"
)

// SimMatrix is a sweep of nicc sim runs: every scenario × flow count × seed × policy, in that
// nesting order, each run numbered by its place in it. A file gives it as JSON.
type SimMatrix struct {
	Scenarios []string `json:"scenarios"`
	Flows     []int    `json:"flows"`
	Seeds     []uint64 `json:"seeds"`
	Policies  []string `json:"policies"`
	Duration  string   `json:"duration,omitempty"` // e.g. "20ms"; "" is netsim's default
	Latency   string   `json:"latency,omitempty"`  // fixes every decision's time, as --latency
}

// MaxMatrixRuns bounds a matrix.
const MaxMatrixRuns = 100_000

// SimRun is one run of a matrix: where it sits and what it measured.
type SimRun struct {
	Index    int        `json:"index"`
	Scenario string     `json:"scenario"`
	Flows    int        `json:"flows"`
	Seed     uint64     `json:"seed"`
	Policy   string     `json:"policy"`
	Result   *SimReport `json:"result"`
}

// SimMatrixReport is a matrix's runs, all of them or one shard's. Merging the shards of one
// matrix gives, byte for byte, what one unsharded run prints.
type SimMatrixReport struct {
	Matrix SimMatrix `json:"matrix"`
	SHA256 string    `json:"matrix_sha256"` // of the matrix's canonical JSON: shards of one matrix share it
	Setup  *SimSetup `json:"setup"`         // the flags every run shared: shards of one sweep share it
	Shard  string    `json:"shard"`         // "i/n"; "0/1" for a whole matrix
	Runs   []SimRun  `json:"runs"`
}

// Warnings are the runs' sanity-probe warnings, each once.
func (r *SimMatrixReport) Warnings() []string {
	var all []string
	for _, run := range r.Runs {
		for _, w := range run.Result.Warnings {
			if !slices.Contains(all, w) {
				all = append(all, w)
			}
		}
	}
	return all
}

// SimSetup is everything besides the matrix that shapes a matrix's runs: the network, the
// run's times, the engine and the RL-CC parameters (each run's result names its policy's
// hash). Merge refuses shards whose setups differ in any field.
type SimSetup struct {
	DurationNs  int64                `json:"duration_ns"`
	WarmupNs    int64                `json:"warmup_ns"`  // 0: the scenario's default
	LatencyNs   int64                `json:"latency_ns"` // 0: the firmware's measured cycles
	LinkGbps    float64              `json:"link_gbps"`
	LinkDelayNs int64                `json:"link_delay_ns"`
	MTU         int                  `json:"mtu"`
	BufferBytes int                  `json:"buffer_bytes"`
	ClockPPM    float64              `json:"clock_ppm"`
	PFC         string               `json:"pfc"`
	Threads     int                  `json:"threads"` // 0: the core profile's
	Core        string               `json:"core"`    // "": a compile's, else DefaultCore
	Golden      bool                 `json:"golden"`
	SDK         string               `json:"sdk"`
	DOCASet     []DOCASetting        `json:"doca_set,omitempty"`
	Params      *artifact.RLCCParams `json:"rlcc_params"` // a model file's; a compile's are its own
}

// simSetup is the setup of runs with opt's options.
func simSetup(opt SimOptions) (*SimSetup, error) {
	p, err := golden.ParamsOrDefault(opt.Params)
	if err != nil {
		return nil, err
	}
	n := opt.Net
	return &SimSetup{DurationNs: cmp.Or(n.DurationNs, netsim.Defaults.DurationNs), WarmupNs: n.WarmupNs, LatencyNs: opt.LatencyNs,
		LinkGbps: cmp.Or(n.LinkGbps, netsim.Defaults.LinkGbps), LinkDelayNs: cmp.Or(n.PropNs, netsim.Defaults.PropNs),
		MTU: cmp.Or(n.MTU, netsim.Defaults.MTU), BufferBytes: cmp.Or(n.BufferBytes, netsim.Defaults.BufferBytes), ClockPPM: n.ClockPPM,
		PFC: cmp.Or(opt.PFC, PFCAuto), Threads: opt.Threads, Core: opt.Core, Golden: opt.Golden, SDK: opt.sdk().Name(),
		DOCASet: opt.DOCASet, Params: artifact.NewRLCCParams(p)}, nil
}

// ReadSimMatrix reads a matrix file, refusing unknown fields, empty axes and more than
// MaxMatrixRuns runs.
func ReadSimMatrix(path string) (*SimMatrix, error) {
	data, err := model.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m SimMatrix
	if err := model.DecodeJSON(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, ax := range []struct {
		name string
		n    int
	}{{"scenarios", len(m.Scenarios)}, {"flows", len(m.Flows)}, {"seeds", len(m.Seeds)}, {"policies", len(m.Policies)}} {
		if ax.n == 0 {
			return nil, fmt.Errorf("%s: %q is empty: a matrix needs at least one of each of scenarios, flows, seeds and policies", path, ax.name)
		}
	}
	if n := m.runs(); n > MaxMatrixRuns {
		return nil, fmt.Errorf("%s: %d runs, over %d", path, n, MaxMatrixRuns)
	}
	for k, f := range m.Flows {
		if f < 1 {
			return nil, fmt.Errorf("%s: flows[%d] is %d: want a count of at least 1", path, k, f)
		}
	}
	for k, sc := range m.Scenarios {
		if !slices.Contains(SimScenarios, sc) {
			return nil, fmt.Errorf("%s: scenarios[%d] %q: want one of %s", path, k, sc, strings.Join(SimScenarios, ", "))
		}
	}
	return &m, nil
}

// runs is the number of runs, saturating just past MaxMatrixRuns (the axes' product could
// overflow).
func (m *SimMatrix) runs() int {
	n := 1
	for _, l := range []int{len(m.Scenarios), len(m.Flows), len(m.Seeds), len(m.Policies)} {
		n = min(n*l, MaxMatrixRuns+1)
	}
	return n
}

// run is the matrix's k-th run.
func (m *SimMatrix) run(k int) SimRun {
	p := k % len(m.Policies)
	k /= len(m.Policies)
	s := k % len(m.Seeds)
	k /= len(m.Seeds)
	f := k % len(m.Flows)
	k /= len(m.Flows)
	return SimRun{Scenario: m.Scenarios[k], Flows: m.Flows[f], Seed: m.Seeds[s], Policy: m.Policies[p]}
}

func (m *SimMatrix) hash() string {
	b, _ := json.Marshal(m)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// ParseShard reads --shard i/n: run i of every n, 0 <= i < n.
func ParseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("--shard %q: want i/n with 0 <= i < n, e.g. 3/8", s)
	}
	return i, n, nil
}

// RunSimMatrix runs shard i of n of the matrix (the runs whose index is i modulo n), each with
// base's options otherwise; progress, if set, hears of each run done.
func RunSimMatrix(m *SimMatrix, i, n int, base SimOptions, progress compiler.ProgressFunc) (*SimMatrixReport, error) {
	if m.Duration != "" {
		d, err := time.ParseDuration(m.Duration)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("matrix duration %q: want a positive time such as 20ms", m.Duration)
		}
		base.Net.DurationNs = d.Nanoseconds()
	}
	if m.Latency != "" {
		d, err := time.ParseDuration(m.Latency)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("matrix latency %q: want a positive time such as 500ns", m.Latency)
		}
		base.LatencyNs = d.Nanoseconds()
	}
	setup, err := simSetup(base)
	if err != nil {
		return nil, err
	}
	rep := &SimMatrixReport{Matrix: *m, SHA256: m.hash(), Setup: setup, Shard: fmt.Sprintf("%d/%d", i, n), Runs: []SimRun{}}
	total := (m.runs() - i + n - 1) / n
	for k := i; k < m.runs(); k += n {
		run := m.run(k)
		run.Index = k
		opt := base
		opt.Scenario, opt.Flows, opt.Policy, opt.Net.Seed = run.Scenario, run.Flows, run.Policy, run.Seed
		r, err := Sim(opt)
		if err != nil {
			return nil, fmt.Errorf("run %d (%s, %d flows, seed %d, policy %s): %w", k, run.Scenario, run.Flows, run.Seed, run.Policy, err)
		}
		run.Result = r
		rep.Runs = append(rep.Runs, run)
		if progress != nil {
			progress("sim", len(rep.Runs), total)
		}
	}
	return rep, nil
}

// MergeSimShards joins the shards of one matrix into the report of the whole: every run
// once, in order. Shards of different matrices or setups, a run given twice or missing, a run
// that is not the matrix's run of its index, one without a result and a policy whose hash
// differs between runs are errors naming the shard (and the other one).
func MergeSimShards(shards []*SimMatrixReport, names []string) (*SimMatrixReport, error) {
	if len(shards) == 0 {
		return nil, fmt.Errorf("merge needs the shards' JSON files")
	}
	first := shards[0]
	out := &SimMatrixReport{Matrix: first.Matrix, SHA256: first.SHA256, Setup: first.Setup, Shard: "0/1"}
	seen := map[int]string{}
	policies := map[string][2]string{} // a policy's hash and the shard that first gave it
	for s, sh := range shards {
		if sh.SHA256 != first.SHA256 || sh.Matrix.hash() != sh.SHA256 {
			return nil, fmt.Errorf("%s: matrix sha256 %.12s, %s's is %.12s: shards of different matrices (or an edited file)", names[s], sh.SHA256, names[0], first.SHA256)
		}
		if field, a, b := setupDiff(sh.Setup, first.Setup); field != "" {
			return nil, fmt.Errorf("%s: setup %s %s, %s's is %s: shards run with different flags", names[s], field, a, names[0], b)
		}
		for _, r := range sh.Runs {
			if prev, ok := seen[r.Index]; ok {
				return nil, fmt.Errorf("%s: run %d is also in %s", names[s], r.Index, prev)
			}
			if err := first.Matrix.checkRun(r); err != nil {
				return nil, fmt.Errorf("%s: %w", names[s], err)
			}
			if p, ok := policies[r.Policy]; ok && p[0] != r.Result.PolicySHA256 {
				return nil, fmt.Errorf("%s: run %d's policy %s has sha256 %.12s, %s's %.12s: shards run different files under one name", names[s], r.Index, r.Policy, r.Result.PolicySHA256, p[1], p[0])
			}
			policies[r.Policy] = [2]string{r.Result.PolicySHA256, names[s]}
			seen[r.Index] = names[s]
			out.Runs = append(out.Runs, r)
		}
	}
	if len(out.Runs) != first.Matrix.runs() {
		var missing []string
		for k := range first.Matrix.runs() {
			if _, ok := seen[k]; !ok && len(missing) < 10 {
				missing = append(missing, strconv.Itoa(k))
			}
		}
		return nil, fmt.Errorf("%d of the matrix's %d runs are missing (runs %s...): give every shard", first.Matrix.runs()-len(out.Runs), first.Matrix.runs(), strings.Join(missing, ", "))
	}
	slices.SortFunc(out.Runs, func(a, b SimRun) int { return a.Index - b.Index })
	return out, nil
}

// checkRun refuses a run that is not m's run of its index, or whose result is missing or of
// another run.
func (m *SimMatrix) checkRun(r SimRun) error {
	if r.Index < 0 || r.Index >= m.runs() {
		return fmt.Errorf("run %d is outside the matrix's %d runs", r.Index, m.runs())
	}
	want := m.run(r.Index)
	if r.Scenario != want.Scenario || r.Flows != want.Flows || r.Seed != want.Seed || r.Policy != want.Policy {
		return fmt.Errorf("run %d is %s, %d flows, seed %d, policy %s; the matrix's run %d is %s, %d flows, seed %d, policy %s",
			r.Index, r.Scenario, r.Flows, r.Seed, r.Policy, r.Index, want.Scenario, want.Flows, want.Seed, want.Policy)
	}
	if r.Result == nil || r.Result.Result == nil {
		return fmt.Errorf("run %d has no result", r.Index)
	}
	if res := r.Result; res.Seed != r.Seed || res.Policy != r.Policy || !strings.HasPrefix(res.Scenario, r.Scenario+" ") {
		return fmt.Errorf("run %d (%s, seed %d, policy %s) holds the result of %s, seed %d, policy %s", r.Index, r.Scenario, r.Seed, r.Policy, res.Scenario, res.Seed, res.Policy)
	}
	return nil
}

// setupDiff is the first field, in JSON's names (rlcc_params.target_q16), in which a and b
// differ, with its values in each; "" when they agree. A missing setup differs in "setup".
func setupDiff(a, b *SimSetup) (field, va, vb string) {
	if a == nil || b == nil {
		if a == b {
			return "", "", ""
		}
		return "setup", presence(a != nil), presence(b != nil)
	}
	fa, fb := flatJSON(a), flatJSON(b)
	for _, k := range slices.Sorted(maps.Keys(fa)) {
		if fa[k] != fb[k] {
			return k, cmp.Or(fa[k], "absent"), cmp.Or(fb[k], "absent")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(fb)) {
		if _, ok := fa[k]; !ok {
			return k, "absent", fb[k]
		}
	}
	return "", "", ""
}

func presence(ok bool) string {
	if ok {
		return "present"
	}
	return "absent (an older nicc wrote it: run the shard again)"
}

// flatJSON is v's JSON as leaf paths (a.b, a[2]) to their values' JSON.
func flatJSON(v any) map[string]string {
	b, _ := json.Marshal(v)
	var tree any
	_ = json.Unmarshal(b, &tree)
	out := map[string]string{}
	var walk func(path string, t any)
	walk = func(path string, t any) {
		switch t := t.(type) {
		case map[string]any:
			for k, c := range t {
				walk(strings.TrimPrefix(path+"."+k, "."), c)
			}
		case []any:
			for i, c := range t {
				walk(fmt.Sprintf("%s[%d]", path, i), c)
			}
		default:
			leaf, _ := json.Marshal(t)
			out[path] = string(leaf)
		}
	}
	walk("", tree)
	return out
}

// ReadSimShard reads a shard's JSON (what nicc sim --matrix --json printed): one JSON value,
// nothing after it, no field nicc does not write.
func ReadSimShard(path string) (*SimMatrixReport, error) {
	data, err := model.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r SimMatrixReport
	if err := model.DecodeJSON(data, &r); err != nil {
		return nil, fmt.Errorf("%s: not a nicc sim --matrix --json output: %w", path, err)
	}
	if r.SHA256 == "" {
		return nil, fmt.Errorf("%s: no matrix_sha256: not a nicc sim --matrix --json output", path)
	}
	return &r, nil
}

// WriteText prints one line a run.
func (r *SimMatrixReport) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	termtext.Printf(w, "matrix %.12s, shard %s: %d runs\n", r.SHA256, r.Shard, len(r.Runs))
	fmt.Fprintln(tw, "run\tscenario\tflows\tseed\tpolicy\tSU %\tFR\tJain\tQL µs\tQL p99 µs\tDR Gb/s\tdropped events\thealth\t")
	var unhealthy []SimRun
	for _, run := range r.Runs {
		res, health := run.Result.Result, "-"
		if h := run.Result.Health; h != nil {
			health = "ok"
			if !h.Healthy {
				health = "FAIL"
				unhealthy = append(unhealthy, run)
			}
		}
		termtext.Printf(tw, "%d\t%s\t%d\t%d\t%s\t%.2f\t%.1f\t%.4f\t%s\t%s\t%s\t%d\t%s\t\n", run.Index, run.Scenario, run.Flows, run.Seed, run.Policy,
			res.Utilization, res.Fairness, res.Jain, termtext.Num3(res.QueueMeanUs), termtext.Num3(res.QueueP99Us), termtext.Num3(res.DropGbps), res.EventsDropped, health)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, run := range unhealthy {
		termtext.Printf(w, "run %d: health FAIL: %s\n", run.Index, run.Result.Health.failText())
	}
	return nil
}
