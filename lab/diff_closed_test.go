package lab

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/netsim"
)

// The closed-loop table runs the teacher under the compile's parameters and the compile's
// firmware on the same scenarios and seeds: each half is exactly what nicc sim prints for it,
// the deltas and verdicts follow from the figures, and a tolerance nothing meets fails with a
// check error naming the scenarios.
func TestDiffClosedLoop(t *testing.T) {
	t.Parallel()
	dir := compiledForSim(t, teacherNN, true)
	runs := []ClosedLoopRun{{"many-to-one", 8}, {"long-short", 2}}
	net := netsim.Config{DurationNs: 2_000_000, Seed: 3}
	plots := filepath.Join(t.TempDir(), "plots")
	r, err := DiffClosedLoop(ClosedLoopOptions{Teacher: teacherNN, Against: dir, Runs: runs, Net: net, Out: plots})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != len(runs) {
		t.Fatalf("%d rows for %d runs", len(r.Rows), len(runs))
	}
	cr, err := artifact.ReadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range r.Rows {
		teacher, err := Sim(SimOptions{Scenario: runs[i].Scenario, Flows: runs[i].Flows, Policy: teacherNN, Params: cr.FixedParams(), Net: net})
		if err != nil {
			t.Fatal(err)
		}
		compiled, err := Sim(SimOptions{Scenario: runs[i].Scenario, Flows: runs[i].Flows, Policy: dir, Net: net})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(row.Teacher, teacher.Result) || !reflect.DeepEqual(row.Compiled, compiled.Result) ||
			!reflect.DeepEqual(row.TeacherHealth, teacher.Health) || !reflect.DeepEqual(row.CompiledHealth, compiled.Health) {
			t.Errorf("%s: the table's runs differ from nicc sim's", runs[i])
		}
		if row.Compiled.Decisions == 0 || row.Teacher.Decisions == 0 {
			t.Errorf("%s: no decisions", runs[i])
		}
		if row.GoodputDiff != row.Compiled.Goodput-row.Teacher.Goodput {
			t.Errorf("%s: goodput diff %v", runs[i], row.GoodputDiff)
		}
		dq := math.Abs(row.Compiled.QueueMeanUs - row.Teacher.QueueMeanUs)
		want := math.Abs(row.GoodputDiff) <= DefaultMaxGoodputDiff && (dq <= DefaultLatencySlackUs || dq <= DefaultMaxLatencyDiff*row.Teacher.QueueMeanUs) &&
			row.TeacherHealth.Healthy && row.CompiledHealth.Healthy
		if row.Pass != want {
			t.Errorf("%s: pass %v, want %v (%+v)", runs[i], row.Pass, want, row)
		}
		t.Logf("%s: goodput %.4f vs %.4f, QL %.3f vs %.3f µs, pass %v", runs[i], row.Teacher.Goodput, row.Compiled.Goodput,
			row.Teacher.QueueMeanUs, row.Compiled.QueueMeanUs, row.Pass)
	}
	if r.Rows[1].Compiled.RecoveryUs == nil || r.Rows[0].Compiled.RecoveryUs != nil {
		t.Error("long-short's row has no recovery time, or many-to-one's has one")
	}
	for _, f := range r.Plots {
		if st, err := os.Stat(f); err != nil || st.Size() < 1000 {
			t.Errorf("plot %s: %v", f, err)
		}
	}
	if len(r.Plots) != 2 {
		t.Errorf("plots %v", r.Plots)
	}
	var text strings.Builder
	if err := r.WriteText(&text); err != nil || strings.Count(text.String(), "compiled ") < len(runs) {
		t.Errorf("text: %v\n%s", err, text.String())
	}
	// The table's columns are tabwriter's: no tab reaches the text escaped (as Printable
	// escapes one inside an operand), and each compiled row ends in its verdict.
	if strings.Contains(text.String(), `\t`) || !regexp.MustCompile(`(?m)compiled .* (pass|FAIL)$`).MatchString(text.String()) {
		t.Errorf("the table's columns:\n%s", text.String())
	}

	strict, err := DiffClosedLoop(ClosedLoopOptions{Teacher: teacherNN, Against: dir, Runs: runs[:1], Net: net,
		MaxGoodputDiff: 1e-12, MaxLatencyDiff: 1e-12, LatencySlackUs: 1e-12})
	if err != nil {
		t.Fatal(err)
	}
	var ce *budget.CheckError
	if strict.Pass || !errors.As(strict.CheckErr(), &ce) || !strings.Contains(ce.Error(), "many-to-one:8") {
		t.Errorf("tolerances of 1e-12: pass %v, %v", strict.Pass, strict.CheckErr())
	}
	if r.Pass && r.CheckErr() != nil {
		t.Error("a passing table has a check error")
	}
}

func TestDiffClosedLoopRefuses(t *testing.T) {
	if _, err := DiffClosedLoop(ClosedLoopOptions{Teacher: teacherNN, Against: rlccXGB}); err == nil || !strings.Contains(err.Error(), "not a compile output directory") {
		t.Errorf("a model file as --against: %v", err)
	}
	for _, c := range []struct{ runs, want string }{
		{"many-to-one", "SCENARIO:N"}, {"many-to-one:0", "SCENARIO:N"}, {"ring:4", "unknown scenario"}, {"many-to-one:100", "100 flows"},
	} {
		if _, err := ParseClosedLoopRuns(c.runs); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--runs %q: %v, want %q", c.runs, err, c.want)
		}
	}
	runs, err := ParseClosedLoopRuns("many-to-one:8, all-to-all:4,long-short:2")
	if err != nil || !reflect.DeepEqual(runs, []ClosedLoopRun{{"many-to-one", 8}, {"all-to-all", 4}, {"long-short", 2}}) {
		t.Errorf("runs %v, %v", runs, err)
	}
}
