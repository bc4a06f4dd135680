package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nicc-dev/nicc/compiler"
	"github.com/nicc-dev/nicc/fwsim"
	"github.com/urfave/cli/v2"
)

func budgetCommand() *cli.Command {
	return &cli.Command{
		Name:      "budget",
		Usage:     "bound a firmware function's worst-case time statically, measure it on vectors, and check it against the budget",
		ArgsUsage: "ELF | DIR",
		Description: `Loads the firmware ELF, takes the longest path through the entry function and everything it
calls (static WCET, with the core profile's cycle costs), runs the vectors in the emulator,
and prints the WCET in cycles and µs, the measured min/median/max, the tightness (WCET ÷ max
measured), the headroom and a verdict. The verdict uses the WCET, never the measurements:
WCET × threads sharing / clock <= budget. Over budget exits 1, so CI can gate on it.

A loop whose trip count the analysis cannot see must be bounded: the error names its head
(func+offset), and --loop-bound HEAD=N says the head runs at most N times each time the loop
is entered (count the final, exiting test too: at -O0 a loop of n iterations runs its head
n+1 times). A vector that runs past the WCET because a bound is too low fails, naming the
head and how many times it ran. Indirect jumps other than switch tables, recursion, and a
ret or tail call where ra may no longer hold the caller's return address cannot be bounded.

The ELF must be a regular file of at most 64 MiB (the emulator's memory).

` + compiler.VectorsHelp + `

Given a nicc compile output directory DIR (report.json and firmware.elf), budget runs
DIR/firmware.elf with the report's entry, core, budget and threads sharing unless flags say
otherwise, on the verify calls compile wrote for that entry (DIR/vectors.txt, and under the
RL-CC handler DIR/vectors_policy.txt for --entry nicc_policy): the report's measured max
again, cycle for cycle.

--vectors ROWS.csv (a name ending in .csv or .tsv; README "CSV rows") gives rows of
nicc_policy's inputs instead, one call a row, x passed by address (an LSTM's state words too,
zeroed: a new flow's); --entry defaults to nicc_policy. For DIR a row holds real values,
quantized with the report's input formats (clamped to their ranges), and a header naming
every input selects those columns; for a bare ELF a row holds the raw int32 inputs.

The dpa core's clock (1.8 GHz) is a third-party figure and its costs are those of a simple
in-order core: assumptions, labelled as such. --list-cores shows every profile and the
source of each number.

  nicc budget fw.elf --entry on_rtt_event
  nicc budget fw.elf --entry on_rtt_event --vectors events.txt --budget 1.5us --threads-sharing 16
  nicc budget fw.elf --entry sum_window --loop-bound sum_window+0x14=8 --json
  nicc budget build/rlcc
  nicc budget build/rlcc --vectors states.csv
  nicc budget --list-cores`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "entry", Usage: "function symbol to bound and run"},
			&cli.StringFlag{Name: "core", Value: fwsim.DefaultProfile, Usage: "core profile (see --list-cores)"},
			&cli.StringFlag{Name: "budget", Value: "2us", Usage: "time one decision may take: 2us, 1.5µs, 900ns"},
			&cli.IntFlag{Name: "threads-sharing", Usage: "hardware threads sharing the pipeline", DefaultText: "the profile's"},
			&cli.StringFlag{Name: "vectors", Usage: "`FILE` of calls to run and measure, format above, or .csv/.tsv rows of nicc_policy's inputs (a file here; nicc compile --vectors is a count of calls to verify)"},
			&cli.StringSliceFlag{Name: "loop-bound", Usage: "HEAD=N: the loop with head HEAD (0xADDR or func+0xOFF) runs its head at most N times per entry; repeatable"},
			&cli.BoolFlag{Name: "list-cores", Usage: "list the core profiles with their clocks, threads and cost tables, and exit"},
			jsonFlag,
		},
		Action: runBudget,
	}
}

func runBudget(c *cli.Context) error {
	w := c.App.Writer
	if c.Bool("list-cores") {
		if c.NArg() > 0 {
			return fmt.Errorf("--list-cores takes no ELF file")
		}
		ps := fwsim.Profiles()
		if c.Bool("json") {
			return writeJSON(w, ps)
		}
		return printCores(w, ps)
	}
	if c.NArg() != 1 {
		return fmt.Errorf("budget takes one ELF file or compile directory, got %d arguments", c.NArg())
	}
	budget, err := compiler.ParseBudget(c.String("budget"))
	if err != nil {
		return err
	}
	if c.IsSet("threads-sharing") && c.Int("threads-sharing") < 1 {
		return fmt.Errorf("--threads-sharing %d: want at least 1", c.Int("threads-sharing"))
	}
	opt := compiler.BudgetOptions{
		ELF: c.Args().First(), Entry: c.String("entry"), Core: c.String("core"),
		Budget: budget, ThreadsSharing: c.Int("threads-sharing"),
		LoopBounds: c.StringSlice("loop-bound"),
	}
	vectors := c.String("vectors")
	var rep *compiler.CompileReport
	if dir := c.Args().First(); isDir(dir) {
		if rep, vectors, err = budgetDir(c, dir, &opt); err != nil {
			return err
		}
	}
	if opt.Entry == "" && compiler.IsCSVVectors(vectors) {
		opt.Entry = compiler.EntryPolicy
	}
	if opt.Entry == "" {
		return fmt.Errorf("budget needs --entry NAME, the function to bound")
	}
	if vectors != "" {
		if opt.Vectors, err = readBudgetVectors(vectors, opt.Entry, rep); err != nil {
			return err
		}
		opt.VectorsFile = vectors
	}
	r, err := compiler.Budget(opt)
	if err != nil {
		var ce *compiler.CheckError
		if !errors.As(err, &ce) {
			return err
		}
		var we *fwsim.WCETError
		if errors.Is(err, fwsim.ErrUnboundedLoop) && errors.As(err, &we) {
			head := we.Where
			if head == "" {
				head = fmt.Sprintf("0x%x", we.PC)
			}
			err = fmt.Errorf("%w (pass --loop-bound %s=N)", err, head)
		}
		return checkFailed{err}
	}
	if c.Bool("json") {
		err = writeJSON(w, r)
	} else {
		err = printBudget(w, r)
	}
	if err != nil {
		return err
	}
	if !r.Fits {
		return checkFailed{fmt.Errorf("%s: %s is over budget: WCET %s µs > %s µs", r.ELF, r.Entry, us(r.WCETMicros), us(r.BudgetMicros))}
	}
	return nil
}

// budgetDir points budget at a compile output directory: its firmware.elf, and unless the
// flags say otherwise the report's entry, core, budget and threads sharing, and the vectors
// file compile wrote for the entry (which reproduces the report's measured max).
func budgetDir(c *cli.Context, dir string, opt *compiler.BudgetOptions) (*compiler.CompileReport, string, error) {
	if !compiler.IsCompileDir(dir) {
		return nil, "", fmt.Errorf("%s is a directory without %s and %s: budget takes an ELF file or a nicc compile output directory", dir, compiler.ReportFile, compiler.FirmwareFile)
	}
	rep, err := compiler.ReadReport(dir)
	if err != nil {
		return nil, "", err
	}
	opt.ELF = filepath.Join(dir, compiler.FirmwareFile)
	vectors := c.String("vectors")
	if opt.Entry == "" && !compiler.IsCSVVectors(vectors) {
		opt.Entry = rep.Entry
	}
	b := rep.Budget
	if !c.IsSet("core") {
		opt.Core = b.Core.Name
	}
	if !c.IsSet("budget") && b.BudgetMicros > 0 && b.BudgetMicros < 1e9 {
		opt.Budget = time.Duration(math.Round(b.BudgetMicros * float64(time.Microsecond)))
	}
	if !c.IsSet("threads-sharing") && b.Core.ThreadsSource == "--threads-sharing" {
		opt.ThreadsSharing = b.Core.ThreadsSharing
	}
	if vectors == "" {
		for _, v := range rep.VectorFiles {
			if v.Entry == opt.Entry && v.File == filepath.Base(v.File) {
				vectors = filepath.Join(dir, v.File)
			}
		}
	}
	return rep, vectors, nil
}

// readBudgetVectors reads --vectors: CSV rows of nicc_policy's inputs (a .csv or .tsv file;
// real values quantized with the compile's formats when budget was given its directory, raw
// int32 values for a bare ELF) or the vectors format.
func readBudgetVectors(path, entry string, rep *compiler.CompileReport) ([]compiler.Vector, error) {
	if compiler.IsCSVVectors(path) {
		if entry != compiler.EntryPolicy {
			return nil, fmt.Errorf("%s: CSV rows are %s's inputs, not --entry %s's arguments (give %s a file in the vectors format)", path, compiler.EntryPolicy, entry, entry)
		}
		return compiler.CSVVectors(path, rep)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	vs, err := compiler.ReadVectors(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return vs, nil
}

// hz formats a clock in GHz or MHz.
func hz(v float64) string {
	if v >= 1e9 {
		return num(v/1e9) + " GHz"
	}
	return num(v/1e6) + " MHz"
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

// us formats microseconds: three decimals, enough for nanoseconds.
func us(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

func printBudget(w io.Writer, r *compiler.BudgetReport) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "firmware\t%s, entry %s\n", r.ELF, r.Entry)
	core := r.Core
	fmt.Fprintf(tw, "core\t%s at %s (%s)\n", core.Name, hz(core.ClockHz), core.ClockSource)
	fmt.Fprintf(tw, "threads\t%d sharing the pipeline (%s)\n", core.ThreadsSharing, core.ThreadsSource)
	switch n := len(core.Assumed); {
	case n == len(fwsim.SourceKeys()):
		fmt.Fprintf(tw, "assumed\tevery number of profile %s is an assumption (nicc budget --list-cores)\n", core.Name)
	case n > 0:
		fmt.Fprintf(tw, "assumed\t%d of %d numbers of profile %s are assumptions: %s (nicc budget --list-cores)\n",
			n, len(fwsim.SourceKeys()), core.Name, strings.Join(core.Assumed, ", "))
	}
	fmt.Fprintf(tw, "WCET\t%d cycles = %s µs (%d instructions on the worst path)\n", r.WCETCycles, us(r.WCETMicros), r.WCETInsns)
	if m := r.Measured; m != nil {
		fmt.Fprintf(tw, "measured\t%d vectors: min %d, median %d, max %d cycles = %s, %s, %s µs\n",
			m.Vectors, m.MinCycles, m.MedianCycles, m.MaxCycles, us(m.MinMicros), us(m.MedianMicros), us(m.MaxMicros))
		fmt.Fprintf(tw, "tightness\t%s (WCET ÷ max measured)\n", strconv.FormatFloat(m.Tightness, 'f', 3, 64))
	} else {
		fmt.Fprintf(tw, "measured\tnothing: no --vectors\n")
	}
	fmt.Fprintf(tw, "budget\t%s µs\n", us(r.BudgetMicros))
	fmt.Fprintf(tw, "headroom\t%s µs (%s%%)\n", us(r.HeadroomMicro), strconv.FormatFloat(r.HeadroomPct, 'f', 1, 64))
	fmt.Fprintf(tw, "verdict\t%s\n", r.Verdict)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "functions (WCET of each, called on its own)")
	for _, f := range r.Functions {
		line := fmt.Sprintf("  %s\t0x%x\t%d cycles\t%d insns", f.Name, f.Addr, f.Cycles, f.Insns)
		if len(f.Calls) > 0 {
			line += "\tcalls " + strings.Join(f.Calls, ", ")
		}
		fmt.Fprintln(tw, line)
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
			fmt.Fprintf(tw, "  %s+0x%x\t0x%x\thead runs <= %d (%s)\t%d cycles in all\n", l.Func, l.Offset, l.Head, l.Bound, how, l.Cycles)
		}
	}
	return tw.Flush()
}

func printCores(w io.Writer, ps []*fwsim.Profile) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i, p := range ps {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		def := ""
		if p.Name == fwsim.DefaultProfile {
			def = " (default)"
		}
		fmt.Fprintf(tw, "%s%s\t%s, %d hardware thread(s) sharing the pipeline by default\n", p.Name, def, hz(p.ClockHz), p.Threads)
		fmt.Fprintf(tw, "  %s\n", p.Doc)
		costs := map[string]uint64{}
		for _, c := range costKeys(p) {
			costs[c.key] = c.v
		}
		for _, k := range fwsim.SourceKeys() {
			var v string
			switch k {
			case "clock_hz":
				v = hz(p.ClockHz)
			case "threads":
				v = strconv.Itoa(p.Threads)
			case "memory_bytes":
				v = bytesText(p.MemoryBytes)
			default:
				v = strconv.FormatUint(costs[k], 10)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", k, v, p.Sources[k])
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
