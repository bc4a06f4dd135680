package main

import (
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
	return compiler.LoadModel(c.Args().First(), f)
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
		Flags: []cli.Flag{formatFlag, jsonFlag},
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
		Usage:     "print the float model's output for each input row",
		ArgsUsage: "MODEL",
		Description: `Reads ROWS.csv (numbers separated by commas, one row per line, an optional first line of
names) and prints the model's float64 output for each row, one line per row, at full precision
(the shortest decimal that parses back to the same float64). Compare the lines with what the
producing tool printed to check an import. When the CSV's header names every model input, only
those columns are read, so a file with reference outputs beside the inputs can be given as is.

A recurrent (LSTM) model takes rows of either its inputs alone, as consecutive steps of one
flow whose state starts at zero, or its inputs followed by h and c, one step each from that
state; those rows print y, then the new h and c.

  nicc eval testdata/models/rlcc_teacher.onnx --input testdata/models/rlcc_teacher.ref.csv`,
		Flags: []cli.Flag{
			formatFlag, jsonFlag,
			&cli.StringFlag{Name: "input", Aliases: []string{"i"}, Usage: "CSV file of input rows (- for standard input)", Required: true},
		},
		Action: func(c *cli.Context) error {
			m, _, err := loadArg(c)
			if err != nil {
				return err
			}
			rows, err := readRows(c.String("input"), m)
			if err != nil {
				return err
			}
			out, err := compiler.EvalRows(m, rows)
			if err != nil {
				return fmt.Errorf("%s: %w", c.String("input"), err)
			}
			if c.Bool("json") {
				return writeJSON(c.App.Writer, struct {
					Model   string      `json:"model"`
					Rows    int         `json:"rows"`
					Outputs [][]float64 `json:"outputs"`
				}{c.Args().First(), len(out), out})
			}
			var b strings.Builder
			for _, ys := range out {
				for j, y := range ys {
					if j > 0 {
						b.WriteByte(',')
					}
					b.WriteString(num(y))
				}
				b.WriteByte('\n')
			}
			_, err = io.WriteString(c.App.Writer, b.String())
			return err
		},
	}
}

// readRows reads a CSV of rows. When its header names every model input and the rows are
// wider than the inputs, it keeps just those columns, so a reference file with the producing
// tool's outputs beside the inputs evaluates as it is.
func readRows(path string, m *model.Model) ([][]float64, error) {
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	rows, err := model.ReadCSV(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if rows.Names == nil || len(rows.Names) <= m.NumInputs() || m.NewState() != nil {
		return rows.Data, nil
	}
	cols := make([]int, 0, m.NumInputs())
	for _, in := range m.Inputs {
		i := slices.Index(rows.Names, in)
		if i < 0 {
			return rows.Data, nil
		}
		cols = append(cols, i)
	}
	for i, row := range rows.Data {
		x := make([]float64, len(cols))
		for j, c := range cols {
			x[j] = row[c]
		}
		rows.Data[i] = x
	}
	return rows.Data, nil
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
