package softfloat_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nicc-dev/nicc/codegen"
	"github.com/nicc-dev/nicc/distill"
	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/internal/softfloat"
	"github.com/nicc-dev/nicc/internal/testutil"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/model/onnx"
	"github.com/nicc-dev/nicc/nicsdk"
)

// linkScript is the engine's linker script, for the RISC-V builds.
const linkScript = "../../nicsdk/link.ld"

var strictFlags = testutil.StrictFlags

// snapshots pin the float C; NICC_UPDATE_SNAPSHOTS=1 rewrites them.
var snapshots = &testutil.Snapshots{Dir: "../../testdata/softfloat"}

// floatTol is the accepted |Δy| between the float C and model.Eval (float64): float32
// weights and arithmetic (about 1e-7 relative per operation over a few dozen terms) plus the
// exp/tanh/sigmoid approximations (about 1e-6); the measured maxima are logged.
const floatTol = 1e-4

// floatModels are the soft-float baseline's networks: the RL-CC MLP teacher and the small LSTM.
var floatModels = sync.OnceValues(func() (map[string]*model.Model, error) {
	mlp, err := model.Load("../../testdata/models/rlcc_teacher.json")
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile("../../testdata/models/rlcc_lstm.onnx")
	if err != nil {
		return nil, err
	}
	lstm, err := onnx.Parse(b)
	if err != nil {
		return nil, err
	}
	lstm.Name = "rlcc_lstm" // as nicc names a model by its file when the file names none
	return map[string]*model.Model{"float_mlp": mlp, "float_lstm": lstm}, nil
})

func floatModel(t testing.TB, name string) *model.Model {
	t.Helper()
	ms, err := floatModels()
	if err != nil {
		t.Fatal(err)
	}
	return ms[name]
}

// floatBuilt is a network's float C built for the host (a driver) and the engine (an ELF).
type floatBuilt struct {
	files        *codegen.Files
	driver, elf  string
	inputs, stat int // floats in x and in the state
}

// buildFloat compiles the float C with the strict warning flags, on the host with UBSan and
// for the engine with nicsdk.Build (soft-float from the rv64imac libgcc).
func buildFloat(t testing.TB, m *model.Model) *floatBuilt {
	t.Helper()
	f, err := softfloat.Net(m, softfloat.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := f.Write(dir); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, f.SourceName)
	fn := strings.TrimSuffix(f.SourceName, ".c")
	macro := strings.ToUpper(fn)
	// One flow: the state persists across the vectors read.
	driver := fmt.Sprintf(`#include <stdio.h>
#include "%[1]s"

/* Reads NUM_INPUTS floats per vector from stdin, writes one float per vector; the recurrent
   state, if any, carries over from vector to vector. */
int main(void)
{
	float x[%[2]s_NUM_INPUTS];
	float state[%[2]s_STATE_LEN + 1] = {0};
	while (fread(x, sizeof x[0], %[2]s_NUM_INPUTS, stdin) == %[2]s_NUM_INPUTS) {
		float y = %[3]s(x, %[2]s_STATE_LEN > 0 ? state : NULL);
		if (fwrite(&y, sizeof y, 1, stdout) != 1)
			return 1;
	}
	return 0;
}
`, f.HeaderName, macro, fn)
	drv := filepath.Join(dir, "driver.c")
	if err := os.WriteFile(drv, []byte(driver), 0o644); err != nil {
		t.Fatal(err)
	}
	b := &floatBuilt{files: f, driver: filepath.Join(dir, "driver"), elf: filepath.Join(dir, "float.elf"), inputs: m.NumInputs()}
	if st := m.NewState(); st != nil {
		b.stat = 2 * len(st.H)
	}
	var wg sync.WaitGroup
	var hostErr, rvErr error
	wg.Add(2)
	go func() {
		defer wg.Done()
		args := append(append([]string{}, strictFlags...), "-O2", "-fsanitize=undefined,float-cast-overflow", "-fno-sanitize-recover=all",
			"-I", dir, "-o", b.driver, drv, src)
		if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
			hostErr = fmt.Errorf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}()
	go func() {
		defer wg.Done()
		extra := append(append([]string{}, strictFlags...), "-O2", "-I", dir)
		rvErr = nicsdk.Build(b.elf, linkScript, extra, src)
	}()
	wg.Wait()
	if hostErr != nil || rvErr != nil {
		t.Fatalf("host: %v\nriscv: %v", hostErr, rvErr)
	}
	return b
}

// floatStates are n RL-CC states from the distillation sampler, as float32.
func floatStates(t testing.TB, n int, seed uint64) [][]float32 {
	t.Helper()
	d, err := distill.DefaultRLCC.Sample(n, seed)
	if err != nil {
		t.Fatal(err)
	}
	// d.X is column-major: X[feature][row].
	if len(d.X) != 4 || len(d.X[0]) != n {
		t.Fatalf("sampler gave %d columns of %d states, want 4 of %d", len(d.X), len(d.X[0]), n)
	}
	xs := make([][]float32, n)
	for i := range xs {
		xs[i] = make([]float32, len(d.X))
		for j, col := range d.X {
			xs[i][j] = float32(col[i])
		}
	}
	return xs
}

// hostRun runs the driver on xs (one flow) and returns its outputs.
func (b *floatBuilt) hostRun(t testing.TB, xs [][]float32) []float32 {
	t.Helper()
	var in bytes.Buffer
	for _, x := range xs {
		binary.Write(&in, binary.LittleEndian, x)
	}
	cmd := exec.Command(b.driver)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("driver: %v", err)
	}
	if len(out) != 4*len(xs) {
		t.Fatalf("driver wrote %d bytes for %d vectors", len(out), len(xs))
	}
	ys := make([]float32, len(xs))
	for i := range ys {
		ys[i] = math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:]))
	}
	return ys
}

// floatSim runs the ELF in fwsim, one flow: the state stays in emulator memory.
type floatSim struct {
	m          *fwsim.Machine
	fn         string
	xAddr, st  uint64
	buf        []byte
	insns, cyc uint64 // of the last call
}

func (b *floatBuilt) sim(t testing.TB, prof *fwsim.Profile) *floatSim {
	t.Helper()
	data, err := os.ReadFile(b.elf)
	if err != nil {
		t.Fatal(err)
	}
	im, err := fwsim.LoadELF(data)
	if err != nil {
		t.Fatal(err)
	}
	m, err := fwsim.NewMachine(im, prof)
	if err != nil {
		t.Fatal(err)
	}
	s := &floatSim{m: m, fn: strings.TrimSuffix(b.files.SourceName, ".c"), buf: make([]byte, 4*b.inputs)}
	if s.xAddr, err = m.Alloc(uint64(4*b.inputs), 16); err != nil {
		t.Fatal(err)
	}
	if b.stat > 0 {
		if s.st, err = m.Alloc(uint64(4*b.stat), 16); err != nil {
			t.Fatal(err)
		}
		if err := m.WriteBytes(s.st, make([]byte, 4*b.stat)); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func (s *floatSim) call(t testing.TB, x []float32) float32 {
	for i, v := range x {
		binary.LittleEndian.PutUint32(s.buf[4*i:], math.Float32bits(v))
	}
	if err := s.m.WriteBytes(s.xAddr, s.buf); err != nil {
		t.Fatal(err)
	}
	res, err := s.m.Call(s.fn, s.xAddr, s.st)
	if err != nil {
		t.Fatalf("fwsim %v: %v", x, err)
	}
	s.insns, s.cyc = res.Insns, res.Cycles
	return math.Float32frombits(uint32(res.A0))
}

func TestFloatSnapshot(t *testing.T) {
	for _, name := range []string{"float_mlp", "float_lstm"} {
		f, err := softfloat.Net(floatModel(t, name), softfloat.Options{})
		if err != nil {
			t.Fatal(err)
		}
		again, err := softfloat.Net(floatModel(t, name), softfloat.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(f.Source, again.Source) || !bytes.Equal(f.Header, again.Header) {
			t.Errorf("%s: two runs differ", name)
		}
		snapshots.Check(t, name+"/"+f.HeaderName, f.Header)
		snapshots.Check(t, name+"/"+f.SourceName, f.Source)
	}
}

func TestFloatBadInput(t *testing.T) {
	mlp := floatModel(t, "float_mlp")
	if _, err := softfloat.Net(mlp, softfloat.Options{Func: "1x"}); err == nil {
		t.Error("bad entry point: no error")
	}
	if _, err := softfloat.Net(nil, softfloat.Options{}); err == nil {
		t.Error("nil model: no error")
	}
	big := *mlp
	big.Layers = append([]model.Layer(nil), mlp.Layers...)
	l := big.Layers[0]
	l.W = [][]float64{append([]float64{1e39}, l.W[0][1:]...)}
	l.W = append(l.W, mlp.Layers[0].W[1:]...)
	big.Layers[0] = l
	if _, err := softfloat.Net(&big, softfloat.Options{}); err == nil || !strings.Contains(err.Error(), "float") {
		t.Errorf("weight beyond float range: %v", err)
	}
}

// TestFloatNet: the float C on the host is within floatTol of model.Eval on sampled RL-CC
// states (for the LSTM, 2000 steps of one flow), and the RISC-V ELF in fwsim returns the same
// float32 bits as the host C on every step.
func TestFloatNet(t *testing.T) {
	prof, err := fwsim.LookupProfile("dpa")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"float_mlp", "float_lstm"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := floatModel(t, name)
			b := buildFloat(t, m)
			xs := floatStates(t, 2000, 11)
			host := b.hostRun(t, xs)
			sim := b.sim(t, prof)
			st := m.NewState()
			var maxErr float64
			var maxCyc uint64
			for k, x := range xs {
				x64 := make([]float64, len(x))
				for i, v := range x {
					x64[i] = float64(v)
				}
				want := m.Eval(st, x64)[0]
				if d := math.Abs(float64(host[k]) - want); !(d <= floatTol) {
					t.Fatalf("step %d %v: model.Eval %v, host C %v (|Δ| %.3g > %g)", k, x, want, host[k], d, floatTol)
				} else {
					maxErr = max(maxErr, d)
				}
				if y := sim.call(t, x); math.Float32bits(y) != math.Float32bits(host[k]) {
					t.Fatalf("step %d %v: host C %v (%#08x), fwsim %v (%#08x)", k, x, host[k], math.Float32bits(host[k]), y, math.Float32bits(y))
				}
				maxCyc = max(maxCyc, sim.cyc)
			}
			t.Logf("%s: %d steps, max |C − model.Eval| %.3g; fwsim bit-identical to host C; max %d cycles on dpa",
				name, len(xs), maxErr, maxCyc)
		})
	}
}

// TestFloatMath: the emitted expf, tanhf and sigmoid, through a one-layer network per
// activation, against math.Tanh and the exact sigmoid on a sweep of [−20, 20].
func TestFloatMath(t *testing.T) {
	for _, act := range []model.Activation{model.ActTanh, model.ActSigmoid} {
		m := &model.Model{Version: model.NativeVersion, Name: "act", Inputs: []string{"x"},
			Layers: []model.Layer{{Op: model.OpDense, In: 1, Out: 1, W: [][]float64{{1}}, Act: act}}}
		b := buildFloat(t, m)
		var xs [][]float32
		for i := -20000; i <= 20000; i++ {
			xs = append(xs, []float32{float32(i) / 1000})
		}
		ys := b.hostRun(t, xs)
		var maxErr float64
		for k, x := range xs {
			want := m.Eval(nil, []float64{float64(x[0])})[0]
			maxErr = max(maxErr, math.Abs(float64(ys[k])-want))
		}
		// Non-finite and huge inputs run without undefined behaviour (UBSan, float-cast-overflow
		// included, aborts the driver otherwise) and give an output in [−1, 1].
		odd := [][]float32{{float32(math.NaN())}, {float32(math.Inf(1))}, {float32(math.Inf(-1))}, {1e30}, {-1e30}, {math.MaxFloat32}}
		for k, y := range b.hostRun(t, odd) {
			if !(y >= -1 && y <= 1) {
				t.Errorf("%s(%v) = %v", act, odd[k][0], y)
			}
		}
		if maxErr > 1e-6 {
			t.Errorf("%s: max |Δ| %.3g > 1e-6", act, maxErr)
		}
		t.Logf("%s on [−20, 20] step 1e-3: max |Δ| %.3g", act, maxErr)
	}
}
