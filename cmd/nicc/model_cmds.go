package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/nicc-dev/nicc/compiler"
	"github.com/nicc-dev/nicc/model"
	"github.com/urfave/cli/v2"
)

var formatFlag = &cli.StringFlag{
	Name:  "format",
	Value: "auto",
	Usage: "model format: " + strings.Join(compiler.FormatNames(), ", ") + " (auto: .onnx is ONNX, .json is nicc or XGBoost by content, 'tree' text is LightGBM)",
}

var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print machine-readable JSON"}

// forceFlag builds what the fit stage would refuse: a model whose lower bound is over the
// budget or the core's memory.
var forceFlag = &cli.BoolFlag{Name: "force", Usage: "build a model even when its lower bound is over the budget or the core's memory (refused otherwise, exit 1)"}

func loadArg(c *cli.Context) (*model.Model, compiler.Format, error) {
	if c.NArg() != 1 {
		return nil, 0, fmt.Errorf("%s takes one MODEL file, got %d arguments", c.Command.Name, c.NArg())
	}
	f, err := compiler.ParseFormat(c.String("format"))
	if err != nil {
		return nil, 0, err
	}
	inputs, err := modelInputs(c)
	if err != nil {
		return nil, 0, err
	}
	return compiler.LoadModelAs(c.Args().First(), f, inputs)
}

func inspectCommand() *cli.Command {
	return &cli.Command{
		Name:      "inspect",
		Usage:     "describe a model: kind, shape, parameters, operations per decision, weight and threshold ranges",
		ArgsUsage: "MODEL",
		Description: `Loads MODEL with the same importer compile uses and prints what it found. Operations per
decision count the float model's work: a multiply-accumulate is two FLOPs; trees count the
comparisons on their longest paths.

  nicc inspect testdata/models/rlcc_teacher.onnx
  nicc inspect --json testdata/models/rlcc_xgb.json`,
		Flags: []cli.Flag{formatFlag, inputsFlag, jsonFlag},
		Action: func(c *cli.Context) error {
			m, f, err := loadArg(c)
			if err != nil {
				return err
			}
			s := m.Summarize()
			if c.Bool("json") {
				return writeJSON(c.App.Writer, struct {
					File   string `json:"file"`
					Format string `json:"format"`
					FLOPs  int    `json:"flops_per_decision"`
					*model.Summary
				}{c.Args().First(), f.String(), s.Ops.FLOPs(), s})
			}
			return printSummary(c.App.Writer, c.Args().First(), f, s)
		},
	}
}

func printSummary(w io.Writer, path string, f compiler.Format, s *model.Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "model\t%s (%s, %s)\n", s.Name, f, path)
	fmt.Fprintf(tw, "kind\t%s\n", s.Kind)
	fmt.Fprintf(tw, "shape\t%s\n", s.Shape)
	fmt.Fprintf(tw, "inputs\t%d: %s\n", len(s.Inputs), strings.Join(s.Inputs, ", "))
	fmt.Fprintf(tw, "outputs\t%d\n", s.Outputs)
	fmt.Fprintf(tw, "params\t%d\n", s.Params)
	fmt.Fprintf(tw, "ops\t%d FLOPs per decision (%d mul-add, %d add, %d compare, %d tanh/sigmoid)\n",
		s.Ops.FLOPs(), s.Ops.MulAdd, s.Ops.Add, s.Ops.Compare, s.Ops.Nonlinear)
	if s.StateFloats > 0 {
		fmt.Fprintf(tw, "state\t%d floats carried between decisions\n", s.StateFloats)
	}
	if s.Doc != "" {
		fmt.Fprintf(tw, "doc\t%s\n", s.Doc)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(s.Layers) > 0 {
		fmt.Fprintln(w, "layers")
		for i, l := range s.Layers {
			act := l.Act.String()
			if l.Op == model.OpLSTM {
				act = "gates i,f,g,o"
			}
			bias := "no bias"
			if l.HasBias {
				bias = "bias"
			}
			fmt.Fprintf(tw, "  %d\t%s\t%d→%d\t%s\t%d params\t%s\tweights [%s, %s]\n", i, l.Op, l.In, l.Out,
				act, l.Params, bias, num(l.Weights.Min), num(l.Weights.Max))
		}
	}
	if t := s.Trees; t != nil {
		fmt.Fprintf(tw, "trees\t%d trees, max depth %d, %d nodes, %d leaves\n", t.Count, t.MaxDepth, t.Nodes, t.Leaves)
		fmt.Fprintf(tw, "score\t%s(%s + Σ leaf), leaves [%s, %s]\n", t.Transform, num(t.Base), num(t.LeafRange.Min), num(t.LeafRange.Max))
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w, "thresholds")
		for _, th := range s.Thresholds {
			fmt.Fprintf(tw, "  %s\t%d splits\t[%s, %s]\n", th.Feature, th.Splits, num(th.Min), num(th.Max))
		}
	}
	return tw.Flush()
}

func evalCommand() *cli.Command {
	return &cli.Command{
		Name:      "eval",
		Usage:     "print the float model's output for each input row, or a compiled firmware's beside it",
		ArgsUsage: "MODEL | DIR",
		Description: `Reads ROWS.csv (numbers separated by commas, one row per line, an optional first line of
names) and prints the model's float64 output for each row, one line per row, at full precision
(the shortest decimal that parses back to the same float64). Compare the lines with what the
producing tool printed to check an import. When the CSV's header names every model input, only
those columns are read, so a file with reference outputs beside the inputs can be given as is.
A header is a line of unique names; any other line that is not all numbers (an empty field, NA,
a quoted number) is an error naming its line and column (README, "CSV rows"). Rows stream: each
prints as it is read, and those before a bad line print before its error.

A recurrent (LSTM) model takes rows of either its inputs alone, as consecutive steps of one
flow whose state starts at zero, or its inputs followed by h and c, one step each from that
state; those rows print y, then the new h and c. A header that names every input selects
the inputs, and h and c too when it names all of them as h0_0.., c0_0.. (or h_0.., c_0..),
so torch's reference file evaluates as it is.

Given a nicc compile output directory DIR (report.json and firmware.elf), eval runs the
firmware's nicc_policy in fwsim on each row, the row quantized with the report's input
formats (clamped to their ranges, as the handler clamps), and prints its output beside the
float model's (on the row as given, what eval MODEL prints) and the golden model's (the
integer model verify compared the firmware with, rebuilt from the model file the report
names, whose hash must match: --model gives it if it moved), and the cycles. Under the
RL-CC handler a row is the state (a_prev, o, a_prev2, o_prev) of one decision: it also prints
the multiplier and the new rate from --rate (a fraction of line rate, default 0.5). An
LSTM's rows are one flow's consecutive steps from the zero state. A row where the firmware
and the golden model differ is flagged, and eval exits 1 after the last row; a row with a
missing value (NaN) is printed, not run.

  nicc eval testdata/models/rlcc_teacher.onnx --input testdata/models/rlcc_teacher.ref.csv
  nicc eval testdata/models/rlcc_lstm.onnx --input testdata/models/rlcc_lstm.ref.csv
  nicc eval build/rlcc --input testdata/models/rlcc_xgb.ref.csv`,
		Flags: []cli.Flag{
			formatFlag, inputsFlag, jsonFlag,
			&cli.StringFlag{Name: "input", Aliases: []string{"i"}, Usage: "CSV file of input rows (- for standard input)", Required: true},
			&cli.StringFlag{Name: "model", Usage: "eval DIR: the model file compiled, when it has moved since (its hash must match the report's)"},
			&cli.Float64Flag{Name: "rate", Value: compiler.DefaultEvalRate, Usage: "eval DIR under the RL-CC handler: the rate before each decision, as a fraction of line rate"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 1 {
				if dir := c.Args().First(); isDir(dir) {
					if !compiler.IsCompileDir(dir) {
						return fmt.Errorf("%s is a directory without %s and %s: eval takes a model file or a nicc compile output directory", dir, compiler.ReportFile, compiler.FirmwareFile)
					}
					return evalDir(c, dir)
				}
			}
			m, _, err := loadArg(c)
			if err != nil {
				return err
			}
			path := c.String("input")
			in, err := model.OpenCSV(path)
			if err != nil {
				return err
			}
			defer in.Close()
			return evalRows(c.App.Writer, in, path, m, c.Args().First(), c.Bool("json"))
		},
	}
}

// evalRows streams the rows of in (read from path) through m, printing each output as it goes:
// it holds one row, so any file size takes the same memory. Rows before a bad line are printed
// before the error. When the header names every model input, just those columns are read, in
// the model's order, so a reference file with the producing tool's outputs beside the inputs
// evaluates as it is.
func evalRows(stdout io.Writer, in *model.RowReader, path string, m *model.Model, modelPath string, asJSON bool) error {
	cols := inputColumns(in.Names, in.Width(), m)
	width := in.Width()
	if cols != nil {
		width = len(cols)
	}
	ev, err := compiler.NewRowEval(m, width)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	w := bufio.NewWriter(stdout)
	p := &evalPrinter{w: w, json: asJSON}
	err = p.start(modelPath)
	x := make([]float64, width)
	for err == nil {
		var row, y []float64
		if row, err = in.Next(); err != nil {
			break
		}
		if cols != nil {
			for j, c := range cols {
				x[j] = row[c]
			}
			row = x
		}
		if y, err = ev.Eval(row); err != nil {
			err = fmt.Errorf("%s: line %d: %w", path, in.Line(), err)
			break
		}
		if err = p.row(y); err != nil {
			err = fmt.Errorf("%s: line %d: %w", path, in.Line(), err)
		}
	}
	if err == io.EOF {
		err = p.end()
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

// inputColumns is the column of each value a row gives the model when the header names every
// model input, in any order; nil means the rows are read whole. For a recurrent model the
// header may also name its state (stateColumns): the columns then hold the inputs, h and c,
// for one step each.
func inputColumns(names []string, width int, m *model.Model) []int {
	if names == nil || width < m.NumInputs() {
		return nil
	}
	cols := make([]int, 0, m.NumInputs())
	for _, in := range m.Inputs {
		i := slices.Index(names, in)
		if i < 0 {
			return nil
		}
		cols = append(cols, i)
	}
	if st := m.NewState(); st != nil {
		cols = append(cols, stateColumns(names, len(st.H))...)
	}
	return cols
}

// stateColumns are the columns of an LSTM's h and c when the header names all 2·hidden of
// them as h0_0..h0_{H-1} and c0_0..c0_{H-1} (PyTorch's h0 and c0, as the ONNX export's
// graph inputs are called) or h_0.. and c_0..; else nil.
func stateColumns(names []string, hidden int) []int {
	for _, p := range [][2]string{{"h0_", "c0_"}, {"h_", "c_"}} {
		var cols []int
		for _, prefix := range p {
			for j := range hidden {
				if i := slices.Index(names, prefix+strconv.Itoa(j)); i >= 0 {
					cols = append(cols, i)
				}
			}
		}
		if len(cols) == 2*hidden {
			return cols
		}
	}
	return nil
}

// evalPrinter writes eval's output a row at a time: one line of comma-separated values a row,
// or (json) {"model", "outputs": [[...], ...], "rows"}, indented as writeJSON indents.
type evalPrinter struct {
	w    *bufio.Writer
	json bool
	rows int
}

func (p *evalPrinter) start(modelPath string) error {
	if !p.json {
		return nil
	}
	name, err := json.Marshal(modelPath)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(p.w, "{\n  \"model\": %s,\n  \"outputs\": [", name)
	return err
}

func (p *evalPrinter) row(ys []float64) error {
	p.rows++
	if !p.json {
		for j, y := range ys {
			if j > 0 {
				p.w.WriteByte(',')
			}
			p.w.WriteString(num(y))
		}
		return p.w.WriteByte('\n')
	}
	b, err := json.MarshalIndent(ys, "    ", "  ")
	if err != nil {
		return err
	}
	if p.rows > 1 {
		p.w.WriteByte(',')
	}
	p.w.WriteString("\n    ")
	_, err = p.w.Write(b)
	return err
}

func (p *evalPrinter) end() error {
	if !p.json {
		return nil
	}
	_, err := fmt.Fprintf(p.w, "\n  ],\n  \"rows\": %d\n}\n", p.rows)
	return err
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
