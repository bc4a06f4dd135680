package compiler

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nicc-dev/nicc/model"
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
	Shard  string    `json:"shard"`         // "i/n"; "0/1" for a whole matrix
	Runs   []SimRun  `json:"runs"`
}

// ReadSimMatrix reads a matrix file, refusing unknown fields, empty axes and more than
// MaxMatrixRuns runs.
func ReadSimMatrix(path string) (*SimMatrix, error) {
	data, err := model.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m SimMatrix
	if err := dec.Decode(&m); err != nil {
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
func RunSimMatrix(m *SimMatrix, i, n int, base SimOptions, progress ProgressFunc) (*SimMatrixReport, error) {
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
	rep := &SimMatrixReport{Matrix: *m, SHA256: m.hash(), Shard: fmt.Sprintf("%d/%d", i, n), Runs: []SimRun{}}
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
// once, in order. Shards of different matrices, a run given twice or a run missing is an
// error naming it.
func MergeSimShards(shards []*SimMatrixReport, names []string) (*SimMatrixReport, error) {
	if len(shards) == 0 {
		return nil, fmt.Errorf("merge needs the shards' JSON files")
	}
	first := shards[0]
	out := &SimMatrixReport{Matrix: first.Matrix, SHA256: first.SHA256, Shard: "0/1"}
	seen := map[int]string{}
	for s, sh := range shards {
		if sh.SHA256 != first.SHA256 || sh.Matrix.hash() != sh.SHA256 {
			return nil, fmt.Errorf("%s: matrix sha256 %.12s, %s's is %.12s: shards of different matrices (or an edited file)", names[s], sh.SHA256, names[0], first.SHA256)
		}
		for _, r := range sh.Runs {
			if prev, ok := seen[r.Index]; ok {
				return nil, fmt.Errorf("%s: run %d is also in %s", names[s], r.Index, prev)
			}
			if r.Index < 0 || r.Index >= first.Matrix.runs() {
				return nil, fmt.Errorf("%s: run %d is outside the matrix's %d runs", names[s], r.Index, first.Matrix.runs())
			}
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

// ReadSimShard reads a shard's JSON (what nicc sim --matrix --json printed).
func ReadSimShard(path string) (*SimMatrixReport, error) {
	data, err := model.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r SimMatrixReport
	if err := json.Unmarshal(data, &r); err != nil {
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
	textf(w, "matrix %.12s, shard %s: %d runs\n", r.SHA256, r.Shard, len(r.Runs))
	fmt.Fprintln(tw, "run\tscenario\tflows\tseed\tpolicy\tSU %\tFR\tJain\tQL µs\tQL p99 µs\tDR Gb/s\tdropped events\t")
	for _, run := range r.Runs {
		res := run.Result.Result
		textf(tw, "%d\t%s\t%d\t%d\t%s\t%.2f\t%.1f\t%.4f\t%s\t%s\t%s\t%d\t\n", run.Index, run.Scenario, run.Flows, run.Seed, run.Policy,
			res.Utilization, res.Fairness, res.Jain, num3(res.QueueMeanUs), num3(res.QueueP99Us), num3(res.DropGbps), res.EventsDropped)
	}
	return tw.Flush()
}
