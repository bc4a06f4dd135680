package lab

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/internal/testutil"
	"github.com/nicc-dev/nicc/model"
)

// genRows is an endless-looking CSV of n rows, made as it is read, so the test itself holds
// none of it. Every `every` rows it records the live heap after a collection.
type genRows struct {
	n, every, done int
	pending        []byte
	heap           []uint64
}

func (g *genRows) Read(p []byte) (int, error) {
	for len(g.pending) < len(p) && g.done < g.n {
		g.pending = fmt.Appendf(g.pending, "%d.25,%d.5,0.9,%d\n", g.done%3, g.done%97, g.done%50)
		g.done++
		if g.done%g.every == 0 {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			g.heap = append(g.heap, ms.HeapAlloc)
		}
	}
	if len(g.pending) == 0 {
		return 0, io.EOF
	}
	k := copy(p, g.pending)
	g.pending = g.pending[:copy(g.pending, g.pending[k:])]
	return k, nil
}

// TestEvalMemoryStaysFlat streams a million rows through eval's loop (both outputs) and checks
// that the live heap does not grow with them: holding the rows, or the outputs, would add at
// least 32 bytes a row, 30 MiB over the run.
func TestEvalMemoryStaysFlat(t *testing.T) {
	m, _, err := golden.LoadModel("../testdata/models/rlcc_xgb.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, asJSON := range []bool{false, true} {
		g := &genRows{n: 1_000_000, every: 100_000}
		in, err := model.NewRowReader(g)
		if err != nil {
			t.Fatal(err)
		}
		if err := evalRows(io.Discard, in, "gen", m, "rlcc_xgb.json", asJSON); err != nil {
			t.Fatal(err)
		}
		if len(g.heap) != 10 {
			t.Fatalf("%d heap samples, want 10", len(g.heap))
		}
		first, last := g.heap[0], g.heap[len(g.heap)-1]
		if last > first+1<<20 {
			t.Errorf("json %v: live heap grew from %d to %d bytes over 900k rows (samples %v)", asJSON, first, last, g.heap)
		}
	}
}

// nicc eval on every real CatBoost model, its format detected, prints CatBoost's own
// prediction for every row within 1e-6 relative (the probability for Logloss, NaN rows
// included).
func TestEvalCatBoost(t *testing.T) {
	for _, name := range testutil.CatBoostConforming {
		t.Run(name, func(t *testing.T) {
			fx, m, path, csv := catboostFiles(t, name)
			var out bytes.Buffer
			if err := EvalModel(&out, EvalModelOptions{Model: path, Rows: csv}); err != nil {
				t.Fatal(err)
			}
			lines := strings.Fields(out.String())
			if len(lines) != len(fx.Rows) {
				t.Fatalf("%d outputs for %d rows", len(lines), len(fx.Rows))
			}
			worst := 0.0
			for i, l := range lines {
				got, err := strconv.ParseFloat(l, 64)
				if err != nil {
					t.Fatal(err)
				}
				want := fx.Output(i, m.Ensemble.Transform == model.TransformSigmoid)
				if e := math.Abs(got-want) / math.Abs(want); e > 1e-6 || math.IsNaN(e) {
					t.Errorf("row %d: nicc eval %v, CatBoost %v", i, got, want)
				} else {
					worst = max(worst, e)
				}
			}
			t.Logf("%d rows: max relative error %.3g", len(lines), worst)
		})
	}
}
