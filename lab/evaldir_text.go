package lab

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/compiler"
	"github.com/nicc-dev/nicc/termtext"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/rlcc"
)

// EvalDirOptions are nicc eval DIR's.
type EvalDirOptions struct {
	Dir   string  // a compile output directory
	Model string  // the model file compiled, when it has moved since ("": the report's)
	Rows  string  // the CSV of rows
	Rate  float64 // under RL-CC: the rate before each decision, a fraction of line rate
	JSON  bool
}

// EvalDir is nicc eval DIR: the firmware of a compile output directory, row by row in fwsim,
// beside the golden and the float model, printed to w. It streams as EvalModel does; a row
// where firmware and golden model differ is flagged, and a *CheckError ends it.
func EvalDir(w io.Writer, opt EvalDirOptions) error {
	cp, err := compiler.OpenCompiled(opt.Dir, opt.Model)
	if err != nil {
		return err
	}
	e, err := NewFirmwareEval(cp, opt.Rate)
	if err != nil {
		return err
	}
	path := opt.Rows
	in, err := model.OpenCSV(path)
	if err != nil {
		return err
	}
	defer in.Close()
	cols, err := dirColumns(in, path, e)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	p := &dirPrinter{w: bw, json: opt.JSON, e: e, cycles: map[uint64]int{}}
	err = p.start()
	x := make([]float64, len(e.Inputs()))
	for err == nil {
		var row []float64
		if row, err = in.Next(); err != nil {
			break
		}
		for j, col := range cols {
			x[j] = row[col]
		}
		var r *FirmwareRow
		if r, err = e.Eval(x); err != nil {
			err = fmt.Errorf("%s: line %d: %w", path, in.Line(), err)
			break
		}
		err = p.row(in.Line(), r)
	}
	if err == io.EOF {
		err = p.end()
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if err == nil && p.differ > 0 {
		err = &budget.CheckError{Err: fmt.Errorf("%s: the firmware and the golden model differ on %d of %d rows of %s (first: line %d)",
			cp.Firmware, p.differ, p.rows, path, p.firstDiffer)}
	}
	return err
}

// dirColumns is the column of each policy input in the rows: when the header names every
// input (by the policy's names, or by the names the model was compiled with), those columns
// (the others ignored); else all of them in the model file's order, which the compile's
// recorded layout maps onto the policy's (a network of the authors' oldest-first order takes
// its rows oldest first, as its framework does). An LSTM's h and c cannot be given: its rows
// are one flow's steps from the zero state.
func dirColumns(in *model.RowReader, path string, e *FirmwareEval) ([]int, error) {
	inputs := e.Inputs()
	n := len(inputs)
	given, perm := inputs, make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	if l := e.Report.Layout; l != nil && !l.ByPosition && len(l.Given) == n && len(l.Permutation) == n {
		given, perm = l.Given, l.Permutation
	}
	if in.Names != nil {
		if e.Stateful() && (stateColumns(in.Names, 1) != nil) {
			return nil, fmt.Errorf("%s: the header names the LSTM's h and c; eval DIR runs the rows as one flow's consecutive steps from the zero state, so give the inputs alone", path)
		}
		if cols := namedColumns(in.Names, inputs); cols != nil {
			return cols, nil
		}
		if byGiven := namedColumns(in.Names, given); byGiven != nil {
			cols := make([]int, n)
			for i, c := range byGiven {
				cols[perm[i]] = c
			}
			return cols, nil
		}
	}
	if in.Width() != n {
		return nil, fmt.Errorf("%s: rows have %d values; the firmware takes %d inputs (%s): give them in order, or a header naming each",
			path, in.Width(), n, strings.Join(given, ", "))
	}
	cols := make([]int, n)
	for i := range cols {
		cols[perm[i]] = i
	}
	return cols, nil
}

// namedColumns is the column of each of names in header, or nil unless header names them all.
func namedColumns(header, names []string) []int {
	cols := make([]int, 0, len(names))
	for _, name := range names {
		i := slices.Index(header, name)
		if i < 0 {
			return nil
		}
		cols = append(cols, i)
	}
	return cols
}

// dirPrinter writes eval DIR's output a row at a time: a header, one line a row and a
// summary, or (json) one object whose rows stream.
type dirPrinter struct {
	w       *bufio.Writer
	json    bool
	e       *FirmwareEval
	rows    int
	differ  int
	skipped int // rows with a missing value, not run
	// firstDiffer is the line of the first row that differs.
	firstDiffer int
	maxErr      float64        // max |firmware − float|, in the compared unit
	cycles      map[uint64]int // cycles → rows, for the min, median and max
}

// header lines and columns.
func (p *dirPrinter) start() error {
	e, r := p.e, p.e.Report
	if p.json {
		head := map[string]any{
			"dir": e.Dir, "firmware": e.Firmware, "entry": artifact.EntryPolicy, "handler": r.Handler,
			"core": r.Budget.Core.Name, "golden": e.Golden(), "model": r.Model.File, "inputs": e.Inputs(),
			"state": e.Stateful(),
		}
		if e.Handler() == artifact.HandlerRLCC {
			head["rate_before"] = float64(e.Rate()) / nicsdk.LineRate
			head["returns"] = "y"
			if e.Folded() {
				head["returns"] = "multiplier"
			}
		}
		b, err := json.MarshalIndent(head, "", "  ")
		if err != nil {
			return err
		}
		p.w.Write(b[:len(b)-2]) // without the closing "\n}"
		_, err = p.w.WriteString(",\n  \"rows\": [")
		return err
	}
	args := "x"
	if e.Stateful() {
		args = "x, state"
	}
	termtext.Printf(p.w, "firmware  %s: %s(%s) in fwsim on %s; x = the row's %s quantized with %s's formats\n",
		e.Firmware, artifact.EntryPolicy, args, r.Budget.Core.Name, strings.Join(e.Inputs(), ", "), artifact.ReportFile)
	termtext.Printf(p.w, "golden    %s, rebuilt from %s (model IR sha256 %.12s)\n", e.Golden(), r.Model.File, r.Model.Hash)
	if e.Stateful() {
		fmt.Fprintf(p.w, "state     the rows are one flow's consecutive steps from the zero state; each step starts from the golden state\n")
	}
	if e.Handler() == artifact.HandlerRLCC {
		termtext.Printf(p.w, "rl-cc     each row is one decision: the multiplier, and the new rate from %s of line rate\n", termtext.Num(float64(e.Rate())/nicsdk.LineRate))
	}
	if e.Folded() {
		fmt.Fprintf(p.w, "y         nicc_policy returns the multiplier m (the action map is folded into its output table); golden_y* and firmware_y* are the network output y it stands for, derived: (m - 1)/0.2 for m >= 1, (1 - 1/m)/0.2 below, to compare with float_y and your framework\n")
	}
	_, err := termtext.Println(p.w, strings.Join(p.columns(), "  "))
	return err
}

func (p *dirPrinter) columns() []string {
	cols := []string{pad("line", 6), pad("float_y", 12)}
	switch {
	case p.e.Folded():
		cols = append(cols, pad("float_m", 12), pad("golden_m", 12), pad("firmware_m", 12), pad("golden_y*", 12), pad("firmware_y*", 12), pad("new_rate", 12))
	case p.e.Handler() == artifact.HandlerRLCC:
		cols = append(cols, pad("golden_y", 12), pad("firmware_y", 12), pad("multiplier", 12), pad("new_rate", 12))
	default:
		cols = append(cols, pad("golden_y", 12), pad("firmware_y", 12))
	}
	return append(cols, "cycles")
}

func pad(s string, n int) string { return fmt.Sprintf("%-*s", n, s) }

func short(v float64) string { return strconv.FormatFloat(v, 'g', 7, 64) }

func (p *dirPrinter) row(line int, r *FirmwareRow) error {
	p.rows++
	if r.Missing != "" {
		return p.missing(line, r)
	}
	p.cycles[r.Cycles]++
	if !r.Agree {
		p.differ++
		if p.firstDiffer == 0 {
			p.firstDiffer = line
		}
	}
	floatY := r.Float[0]
	compared := p.e.Comparable(floatY)
	p.maxErr = max(p.maxErr, math.Abs(r.FirmwareY-compared))
	isRLCC := p.e.Handler() == artifact.HandlerRLCC
	if p.json {
		type jsonRow struct {
			Line int `json:"line"`
			*FirmwareRow
			Multiplier float64 `json:"multiplier,omitempty"`
			Rate       float64 `json:"new_rate,omitempty"`
			// The y the returned multipliers stand for, when nicc_policy returns the multiplier.
			GoldenY   *float64 `json:"golden_y_derived,omitempty"`
			FirmwareY *float64 `json:"firmware_y_derived,omitempty"`
		}
		jr := jsonRow{Line: line, FirmwareRow: r}
		if p.e.Folded() {
			gy, fy := rlcc.OutputOf(r.GoldenY), rlcc.OutputOf(r.FirmwareY)
			jr.GoldenY, jr.FirmwareY = &gy, &fy
		}
		if isRLCC {
			jr.Multiplier, jr.Rate = float64(r.Multiplier)/nicsdk.Q16One, float64(r.Rate)/nicsdk.LineRate
		}
		b, err := json.Marshal(jr)
		if err != nil {
			return err
		}
		return jsonElement(p.w, p.rows == 1, b)
	}
	vals := []string{pad(strconv.Itoa(line), 6), pad(short(floatY), 12)}
	if p.e.Folded() {
		vals = append(vals, pad(short(compared), 12))
	}
	vals = append(vals, pad(short(r.GoldenY), 12), pad(short(r.FirmwareY), 12))
	if p.e.Folded() {
		vals = append(vals, pad(short(rlcc.OutputOf(r.GoldenY)), 12), pad(short(rlcc.OutputOf(r.FirmwareY)), 12))
	}
	if isRLCC && !p.e.Folded() {
		vals = append(vals, pad(short(float64(r.Multiplier)/nicsdk.Q16One), 12))
	}
	if isRLCC {
		vals = append(vals, pad(short(float64(r.Rate)/nicsdk.LineRate), 12))
	}
	cycles := strconv.FormatUint(r.Cycles, 10)
	if !r.Agree {
		cycles = pad(cycles, 6) + "  DIFFERS from the golden model"
	}
	vals = append(vals, cycles)
	_, err := termtext.Println(p.w, strings.Join(vals, "  "))
	return err
}

// missing prints a row the firmware cannot take: an input is NaN.
func (p *dirPrinter) missing(line int, r *FirmwareRow) error {
	p.skipped++
	if p.json {
		b, err := json.Marshal(map[string]any{"line": line, "float": r.Float, "missing": r.Missing})
		if err != nil {
			return err
		}
		return jsonElement(p.w, p.rows == 1, b)
	}
	_, err := termtext.Printf(p.w, "%s  %s  not run: %s is NaN (missing), and the firmware's inputs are integers\n",
		pad(strconv.Itoa(line), 6), pad(short(r.Float[0]), 12), r.Missing)
	return err
}

// cycleStats are the min, lower median and max cycles over the rows.
func (p *dirPrinter) cycleStats() (lo, med, hi uint64) {
	keys := make([]uint64, 0, len(p.cycles))
	for k := range p.cycles {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) == 0 {
		return 0, 0, 0
	}
	seen, half := 0, (p.rows-p.skipped+1)/2
	med = keys[len(keys)-1]
	for _, k := range keys {
		if seen += p.cycles[k]; seen >= half {
			med = k
			break
		}
	}
	return keys[0], med, keys[len(keys)-1]
}

func (p *dirPrinter) end() error {
	lo, med, hi := p.cycleStats()
	what := "y"
	if p.e.Folded() {
		what = "multiplier"
	}
	if p.json {
		b, err := json.MarshalIndent(map[string]any{
			"rows": p.rows, "not_run_missing": p.skipped, "differ": p.differ, "first_differ_line": p.firstDiffer,
			"max_abs_firmware_vs_float": p.maxErr, "compared": what,
			"cycles_min": lo, "cycles_median": med, "cycles_max": hi,
		}, "  ", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(p.w, "\n  ],\n  \"summary\": %s\n}\n", b)
		return err
	}
	agree := "firmware == golden on every row"
	if p.differ > 0 {
		agree = fmt.Sprintf("firmware != golden on %d rows (first: line %d)", p.differ, p.firstDiffer)
	}
	rows := strconv.Itoa(p.rows)
	if p.skipped > 0 {
		rows += fmt.Sprintf(" (%d not run: a value is missing)", p.skipped)
	}
	_, err := termtext.Printf(p.w, "rows      %s: %s; max |firmware - float| %s (%s); %s cycles min %d, median %d, max %d\n",
		rows, agree, short(p.maxErr), what, artifact.EntryPolicy, lo, med, hi)
	return err
}
