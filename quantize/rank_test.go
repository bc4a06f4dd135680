package quantize_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/quantize"
)

// rankPlans are layouts worth checking for ir: all trees in one group (when its table fits),
// one group per tree up to RankLanes, and coarse and fine buckets.
func rankPlans(ir *quantize.TreeIR) []quantize.RankPlan {
	var plans []quantize.RankPlan
	groupings := [][][]int{}
	var all [][]int
	for t := range ir.Trees {
		k := t % quantize.RankLanes
		if k >= len(all) {
			all = append(all, nil)
		}
		all[k] = append(all[k], t)
	}
	groupings = append(groupings, all)
	one := [][]int{{}}
	for t := range ir.Trees {
		one[0] = append(one[0], t)
	}
	groupings = append(groupings, one)
	// fine: the smallest shift with at most 4096 buckets; then coarser ones.
	fine := make([]int, len(ir.Inputs))
	for i := range fine {
		for fine[i] < 31 {
			if _, nb := ir.RankFixups(i, fine[i]); nb <= 4096 {
				break
			}
			fine[i]++
		}
	}
	for _, g := range groupings {
		for _, coarser := range []int{0, 3, 8, 31} {
			shift := make([]int, len(ir.Inputs))
			for i := range shift {
				shift[i] = min(fine[i]+coarser, 31)
			}
			plans = append(plans, quantize.RankPlan{Groups: g, Shift: shift})
		}
	}
	return plans
}

// The rank layout computes TreeIR.EvalScore exactly for every input within the ranges: at
// every edge value (each threshold's T−1, T, T+1 and the range ends) and at random inputs,
// whatever the grouping and the buckets; the Go twin is what codegen's rank form prints.
func TestRankExact(t *testing.T) {
	for _, s := range shippedModels(t) {
		ir, err := quantize.Trees(s.m, s.formats(t), quantize.TreeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		built := 0
		for _, plan := range rankPlans(ir) {
			l, err := ir.BuildRank(plan)
			if err != nil {
				if !strings.Contains(err.Error(), "table entries") {
					t.Errorf("%s: %v", s.name, err)
				}
				continue
			}
			built++
			rng := rand.New(rand.NewPCG(1, uint64(built)))
			x := make([]int32, len(ir.Inputs))
			edges := make([][]int32, len(ir.Inputs))
			for i := range edges {
				edges[i] = ir.EdgeValues(i)
			}
			for k := range 20000 {
				for i, in := range ir.Inputs {
					if k%2 == 0 {
						x[i] = edges[i][rng.IntN(len(edges[i]))]
					} else {
						x[i] = in.Min + int32(rng.Int64N(int64(in.Max)-int64(in.Min)+1))
					}
				}
				if got, want := l.EvalScore(ir, x), ir.EvalScore(x); got != want {
					t.Fatalf("%s, plan %v: x %v: rank layout %d, TreeIR %d", s.name, plan, x, got, want)
				}
			}
			if l.Acc.Lo > ir.Base+ir.Addend || l.Acc.Hi < ir.Base+ir.Addend {
				t.Errorf("%s: accumulator range %+v misses the start", s.name, l.Acc)
			}
		}
		if built == 0 && len(ir.Inputs) <= 4 { // the breast-cancer ensemble splits 30 features: no table fits
			t.Errorf("%s: no plan could be built", s.name)
		}
	}
}

// Bad plans are refused with what is wrong.
func TestRankBadPlan(t *testing.T) {
	s := shippedModels(t)[0]
	ir, err := quantize.Trees(s.m, s.formats(t), quantize.TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	shift := []int{8, 8, 8, 8}
	for _, c := range []struct {
		plan quantize.RankPlan
		want string
	}{
		{quantize.RankPlan{Shift: shift}, "0 groups"},
		{quantize.RankPlan{Groups: [][]int{{0}, {1}, {2}, {3}, {4, 5, 6, 7, 8, 9}}, Shift: shift}, "5 groups"},
		{quantize.RankPlan{Groups: [][]int{{0, 1, 2, 3, 4, 5, 6, 7, 8}}, Shift: shift}, "tree 9 is in no group"},
		{quantize.RankPlan{Groups: [][]int{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9}}, Shift: shift}, "tree 9 is out of range or in two groups"},
		{quantize.RankPlan{Groups: [][]int{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}, Shift: shift}, "over 65536 table entries"},
		{quantize.RankPlan{Groups: [][]int{{0, 1}, {2, 3, 4, 5, 6, 7, 8, 9}}, Shift: []int{8}}, "1 shifts for 4 inputs"},
		{quantize.RankPlan{Groups: [][]int{{0, 1}, {2}, {3}, {4, 5, 6, 7, 8, 9}}, Shift: []int{8, 32, 8, 8}}, ""},
	} {
		_, err := ir.BuildRank(c.plan)
		if c.want == "" {
			if err == nil || !strings.Contains(err.Error(), "shift 32 is outside 0..31") && !strings.Contains(err.Error(), "table entries") {
				t.Errorf("plan %v: %v", c.plan, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("plan %v: error %v, want %q", c.plan, err, c.want)
		}
	}
}
