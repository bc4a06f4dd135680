package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/lab"
	"github.com/nicc-dev/nicc/model/formats"
	"github.com/urfave/cli/v2"
)

var formatFlag = &cli.StringFlag{
	Name:  "format",
	Value: "auto",
	Usage: "model format: " + strings.Join(formats.Names(), ", ") + " (" + formats.AutoHelp() + ")",
}

var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print machine-readable JSON"}

// forceFlag builds what would be refused before verify: a model whose lower bound is over the
// budget or the core's memory, or whose code form is over the memory budget.
var forceFlag = &cli.BoolFlag{Name: "force", Usage: "build, verify and bound a model even when its lower bound is over the budget or the core's memory, or its code form over the memory budget (refused otherwise, exit 1); a firmware over the time or memory budget still exits 1"}

// modelArg is the one MODEL argument, its --format (nil: detect it) and its --inputs.
func modelArg(c *cli.Context) (path string, format *formats.Format, inputs []string, err error) {
	if c.NArg() != 1 {
		return "", nil, nil, fmt.Errorf("%s takes one MODEL file, got %d arguments", c.Command.Name, c.NArg())
	}
	if format, err = formats.Lookup(c.String("format")); err != nil {
		return "", nil, nil, err
	}
	inputs, err = modelInputs(c)
	return c.Args().First(), format, inputs, err
}

func inspectCommand() *cli.Command {
	return &cli.Command{
		Name:      "inspect",
		Usage:     "describe a model: kind, shape, parameters, operations per decision, weight and threshold ranges",
		ArgsUsage: "MODEL",
		Description: `Loads MODEL with the same importer compile uses and prints what it found. Operations per
decision count the float model's work: a multiply-accumulate is two FLOPs; trees count the
comparisons on their longest paths. A model whose inputs are named the RL-CC window goes
through the sanity probe under the default RL-CC parameters (see nicc sim --help): one
warning line on standard error, and warnings in --json, when it moves the rate the wrong way.

  nicc inspect testdata/models/rlcc_teacher.onnx
  nicc inspect --json testdata/models/rlcc_xgb.json`,
		Flags: []cli.Flag{formatFlag, inputsFlag, historyFlag, featuresFlag, jsonFlag},
		Action: func(c *cli.Context) error {
			path, format, inputs, err := modelArg(c)
			if err != nil {
				return err
			}
			in, err := lab.Inspect(path, format, inputs)
			if err != nil {
				return err
			}
			warn(c, in.Warnings)
			return printReport(c, in)
		},
	}
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
the multiplier and the new rate from --rate (a fraction of line rate, default 0.5); when
nicc_policy returns the multiplier m (an integer network's or an LSTM's output table holds the
action map), also the network output y it stands for (golden_y*, firmware_y*), derived by
inverting the map: (m - 1)/0.2 for m >= 1, (1 - 1/m)/0.2 below, to compare with your
framework's y. An
LSTM's rows are one flow's consecutive steps from the zero state. A row where the firmware
and the golden model differ is flagged, and eval exits 1 after the last row; a row with a
missing value (NaN) is printed, not run.

  nicc eval testdata/models/rlcc_teacher.onnx --input testdata/models/rlcc_teacher.ref.csv
  nicc eval testdata/models/rlcc_lstm.onnx --input testdata/models/rlcc_lstm.ref.csv
  nicc eval build/rlcc --input testdata/models/rlcc_xgb.ref.csv`,
		Flags: []cli.Flag{
			formatFlag, inputsFlag, historyFlag, featuresFlag, jsonFlag,
			&cli.StringFlag{Name: "input", Aliases: []string{"i"}, Usage: "CSV file of input rows (- for standard input)", Required: true},
			&cli.StringFlag{Name: "model", Usage: "eval DIR: the model file compiled, when it has moved since (its hash must match the report's)"},
			&cli.Float64Flag{Name: "rate", Value: lab.DefaultEvalRate, Usage: "eval DIR under the RL-CC handler: the rate before each decision, as a fraction of line rate"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 1 {
				if dir := c.Args().First(); isDir(dir) {
					if !artifact.IsCompileDir(dir) {
						return fmt.Errorf("%s is a directory without %s and %s: eval takes a model file or a nicc compile output directory", dir, artifact.ReportFile, artifact.FirmwareFile)
					}
					return lab.EvalDir(c.App.Writer, lab.EvalDirOptions{Dir: dir, Model: c.String("model"),
						Rows: c.String("input"), Rate: c.Float64("rate"), JSON: c.Bool("json")})
				}
			}
			path, format, inputs, err := modelArg(c)
			if err != nil {
				return err
			}
			return lab.EvalModel(c.App.Writer, lab.EvalModelOptions{Model: path, Format: format, Inputs: inputs,
				Rows: c.String("input"), JSON: c.Bool("json")})
		},
	}
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// printReport prints r as the command was asked: its JSON with --json, else its text.
func printReport(c *cli.Context, r interface{ WriteText(io.Writer) error }) error {
	if c.Bool("json") {
		return writeJSON(c.App.Writer, r)
	}
	return r.WriteText(c.App.Writer)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
