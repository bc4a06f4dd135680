package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// simPreset is a network --preset gives nicc sim: values for the flags the command line leaves
// unset.
type simPreset struct {
	about string
	flags [][2]string // flag, value
}

// simPresets are --preset's networks, each measured from the simulator it stands for.
var simPresets = map[string]simPreset{
	"ccsim": {
		about: "NVIDIA's CCsim as NVlabs/RLCC's evaluations run it (docs/CALIBRATION.md): 100 Gb/s links, 1 KB packets, a 10 MiB output buffer, lossy, no ECN (its run's .params); 2 µs links, for its 8.0 µs empty-path RTT; an RTT reply 2.7 µs from its arrival to the CC engine, the next probe waiting as long (its reports come an RTT and at least 2.729 µs apart at any rate); each 4 KB TX event 147 ns sooner than the rate allows (the spacing of its TX events, at every rate); every TX burst 4 KB whatever the rate (its TX events: a flow decides once an RTT and a burst at its rate, so slower flows decide less often, which splits 16 flows into rate groups as in CCsim); each RTT probe ahead of its TX burst's data (two flows then settle at fair rates, as in CCsim); its reliable transport, go-back-N with 640 KiB outstanding a QP (at line rate its queue holds that much a flow, and nothing drops); flows starting in U(1, 2) ms; 170 ms, measured from 50 ms (its generators stop and its collection window ends at 170 ms)",
		flags: [][2]string{{"link-gbps", "100"}, {"mtu", "1024"}, {"buffer", "10485760"}, {"pfc", "off"}, {"ecn", "off"},
			{"link-delay", "2us"}, {"rtt-turnaround", "2729ns"}, {"tx-lead", "147ns"}, {"tx-burst", "4096"}, {"tx-burst-time", "1s"}, {"probe", "tx-first"}, {"go-back-n", "true"}, {"window", "655360"}, {"start-window", "1ms,2ms"}, {"duration", "170ms"}, {"warmup", "50ms"}},
	},
}

// presetNames are --preset's values, sorted.
func presetNames() []string {
	var names []string
	for n := range simPresets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// presetHelp is --preset's part of nicc sim --help.
func presetHelp() string {
	var b strings.Builder
	for _, n := range presetNames() {
		p := simPresets[n]
		var fs []string
		for _, f := range p.flags {
			fs = append(fs, "--"+f[0]+" "+f[1])
		}
		b.WriteString(wrapped("  "+n+":", p.about+". It sets "+strings.Join(fs, " ")+".", "    "))
	}
	return b.String()
}

// wrapped is head and text's words in lines of at most 92 columns, the later ones indented.
func wrapped(head, text, indent string) string {
	var b strings.Builder
	line := head
	for _, w := range strings.Fields(text) {
		if len([]rune(line))+1+len([]rune(w)) > 92 {
			b.WriteString(line + "\n")
			line = indent + w
		} else {
			line += " " + w
		}
	}
	return b.String() + line + "\n"
}

// applyPreset gives the flags --preset names the values the command line left unset.
func applyPreset(c *cli.Context) error {
	name := c.String("preset")
	if name == "" {
		return nil
	}
	p, ok := simPresets[name]
	if !ok {
		return fmt.Errorf("--preset %q: want one of %s", name, strings.Join(presetNames(), ", "))
	}
	for _, f := range p.flags {
		if c.IsSet(f[0]) {
			continue
		}
		if err := c.Set(f[0], f[1]); err != nil {
			return fmt.Errorf("--preset %s: --%s %s: %w", name, f[0], f[1], err)
		}
	}
	return nil
}
