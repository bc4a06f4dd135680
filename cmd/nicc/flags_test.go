package main

import (
	"fmt"
	"slices"
	"testing"

	"github.com/urfave/cli/v2"
)

// commandFlags are every command's (and subcommand's) flags, by "nicc CMD [SUB]".
func commandFlags() map[string][]cli.Flag {
	out := map[string][]cli.Flag{}
	for _, c := range newApp().Commands {
		out[c.Name] = c.Flags
		for _, s := range c.Subcommands {
			out[c.Name+" "+s.Name] = s.Flags
		}
	}
	return out
}

// ideas are the ideas several commands share, each under one name (issue 26: --threads-sharing
// and --threads, --out and --plot, --vectors a count and a file were one idea under two names or
// two ideas under one): the commands that have it, and the spellings it must not go by.
var ideas = []struct {
	idea, name string
	commands   []string
	not        []string
}{
	{"hardware threads sharing one pipeline", "threads", []string{"compile", "budget", "sim"}, []string{"threads-sharing"}},
	{"where a command writes its files (a compile, plots, a training, a student)", "out", []string{"compile", "distill", "diff", "sim", "train"}, []string{"plot", "plot-dir", "dir"}},
	{"how many calls verify compares", "num-vectors", []string{"compile", "distill"}, []string{"vectors-count"}},
	{"a file of calls (or CSV rows) to run", "vectors", []string{"budget"}, []string{"vectors-file"}},
	{"the time one decision may take", "budget", []string{"compile", "budget", "distill"}, nil},
	{"how a model's inputs are read: the RL-CC handler or none", "handler", []string{"compile", "distill", "diff", "sim"}, nil},
	{"the names of the model's inputs", "inputs", []string{"inspect", "eval", "compile", "distill", "diff", "sim"}, nil},
	{"the network architecture train trains", "arch", []string{"train"}, nil},
	{"who decides in the simulated network", "policy", []string{"sim"}, nil},
}

// sameNameTwoTypes are names whose flags differ in type across commands on purpose: the same
// idea in a different shape.
var sameNameTwoTypes = map[string]string{
	"flows": "many-to-one's flow count: sim runs one, train trains on a list of them",
}

// One name, one meaning, across every command: a name's flags have one type everywhere (an
// int --vectors in compile and a file --vectors in budget fails this), each shared idea has one
// name in every command that has it, and none of its other spellings is a flag anywhere.
func TestOneNameOneMeaning(t *testing.T) {
	flags := commandFlags()
	types := map[string]map[string][]string{} // name → type → commands
	for cmd, fs := range flags {
		for _, f := range fs {
			for _, n := range f.Names() {
				if types[n] == nil {
					types[n] = map[string][]string{}
				}
				ty := fmt.Sprintf("%T", f)
				types[n][ty] = append(types[n][ty], cmd)
			}
		}
	}
	for n, byType := range types {
		if len(byType) > 1 && sameNameTwoTypes[n] == "" {
			t.Errorf("--%s has %d types across commands: %v", n, len(byType), byType)
		}
	}
	for _, id := range ideas {
		for _, cmd := range id.commands {
			if !definedIn(flags[cmd], id.name) {
				t.Errorf("%s: %s, named --%s elsewhere, is not a flag of nicc %s", id.idea, id.name, id.name, cmd)
			}
		}
		for _, other := range id.not {
			for cmd, fs := range flags {
				if definedIn(fs, other) {
					t.Errorf("nicc %s defines --%s: %s is --%s", cmd, other, id.idea, id.name)
				}
			}
		}
	}
}

func definedIn(fs []cli.Flag, name string) bool {
	return slices.ContainsFunc(fs, func(f cli.Flag) bool { return slices.Contains(f.Names(), name) })
}

// A renamed flag's old spelling still runs, as the new name, in the command it was renamed in
// (hidden: the help lists the new name); it is a flag of no command under the old name where
// that would mean something else, and elsewhere it is left alone (budget's --vectors is a file).
func TestRenamedFlagsStillRun(t *testing.T) {
	app := newApp()
	flags := commandFlags()
	for cmd, renames := range renamed {
		for old, now := range renames {
			if definedIn(flags[cmd], old) || !definedIn(flags[cmd], now) {
				t.Errorf("nicc %s: --%s is renamed --%s, but the command defines --%s: %v, --%s: %v", cmd, old, now, old, definedIn(flags[cmd], old), now, definedIn(flags[cmd], now))
			}
			for _, form := range [][]string{{"--" + old, "7"}, {"--" + old + "=7"}, {"-" + old, "7"}} {
				got := flagsFirst(app, append([]string{"nicc", cmd, "ARG"}, form...))
				want := []string{"nicc", cmd, "--" + now, "7", "--", "ARG"}
				if len(form) == 1 {
					want = []string{"nicc", cmd, "--" + now + "=7", "--", "ARG"}
				}
				if !slices.Equal(got, want) {
					t.Errorf("%v: %v, want %v", form, got, want)
				}
			}
		}
	}
	if got := flagsFirst(app, []string{"nicc", "budget", "ELF", "--vectors", "v.txt"}); !slices.Equal(got, []string{"nicc", "budget", "--vectors", "v.txt", "--", "ELF"}) {
		t.Errorf("budget --vectors (a file, not renamed): %v", got)
	}
}
