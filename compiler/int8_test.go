package compiler

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
)

const teacherRef = "../testdata/models/rlcc_teacher.ref.csv" // inputs and the teacher's output

// The shipped RL-CC teacher as an integer MLP inside the whole RL-CC handler: bit-exact, the
// default configuration, fidelity within the targets, the handler within 1 µs on dpa.
func TestCompileInt8RLCC(t *testing.T) {
	r, _ := compileOnce(t, "int8-rlcc", CompileOptions{Model: teacherJSON, Core: "dpa", Int8: &Int8Options{Samples: 5000}})
	if r.Handler != "rlcc" || r.Entry != EntryHandler {
		t.Errorf("handler %s entry %s, want rlcc %s", r.Handler, r.Entry, EntryHandler)
	}
	v := r.Verify
	if v.Mismatches != 0 || v.Vectors < testVectors || v.Events == 0 || v.UBSan != "clean" {
		t.Errorf("verify: %d vectors, %d events, %d mismatches, UBSan %s", v.Vectors, v.Events, v.Mismatches, v.UBSan)
	}
	i := r.Int8
	if i == nil {
		t.Fatal("no int8 section in the report")
	}
	if i.WeightBits != 16 || i.ActBits != 16 || !i.ChannelScales || i.TanhBits != 16 {
		t.Errorf("configuration %+v, want DefaultInt8Quant", *i)
	}
	if i.CalibRows != 5000+16 || !strings.Contains(i.Calibration, "RL-CC states") {
		t.Errorf("calibration %q on %d rows", i.Calibration, i.CalibRows)
	}
	if i.MaxAbsDy > 2.0/128 || i.FlipRate > 0.002 {
		t.Errorf("fidelity: max |dy| %v, flips %v", i.MaxAbsDy, i.FlipRate)
	}
	if h := r.HandlerFidelity; h == nil || h.Total.MaxAbs > 2.0/128 {
		t.Errorf("handler decisions' fidelity %+v, want max |err| within 2/128", h)
	}
	if b := r.Budget; b.WCETCycles > 1800 || !b.Fits {
		t.Errorf("WCET of %s %d cycles = %v µs, want at most 1800 (1 µs at dpa's assumed clock)", b.Entry, b.WCETCycles, b.WCETMicros)
	}
	if r.PolicyAlone == nil || r.StateBytes != 24 {
		t.Errorf("policy alone %+v, state %d bytes", r.PolicyAlone, r.StateBytes)
	}
}

// --handler none with calibration rows: the model alone, input ranges from the rows.
func TestCompileInt8None(t *testing.T) {
	r, _ := compileOnce(t, "int8-none", CompileOptions{Model: teacherJSON, Handler: HandlerNone, Vectors: 5000,
		Int8: &Int8Options{Calib: teacherRef, Quant: quantize.MLPOptions{WeightBits: 8, ActBits: 16, ChannelScales: true}}})
	if r.Handler != "none" || r.Entry != EntryPolicy || r.Verify.Mismatches != 0 || r.Verify.Events != 0 {
		t.Errorf("handler %s entry %s, verify %+v", r.Handler, r.Entry, r.Verify)
	}
	if r.Int8 == nil || r.Int8.WeightBits != 8 || !strings.Contains(r.Int8.Calibration, "rlcc_teacher.ref.csv") {
		t.Errorf("int8 %+v", r.Int8)
	}
	for _, in := range r.Inputs {
		if in.Source != "calibration rows, padded" {
			t.Errorf("input %s range from %q", in.Name, in.Source)
		}
	}
}

func TestCompileInt8BadInput(t *testing.T) {
	cases := []struct {
		name string
		opt  CompileOptions
		want string
	}{
		{"LSTM", CompileOptions{Model: saveModel(t, lstm(4)), Int8: &Int8Options{}}, "LSTM int8 is not supported yet"},
		{"trees", CompileOptions{Model: rlccXGB, Int8: &Int8Options{}}, "model rlcc_xgb is a tree ensemble; --target int8 takes a dense network"},
		{"calibration of the wrong width", CompileOptions{Model: teacherJSON, Int8: &Int8Options{Calib: bcRows}},
			"breast_cancer_test.tsv: row 1 has 30 values; model rlcc_teacher takes 4 inputs"},
		{"none without calibration rows", CompileOptions{Model: teacherJSON, Handler: HandlerNone, Int8: &Int8Options{}},
			"--handler none needs calibration rows (--calib CSV)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.opt.Out = t.TempDir()
			c.opt.Vectors = 1000
			r, err := Compile(c.opt)
			var ce *CheckError
			if err == nil || errors.As(err, &ce) || r != nil {
				t.Fatalf("got %v (report %v), want a bad-input error", err, r)
			}
			if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error:\n%s\nwant one line containing\n%s", err, c.want)
			}
		})
	}
}

// NaN or Inf weights cannot come through a JSON file, but can through other importers: the
// quantize stage refuses them.
func TestCompileInt8NonFiniteWeights(t *testing.T) {
	for _, bad := range []float64{math.NaN(), math.Inf(1)} {
		m, _, err := LoadModel(teacherJSON, FormatAuto)
		if err != nil {
			t.Fatal(err)
		}
		m.Layers[1].W[3][2] = bad
		c := &compilation{opt: CompileOptions{Model: "m", Int8: &Int8Options{Samples: 100}}, m: m, handler: HandlerRLCC}
		c.params = nicsdk.DefaultParams()
		err = c.quantizeMLP()
		if err == nil || !strings.Contains(err.Error(), "layer 1 weight [3][2] is") || !strings.Contains(err.Error(), "weights must be finite") {
			t.Errorf("weight %v: error %v", bad, err)
		}
	}
}
