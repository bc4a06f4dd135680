package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
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

` + budget.VectorsHelp + `

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
  nicc budget fw.elf --entry on_rtt_event --vectors events.txt --budget 1.5us --threads 16
  nicc budget fw.elf --entry sum_window --loop-bound sum_window+0x14=8 --json
  nicc budget build/rlcc
  nicc budget build/rlcc --vectors states.csv
  nicc budget --list-cores`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "entry", Usage: "function symbol to bound and run"},
			&cli.StringFlag{Name: "core", Value: budget.DefaultCore, Usage: "core profile (see --list-cores)"},
			&cli.StringFlag{Name: "budget", Value: "2us", Usage: "time one decision may take: 2us, 1.5µs, 900ns"},
			threadsFlag,
			&cli.StringFlag{Name: "vectors", Usage: "`FILE` of calls to run and measure, format above, or .csv/.tsv rows of nicc_policy's inputs (nicc compile --num-vectors is how many calls verify compares)"},
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
		if c.Bool("json") {
			return writeJSON(w, budget.Cores())
		}
		return budget.WriteCores(w)
	}
	if c.NArg() != 1 {
		return fmt.Errorf("budget takes one ELF file or compile directory, got %d arguments", c.NArg())
	}
	limit, err := budget.Parse(c.String("budget"))
	if err != nil {
		return err
	}
	if err := checkThreads(c); err != nil {
		return err
	}
	opt := budget.Options{
		ELF: c.Args().First(), Entry: c.String("entry"), Core: c.String("core"),
		Budget: limit, ThreadsSharing: c.Int("threads"),
		LoopBounds: c.StringSlice("loop-bound"),
	}
	vectors := c.String("vectors")
	var rep *artifact.CompileReport
	if dir := c.Args().First(); isDir(dir) {
		if rep, vectors, err = budgetDir(c, dir, &opt); err != nil {
			return err
		}
	}
	if opt.Entry == "" && artifact.IsCSVVectors(vectors) {
		opt.Entry = artifact.EntryPolicy
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
	r, err := budget.Analyze(opt)
	if err != nil {
		var ce *budget.CheckError
		if !errors.As(err, &ce) {
			return err
		}
		return checkFailed{budget.Hint(err)}
	}
	err = printReport(c, r)
	if err != nil {
		return err
	}
	if err := r.OverBudget(); err != nil {
		return checkFailed{err}
	}
	return nil
}

// budgetDir points budget at a compile output directory: its firmware.elf, and unless the
// flags say otherwise the report's entry, core, budget and threads sharing, and the vectors
// file compile wrote for the entry (which reproduces the report's measured max).
func budgetDir(c *cli.Context, dir string, opt *budget.Options) (*artifact.CompileReport, string, error) {
	if !artifact.IsCompileDir(dir) {
		return nil, "", fmt.Errorf("%s is a directory without %s and %s: budget takes an ELF file or a nicc compile output directory", dir, artifact.ReportFile, artifact.FirmwareFile)
	}
	rep, err := artifact.ReadReport(dir, artifact.FirmwareFile)
	if err != nil {
		return nil, "", err
	}
	opt.ELF = filepath.Join(dir, artifact.FirmwareFile)
	vectors := c.String("vectors")
	if opt.Entry == "" && !artifact.IsCSVVectors(vectors) {
		opt.Entry = rep.Entry
	}
	b := rep.Budget
	if !c.IsSet("core") {
		opt.Core = b.Core.Name
	}
	if !c.IsSet("budget") && b.BudgetMicros > 0 && b.BudgetMicros < 1e9 {
		opt.Budget = time.Duration(math.Round(b.BudgetMicros * float64(time.Microsecond)))
	}
	if !c.IsSet("threads") && (b.Core.ThreadsSource == "--threads" || b.Core.ThreadsSource == "--threads-sharing") { // the old name in older reports
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
func readBudgetVectors(path, entry string, rep *artifact.CompileReport) ([]budget.Vector, error) {
	if artifact.IsCSVVectors(path) {
		if entry != artifact.EntryPolicy {
			return nil, fmt.Errorf("%s: CSV rows are %s's inputs, not --entry %s's arguments (give %s a file in the vectors format)", path, artifact.EntryPolicy, entry, entry)
		}
		return artifact.CSVVectors(path, rep)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	vs, err := budget.ReadVectors(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return vs, nil
}
