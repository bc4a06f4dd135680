package codegen_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nicc-dev/nicc/codegen"
	"github.com/nicc-dev/nicc/fwsim/wcet"
	"github.com/nicc-dev/nicc/model/onnx"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
)

func shippedLSTM(t testing.TB) (*quantize.LSTMIR, [][]float64) {
	t.Helper()
	l, err := shippedLSTMOnce()
	if err != nil {
		t.Fatal(err)
	}
	return l.ir, l.rows
}

// lstmIRRows is an LSTM's IR and the rows it was calibrated on.
type lstmIRRows struct {
	ir   *quantize.LSTMIR
	rows [][]float64
}

// shippedLSTMOnce quantizes the shipped LSTM once for the tests that read it (none changes
// the IR or the rows).
var shippedLSTMOnce = sync.OnceValues(func() (lstmIRRows, error) {
	var l lstmIRRows
	b, err := os.ReadFile("../testdata/models/rlcc_lstm.onnx")
	if err != nil {
		return l, err
	}
	m, err := onnx.Parse(b)
	if err != nil {
		return l, err
	}
	if l.rows, err = rlccRows(20000, 1); err != nil {
		return l, err
	}
	l.ir, err = quantize.LSTM(m, rlccRanges(), l.rows, quantize.LSTMOptions{})
	return l, err
})

// lstmStep is one call: the inputs and the state before it.
type lstmStep struct {
	x     []int32
	state []uint32
}

// lstmVectors are sequences of 32 steps over sampled states, raw values anywhere in (and
// beyond) the declared ranges, and range edges; each sequence starts from the zero state or
// from random bytes, and carries the golden state on.
func lstmVectors(ir *quantize.LSTMIR, rows [][]float64, n int) []lstmStep {
	rng := rand.New(rand.NewPCG(7, 8))
	var out []lstmStep
	state := make([]uint32, ir.StateWords())
	for k := range n {
		if k%32 == 0 {
			for w := range state {
				state[w] = 0
				if rng.IntN(2) == 0 {
					state[w] = rng.Uint32()
				}
			}
		}
		x := make([]int32, len(ir.Inputs))
		for i, in := range ir.Inputs {
			switch rng.IntN(8) {
			case 0:
				x[i] = int32(rng.Uint32())
			case 1:
				x[i] = []int32{in.Min, in.Max, in.Min - 1, in.Max + 1, 0}[rng.IntN(5)]
			case 2:
				x[i] = in.Min + int32(rng.Int64N(int64(in.Max)-int64(in.Min)+1))
			default:
				x[i] = in.Quantize(rows[rng.IntN(len(rows))][i])
			}
		}
		out = append(out, lstmStep{x: x, state: append([]uint32(nil), state...)})
		ir.Step(x, state)
	}
	// Every byte in every h slot once: each row of each recurrent input's partial products.
	for v := range 256 {
		for k := range ir.Hidden {
			sh := 8 * (k % 4)
			state[k/4] = state[k/4]&^(0xff<<sh) | uint32(v)<<sh
		}
		x := make([]int32, len(ir.Inputs))
		for i := range x {
			x[i] = ir.Inputs[i].Quantize(rows[rng.IntN(len(rows))][i])
		}
		out = append(out, lstmStep{x: x, state: append([]uint32(nil), state...)})
		ir.Step(x, state)
	}
	return out
}

// TestLSTMBitExact: golden Step == host C (strict, UBSan) == fwsim on 20k steps in
// sequences, outputs and states, and the measured cycles stay within the static WCET on dpa,
// in both forms: the recurrent products from tables (table: every unit's, or the last 5
// units') and multiplied (branch).
func TestLSTMBitExact(t *testing.T) {
	t.Parallel()
	ir, rows := shippedLSTM(t)
	// plan is x_t multiplied, h as hs says.
	plan := func(hs string) codegen.Products {
		return codegen.Products(strings.Repeat(".", ir.Pre.Out) + hs)
	}
	// mixed reads x0 (proven in [0, 138]) from a table with the biases, x1 from a table of
	// all 512 rows, x2 by sign (rows of |x2 - 256|), h0..h9 by sign and h10, h11 from all 256
	// rows.
	mixed := codegen.Products("brs" + strings.Repeat(".", ir.Pre.Out-3) + "ssssssssssrr")
	for _, c := range []struct {
		opt  codegen.Options
		name string // and the snapshot's directory, if any
		snap bool
	}{
		{codegen.Options{Form: codegen.FormTable}, "lstm_rlcc", true},
		{codegen.Options{Form: codegen.FormBranch}, "lstm_rlcc_mul", true},
		{codegen.Options{Form: codegen.FormTable, Products: plan(".......rrrrr")}, "partial", false},
		{codegen.Options{Form: codegen.FormTable, Products: mixed}, "lstm_rlcc_mixed", true},
		{codegen.Options{Form: codegen.FormTable, Products: plan("bsssssssssss")}, "bias_h", false},
		{codegen.Options{Form: codegen.FormTable, Products: codegen.Products("ss" + strings.Repeat(".", ir.Pre.Out-2) + "bsssssssssss")}, "sign_x", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f, err := codegen.LSTM(ir, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			if c.snap {
				snapshot(t, c.name+"/"+f.HeaderName, f.Header)
				snapshot(t, c.name+"/"+f.SourceName, f.Source)
			}
			checkLSTMBitExact(t, ir, rows, f)
		})
	}
	for _, c := range []struct {
		opt  codegen.Options
		what string
	}{
		{codegen.Options{Form: codegen.FormBranch, Products: plan("rrr.........")}, "product tables in the branch form"},
		{codegen.Options{Form: codegen.FormTable, Products: plan("rrr")}, "a plan shorter than the gate inputs"},
		{codegen.Options{Form: codegen.FormTable, Products: plan("b..........b")}, "the biases in two tables"},
		{codegen.Options{Form: codegen.FormTable, Products: append(mixed[:3:3], append(codegen.Products("r"), mixed[4:]...)...)}, "a table for a dense unit proven off"},
		{codegen.Options{Form: codegen.FormTable, Products: plan("x...........")}, "an unknown product"},
	} {
		if _, err := codegen.LSTM(ir, c.opt); err == nil {
			t.Errorf("%s was accepted", c.what)
		}
	}
}

func checkLSTMBitExact(t *testing.T, ir *quantize.LSTMIR, rows [][]float64, f *codegen.Files) {
	driver, elfPath := buildLSTM(t, f)
	steps := lstmVectors(ir, rows, 20000)
	sw := ir.StateWords()
	var in bytes.Buffer
	for _, s := range steps {
		binary.Write(&in, binary.LittleEndian, s.x)
		binary.Write(&in, binary.LittleEndian, s.state)
	}
	cmd := exec.Command(driver)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("driver: %v", err)
	}
	rec := 4 * (1 + sw)
	if len(out) != rec*len(steps) {
		t.Fatalf("driver wrote %d bytes for %d steps", len(out), len(steps))
	}
	im, prof, mach := dpaMachine(t, elfPath)
	xa, err := mach.Alloc(uint64(4*len(ir.Inputs)), 16)
	if err != nil {
		t.Fatal(err)
	}
	sa, err := mach.Alloc(uint64(4*sw), 16)
	if err != nil {
		t.Fatal(err)
	}
	bound, err := wcet.Bound(im, codegen.DefaultFunc, prof, wcet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var maxCycles uint64
	for k, s := range steps {
		state := append([]uint32(nil), s.state...)
		want := ir.Step(s.x, state)
		if !(int64(want) >= ir.OutRange.Lo && int64(want) <= ir.OutRange.Hi) {
			t.Fatalf("step %d: y %d outside the proven range %v", k, want, ir.OutRange)
		}
		wantS := fmt.Sprint(want, state)
		host := out[rec*k:]
		hostS := fmt.Sprint(int32(binary.LittleEndian.Uint32(host)), words(host[4:rec]))
		xb := make([]byte, 4*len(s.x))
		for i, v := range s.x {
			binary.LittleEndian.PutUint32(xb[4*i:], uint32(v))
		}
		sb := make([]byte, 4*sw)
		for i, v := range s.state {
			binary.LittleEndian.PutUint32(sb[4*i:], v)
		}
		if err := mach.WriteBytes(xa, xb); err != nil {
			t.Fatal(err)
		}
		if err := mach.WriteBytes(sa, sb); err != nil {
			t.Fatal(err)
		}
		res, err := mach.Call(codegen.DefaultFunc, xa, sa)
		if err != nil {
			t.Fatalf("step %d: fwsim: %v", k, err)
		}
		got := make([]byte, 4*sw)
		if err := mach.ReadBytes(sa, got); err != nil {
			t.Fatal(err)
		}
		simS := fmt.Sprint(int32(res.A0), words(got))
		if hostS != wantS || simS != wantS {
			t.Fatalf("step %d x %v state %x: golden %s, host C %s, fwsim %s", k, s.x, s.state, wantS, hostS, simS)
		}
		maxCycles = max(maxCycles, res.Cycles)
	}
	if maxCycles > bound.Cycles {
		t.Errorf("measured %d cycles > WCET %d", maxCycles, bound.Cycles)
	}
	fd := ir.Fidelity
	t.Logf("%d steps bit-exact; dpa: nicc_policy WCET %d cycles (%.3f us, %d insns), max measured %d; state %d bytes; fidelity on %d rows: max |dy| %.5f (%.2f/128), flips %.3f%%",
		len(steps), bound.Cycles, float64(bound.Cycles)/prof.ClockHz*1e6, bound.Insns, maxCycles, ir.StateBytes(), fd.Rows, fd.MaxAbs, 128*fd.MaxAbs, 100*fd.Flips)
}

// buildLSTM builds an LSTM policy's C: a host driver (strict, then with UBSan) that reads x
// and the state per step and writes y and the new state, and the RISC-V ELF.
func buildLSTM(t testing.TB, f *codegen.Files) (driver, elfPath string) {
	t.Helper()
	dir := t.TempDir()
	if err := f.Write(dir); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, f.SourceName)
	drv := filepath.Join(dir, "driver.c")
	if err := os.WriteFile(drv, []byte(`#include <stdio.h>
#include "nicc_policy.h"

/* Reads x (NUM_INPUTS int32) and the state (STATE_WORDS uint32) per step, little endian;
 * writes y and the new state. */
int main(void)
{
	int32_t x[NICC_POLICY_NUM_INPUTS];
	uint32_t s[NICC_POLICY_STATE_WORDS];
	while (fread(x, sizeof x[0], NICC_POLICY_NUM_INPUTS, stdin) == NICC_POLICY_NUM_INPUTS &&
	       fread(s, sizeof s[0], NICC_POLICY_STATE_WORDS, stdin) == NICC_POLICY_STATE_WORDS) {
		int32_t y = nicc_policy(x, s);
		if (fwrite(&y, sizeof y, 1, stdout) != 1 || fwrite(s, sizeof s[0], NICC_POLICY_STATE_WORDS, stdout) != NICC_POLICY_STATE_WORDS)
			return 1;
	}
	return 0;
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	driver, elfPath = filepath.Join(dir, "driver"), filepath.Join(dir, "policy.elf")
	if err := buildUBSanDriver(dir, driver, drv, src); err != nil {
		t.Fatal(err)
	}
	if err := nicsdk.Build(elfPath, linkScript, append(append([]string{}, strictFlags...), "-O2", "-I", dir), src); err != nil {
		t.Fatal(err)
	}
	return driver, elfPath
}

func words(b []byte) []uint32 {
	w := make([]uint32, len(b)/4)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return w
}

// A unit proven off (quantize.LaneLayer.Act is [0, 0]) is neither packed, computed nor
// multiplied: the shipped LSTM has such units, and every other x_t is multiplied.
func TestLSTMSkipsDeadUnits(t *testing.T) {
	t.Parallel()
	ir, _ := shippedLSTM(t)
	f, err := codegen.LSTM(ir, codegen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := string(f.Source)
	dead := 0
	for j := range ir.Pre.Out {
		off := ir.Pre.Act(j).Hi == 0
		if off {
			dead++
		}
		if used := strings.Contains(src, fmt.Sprintf("X%d * ", j)); used == off {
			t.Errorf("unit %d: proven x_t %v, multiplied %v", j, ir.Pre.Act(j), used)
		}
	}
	if dead == 0 {
		t.Error("the shipped LSTM has no unit proven off: the test checks nothing")
	}
	// The dense layer packs the live units alone, two to a word.
	groups := (ir.Pre.Out - dead + ir.Pre.Lanes() - 1) / ir.Pre.Lanes()
	if want := fmt.Sprintf("nicc_policy_pre[%d] = {", groups*(1+ir.Pre.In)); !strings.Contains(src, want) {
		t.Errorf("the source lacks %q", want)
	}
}

// An input no weight reads (here o_prev, its column zeroed) is not computed: the C builds
// under -Werror (no unused variable) and stays bit-exact (golden == host C == fwsim).
func TestLSTMUnreadInput(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../testdata/models/rlcc_lstm.onnx")
	if err != nil {
		t.Fatal(err)
	}
	m, err := onnx.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	pre := &m.Layers[0]
	for j := range pre.W {
		pre.W[j][3] = 0
	}
	rows, err := rlccRows(2000, 1)
	if err != nil {
		t.Fatal(err)
	}
	ir, err := quantize.LSTM(m, rlccRanges(), rows, quantize.LSTMOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := codegen.LSTM(ir, codegen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(f.Source), "v3") {
		t.Error("the C computes the unread input v3")
	}
	checkLSTMBitExact(t, ir, rows, f)
}

// The cell's tanh and the new code are read from one table by u >> CellShift, on the shipped
// network and on one whose g gate is 30 times smaller (a cell range far narrower than g's);
// both are bit-exact.
func TestLSTMCellTable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../testdata/models/rlcc_lstm.onnx")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := rlccRows(2000, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, scale := range []float64{1, 0.03} {
		t.Run(fmt.Sprint("scale=", scale), func(t *testing.T) {
			t.Parallel()
			lstmCellTable(t, b, rows, scale)
		})
	}
}

func lstmCellTable(t *testing.T, b []byte, rows [][]float64, scale float64) {
	m, err := onnx.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	cell := &m.Layers[1]
	for r := 2 * cell.Out; r < 3*cell.Out; r++ {
		for _, row := range [][]float64{cell.W[r], cell.R[r]} {
			for i := range row {
				row[i] *= scale
			}
		}
		cell.B[r] *= scale
		cell.RB[r] *= scale
	}
	ir, err := quantize.LSTM(m, rlccRanges(), rows, quantize.LSTMOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := codegen.LSTM(ir, codegen.Options{Form: codegen.FormBranch})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(f.Source), "nicc_policy_cell[") {
		t.Errorf("g scaled by %g: no cell table", scale)
	}
	checkLSTMBitExact(t, ir, rows, f)
}
