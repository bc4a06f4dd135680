package codegen_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/nicc-dev/nicc/codegen"
	"github.com/nicc-dev/nicc/internal/testutil"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/rlcc"
)

// An mlpCase is an integer MLP and the options it is printed with.
type mlpCase struct {
	name string
	ir   *quantize.MLPIR
	opt  codegen.Options
	// calib are the calibration rows (float), for the test vectors.
	calib [][]float64
}

var (
	mlpOnce  sync.Once
	mlpVal   []mlpCase
	mlpError error
)

func mlpCases(t *testing.T) []mlpCase {
	t.Helper()
	mlpOnce.Do(func() { mlpVal, mlpError = buildMLPCases() })
	if mlpError != nil {
		t.Fatal(mlpError)
	}
	return mlpVal
}

// rlccRanges are the RL-CC handler's declared Q16 input formats.
func rlccRanges() []quantize.Input {
	return quantize.GridInputs(rlcc.Grid(nicsdk.DefaultParams(), nicsdk.DefaultLayout))
}

// rlccRows are n RL-CC sampled states as rows.
func rlccRows(n int, seed uint64) ([][]float64, error) { return testutil.RLCCRows(n, seed) }

func buildMLPCases() ([]mlpCase, error) {
	m, err := model.Load("../testdata/models/rlcc_teacher.json")
	if err != nil {
		return nil, err
	}
	calib, err := rlccRows(20000, 1)
	if err != nil {
		return nil, err
	}
	var cs []mlpCase
	for _, c := range []struct {
		name string
		opt  quantize.MLPOptions
	}{
		// The shipped configuration: int16 weights and hidden activations (a scale per
		// channel), the output tanh on an int16 grid with interpolation.
		{"mlp_rlcc", quantize.MLPOptions{WeightBits: 16, ChannelScales: true}},
		// All int8: int8 weights and activations, the exact 256-entry output tanh table.
		{"mlp_rlcc_int8", quantize.MLPOptions{ActBits: 8, TanhBits: 8}},
		// Hidden layers requantized by a shift, two channels to a 64-bit multiply.
		{"mlp_rlcc_packed", quantize.MLPOptions{WeightBits: 16, ChannelScales: true, Packed: true}},
		// The same with open relus (no upper clamp).
		{"mlp_rlcc_packed_open", quantize.MLPOptions{WeightBits: 16, ChannelScales: true, Packed: true, OpenReLU: true}},
		// The same with the output weights' magnitudes in the relus before them.
		{"mlp_rlcc_unit", quantize.MLPOptions{WeightBits: 16, ChannelScales: true, Packed: true, OpenReLU: true, UnitOutput: true}},
	} {
		ir, err := quantize.MLP(m, rlccRanges(), calib, c.opt)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		cs = append(cs, mlpCase{c.name, ir, codegen.Options{}, calib})
	}
	// Unit output weights with a zero output weight (channel 3 of the last hidden layer is
	// never computed, so the pairs after it shift) and two zero rows (5 and 6, paired after
	// it: a pair whose sum is its bias word).
	sparse := *m
	sparse.Layers = slices.Clone(m.Layers)
	h, o := sparse.Layers[1], sparse.Layers[2]
	h.W = slices.Clone(h.W)
	h.W[5], h.W[6] = make([]float64, h.In), make([]float64, h.In)
	o.W = [][]float64{slices.Clone(o.W[0])}
	o.W[0][3] = 0
	sparse.Layers[1], sparse.Layers[2] = h, o
	ir, err := quantize.MLP(&sparse, rlccRanges(), calib, quantize.MLPOptions{WeightBits: 16, ChannelScales: true, Packed: true, OpenReLU: true, UnitOutput: true})
	if err != nil {
		return nil, fmt.Errorf("sparse: %w", err)
	}
	cs = append(cs, mlpCase{"mlp_rlcc_unit_sparse", ir, codegen.Options{}, calib})
	// Folded for the RL-CC handler: the output tables hold the multiplier (interpolated on the
	// 16-bit grid, exact per entry on the 8-bit one), which the function returns.
	for _, c := range slices.Clone(cs) {
		if c.name != "mlp_rlcc_int8" && c.name != "mlp_rlcc_packed_open" && c.name != "mlp_rlcc_unit" {
			continue
		}
		f := *c.ir
		if !f.FoldRLCC() {
			return nil, fmt.Errorf("%s: no fold", c.name)
		}
		cs = append(cs, mlpCase{c.name + "_folded", &f, c.opt, calib})
	}
	// A small network with every activation (tanh hidden, identity hidden and output), biases
	// and a zero column.
	mix := &model.Model{Version: model.NativeVersion, Name: "mix", Inputs: []string{"a", "b", "c"}, Layers: []model.Layer{
		{Op: model.OpDense, In: 3, Out: 3, Act: model.ActTanh, W: [][]float64{{0.5, -1.25, 0}, {2, 0.25, 0}, {-0.75, 0.5, 0}}, B: []float64{0.1, -0.2, 0}},
		{Op: model.OpDense, In: 3, Out: 2, Act: model.ActIdentity, W: [][]float64{{1, -1, 0.5}, {0.25, 0.75, -2}}, B: []float64{0.05, 0}},
		{Op: model.OpDense, In: 2, Out: 1, Act: model.ActIdentity, W: [][]float64{{0.6, -0.9}}, B: []float64{0.3}},
	}}
	mixIn := []quantize.Input{{Name: "a", Frac: 16, Min: -2 << 16, Max: 2 << 16}, {Name: "b", Frac: 12, Min: -4096, Max: 8192}, {Name: "c", Frac: 0, Min: math.MinInt32, Max: math.MaxInt32}}
	rng := rand.New(rand.NewPCG(3, 4))
	var mixCal [][]float64
	for range 2000 {
		mixCal = append(mixCal, []float64{4*rng.Float64() - 2, 3*rng.Float64() - 1, 100 * rng.NormFloat64()})
	}
	ir, err = quantize.MLP(mix, mixIn, mixCal, quantize.MLPOptions{})
	if err != nil {
		return nil, fmt.Errorf("mix: %w", err)
	}
	cs = append(cs, mlpCase{"mlp_mix", ir, codegen.Options{Func: "mix", Inline: true}, mixCal})
	// Packed lanes over negative inputs (identity), biases, a hidden tanh and an odd channel.
	ir, err = quantize.MLP(mix, mixIn, mixCal, quantize.MLPOptions{WeightBits: 16, Packed: true})
	if err != nil {
		return nil, fmt.Errorf("mix packed: %w", err)
	}
	cs = append(cs, mlpCase{"mlp_mix_packed", ir, codegen.Options{Func: "mix"}, mixCal})
	// int8 lanes: tanh layers with biases, packed w8/a8, so the second hidden layer (over the
	// first's int8 tanh) takes 21-bit lanes, a full group of three and one of two.
	ir, err = quantize.MLP(testutil.TanhMLP(rand.New(rand.NewPCG(5, 6)), 7, 5), rlccRanges(), calib, quantize.MLPOptions{WeightBits: 8, ActBits: 8, ChannelScales: true, Packed: true})
	if err != nil {
		return nil, fmt.Errorf("lanes8: %w", err)
	}
	if ir.Layers[1].LaneBits != quantize.TripleLaneBits {
		return nil, fmt.Errorf("lanes8: layer 1 has %d-bit lanes", ir.Layers[1].LaneBits)
	}
	cs = append(cs, mlpCase{"mlp_lanes8", ir, codegen.Options{}, calib})
	return cs, nil
}

func TestMLPSnapshots(t *testing.T) {
	for _, c := range mlpCases(t) {
		f, err := codegen.MLP(c.ir, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		snapshot(t, c.name+"/"+f.HeaderName, f.Header)
		snapshot(t, c.name+"/"+f.SourceName, f.Source)
		g, err := codegen.MLP(c.ir, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(f.Source, g.Source) || !bytes.Equal(f.Header, g.Header) {
			t.Errorf("%s: two runs differ", c.name)
		}
	}
}

// TestMLPFreestanding: no floats, libm, heap, loops or calls in the C.
func TestMLPFreestanding(t *testing.T) {
	for _, c := range mlpCases(t) {
		f, err := codegen.MLP(c.ir, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		fn := strings.TrimSuffix(f.SourceName, ".c")
		for _, file := range [][]byte{f.Header, f.Source} {
			code := commentRE.ReplaceAllString(string(file), "")
			code = preprocRE.ReplaceAllString(code, "")
			if m := forbiddenRE.FindString(code); m != "" {
				t.Errorf("%s: %q in the generated C", c.name, m)
			}
			for _, m := range callRE.FindAllStringSubmatch(code, -1) {
				switch m[1] {
				case "return", "INT64_C", "UINT64_C", fn, fn + "_inline", "int32_t", "int64_t", "uint32_t", "uint64_t":
				case strings.ToUpper(fn) + "_KEEP", strings.ToUpper(fn) + "_KEEP_STEP": // the empty asm of packed lanes
				case strings.ToUpper(fn) + "_ASSUME": // __builtin_unreachable of a folded output
				default:
					t.Errorf("%s: %s( in the generated C", c.name, m[1])
				}
			}
		}
	}
}

func TestMLPBadOptions(t *testing.T) {
	ir := mlpCases(t)[0].ir
	for _, o := range []codegen.Options{{Func: "1abc"}, {Func: "_x"}, {Form: codegen.FormTable}} {
		if _, err := codegen.MLP(ir, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	if _, err := codegen.MLP(nil, codegen.Options{}); err == nil {
		t.Error("nil IR: no error")
	}
	bad := *ir
	bad.Layers = append([]quantize.MLPLayer(nil), ir.Layers...)
	bad.Layers[0].AccBits = 16
	if _, err := codegen.MLP(&bad, codegen.Options{}); err == nil {
		t.Error("16-bit accumulator: no error")
	}
}

// mlpVectors are the RL-CC sampled states in Q16 (clamped to the declared ranges), every
// corner of the input box, out-of-range vectors, and uniform random raw vectors within the
// ranges: at least n.
func mlpVectors(c mlpCase, n int) [][]int32 {
	ins := c.ir.Inputs
	var vs [][]int32
	for mask := range 1 << len(ins) {
		x := make([]int32, len(ins))
		for i, in := range ins {
			x[i] = in.Min
			if mask>>i&1 == 1 {
				x[i] = in.Max
			}
		}
		vs = append(vs, x)
	}
	for _, row := range c.calib {
		x := make([]int32, len(ins))
		for i, in := range ins {
			x[i] = in.Quantize(row[i])
		}
		vs = append(vs, x)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	// Out of range, which the code clamps: the int32 extremes and 1000 arbitrary vectors.
	for _, v := range []int32{math.MinInt32, math.MaxInt32} {
		x := make([]int32, len(ins))
		for i := range x {
			x[i] = v
		}
		vs = append(vs, x)
	}
	for range 1000 {
		x := make([]int32, len(ins))
		for i := range x {
			x[i] = int32(rng.Uint32())
		}
		vs = append(vs, x)
	}
	for len(vs) < n {
		x := make([]int32, len(ins))
		for i, in := range ins {
			x[i] = int32(int64(in.Min) + rng.Int64N(int64(in.Max)-int64(in.Min)+1))
		}
		vs = append(vs, x)
	}
	return vs
}

// buildFiles compiles f for the host (a driver reading vectors on stdin, with UBSan) and for
// the engine (an ELF).
func buildFiles(t *testing.T, f *codegen.Files) (driver, elf string) { return buildFilesTB(t, f) }

// buildFilesTB is buildFiles for a test or a benchmark.
func buildFilesTB(t testing.TB, f *codegen.Files) (driver, elf string) {
	t.Helper()
	dir := t.TempDir()
	if err := f.Write(dir); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, f.SourceName)
	fn := strings.TrimSuffix(f.SourceName, ".c")
	macro := strings.ToUpper(fn)
	drv := filepath.Join(dir, "driver.c")
	if err := os.WriteFile(drv, fmt.Appendf(nil, `#include <stdio.h>
#include "%s"

/* Reads NUM_INPUTS little-endian int32 per vector from stdin, writes one int32 per vector. */
int main(void)
{
	int32_t x[%s_NUM_INPUTS];
	while (fread(x, sizeof x[0], %s_NUM_INPUTS, stdin) == %s_NUM_INPUTS) {
		int32_t y = %s(x);
		if (fwrite(&y, sizeof y, 1, stdout) != 1)
			return 1;
	}
	return 0;
}
`, f.HeaderName, macro, macro, macro, fn), 0o644); err != nil {
		t.Fatal(err)
	}
	driver, elf = filepath.Join(dir, "driver"), filepath.Join(dir, "policy.elf")
	if err := buildUBSanDriver(dir, driver, drv, src); err != nil {
		t.Fatal(err)
	}
	if err := nicsdk.Build(elf, linkScript, append(append([]string{}, strictFlags...), "-O2", "-I", dir), src); err != nil {
		t.Fatal(err)
	}
	return driver, elf
}

// buildUBSanDriver builds the host driver drv around src with UBSan, at -O1 as the compiler's
// sanitized build: the same checks, in half the time of -O2 on the LSTM. The strict warnings
// at -O2 are the firmware build's (nicsdk.Build with strictFlags), which every caller runs too.
func buildUBSanDriver(dir, driver, drv, src string) error {
	args := append(append([]string{}, strictFlags...), "-O2", "-fsanitize=undefined", "-fno-sanitize-recover=all", "-O1", "-findirect-inlining",
		"-I", dir, "-o", driver, drv, src)
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// TestMLPBitExact: golden Call (Eval, or a fold's multiplier) == host C (UBSan) == fwsim(ELF) on ≥ 20k vectors per case, and
// the measured cycles stay within the static WCET on dpa.
func TestMLPBitExact(t *testing.T) {
	for _, c := range mlpCases(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f, err := codegen.MLP(c.ir, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			driver, elfPath := buildFiles(t, f)
			fn := strings.TrimSuffix(f.SourceName, ".c")
			vs := mlpVectors(c, 20000)
			golden := func(x []int32) int32 {
				y := c.ir.Call(x, nil)
				if c.ir.Fold != nil {
					if y < slices.Min(c.ir.Fold) || y > slices.Max(c.ir.Fold) {
						t.Fatalf("%v: multiplier %d outside the fold's entries", x, y)
					}
					return y
				}
				if !c.ir.Out.Contains(int64(y)) {
					t.Fatalf("%v: %d outside the proven output range %v", x, y, c.ir.Out)
				}
				return y
			}
			wcet, maxCycles, size := agreeThreeWay(t, driver, elfPath, fn, len(c.ir.Inputs), vs, golden)
			fd := c.ir.Fidelity
			t.Logf("%s: %d vectors bit-exact; dpa: WCET %d cycles (%d insns), max measured %d, code %d bytes; fidelity on %d rows: max |dy| %.5f (%.2f/128), flips %.3f%%",
				c.name, len(vs), wcet.Cycles, wcet.Insns, maxCycles, size, fd.Rows, fd.MaxAbs, 128*fd.MaxAbs, 100*fd.Flips)
		})
	}
}
