// Package budget is the budget stage, and nicc budget: a firmware ELF's static WCET
// (fwsim/wcet) against the time the engine gives a decision, checked by running vectors in
// fwsim (the measured cycles never exceed the bound), with the core's memory; the vectors
// file format; the core profiles' listing; and CheckError, the failed-check verdict.
package budget

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/fwsim/wcet"
)

// Default is the time the engine gives one decision (docs/ARCHITECTURE.md: about 2 µs).
const Default = 2 * time.Microsecond

// Options say what nicc budget checks.
type Options struct {
	ELF   string // path of the firmware ELF
	Entry string // the function to bound and run
	Core  string // core profile name; "" is fwsim.DefaultProfile
	// Budget is the time one decision may take; 0 is Default.
	Budget time.Duration
	// ThreadsSharing is the number of hardware threads sharing the core's pipeline; a
	// decision takes cycles × ThreadsSharing / clock. 0 is the profile's own count.
	ThreadsSharing int
	// Vectors are calls to run and measure (see VectorsHelp); none means WCET only.
	// VectorsFile names their file in messages.
	Vectors     []Vector
	VectorsFile string
	// LoopBounds are "HEAD=N": the loop whose head is HEAD (an address, or function+offset
	// as WCET errors print it) runs its head at most N times per entry.
	LoopBounds []string

	// bound, when not nil, is Entry's static WCET on this very ELF and Core, already
	// analysed (the compile's fit stage bounded the firmware it built): without LoopBounds,
	// Budget uses it instead of analysing again.
	Bound *wcet.Report
}

// CheckError is a check that failed on readable input, the verdict every stage of a compile
// and every judge in the lab returns as it; the CLI exits 1 on it (2 on a usage error). Here:
// the firmware cannot be bounded (a loop without a bound, an indirect jump, recursion), it
// faulted on a vector, or it ran longer than its WCET (an internal error of the analysis).
type CheckError struct{ Err error }

func (e *CheckError) Error() string { return e.Err.Error() }
func (e *CheckError) Unwrap() error { return e.Err }

// Report is what nicc budget prints.
type Report struct {
	ELF   string   `json:"elf"`
	Entry string   `json:"entry"`
	Core  CoreInfo `json:"core"`

	WCETCycles uint64  `json:"wcet_cycles"`
	WCETInsns  uint64  `json:"wcet_insns"` // instructions on the worst-case path
	WCETMicros float64 `json:"wcet_us"`    // WCETCycles × threads sharing / clock

	Measured *Measured `json:"measured,omitempty"` // nil without vectors

	Budget        time.Duration `json:"-"`
	BudgetMicros  float64       `json:"budget_us"`
	HeadroomMicro float64       `json:"headroom_us"`  // budget - WCET µs; negative when over
	HeadroomPct   float64       `json:"headroom_pct"` // of the budget
	Fits          bool          `json:"fits"`
	Verdict       string        `json:"verdict"` // "fits" or "over budget"
	// FitsThreads is the load the entry sustains: the most hardware threads that may share
	// the pipeline with every decision still within the budget, floor(budget × clock ÷ WCET
	// cycles), at most MaxThreads; 0 when one thread alone is over.
	FitsThreads int `json:"fits_threads"`

	Functions []FuncBound `json:"functions"`
	Loops     []LoopBound `json:"loops,omitempty"`
}

// CoreInfo is the profile a budget used, with the numbers the time depends on and where
// they come from.
type CoreInfo struct {
	Name           string  `json:"name"`
	ClockHz        float64 `json:"clock_hz"`
	ClockSource    string  `json:"clock_source"`
	ThreadsSharing int     `json:"threads_sharing"`
	ThreadsSource  string  `json:"threads_source"` // "--threads" when given ("--threads-sharing" in older reports)
	// Assumed lists the profile's numbers whose source is an assumption.
	Assumed []string `json:"assumed"`
}

// Measured summarises the vectors' runs. The median is the lower median: a measured value.
type Measured struct {
	Vectors      int     `json:"vectors"`
	MinCycles    uint64  `json:"min_cycles"`
	MedianCycles uint64  `json:"median_cycles"`
	MaxCycles    uint64  `json:"max_cycles"`
	MinMicros    float64 `json:"min_us"`
	MedianMicros float64 `json:"median_us"`
	MaxMicros    float64 `json:"max_us"`
	MaxInsns     uint64  `json:"max_insns"`
	// Tightness is WCET ÷ max measured: 1 when the vectors reach the worst case.
	Tightness float64 `json:"tightness"`
}

// FuncBound is the WCET of one function the entry reaches, called on its own.
type FuncBound struct {
	Name   string   `json:"name"`
	Addr   uint64   `json:"addr"`
	Cycles uint64   `json:"wcet_cycles"`
	Insns  uint64   `json:"wcet_insns"`
	Calls  []string `json:"calls,omitempty"`
}

// LoopBound is one loop and the bound the WCET used.
type LoopBound struct {
	Func    string `json:"func"`
	Head    uint64 `json:"head"`
	Offset  uint64 `json:"offset"`
	Bound   int    `json:"bound"`
	Counted bool   `json:"counted"` // found by the analysis, not given
	Cycles  uint64 `json:"cycles"`  // the whole loop at its bound
}

// Parse reads a time such as "2us", "1.5µs" or "900ns" (Go duration syntax).
func Parse(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
	if err != nil {
		return 0, fmt.Errorf("budget %q: want a time such as 2us, 1.5µs or 900ns", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("budget %q is not positive", s)
	}
	return d, nil
}

// ParseLoopBound splits "HEAD=N" into the head and a bound N >= 1.
func ParseLoopBound(s string) (head string, n int, err error) {
	head, num, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(head) == "" {
		return "", 0, fmt.Errorf("loop bound %q: want HEAD=N, e.g. 0x10040=8 or handler+0x1c=8", s)
	}
	n, err = strconv.Atoi(strings.TrimSpace(num))
	if err != nil || n < 1 {
		return "", 0, fmt.Errorf("loop bound %q: N must be an integer >= 1 (the most times the loop head runs per entry)", s)
	}
	return strings.TrimSpace(head), n, nil
}

// Budget bounds the entry's cycles statically, runs the vectors, and says whether the
// decision fits the budget. The verdict uses the WCET, never the measurements: a report
// with Fits false is not an error. Bad input (an unreadable or foreign ELF, a missing
// symbol, an unknown core, a malformed loop bound) is an error; so is a failed check, as a
// *CheckError.
func Analyze(opt Options) (*Report, error) {
	p, err := fwsim.LookupProfile(opt.Core)
	if err != nil {
		return nil, err
	}
	threads, threadsSrc := opt.ThreadsSharing, "--threads"
	if threads == 0 {
		threads, threadsSrc = p.Threads, p.Sources["threads"]
	}
	if threads < 1 || threads > MaxThreads {
		return nil, fmt.Errorf("threads sharing %d: want 1 to %d", opt.ThreadsSharing, MaxThreads)
	}
	budget := opt.Budget
	if budget == 0 {
		budget = Default
	}
	if budget < 0 {
		return nil, fmt.Errorf("budget %v is not positive", budget)
	}
	im, err := fwsim.ReadELF(opt.ELF)
	if err != nil {
		return nil, err
	}
	if _, _, ok := im.Symbol(opt.Entry); !ok {
		return nil, fmt.Errorf("%s: entry %q: %w%s", opt.ELF, opt.Entry, fwsim.ErrNoSymbol, funcList(im))
	}
	wopt := wcet.Options{LoopBounds: map[uint64]int{}}
	for _, s := range opt.LoopBounds {
		spec, n, err := ParseLoopBound(s)
		if err != nil {
			return nil, err
		}
		head, err := wcet.ParseLoopHead(im, spec)
		if err != nil {
			return nil, fmt.Errorf("loop bound %q: %v", s, err)
		}
		wopt.LoopBounds[head] = n
	}
	w := opt.Bound
	if w == nil || len(opt.LoopBounds) > 0 {
		w, err = wcet.Bound(im, opt.Entry, p, wopt)
	}
	if err != nil {
		if errors.Is(err, wcet.ErrNoSuchLoop) {
			return nil, fmt.Errorf("%s: %w", opt.ELF, err)
		}
		return nil, &CheckError{fmt.Errorf("%s: cannot bound %s: %w", opt.ELF, opt.Entry, err)}
	}
	micros := func(c uint64) float64 { return p.Seconds(c, threads) * 1e6 }
	r := &Report{
		ELF: opt.ELF, Entry: opt.Entry,
		Core: CoreInfo{Name: p.Name, ClockHz: p.ClockHz, ClockSource: p.Sources["clock_hz"],
			ThreadsSharing: threads, ThreadsSource: threadsSrc},
		WCETCycles: w.Cycles, WCETInsns: w.Insns, WCETMicros: micros(w.Cycles),
		Budget: budget, BudgetMicros: float64(budget) / float64(time.Microsecond),
	}
	for _, k := range fwsim.SourceKeys() {
		if strings.HasPrefix(strings.ToLower(p.Sources[k]), "assumption") {
			r.Core.Assumed = append(r.Core.Assumed, k)
		}
	}
	for _, f := range w.Functions {
		r.Functions = append(r.Functions, FuncBound{Name: f.Name, Addr: f.Addr, Cycles: f.Cycles, Insns: f.Insns, Calls: f.Calls})
	}
	for _, l := range w.Loops {
		r.Loops = append(r.Loops, LoopBound{Func: l.Func, Head: l.Head, Offset: l.Offset, Bound: l.Bound, Counted: l.Counted, Cycles: l.Cycles})
	}
	r.HeadroomMicro = r.BudgetMicros - r.WCETMicros
	r.HeadroomPct = 100 * r.HeadroomMicro / r.BudgetMicros
	r.Fits = r.WCETMicros <= r.BudgetMicros
	r.FitsThreads = fitsThreads(w.Cycles, budget, p.ClockHz)
	r.Verdict = "fits"
	if !r.Fits {
		r.Verdict = "over budget"
	}
	if len(opt.Vectors) > 0 {
		vf := opt.VectorsFile
		if vf == "" {
			vf = "vectors"
		}
		m, err := measure(im, p, opt.Entry, vf, opt.Vectors, w)
		if err != nil {
			return nil, err
		}
		m.MinMicros, m.MedianMicros, m.MaxMicros = micros(m.MinCycles), micros(m.MedianCycles), micros(m.MaxCycles)
		if m.MaxCycles > 0 {
			m.Tightness = float64(w.Cycles) / float64(m.MaxCycles)
		} else {
			m.Tightness = math.Inf(1)
		}
		r.Measured = m
	}
	return r, nil
}

// measure runs every vector on one machine: memory arguments in fresh arena memory, the
// image's own data kept across calls as on the engine. A run above the WCET fails: a loop
// bound it was given is too low (overWCET), or the analysis is wrong.
func measure(im *fwsim.Image, p *fwsim.Profile, entry, file string, vs []Vector, w *wcet.Report) (*Measured, error) {
	m, err := fwsim.NewMachine(im, p)
	if err != nil {
		return nil, err
	}
	cycles := make([]uint64, 0, len(vs))
	var maxInsns uint64
	for i, v := range vs {
		args, err := vectorArgs(m, file, v)
		if err != nil {
			return nil, err
		}
		res, err := m.Call(entry, args...)
		if err != nil {
			return nil, &CheckError{fmt.Errorf("%s line %d: %s faulted: %w", file, v.Line, entry, err)}
		}
		if res.Cycles > w.Cycles {
			return nil, overWCET(im, p, entry, file, vs[:i+1], w, res.Cycles)
		}
		cycles = append(cycles, res.Cycles)
		maxInsns = max(maxInsns, res.Insns)
	}
	slices.Sort(cycles)
	return &Measured{
		Vectors:   len(cycles),
		MinCycles: cycles[0], MedianCycles: cycles[(len(cycles)-1)/2], MaxCycles: cycles[len(cycles)-1],
		MaxInsns: maxInsns,
	}, nil
}

// vectorArgs places v's memory arguments in fresh arena memory and returns the call's
// arguments.
func vectorArgs(m *fwsim.Machine, file string, v Vector) ([]uint64, error) {
	m.ResetAlloc()
	args := make([]uint64, len(v.Args))
	for i, a := range v.Args {
		if a.Bytes == nil {
			args[i] = a.Int
			continue
		}
		addr, err := m.Alloc(uint64(len(a.Bytes)), 16)
		if err == nil {
			err = m.WriteBytes(addr, a.Bytes)
		}
		if err != nil {
			return nil, fmt.Errorf("%s line %d: argument %d: %v", file, v.Line, i+1, err)
		}
		args[i] = addr
	}
	return args, nil
}

// overWCET explains the last of vs, which ran cycles, above the WCET: it replays the vectors
// on a fresh machine (memory carries over from one call to the next) and runs the last one
// again counting loop heads. A loop whose head ran more times per entry than its given bound
// is named with that count; otherwise the analysis itself is wrong.
func overWCET(im *fwsim.Image, p *fwsim.Profile, entry, file string, vs []Vector, w *wcet.Report, cycles uint64) error {
	last := vs[len(vs)-1]
	unsound := &CheckError{fmt.Errorf("INTERNAL ERROR, the WCET analysis is unsound: %s line %d ran %d cycles, above the static WCET of %d; please report it with the ELF and the vector",
		file, last.Line, cycles, w.Cycles)}
	given := false
	for _, l := range w.Loops {
		given = given || !l.Counted
	}
	if !given {
		return unsound
	}
	m, err := fwsim.NewMachine(im, p)
	if err != nil {
		return err
	}
	var runs []int
	for i, v := range vs {
		args, err := vectorArgs(m, file, v)
		if err != nil {
			return err
		}
		if i < len(vs)-1 {
			_, err = m.Call(entry, args...)
		} else {
			runs, _, err = wcet.LoopRuns(m, w.Loops, entry, args...)
		}
		if err != nil {
			return unsound // a replay that differs: not a bound's fault
		}
	}
	var over []string
	for i, l := range w.Loops {
		if runs[i] > l.Bound {
			if l.Counted {
				return unsound
			}
			over = append(over, fmt.Sprintf("loop head %s+0x%x ran %d times in one entry into the loop, more than its --loop-bound of %d", l.Func, l.Offset, runs[i], l.Bound))
		}
	}
	if len(over) == 0 {
		return unsound
	}
	return &CheckError{fmt.Errorf("%s line %d: %s: the bound is too low, so the WCET of %d cycles computed with it is not a bound (this call ran %d)",
		file, last.Line, strings.Join(over, "; "), w.Cycles, cycles)}
}

// funcList names the image's function symbols, for a missing-entry error.
func funcList(im *fwsim.Image) string {
	var names []string
	for _, s := range im.Symbols() {
		if s.Func {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		return " (the file has no function symbols: is it stripped?)"
	}
	const show = 12
	more := ""
	if len(names) > show {
		more = fmt.Sprintf(", and %d more", len(names)-show)
		names = names[:show]
	}
	return " (functions: " + strings.Join(names, ", ") + more + ")"
}

// MaxThreads is the most hardware threads a budget counts sharing a pipeline.
const MaxThreads = 1024

// fitsThreads is the most threads that may share the pipeline with a decision of cycles
// within the budget at clockHz.
func fitsThreads(cycles uint64, budget time.Duration, clockHz float64) int {
	if cycles == 0 {
		return MaxThreads
	}
	return int(min(math.Floor(budget.Seconds()*clockHz/float64(cycles)), MaxThreads))
}
