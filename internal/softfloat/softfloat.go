// Package softfloat prints a float network (dense or LSTM) as plain C99 single-precision
// code: the soft-float baseline that nicc's integer policies are measured against, and a
// benchmark reference only. nicc never ships it: on the engine's FPU-less core every float
// operation is a libgcc soft-float call. Its tests check it against model.Eval on the host
// and bit for bit in fwsim; its benchmarks time it against the integer policies codegen
// prints from the same networks.
package softfloat

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/nicc-dev/nicc/codegen"
	"github.com/nicc-dev/nicc/model"
)

// DefaultFunc is Net's entry point when Options.Func is empty.
const DefaultFunc = "nicc_float_policy"

// Options are Net's choices.
type Options struct {
	Func string // the entry point; "" is DefaultFunc
}

var identRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// Net prints a dense or LSTM network as plain C99 single-precision float code: the
// soft-float baseline the integer paths are measured against. It is NOT firmware nicc ships:
// on the engine's FPU-less core every float operation is a libgcc soft-float call
// (__addsf3, __mulsf3, __divsf3, ...), which is exactly what the baseline times.
//
// The code computes in float (IEEE binary32), like PyTorch and the NIC paper's device: the
// weights are the model's float64 values rounded to float, stored as static const arrays,
// one per matrix and bias vector; every layer is a loop nest (not unrolled) accumulating
// bias first, then the products in index order. There is no libm: expf is range reduction
// (x = n·ln2 + r, |r| ≤ ln2/2, ln2 split in a hi and a lo part) and a degree-6 Taylor
// polynomial for e^r, scaled by 2^n built in the exponent bits; x is clamped to [−87, 87]
// first (NaN reads as −87, so the float-to-int conversion is never undefined). sigmoid(x) = 1/(1 + expf(−x)); tanh(x) = sign(x)·(1 − 2/(expf(2|x|) + 1)), ±1 for
// |x| ≥ 9. The relative error of expf is a few float ulps; tanh and sigmoid are within about
// 1e-6 absolute of the exact functions.
//
// The entry point is float Func(const float *x, float *state): x holds NumInputs floats;
// state is the LSTM's h then c (2·hidden floats, updated in place; zero them for a new
// flow), NULL for a feed-forward network. The network must have one output. The same model
// gives byte-identical C.
func Net(m *model.Model, opt Options) (*codegen.Files, error) {
	fn := opt.Func
	if fn == "" {
		fn = DefaultFunc
	}
	if !identRE.MatchString(fn) || len(fn) > 63 {
		return nil, fmt.Errorf("softfloat: entry point %q is not a C identifier of up to 63 characters", fn)
	}
	if m == nil || len(m.Layers) == 0 || m.Ensemble != nil {
		return nil, fmt.Errorf("softfloat: Net needs a dense or LSTM network")
	}
	hash, err := model.Hash(m) // validates shapes and finiteness
	if err != nil {
		return nil, fmt.Errorf("softfloat: %w", err)
	}
	if n := m.NumOutputs(); n != 1 {
		return nil, fmt.Errorf("softfloat: Net needs one output, the model has %d", n)
	}
	g := &floatGen{m: m, fn: fn, macro: strings.ToUpper(fn), header: fn + ".h", hash: hash}
	for i := range m.Layers {
		if m.Layers[i].Op == model.OpLSTM {
			g.hidden = m.Layers[i].Out
		}
	}
	src, err := g.source()
	if err != nil {
		return nil, err
	}
	return &codegen.Files{HeaderName: g.header, SourceName: fn + ".c", Header: g.headerFile(), Source: src}, nil
}

type floatGen struct {
	m      *model.Model
	fn     string
	macro  string
	header string
	hash   string
	hidden int // the LSTM's hidden size, 0 without one
	// used records which helper functions the layers call.
	usedExp, usedTanh, usedSigmoid bool
}

// cWriter writes C as codegen's printer does: tab indentation, comments through
// codegen.CommentSafe, tables four values a line.
type cWriter struct {
	b      bytes.Buffer
	indent int
}

// line writes one line at the current indent; an empty line stays empty.
func (w *cWriter) line(format string, args ...any) {
	if s := fmt.Sprintf(format, args...); s != "" {
		w.b.WriteString(strings.Repeat("\t", w.indent))
		w.b.WriteString(s)
	}
	w.b.WriteByte('\n')
}

func (w *cWriter) comment(lines ...string) {
	if len(lines) == 1 {
		w.line("/* %s */", codegen.CommentSafe(lines[0]))
		return
	}
	w.line("/*")
	for _, l := range lines {
		if l == "" {
			w.line(" *")
		} else {
			w.line(" * %s", codegen.CommentSafe(l))
		}
	}
	w.line(" */")
}

// open writes head and an opening brace and indents; close undoes it.
func (w *cWriter) open(format string, args ...any) {
	w.line(format, args...)
	w.line("{")
	w.indent++
}

func (w *cWriter) close() {
	w.indent--
	w.line("}")
}

// floatTable is a static const float array of vals.
type floatTable struct {
	name string
	vals []string
}

func newTable(name string, vals []float64) (floatTable, error) {
	t := floatTable{name: name}
	for _, v := range vals {
		s, err := fmtF32(v)
		if err != nil {
			return t, fmt.Errorf("%s: %w", name, err)
		}
		t.vals = append(t.vals, s)
	}
	return t, nil
}

func (w *cWriter) table(t floatTable) {
	w.line("static const float %s[%d] = {", t.name, len(t.vals))
	w.indent++
	for i := 0; i < len(t.vals); i += 4 {
		w.line("%s,", strings.Join(t.vals[i:min(i+4, len(t.vals))], ", "))
	}
	w.indent--
	w.line("};")
}

func (g *floatGen) comment(w *cWriter, file string) {
	var shape []string
	in := g.m.NumInputs()
	for _, l := range g.m.Layers {
		if l.Op == model.OpLSTM {
			shape = append(shape, fmt.Sprintf("lstm %d->%d", in, l.Out))
		} else {
			shape = append(shape, fmt.Sprintf("dense %d->%d %s", in, l.Out, l.Act))
		}
		in = l.Out
	}
	st := "NULL (no recurrent state)"
	if g.hidden > 0 {
		st = fmt.Sprintf("h[%d] then c[%d], updated in place; all zero for a new flow", g.hidden, g.hidden)
	}
	w.comment(
		fmt.Sprintf("%s: generated by nicc from a float %s network. Do not edit.", file, strings.ToUpper(g.m.Kind().String())),
		"",
		codegen.ModelLine(g.m.Name),
		"sha256: "+g.hash+" (the model's canonical nicc JSON)",
		"layers: "+strings.Join(shape, ", "),
		"",
		fmt.Sprintf("float %s(const float *x, float *state)", g.fn),
		"",
		fmt.Sprintf("x: %d floats; state: %s.", g.m.NumInputs(), st),
		"",
		"SOFT-FLOAT BASELINE, not shipped firmware: plain IEEE single-precision C. On an FPU-less",
		"core every float operation is a libgcc soft-float call. Weights are the model's values",
		"rounded to float; layers are loops, sums run bias first, then in index order.",
		"No libm: expf is range reduction x = n*ln2 + r (|r| <= ln2/2) with a degree-6 Taylor",
		"polynomial for e^r, scaled by 2^n through the exponent bits, x clamped to [-87, 87];",
		"sigmoid(x) = 1/(1 + expf(-x)); tanh(x) = sign(x)*(1 - 2/(expf(2|x|) + 1)), +-1 for |x| >= 9.",
	)
}

func (g *floatGen) headerFile() []byte {
	var w cWriter
	guard := g.macro + "_H"
	state := 0
	if g.hidden > 0 {
		state = 2 * g.hidden
	}
	g.comment(&w, g.header)
	w.line("#ifndef %s", guard)
	w.line("#define %s", guard)
	w.line("")
	w.line("#define %s_NUM_INPUTS %d", g.macro, g.m.NumInputs())
	w.line("#define %s_STATE_LEN %d", g.macro, state)
	w.line("")
	w.line("float %s(const float *x, float *state);", g.fn)
	w.line("")
	w.line("#endif")
	return w.b.Bytes()
}

// fmtF32 is v rounded to float as a C float literal that reads back to the same float.
func fmtF32(v float64) (string, error) {
	f := float32(v)
	if math.IsInf(float64(f), 0) || math.IsNaN(float64(f)) {
		return "", fmt.Errorf("softfloat: %v does not fit a float", v)
	}
	s := strconv.FormatFloat(float64(f), 'g', -1, 32)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s + "f", nil
}

func flat(rows [][]float64) []float64 {
	var v []float64
	for _, r := range rows {
		v = append(v, r...)
	}
	return v
}

// source is the C file: the tables, the helpers the layers call, then the entry point, whose
// body (each layer's loops) is written first so that the helpers in use are known.
func (g *floatGen) source() ([]byte, error) {
	var tables []floatTable
	var body cWriter
	body.indent = 1
	body.line("int i, j;")
	if g.hidden == 0 {
		body.line("(void)state;")
	}
	cur, width := "x", g.m.NumInputs()
	for k := range g.m.Layers {
		l := &g.m.Layers[k]
		w, err := newTable(fmt.Sprintf("W%d", k), flat(l.W))
		if err != nil {
			return nil, err
		}
		tables = append(tables, w)
		out := fmt.Sprintf("a%d", k)
		body.line("float %s[%d];", out, l.Out)
		var ts []floatTable
		if l.Op == model.OpLSTM {
			ts, err = g.lstm(&body, k, l, cur, width)
		} else {
			ts, err = g.dense(&body, k, l, cur, width, out)
		}
		if err != nil {
			return nil, err
		}
		tables = append(tables, ts...)
		cur, width = out, l.Out
	}
	body.line("return %s[0];", cur)

	var w cWriter
	g.comment(&w, g.fn+".c")
	w.line("#include %q", g.header)
	w.line("")
	w.line("#include <stdint.h>")
	w.line("")
	for _, t := range tables {
		w.table(t)
		w.line("")
	}
	g.helpers(&w)
	w.line("float %s(const float *x, float *state)", g.fn)
	w.line("{")
	w.b.Write(body.b.Bytes())
	w.line("}")
	return w.b.Bytes(), nil
}

// dense is one dense layer's loops into out, and its bias table if it has one.
func (g *floatGen) dense(w *cWriter, k int, l *model.Layer, cur string, width int, out string) ([]floatTable, error) {
	var tables []floatTable
	init := "0.0f"
	if l.B != nil {
		b, err := newTable(fmt.Sprintf("B%d", k), l.B)
		if err != nil {
			return nil, err
		}
		tables = append(tables, b)
		init = fmt.Sprintf("B%d[i]", k)
	}
	act, err := g.act(l, "s")
	if err != nil {
		return nil, fmt.Errorf("softfloat: layer %d: %w", k, err)
	}
	w.open("for (i = 0; i < %d; i++)", l.Out)
	w.line("float s = %s;", init)
	w.open("for (j = 0; j < %d; j++)", width)
	w.line("s += W%d[i * %d + j] * %s[j];", k, width, cur)
	w.close()
	w.line("%s[i] = %s;", out, act)
	w.close()
	return tables, nil
}

// act is the activation of a dense layer applied to the C expression s.
func (g *floatGen) act(l *model.Layer, s string) (string, error) {
	switch l.Act {
	case model.ActIdentity:
		return s, nil
	case model.ActReLU:
		return fmt.Sprintf("%s > 0.0f ? %s : 0.0f", s, s), nil
	case model.ActTanh:
		g.usedTanh, g.usedExp = true, true
		return fmt.Sprintf("nicc_tanhf(%s)", s), nil
	case model.ActSigmoid:
		g.usedSigmoid, g.usedExp = true, true
		return fmt.Sprintf("nicc_sigmoidf(%s)", s), nil
	case model.ActLeakyReLU:
		a, err := fmtF32(l.Alpha)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s < 0.0f ? %s * %s : %s", s, a, s, s), nil
	case model.ActClip:
		lo, err := fmtF32(l.Lo)
		if err != nil {
			return "", err
		}
		hi, err := fmtF32(l.Hi)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s < %s ? %s : (%s > %s ? %s : %s)", s, lo, lo, s, hi, hi, s), nil
	}
	return "", fmt.Errorf("activation %s has no float C form", l.Act)
}

// lstm is PyTorch's LSTM cell over state (h = state[0..H), c = state[H..2H)), gates i, f, g,
// o: pre = W·x + R·h + B + RB, c' = f·c + i·g, h' = o·tanh(c'). The new h is written only
// after every gate has read the old one. It returns the R and bias tables.
func (g *floatGen) lstm(w *cWriter, k int, l *model.Layer, cur string, width int) ([]floatTable, error) {
	g.usedTanh, g.usedSigmoid, g.usedExp = true, true, true
	h := l.Out
	r, err := newTable(fmt.Sprintf("R%d", k), flat(l.R))
	if err != nil {
		return nil, err
	}
	tables := []floatTable{r}
	// The two biases are summed in float64 and rounded once: a float model has one bias.
	init := "0.0f"
	if l.B != nil || l.RB != nil {
		b := make([]float64, 4*h)
		for i := range b {
			if l.B != nil {
				b[i] += l.B[i]
			}
			if l.RB != nil {
				b[i] += l.RB[i]
			}
		}
		bt, err := newTable(fmt.Sprintf("B%d", k), b)
		if err != nil {
			return nil, err
		}
		tables = append(tables, bt)
		init = fmt.Sprintf("B%d[i]", k)
	}
	pre := fmt.Sprintf("p%d", k)
	w.line("float %s[%d];", pre, 4*h)
	w.open("for (i = 0; i < %d; i++)", 4*h)
	w.line("float s = %s;", init)
	w.open("for (j = 0; j < %d; j++)", width)
	w.line("s += W%d[i * %d + j] * %s[j];", k, width, cur)
	w.close()
	w.open("for (j = 0; j < %d; j++)", h)
	w.line("s += R%d[i * %d + j] * state[j];", k, h)
	w.close()
	w.line("%s[i] = s;", pre)
	w.close()
	w.open("for (i = 0; i < %d; i++)", h)
	w.line("float ig = nicc_sigmoidf(%s[i]);", pre)
	w.line("float fg = nicc_sigmoidf(%s[%d + i]);", pre, h)
	w.line("float gg = nicc_tanhf(%s[%d + i]);", pre, 2*h)
	w.line("float og = nicc_sigmoidf(%s[%d + i]);", pre, 3*h)
	w.line("float c = fg * state[%d + i] + ig * gg;", h)
	w.line("state[%d + i] = c;", h)
	w.line("state[i] = og * nicc_tanhf(c);")
	w.line("a%d[i] = state[i];", k)
	w.close()
	return tables, nil
}

// helpers are the static math functions the layers use (no libm on the engine).
func (g *floatGen) helpers(w *cWriter) {
	if g.usedExp {
		w.comment(
			"e^x for x in [-87, 87] (clamped; NaN reads as -87): x = n*ln2 + r with n = round(x/ln2), |r| <= ln2/2,",
			"ln2 = 0.693145752f + 1.4286068e-06f (the first, 0x3f317200, has 9 low zero bits, so n times it is exact for |n| <= 126);",
			"e^r by its degree-6 Taylor polynomial (truncation < 2e-7 relative), times 2^n built",
			"in the exponent field.",
		)
		w.open("static float nicc_expf(float x)")
		w.line("union { uint32_t u; float f; } scale;")
		w.line("float r, p;")
		w.line("int n;")
		w.line("if (x > 87.0f) {")
		w.indent++
		w.line("x = 87.0f;")
		w.indent--
		w.line("}")
		w.comment("NaN too, so the conversion to int below is always defined")
		w.line("if (!(x >= -87.0f)) {")
		w.indent++
		w.line("x = -87.0f;")
		w.indent--
		w.line("}")
		w.line("n = (int)(x * 1.442695f + (x >= 0.0f ? 0.5f : -0.5f));")
		w.line("r = x - (float)n * 0.693145752f - (float)n * 1.4286068e-06f;")
		w.line("p = 1.0f + r * (1.0f + r * (0.5f + r * (0.16666667f + r * (0.041666668f + r * (0.008333334f + r * 0.0013888889f)))));")
		w.line("scale.u = (uint32_t)(n + 127) << 23;")
		w.line("return p * scale.f;")
		w.close()
		w.line("")
	}
	if g.usedSigmoid {
		w.open("static float nicc_sigmoidf(float x)")
		w.line("return 1.0f / (1.0f + nicc_expf(-x));")
		w.close()
		w.line("")
	}
	if g.usedTanh {
		w.open("static float nicc_tanhf(float x)")
		w.line("float a = x < 0.0f ? -x : x;")
		w.line("float t = a >= 9.0f ? 1.0f : 1.0f - 2.0f / (nicc_expf(2.0f * a) + 1.0f);")
		w.line("return x < 0.0f ? -t : t;")
		w.close()
		w.line("")
	}
}
