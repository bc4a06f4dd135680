package compiler

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/model/modeltest"
)

// BenchmarkCompileScale times nicc compile --handler none (100k vectors, the default) on
// synthetic ensembles (model/modeltest) of issue 10's sizes: 100 trees of depth 6 (nested
// if/else at -O1; 131-144 s before), 100 of depth 8 (walked tables; over 20 minutes before,
// in gcc), 10 of depth 12 (walked; fits the budget), and 2000 of depth 8, refused by the fit
// stage before anything is built (over 10 minutes and 10 GB before). Metrics: the WCET and
// lower bound in cycles on dpa, and the ELF's code and tables. Run it with
// go test -run '^$' -bench CompileScale ./compiler (go tool task bench runs it).
func BenchmarkCompileScale(b *testing.B) {
	for _, s := range []struct{ trees, depth int }{{100, 6}, {100, 8}, {10, 12}, {2000, 8}} {
		b.Run(fmt.Sprintf("%dx%d", s.trees, s.depth), func(b *testing.B) {
			name := fmt.Sprintf("trees_%d_%d", s.trees, s.depth)
			path := filepath.Join(b.TempDir(), name+".json")
			if err := modeltest.Save(path, modeltest.Trees(name, modeltest.RLCCInputs, s.trees, s.depth, 1)); err != nil {
				b.Fatal(err)
			}
			var r *artifact.CompileReport
			var err error
			for b.Loop() {
				r, err = Compile(CompileOptions{Model: path, Out: b.TempDir(), Handler: artifact.HandlerNone})
				var ce *budget.CheckError
				if err != nil && !errors.As(err, &ce) {
					b.Fatal(err)
				}
			}
			var big *TooBigError
			switch {
			case errors.As(err, &big):
				b.ReportMetric(float64(big.Bound.Cycles), "bound-cycles")
				b.ReportMetric(1, "refused")
			case r != nil:
				b.ReportMetric(float64(r.Budget.WCETCycles), "wcet-cycles")
				b.ReportMetric(float64(r.LowerBound.Cycles), "bound-cycles")
				b.ReportMetric(float64(r.CodeBytes+r.RodataBytes), "image-bytes")
			default:
				b.Fatal(err)
			}
		})
	}
}
