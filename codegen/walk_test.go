package codegen_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/codegen"
	"github.com/nicc-dev/nicc/model/modeltest"
	"github.com/nicc-dev/nicc/quantize"
)

// walkIR is a synthetic ensemble of trees x depth over four inputs in Q12 on [-1.01, 1.01].
func walkIR(t *testing.T, trees, depth int) *quantize.TreeIR {
	t.Helper()
	m := modeltest.Trees("walk", modeltest.RLCCInputs, trees, depth, 3)
	ins := make([]quantize.Input, len(m.Inputs))
	for i, name := range m.Inputs {
		ins[i] = quantize.Input{Name: name, Frac: 12, Min: -4137, Max: 4137}
	}
	ir, err := quantize.Trees(m, ins, quantize.TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ir
}

// TestWalkParts: an ensemble of more than 256 walk steps is split into parts, each a
// function gcc never inlines, called in tree order with acc; golden == host C (UBSan) ==
// fwsim, alone and always inlined into a caller, and the walk's one path is its worst case.
func TestWalkParts(t *testing.T) {
	t.Parallel()
	ir := walkIR(t, 70, 4) // 280 steps: two parts
	for _, inline := range []bool{false, true} {
		t.Run(fmt.Sprint("inline=", inline), func(t *testing.T) {
			t.Parallel()
			walkParts(t, ir, inline)
		})
	}
}

func walkParts(t *testing.T, ir *quantize.TreeIR, inline bool) {
	c := genCase{name: "parts", ir: ir, opt: codegen.Options{Form: codegen.FormWalk, Inline: inline}}
	b := build(t, c)
	src := string(b.files.Source)
	for _, want := range []string{
		"#define NICC_POLICY_NOINLINE __attribute__((noinline))",
		"static NICC_POLICY_NOINLINE int32_t nicc_policy_part0(const int32_t *x, int32_t acc)",
		"static NICC_POLICY_NOINLINE int32_t nicc_policy_part1(const int32_t *x, int32_t acc)",
		"\tacc = nicc_policy_part0(x, acc);\n\tacc = nicc_policy_part1(x, acc);\n",
		"/* trees 0 to 63 */", "/* trees 64 to 69 */",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("inline %v: the source lacks %q", inline, want)
		}
	}
	if strings.Contains(src, "nicc_policy_part2") {
		t.Errorf("inline %v: a third part", inline)
	}
	wcet, maxCycles, _ := agreeThreeWay(t, b.driver, b.elf, "nicc_policy", len(ir.Inputs), vectors(ir, 5000, 2), ir.Eval)
	// Straight-line code: every input takes the same path.
	if maxCycles != wcet.Cycles {
		t.Errorf("inline %v: measured max %d cycles, WCET %d: a walk has one path", inline, maxCycles, wcet.Cycles)
	}
}

func TestWalkRefusesHugeTrees(t *testing.T) {
	t.Parallel()
	ir := walkIR(t, 1, 16) // 131071 nodes
	if _, err := codegen.Trees(ir, codegen.Options{Form: codegen.FormWalk}); err == nil || !strings.Contains(err.Error(), "tree 0 has 131071 nodes; a walked tree has at most 65536") {
		t.Errorf("error = %v", err)
	}
	if _, err := codegen.Trees(ir, codegen.Options{}); err != nil {
		t.Errorf("the branch form: %v", err)
	}
}
