// Command nicc compiles trained congestion-control policies into NIC firmware.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/model/formats"
	"github.com/nicc-dev/nicc/termtext"
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
	// One line, as the terminal shows it: an error may quote a file's content.
	fmt.Fprintf(app.ErrWriter, "nicc: %s\n", termtext.Printable(err.Error()))
	var cf checkFailed
	var ce *budget.CheckError
	if errors.As(err, &cf) || errors.As(err, &ce) {
		return exitCheck
	}
	return exitBadInput
}

// version is nicc's version from its build information: the module version, else the VCS
// revision (with "-dirty" when the tree had changes), else "devel".
func version(bi *debug.BuildInfo, ok bool) string {
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	switch {
	case rev == "":
		return "devel"
	case dirty:
		return rev + "-dirty"
	}
	return rev
}

func newApp() *cli.App {
	return &cli.App{
		Name:  "nicc",
		Usage: "compile trained congestion-control policies into NIC firmware, and prove them exact and fast enough",
		Description: `nicc reads a trained policy (` + formats.Titles("") + `) and turns it into
branch-only fixed-point firmware for a NIC's programmable congestion-control engine.

Exit codes: 0 success; 1 a check failed (the model is readable but over budget or inexact);
2 bad usage or an unreadable model file.`,
		HideHelpCommand: true,
		Version:         version(debug.ReadBuildInfo()),
		ExitErrHandler:  func(*cli.Context, error) {},
		Commands:        withUsageErrors([]*cli.Command{inspectCommand(), evalCommand(), budgetCommand(), compileCommand(), proveCommand(), distillCommand(), diffCommand(), simCommand(), trainCommand(), agentCommand()}),
		OnUsageError:    usageError,
		Action:          noCommand,
	}
}

// noCommand runs when no command is named: bare nicc prints the usage and exits 2, as any
// other bad usage does.
func noCommand(c *cli.Context) error {
	var names []string
	for _, cmd := range c.App.Commands {
		names = append(names, cmd.Name)
	}
	if c.NArg() > 0 {
		return fmt.Errorf("unknown command %q (want one of %s; nicc --help)", c.Args().First(), strings.Join(names, ", "))
	}
	c.App.Writer = c.App.ErrWriter
	if err := cli.ShowAppHelp(c); err != nil {
		return err
	}
	return fmt.Errorf("no command given (want one of %s)", strings.Join(names, ", "))
}
