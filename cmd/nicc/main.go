// Command nicc compiles trained congestion-control policies into NIC firmware.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"
)

// Exit codes a CI pipeline can gate on.
const (
	exitOK = 0
	// exitCheck: the input was fine but a check failed (over budget, a verification mismatch).
	exitCheck = 1
	// exitBadInput: bad usage, or a file nicc cannot read.
	exitBadInput = 2
)

// checkFailed marks an error as a failed check rather than bad input.
type checkFailed struct{ error }

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	app := newApp()
	app.Writer, app.ErrWriter = stdout, stderr
	err := app.Run(flagsFirst(app, args))
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(app.ErrWriter, "nicc: %v\n", err)
	var cf checkFailed
	if errors.As(err, &cf) {
		return exitCheck
	}
	return exitBadInput
}

func newApp() *cli.App {
	return &cli.App{
		Name:  "nicc",
		Usage: "compile trained congestion-control policies into NIC firmware, and prove them exact and fast enough",
		Description: `nicc reads a trained policy (ONNX from PyTorch, XGBoost JSON, LightGBM text, or nicc's
native JSON) and turns it into branch-only fixed-point firmware for a NIC's programmable
congestion-control engine.

Exit codes: 0 success; 1 a check failed (the model is readable but over budget or inexact);
2 bad usage or an unreadable model file.`,
		HideHelpCommand: true,
		ExitErrHandler:  func(*cli.Context, error) {},
		Commands:        []*cli.Command{inspectCommand(), evalCommand(), budgetCommand(), compileCommand(), distillCommand(), diffCommand()},
	}
}
