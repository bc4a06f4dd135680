package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Counts whose data would not fit memlimit.Limit are refused before it is allocated:
// exit 2, one line with the estimate, and next to nothing allocated.
func TestHugeCountsRefused(t *testing.T) {
	dir := t.TempDir()
	teacher := models + "rlcc_teacher.json"
	var states strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&states, "%g,%g,%g,%g\n", 0.8+float64(i%40)/100, float64(i%77)/10, 1.0, 0.5)
	}
	statesCSV := filepath.Join(dir, "states.csv")
	if err := os.WriteFile(statesCSV, []byte(states.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	refusedUpFront(t, []refusal{
		{[]string{"distill", teacher, "--samples", "100000000", "--out", out},
			"nicc: samples 100000000: distilling 10 trees of depth 4 on 100000000 states of 4 inputs needs about 13.4 GiB (144 bytes a state, plus 1 MiB of trees and histograms), over nicc's 4 GiB memory limit: at most 29821875 states"},
		{[]string{"compile", teacher, "--target", "trees", "--samples", "100000000", "--out", out},
			"nicc: samples 100000000: distilling 10 trees of depth 4 on 100000000 states of 4 inputs needs about 13.4 GiB…"},
		// A sweep is checked at its largest configuration.
		{[]string{"distill", teacher, "--sweep", "trees=4..8,depth=2..3", "--samples", "40000000", "--out", out},
			"nicc: samples 40000000: distilling 8 trees of depth 3 on 40000000 states of 4 inputs needs about 5.4 GiB…"},
		// Trees alone over the limit: no state count would do.
		{[]string{"distill", teacher, "--trees", "5000", "--depth", "12", "--out", out},
			"nicc: samples 200000: distilling 5000 trees of depth 12 on 200000 states of 4 inputs needs about 11.6 GiB (144 bytes a state, plus 11845 MiB of trees and histograms), over nicc's 4 GiB memory limit: fewer trees or less depth"},
		{[]string{"distill", teacher, "--states", statesCSV, "--trees", "10000", "--depth", "12", "--out", out},
			"nicc: " + statesCSV + ": distilling 10000 trees of depth 12 on 1000 states of 4 inputs needs about 5.6 GiB (144 bytes a state, plus 5785 MiB of trees and histograms), over nicc's 4 GiB memory limit: fewer trees or less depth"},
		{[]string{"diff", teacher, "--samples", "100000000"},
			"nicc: samples 100000000: calibrating rlcc_teacher on 100000000 RL-CC states needs about 18.6 GiB (200 bytes a state), over nicc's 4 GiB memory limit: at most 21474836 states"},
		{[]string{"compile", teacher, "--target", "int8", "--samples", "30000000", "--out", out},
			"nicc: samples 30000000: calibrating rlcc_teacher on 30000000 RL-CC states needs about 5.6 GiB (200 bytes a state)…"},
		{[]string{"diff", models + "rlcc_lstm.onnx", "--samples", "10000000"},
			"nicc: samples 10000000: calibrating rlcc_lstm on 10000000 RL-CC states needs about 4.5 GiB (488 bytes a state), over nicc's 4 GiB memory limit: at most 8801162 states"},
		// Streamed, diff keeps 8 bytes a row, up to the sampler's cap.
		{[]string{"diff", teacher, "--against", "trees", "--samples", "200000000"},
			"nicc: samples 200000000: want 1 to 100000000"},
	})
}

// Simulations and trainings whose memory or events, estimated from their flags, would not fit
// are refused before the run: exit 2, one line with the estimate and what it is based on, and
// next to nothing allocated. Flags out of their range are refused by name.
func TestHugeSimulationsRefused(t *testing.T) {
	sim := []string{"sim", "many-to-one", "--policy", "swift"}
	out := t.TempDir()
	refusedUpFront(t, []refusal{
		{append(sim, "--link-gbps", "1e300"), "nicc: --link-gbps 1e+300: want 0.1 to 10000"},
		{append(sim, "--link-gbps", "1e-300"), "nicc: --link-gbps 1e-300: want 0.1 to 10000"},
		{append(sim, "--link-gbps", "1e6", "--mtu", "64"), "nicc: --link-gbps 1e+06: want 0.1 to 10000"},
		{append(sim, "--link-gbps", "NaN"), "nicc: --link-gbps NaN: want 0.1 to 10000"},
		{append(sim, "--duration", "2h"), `nicc: --duration "2h": want a positive time up to 1h0m0s, such as 20ms, 500us or 800ns`},
		{append(sim, "--latency", "1000h"), `nicc: --latency "1000h": want a positive time up to 1h0m0s, such as 20ms, 500us or 800ns`},
		{append(sim, "--threads", "100000"), "nicc: --threads 100000: want 1 to 65536"},
		{append(sim, "--flows", "0"), "nicc: --flows 0: want at least 1"},
		{append(sim, "--link-delay", "200ms", "--duration", "1s", "--link-gbps", "200", "--rlcc-base-rtt", "1000"),
			"nicc: many-to-one 16 for 1s at 200 Gb/s needs about 7.7 GiB: 7920 MiB for the network (up to 2.08e+07 events in flight at 400 bytes each: every data link's bandwidth-delay product in 4096-byte packets, and each flow's control packets), over nicc's 4 GiB memory limit: a shorter --duration or --link-delay, fewer flows, a larger --mtu or a slower --link-gbps"},
		{append(sim, "--duration", "1h"),
			"nicc: many-to-one 16 for 1h0m0s at 100 Gb/s may fire about 8.03e+11 events (the senders' uplinks at line rate for the whole run in 4096-byte packets, 4 events each, and every flow's RTT probes, one a base RTT), over nicc's limit of 1e+11, hours at netsim's 5 to 10 million events a second: a shorter --duration or --link-delay, fewer flows, a larger --mtu or a slower --link-gbps"},
		{[]string{"train", "--out", out, "--policy", "lstm", "--rollout", "5s"},
			"nicc: a rollout of many-to-one 8 for 5s at 100 Gb/s needs about 22.2 GiB: 4 MiB for the network (up to 113 events in flight at 400 bytes each: every data link's bandwidth-delay product in 4096-byte packets, and each flow's control packets) and 22.2 GiB for the lstm's decisions kept for the gradient (up to 9.95e+06, one a flow and base RTT, 2400 bytes each), over nicc's 4 GiB memory limit: a shorter --rollout or fewer --flows"},
		{[]string{"train", "--out", out, "--rollout", "1000s"},
			"nicc: a rollout of many-to-one 8 for 16m40s at 100 Gb/s needs about 370.6 GiB: …"},
		{[]string{"train", "--out", out, "--lr", "0"}, "nicc: --lr 0: want it in (0, 1)"},
		{[]string{"train", "--out", out, "--iterations", "-1"}, "nicc: --iterations -1: want 1 to 1000000"},
		{[]string{"train", "--out", out, "--action-penalty", "NaN"}, "nicc: --action-penalty NaN: want 0 to 100"},
		{[]string{"diff", models + "rlcc_xgb.json", "--closed-loop", "--against", models, "--max-goodput-diff", "Inf"}, "nicc: --max-goodput-diff +Inf: want a positive finite tolerance"},
	})
}

// refusal is a command line and the one line it must be refused with: the whole line, or
// (ending in "…") its start.
type refusal struct {
	args []string
	want string
}

// refusedUpFront runs each command and asks for exit 2, nothing on stdout, the one line on
// stderr, and at most 64 MiB allocated before the refusal.
func refusedUpFront(t *testing.T, cases []refusal) {
	t.Helper()
	for _, c := range cases {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		code, stdout, stderr := nicc(t, c.args...)
		runtime.ReadMemStats(&after)
		line, ok := strings.CutSuffix(stderr, "\n")
		match := line == c.want
		if start, cut := strings.CutSuffix(c.want, "…"); cut {
			match = strings.HasPrefix(line, start)
		}
		if code != exitBadInput || stdout != "" || !ok || strings.Contains(line, "\n") || !match {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and the one line %q", c.args, code, stdout, stderr, c.want)
		}
		if a := after.TotalAlloc - before.TotalAlloc; a > 64<<20 {
			t.Errorf("%v: allocated %d MiB before refusing", c.args, a>>20)
		}
	}
}
