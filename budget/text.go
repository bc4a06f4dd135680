package budget

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/fwsim/wcet"
	"github.com/nicc-dev/nicc/termtext"
)

// Hint adds to a budget error what the CLI can do about it: an unbounded loop names
// the --loop-bound that bounds it.
func Hint(err error) error {
	var we *wcet.Error
	if errors.Is(err, wcet.ErrUnboundedLoop) && errors.As(err, &we) {
		head := we.Where
		if head == "" {
			head = fmt.Sprintf("0x%x", we.PC)
		}
		return fmt.Errorf("%w (pass --loop-bound %s=N)", err, head)
	}
	return err
}

// OverBudget is the error of a report whose WCET is over its budget.
func (r *Report) OverBudget() error {
	if r.Fits {
		return nil
	}
	return &CheckError{fmt.Errorf("%s: %s is over budget: WCET %s µs > %s µs", r.ELF, r.Entry, Micros(r.WCETMicros), MicrosAsWritten(r.BudgetMicros))}
}

// ClockText formats a clock in GHz or MHz, at full precision (hzText rounds to 4 digits).
func ClockText(v float64) string {
	if v >= 1e9 {
		return termtext.Num(v/1e9) + " GHz"
	}
	return termtext.Num(v/1e6) + " MHz"
}

// bytesText formats a byte count in KiB or MiB when it is a whole number of them.
func bytesText(n uint64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatUint(n>>20, 10) + " MiB"
	case n >= 1<<20 && n%(1<<10) == 0:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', -1, 64) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatUint(n>>10, 10) + " KiB"
	}
	return strconv.FormatUint(n, 10) + " bytes"
}

// WriteText prints the budget report for a terminal.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	termtext.Printf(tw, "firmware\t%s, entry %s\n", r.ELF, r.Entry)
	core := r.Core
	termtext.Printf(tw, "core\t%s at %s (%s)\n", core.Name, ClockText(core.ClockHz), core.ClockSource)
	termtext.Printf(tw, "threads\t%d sharing the pipeline (%s)\n", core.ThreadsSharing, core.ThreadsSource)
	switch n := len(core.Assumed); {
	case n == len(fwsim.SourceKeys()):
		termtext.Printf(tw, "assumed\tevery number of profile %s is an assumption (nicc budget --list-cores)\n", core.Name)
	case n > 0:
		termtext.Printf(tw, "assumed\t%d of %d numbers of profile %s are assumptions: %s (nicc budget --list-cores)\n",
			n, len(fwsim.SourceKeys()), core.Name, strings.Join(core.Assumed, ", "))
	}
	termtext.Printf(tw, "WCET\t%d cycles = %s µs (%d instructions on the worst path)\n", r.WCETCycles, Micros(r.WCETMicros), r.WCETInsns)
	if m := r.Measured; m != nil {
		termtext.Printf(tw, "measured\t%d vectors: min %d, median %d, max %d cycles = %s, %s, %s µs\n",
			m.Vectors, m.MinCycles, m.MedianCycles, m.MaxCycles, Micros(m.MinMicros), Micros(m.MedianMicros), Micros(m.MaxMicros))
		termtext.Printf(tw, "tightness\t%s (WCET ÷ max measured)\n", strconv.FormatFloat(m.Tightness, 'f', 3, 64))
	} else {
		termtext.Printf(tw, "measured\tnothing: no --vectors\n")
	}
	termtext.Printf(tw, "budget\t%s µs\n", MicrosAsWritten(r.BudgetMicros))
	termtext.Printf(tw, "headroom\t%s µs (%s%%)\n", Micros(r.HeadroomMicro), strconv.FormatFloat(r.HeadroomPct, 'f', 1, 64))
	termtext.Printf(tw, "verdict\t%s\n", r.Verdict)
	termtext.Printf(tw, "load\t%s\n", r.LoadText())
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "functions (WCET of each, called on its own)")
	for _, f := range r.Functions {
		termtext.Printf(tw, "  %s\t0x%x\t%d cycles\t%d insns", f.Name, f.Addr, f.Cycles, f.Insns)
		if len(f.Calls) > 0 {
			termtext.Printf(tw, "\tcalls %s", strings.Join(f.Calls, ", "))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Loops) > 0 {
		fmt.Fprintln(w, "loops")
		for _, l := range r.Loops {
			how := "given"
			if l.Counted {
				how = "counted"
			}
			termtext.Printf(tw, "  %s+0x%x\t0x%x\thead runs <= %d (%s)\t%d cycles in all\n", l.Func, l.Offset, l.Head, l.Bound, how, l.Cycles)
		}
	}
	return tw.Flush()
}

// Cores are the core profiles budget and compile know (nicc budget --list-cores).
func Cores() []*fwsim.Profile { return fwsim.Profiles() }

// DefaultCore is the core profile used when none is given.
const DefaultCore = fwsim.DefaultProfile

// WriteCores prints the core profiles with their clocks, threads, costs and sources.
func WriteCores(w io.Writer) error {
	ps := Cores()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i, p := range ps {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		def := ""
		if p.Name == fwsim.DefaultProfile {
			def = " (default)"
		}
		termtext.Printf(tw, "%s%s\t%s, %d hardware thread(s) sharing the pipeline by default\n", p.Name, def, ClockText(p.ClockHz), p.Threads)
		termtext.Printf(tw, "  %s\n", p.Doc)
		costs := map[string]uint64{}
		for _, c := range costKeys(p) {
			costs[c.key] = c.v
		}
		for _, k := range fwsim.SourceKeys() {
			var v string
			switch k {
			case "clock_hz":
				v = ClockText(p.ClockHz)
			case "threads":
				v = strconv.Itoa(p.Threads)
			case "memory_bytes":
				v = bytesText(p.MemoryBytes)
			case "text_bytes":
				v = bytesText(p.TextBytes)
			case "rodata_bytes":
				v = bytesText(p.RodataBytes)
			default:
				v = strconv.FormatUint(costs[k], 10)
			}
			termtext.Printf(tw, "  %s\t%s\t%s\n", k, v, p.Sources[k])
		}
	}
	return tw.Flush()
}

type costKey struct {
	key string
	v   uint64
}

// costKeys are the profile's costs by JSON key, from Profile.Cost by class.
func costKeys(p *fwsim.Profile) []costKey {
	var out []costKey
	for c := fwsim.ClassALU; c <= fwsim.ClassZbbByte; c++ {
		if c == fwsim.ClassBranch {
			out = append(out, costKey{"branch_taken", p.Cost(c, true)}, costKey{"branch_not_taken", p.Cost(c, false)})
			continue
		}
		out = append(out, costKey{c.String(), p.Cost(c, false)})
	}
	return out
}

// Micros prints a time in µs to the nanosecond.
func Micros(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// MicrosAsWritten is a budget in µs as the user wrote it: the shortest decimal of its
// nanoseconds ÷ 1000 (100ns is 0.1, not 0.09999999999999999 nor 0.100). A report read back
// holds the same float64, so it prints the same.
func MicrosAsWritten(us float64) string { return strconv.FormatFloat(us, 'f', -1, 64) }

// LoadText says how many threads sharing the pipeline the entry sustains within the budget.
func (r *Report) LoadText() string {
	if r.FitsThreads == 0 {
		return "no thread: one alone is over the budget"
	}
	return fmt.Sprintf("fits %d thread(s) sharing the pipeline (N × WCET within the budget)", r.FitsThreads)
}
