package diff

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nicc-dev/nicc/distill"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/student"
)

const diffTeacher = "../testdata/models/rlcc_teacher.json"

func TestDiffInt8(t *testing.T) {
	r, err := Diff(DiffOptions{Teacher: diffTeacher, Samples: 2000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := r.Stats
	if s.Rows != 2000 {
		t.Errorf("rows %d, want 2000", s.Rows)
	}
	if !(s.MaxAbs >= s.P999 && s.P999 >= s.P99 && s.P99 >= s.P90 && s.P90 >= s.P50 && s.P50 >= 0) {
		t.Errorf("percentiles out of order: %+v", s)
	}
	if !(s.RMSE <= s.MaxAbs) || s.MaxAbs > 2.0/128 {
		t.Errorf("RMSE %v, max %v: want RMSE <= max <= 2/128", s.RMSE, s.MaxAbs)
	}
	if s.FlipRate < 0 || s.FlipRate > 0.01 || s.FlipRate != float64(s.Flips)/float64(s.Rows) {
		t.Errorf("flips %d, rate %v", s.Flips, s.FlipRate)
	}
	if len(r.Trace) != 3 {
		t.Fatalf("trace has %d layers, want 3: %+v", len(r.Trace), r.Trace)
	}
	for _, l := range r.Trace {
		if !(l.RMSE <= l.MaxAbs) || l.MaxAbs > 0.05 {
			t.Errorf("layer %d: %+v", l.Layer, l)
		}
	}
	// The last layer's trace is the output: the statistics' max and RMSE.
	if last := r.Trace[2]; last.MaxAbs != s.MaxAbs || last.Units != 1 || last.Act != "tanh" {
		t.Errorf("last layer %+v, stats max %v", last, s.MaxAbs)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "clamped") {
		t.Errorf("notes %q: want only the clamp note (no trace mismatch)", r.Notes)
	}
	// The 8-bit configuration's trace also lands on MLPIR.Eval.
	r8, err := Diff(DiffOptions{Teacher: diffTeacher, Samples: 500, Seed: 2, Quant: quantizeOpts8()})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range r8.Notes {
		if strings.Contains(n, "internal error") {
			t.Error(n)
		}
	}
	if len(r8.Trace) != 3 || r8.Trace[0].Bits != 8 {
		t.Errorf("8-bit trace %+v", r8.Trace)
	}
}

func quantizeOpts8() quantize.MLPOptions {
	return quantize.MLPOptions{WeightBits: 8, ActBits: 8, TanhBits: 8}
}

// distilledStudent is a small tree student of diffTeacher, written into a temporary directory.
func distilledStudent(t testing.TB) string {
	t.Helper()
	studentFile := filepath.Join(t.TempDir(), "student.json")
	if _, err := student.Distill(student.DistillOptions{Teacher: diffTeacher, Samples: 3000, HeldOut: 0.1, Seed: 1,
		Train: distill.Options{Trees: 3, Depth: 3, LearningRate: 1, L2: 1}}, studentFile); err != nil {
		t.Fatal(err)
	}
	return studentFile
}

func TestDiffTreesFile(t *testing.T) {
	studentFile := distilledStudent(t)
	r, err := Diff(DiffOptions{Teacher: diffTeacher, Against: studentFile, Samples: 1000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Student, "integer IR") || len(r.Trace) != 0 || len(r.Plots) != 0 {
		t.Errorf("student %q, trace %d, plots %v", r.Student, len(r.Trace), r.Plots)
	}
	s := r.Stats
	if s.Rows != 1000 || !(s.MaxAbs >= s.P99 && s.P99 >= s.P50 && s.RMSE <= s.MaxAbs && s.RMSE > 0) {
		t.Errorf("stats %+v", s)
	}
	r, err = Diff(DiffOptions{Teacher: diffTeacher, Against: AgainstTrees, Samples: 1000, Seed: 1,
		Distill: student.DistillOptions{Samples: 3000, Train: distill.Options{Trees: 3, Depth: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	s = r.Stats
	if !strings.Contains(r.Student, "3 trees of depth 3") || s.Rows != 1000 || !(s.MaxAbs >= s.P99 && s.P99 >= s.P50 && s.RMSE <= s.MaxAbs && s.RMSE > 0) {
		t.Errorf("stats %+v", s)
	}
}

func TestDiffBadInput(t *testing.T) {
	dir := t.TempDir()
	wide := filepath.Join(dir, "w.csv")
	if err := os.WriteFile(wide, []byte("1,2\n3,4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opt  DiffOptions
		want string
	}{
		{DiffOptions{Teacher: filepath.Join(dir, "missing.json")}, "missing.json"},
		{DiffOptions{Teacher: diffTeacher, Calib: wide}, "row 1 has 2 values; model rlcc_teacher takes 4 inputs"},
		{DiffOptions{Teacher: diffLSTM, Samples: 10, Quant: quantizeOpts8()}, "--weight-bits and --act-bits apply to dense networks"},
		{DiffOptions{Teacher: "../testdata/models/rlcc_xgb.json", Samples: 10}, "model rlcc_xgb is a tree ensemble, and diff --against int (the default) needs a neural teacher (a dense or LSTM network) to quantize; to compare tree models, give the other one with --against FILE"},
		{DiffOptions{Teacher: diffTeacher, Against: filepath.Join(dir, "nope.json"), Samples: 10}, `: want int (or int8), trees, or a student model file, and there is no file ` + filepath.Join(dir, "nope.json")},
	} {
		_, err := Diff(c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.opt, err, c.want)
		}
	}
}

const diffLSTM = "../testdata/models/rlcc_lstm.onnx"

// The LSTM's statistics are quantize's fidelity on the same rows (sequences from the zero
// state, each side with its own state); the trace has every value of the cell and ends on y.
func TestDiffInt8LSTM(t *testing.T) {
	r, err := Diff(DiffOptions{Teacher: diffLSTM, Samples: 2000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// compile --target int8's quantization of the same rows, independently of Diff.
	c := golden.New(golden.Options{Model: diffLSTM, Seed: 1, Int8: &golden.Int8Options{Samples: 2000}})
	if err := c.Load(""); err != nil {
		t.Fatal(err)
	}
	if err := c.QuantizeInt8(); err != nil {
		t.Fatal(err)
	}
	lstm, ok := c.Policy.(*quantize.LSTMIR)
	if !ok {
		t.Fatal("no LSTM IR")
	}
	s, f := r.Stats, lstm.Fidelity
	if s.Rows != 2000 || f.Rows != 2000 || s.MaxAbs != f.MaxAbs || s.FlipRate != f.Flips || s.MaxAbs == 0 {
		t.Errorf("stats %+v, quantize's fidelity %+v: want the same max |dy| and flip rate", s, f)
	}
	if !(s.MaxAbs >= s.P999 && s.P999 >= s.P99 && s.P99 >= s.P90 && s.P90 >= s.P50 && s.P50 >= 0 && s.RMSE <= s.MaxAbs && s.RMSE > 0) {
		t.Errorf("stats %+v", s)
	}
	want := []string{"x_t", "i", "f", "g", "o", "c'", "h'", "y"}
	if len(r.Trace) != len(want) {
		t.Fatalf("trace %+v, want %v", r.Trace, want)
	}
	for k, l := range r.Trace {
		// c's int8 grid spans the 99.9th percentile of |c| (quantize.CellQuantile): the rare
		// larger cells saturate, by up to about 1.3 on the shipped LSTM.
		bound := 0.5
		if l.Name == "c'" {
			bound = 1.5
		}
		if l.Name != want[k] || !(l.RMSE <= l.MaxAbs) || l.MaxAbs == 0 || l.MaxAbs > bound || l.RMSE > 0.05 {
			t.Errorf("trace %d: %+v, want %s with 0 < RMSE <= 0.05 and RMSE <= max <= %g", k, l, want[k], bound)
		}
	}
	if y := r.Trace[len(want)-1]; y.MaxAbs != s.MaxAbs || math.Abs(y.RMSE-s.RMSE) > 1e-12 || y.Units != 1 || y.Layer != 2 {
		t.Errorf("y's trace %+v, stats %+v: want the same max and RMSE", y, s)
	}
	notes := strings.Join(r.Notes, "\n")
	if strings.Contains(notes, "internal error") || strings.Count(notes, "sequences of 32 steps from the zero recurrent state") != 1 ||
		strings.Contains(notes, "heatmaps") || strings.Contains(notes, "every row is evaluated") { // lab.Diff draws the heatmaps
		t.Errorf("notes:\n%s", notes)
	}
	if len(r.Plots) != 0 {
		t.Errorf("plots %v: compiler draws none", r.Plots)
	}
}

// lstmFloat, the trace's float step, is model.Eval's LSTM: the same h', c' and y along a sequence.
func TestDiffLSTMFloatStep(t *testing.T) {
	m, _, err := golden.LoadModel(diffLSTM, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := distill.DefaultRLCC.Sample(200, 3)
	if err != nil {
		t.Fatal(err)
	}
	st := m.NewState()
	h, c := make([]float64, len(st.H)), make([]float64, len(st.C))
	for r := range d.X[0] {
		x := make([]float64, len(d.X))
		for i := range x {
			x[i] = d.X[i][r]
		}
		want := m.Eval(st, x)[0]
		_, gates, y := lstmFloat(m, x, h, c)
		if len(gates) != 4*len(h) || math.Abs(y-want) > 1e-12 {
			t.Fatalf("step %d: y %v, model.Eval %v", r, y, want)
		}
		for j := range h {
			if math.Abs(h[j]-st.H[j]) > 1e-12 || math.Abs(c[j]-st.C[j]) > 1e-12 {
				t.Fatalf("step %d unit %d: h %v c %v, model.Eval's %v %v", r, j, h[j], c[j], st.H[j], st.C[j])
			}
		}
	}
}

// Sampled states compared with a file are streamed, and give what the same rows read from a
// CSV give.
func TestDiffStreamsSampledRows(t *testing.T) {
	dir := t.TempDir()
	studentFile := distilledStudent(t)
	const n, seed = 5000, 9
	d, err := distill.DefaultRLCC.Sample(n, seed)
	if err != nil {
		t.Fatal(err)
	}
	var csv strings.Builder
	for _, row := range d.RowMajor() {
		for i, v := range row {
			if i > 0 {
				csv.WriteByte(',')
			}
			csv.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		}
		csv.WriteByte('\n')
	}
	rows := filepath.Join(dir, "rows.csv")
	if err := os.WriteFile(rows, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	streamed, err := Diff(DiffOptions{Teacher: diffTeacher, Against: studentFile, Samples: n, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	read, err := Diff(DiffOptions{Teacher: diffTeacher, Against: studentFile, Calib: rows})
	if err != nil {
		t.Fatal(err)
	}
	if streamed.Stats.Rows != n || !reflect.DeepEqual(streamed.Stats, read.Stats) || !reflect.DeepEqual(streamed.Notes, read.Notes) {
		t.Errorf("streamed %+v %q\nread     %+v %q", streamed.Stats, streamed.Notes, read.Stats, read.Notes)
	}
	// Δy is kept sorted by |Δy|: the same values either way.
	if !slices.Equal(streamed.Figures.DY, read.Figures.DY) {
		t.Error("Δy differs")
	}
	if want := fmt.Sprintf("%d RL-CC states sampled with T = 0.768 (seed %d)", n, seed); streamed.Calib != want {
		t.Errorf("calib %q, want %q", streamed.Calib, want)
	}
}

// BenchmarkDiffRows reports the most live heap nicc diff holds per compared row (its Δy, 8
// bytes, for a streamed comparison): the figure does not grow with the rows.
func BenchmarkDiffRows(b *testing.B) {
	studentFile := distilledStudent(b)
	for _, n := range []int{100_000, 1_000_000} {
		for _, against := range []string{studentFile, AgainstInt8} {
			name := "file"
			if against == AgainstInt8 {
				name = "int8"
			}
			b.Run(fmt.Sprintf("%s/rows=%d", name, n), func(b *testing.B) {
				var peak uint64
				for b.Loop() {
					runtime.GC()
					base := liveHeap()
					stop := watchLiveHeap(&peak)
					if _, err := Diff(DiffOptions{Teacher: diffTeacher, Against: against, Samples: n, Seed: 1}); err != nil {
						b.Fatal(err)
					}
					stop()
					peak -= min(peak, base)
				}
				b.ReportMetric(float64(peak)/float64(n), "live-B/row")
			})
		}
	}
}

var liveSample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}

// liveHeap is the heap the last collection found live.
func liveHeap() uint64 {
	metrics.Read(liveSample)
	return liveSample[0].Value.Uint64()
}

// watchLiveHeap records the largest live heap into peak until stop is called.
func watchLiveHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	*peak = 0
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			*peak = max(*peak, liveHeap())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		*peak = max(*peak, liveHeap())
	}
}
