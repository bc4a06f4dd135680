package main

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// renamed are, per command, the old spellings of flags renamed so that one name means one
// thing across commands (issue 26): old scripts still run, the help lists the new name only.
// An old spelling is here only where it meant what the new name means in that command.
var renamed = map[string]map[string]string{
	"compile": {"threads-sharing": "threads", "vectors": "num-vectors"},
	"budget":  {"threads-sharing": "threads"},
	"distill": {"vectors": "num-vectors"},
	"sim":     {"plot": "out"},
	"train":   {"policy": "arch"},
}

// flagsFirst moves a subcommand's flags ahead of its positional arguments, so that
// `nicc eval MODEL --input ROWS.csv` parses: urfave/cli stops reading flags at the first
// positional argument. A flag takes the next argument as its value unless it is a bool flag
// or is written --name=value; "--" ends the flags. A renamed flag's old spelling becomes its
// new one.
func flagsFirst(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	cmd := app.Command(args[1])
	if cmd == nil {
		return args
	}
	head := 2 // the program and the command, and a subcommand (sim merge) when one is named
	if len(args) > 2 {
		if sub := cmd.Command(args[2]); sub != nil {
			cmd, head = sub, 3
		}
	}
	renames := renamed[cmd.Name]
	if head == 3 {
		renames = nil
	}
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	var flags, positional []string
	rest := args[head:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			positional = append(positional, rest[i+1:]...)
			break
		}
		name := strings.TrimLeft(a, "-")
		if !strings.HasPrefix(a, "-") || a == "-" || name == "" {
			positional = append(positional, a)
			continue
		}
		if n, v, hasV := strings.Cut(name, "="); renames[n] != "" {
			name = renames[n]
			if hasV {
				name += "=" + v
			}
			a = "--" + name
		}
		flags = append(flags, a)
		if !strings.Contains(name, "=") && takesValue[name] && i+1 < len(rest) {
			i++
			flags = append(flags, rest[i])
		}
	}
	out := append(slices.Clone(args[:head]), flags...)
	if len(positional) > 0 {
		out = append(append(out, "--"), positional...)
	}
	return out
}
