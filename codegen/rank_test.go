package codegen_test

import (
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/codegen"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/model/xgboost"
	"github.com/nicc-dev/nicc/quantize"
)

// TestRankBitExact: the shipped RL-CC ensemble in the rank form, golden == host C (UBSan) ==
// fwsim: four groups whose lanes are byte offsets, with buckets of one and of two
// thresholds (two bucket structs); three groups whose lanes are indices, always inlined into
// a caller. The form has no branch, so every input runs the WCET.
func TestRankBitExact(t *testing.T) {
	xgb, err := model.LoadWith("../testdata/models/rlcc_xgb.json", xgboost.Parse)
	if err != nil {
		t.Fatal(err)
	}
	ir, err := quantize.Trees(xgb, rlccQ16(xgb.Inputs), quantize.TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		groups [][]int
		inline bool
		scaled bool
	}{
		{"four", [][]int{{0, 1, 2, 8}, {3, 7}, {4, 9}, {5, 6}}, false, true},
		{"three", [][]int{{0, 1, 2, 8}, {3, 4, 7, 9}, {5, 6}}, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			opt, err := rankOptions(ir, c.groups, []int{8, 9, 8, 12}, codegen.Options{Inline: c.inline})
			if err != nil {
				t.Fatal(err)
			}
			if opt.Rank.Scaled != c.scaled {
				t.Fatalf("lanes scaled %v, want %v", opt.Rank.Scaled, c.scaled)
			}
			b := build(t, genCase{name: c.name, ir: ir, opt: opt})
			src := string(b.files.Source)
			for _, want := range []string{"struct nicc_policy_rank1 {", "struct nicc_policy_rank2 {", "nicc_policy_sums["} {
				if !strings.Contains(src, want) {
					t.Errorf("the source lacks %q", want)
				}
			}
			if strings.Contains(src, "if (") {
				t.Error("the rank form branches")
			}
			wcet, maxCycles, _ := agreeThreeWay(t, b.driver, b.elf, "nicc_policy", len(ir.Inputs), vectors(ir, 20000, 3), ir.Eval)
			if maxCycles != wcet.Cycles {
				t.Errorf("measured max %d cycles, WCET %d: the rank form has one path", maxCycles, wcet.Cycles)
			}
			t.Logf("%s: WCET %d cycles on dpa", c.name, wcet.Cycles)
		})
	}
}

// The rank form needs its layout, and only it takes one.
func TestRankNeedsLayout(t *testing.T) {
	ir := walkIR(t, 2, 2)
	if _, err := codegen.Trees(ir, codegen.Options{Form: codegen.FormRank}); err == nil || !strings.Contains(err.Error(), "rank layout") {
		t.Errorf("rank form without a layout: %v", err)
	}
	opt, err := rankOptions(ir, nil, []int{4, 4, 4, 4}, codegen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := codegen.Trees(ir, codegen.Options{Rank: opt.Rank}); err == nil {
		t.Error("the branch form took a rank layout")
	}
}
