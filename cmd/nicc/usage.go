package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// A usage error (a flag the command does not define, a flag without its value) prints one
// line on stderr, with the nearest flag the command has when one is close, and exits 2:
// not the command's whole help, which buried the one line that matters.

// withUsageErrors sets usageError on every command and subcommand.
func withUsageErrors(cmds []*cli.Command) []*cli.Command {
	for _, c := range cmds {
		c.OnUsageError = usageError
		withUsageErrors(c.Subcommands)
	}
	return cmds
}

// usageError is err in one line, naming the command, with "did you mean" for an undefined
// flag whose name is close to one the command defines.
func usageError(c *cli.Context, err error, _ bool) error {
	help := "nicc"
	if c.Command != nil && c.Command.HelpName != "" {
		help = c.Command.HelpName
	}
	where := ""
	if cmd, ok := strings.CutPrefix(help, "nicc "); ok {
		where = cmd + ": "
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return fmt.Errorf("%s--%s needs a value (%s --help)", where, strings.TrimLeft(name, "-"), help)
	}
	name, ok := strings.CutPrefix(msg, "flag provided but not defined: ")
	if !ok {
		return fmt.Errorf("%s%s (%s --help)", where, msg, help)
	}
	name = strings.TrimLeft(name, "-")
	hint := ""
	if c.Command != nil {
		if near := nearestFlag(name, c.Command.Flags, renamed[c.Command.Name]); near != "" {
			hint = fmt.Sprintf("; did you mean --%s?", near)
		}
	}
	return fmt.Errorf("%sno flag --%s%s (%s --help lists them)", where, name, hint, help)
}

// nearestFlag is the name among flags' closest to given by edit distance, when it is close
// enough to be a slip (at most a third of its letters, and at least one), else "". A slip of
// a renamed flag's old spelling names the new one.
func nearestFlag(given string, flags []cli.Flag, renames map[string]string) string {
	best, bestDist := "", len(given)/3+1
	try := func(name, suggest string) {
		if d := editDistance(given, name); d < bestDist || d == bestDist && best == "" {
			best, bestDist = suggest, d
		}
	}
	for _, f := range flags {
		for _, name := range f.Names() {
			try(name, name)
		}
	}
	for old, now := range renames {
		try(old, now)
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
