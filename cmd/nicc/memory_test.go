package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Counts whose data would not fit compiler.MemoryLimit are refused before it is allocated:
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
	for _, c := range []struct {
		args []string
		want string // the whole line, or (ending in "…") its start
	}{
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
	} {
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
