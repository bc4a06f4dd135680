// Package onnx imports policies written by torch.onnx.export into nicc's float IR.
//
// The file is decoded at the protobuf wire level (see wire.go); no generated ONNX code is used.
// The graph must be one chain of layers from a single float input to the output:
//
//   - Gemm (alpha, beta, transA, transB), or MatMul with a constant right-hand side, starts a
//     dense layer. Add of a constant right after it (Gemm's C, MatMul+Add) becomes the bias.
//   - Relu, Tanh, Sigmoid, LeakyRelu (alpha) and Clip become the dense layer's activation; at
//     most one per layer, and only right after the layer.
//   - LSTM: one layer, forward, seq_len 1, batch 1, default activations, no clip, no peepholes,
//     with initial_h and initial_c as graph inputs and Y_h and Y_c as graph outputs. That state
//     is model.State: the IR carries it between decisions instead of through graph inputs.
//   - Identity, Flatten, Reshape, Squeeze, Unsqueeze, and Gather of index 0 on a size-1 axis
//     (torch's out[0]) only reshape the batch-1 vector; they change nothing in the IR.
//   - Transpose with perm [1 0 2] on a [batch seq feature] tensor, as torch writes around
//     nn.LSTM(batch_first=True): both swapped axes are 1, so it too changes nothing. Any other
//     permutation is an error naming the node.
//   - Constant nodes and initializers provide weights, shapes, axes and clip bounds.
//
// Any other op is an error that names the node and its op type. The ai.onnx opset must be 11
// to 22 (opset 11 is where Clip takes its bounds as inputs).
//
// Clip without min or max (torch.clamp with one bound) gets -math.MaxFloat64 or
// +math.MaxFloat64 for the missing bound: identical for every finite pre-activation, and the
// model stays finite, so it can be saved as native JSON. An infinite bound is treated the
// same way. A Clip whose min exceeds its max outputs max everywhere (ONNX and torch agree);
// it is imported as the interval [max, max].
//
// Input names: the IR names the input vector's entries. If the ONNX graph input carries a
// doc_string that is a comma-separated list of exactly as many distinct names as the input is
// wide, those names are used (testdata/gen/lstm.py writes one). Otherwise entry i of input "x" is
// named "x[i]".
//
// Gemm's alpha is folded into the weights and beta into the bias, so a Gemm with alpha ≠ 1 is
// exact up to float64 rounding, not bit for bit. Weights are read as float32 or float64 and
// widened exactly.
package onnx

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nicc-dev/nicc/model"
)

// Opset range the importer's op semantics were checked against.
const (
	MinOpset = 11
	MaxOpset = 22
)

// MaxParams caps the weights a model may read, summed over every use of every tensor, so that a
// small file cannot share one big initializer among thousands of layers. NIC policies are
// thousands of weights, not millions.
const MaxParams = 1 << 22

// Parse converts an ONNX model into the float IR and validates it. Errors are
// *model.ParseError: with a byte offset for faults in the protobuf encoding, without one
// for faults in the graph.
func Parse(data []byte) (*model.Model, error) {
	if len(data) == 0 {
		return nil, model.Errorf("file is empty")
	}
	if len(data) > model.MaxFileBytes {
		return nil, model.Errorf("file is over the %d MiB limit", model.MaxFileBytes>>20)
	}
	mp, err := decodeModel(data)
	if err != nil {
		return nil, err
	}
	opset, err := defaultOpset(mp.opsets)
	if err != nil {
		return nil, err
	}
	b := &builder{
		opset:   opset,
		g:       mp.graph,
		consts:  map[string]*tensorProto{},
		defined: map[string]bool{},
		graphIn: map[string]*valueInfo{},
	}
	if err := b.run(); err != nil {
		return nil, err
	}
	m := &model.Model{
		Version: model.NativeVersion,
		Doc:     docOf(mp, opset),
		Inputs:  b.inputNames(),
		Layers:  b.layers,
	}
	if m.RLCC, err = rlccMetadata(mp.metadata); err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

func defaultOpset(opsets []opsetID) (int64, error) {
	v := int64(-1)
	for _, o := range opsets {
		if o.domain == "" || o.domain == "ai.onnx" {
			if v >= 0 {
				return 0, model.Errorf("model imports the ai.onnx opset twice")
			}
			v = o.version
		}
	}
	switch {
	case v < 0:
		return 0, model.Errorf("model imports no ai.onnx opset")
	case v < MinOpset:
		return 0, model.Errorf("ai.onnx opset %d is not supported: nicc reads opset %d to %d (export with torch.onnx.export(..., opset_version=%d) or later)", v, MinOpset, MaxOpset, MinOpset)
	case v > MaxOpset:
		return 0, model.Errorf("ai.onnx opset %d is not supported: nicc reads opset %d to %d", v, MinOpset, MaxOpset)
	}
	return v, nil
}

func docOf(mp *modelProto, opset int64) string {
	s := "Imported from ONNX"
	if mp.producer != "" {
		s += " written by " + mp.producer
		if mp.producerVersion != "" {
			s += " " + mp.producerVersion
		}
	}
	s += fmt.Sprintf(", ai.onnx opset %d.", opset)
	if mp.doc != "" {
		s += " " + mp.doc
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// builder walks the graph's nodes in order, keeping the one value that holds the chain's
// current vector, and appends layers as it goes.
type builder struct {
	opset   int64
	g       *graphProto
	consts  map[string]*tensorProto // initializers and Constant outputs
	defined map[string]bool         // every value name defined so far
	graphIn map[string]*valueInfo   // graph inputs that are not initializers

	input   *valueInfo // the policy's input vector
	inWidth int        // its width
	width   int        // elements of the chain's current vector
	// live maps the names that hold the chain's current vector to their shapes (batch 1). It
	// has two entries only after an LSTM, whose Y and Y_h are the same vector.
	live map[string][]int64

	layers []model.Layer
	params int64 // weights read so far, against MaxParams
	// open: the last layer is dense and nothing but reshapes followed it, so it can still take
	// a bias (Add) and an activation.
	open bool

	lstm     *nodeProto
	stateOut [2]string // the LSTM's Y_h and Y_c
}

func (b *builder) run() error {
	if err := b.setup(); err != nil {
		return err
	}
	for _, n := range b.g.nodes {
		if err := b.node(n); err != nil {
			return err
		}
	}
	return b.finish()
}

func (b *builder) setup() error {
	g := b.g
	for i, t := range g.inits {
		if t.name == "" {
			return model.Errorf("initializer %d has no name", i)
		}
		if b.defined[t.name] {
			return model.Errorf("initializer %q is defined twice", t.name)
		}
		b.consts[t.name] = t
		b.defined[t.name] = true
	}
	// An LSTM's initial_h and initial_c are graph inputs that are not the policy's input.
	state := map[string]bool{}
	for _, n := range g.nodes {
		if n.op == "LSTM" {
			for i := 5; i <= 6 && i < len(n.inputs); i++ {
				state[n.inputs[i]] = true
			}
		}
	}
	var data []string
	for i, v := range g.inputs {
		if _, ok := b.consts[v.name]; ok {
			continue // a weight listed as an input too (IR version < 4 requires it)
		}
		if v.name == "" {
			return model.Errorf("graph input %d has no name", i)
		}
		if b.defined[v.name] {
			return model.Errorf("graph input %q is declared twice", v.name)
		}
		b.defined[v.name] = true
		b.graphIn[v.name] = v
		if !state[v.name] {
			data = append(data, strconv.Quote(v.name))
			b.input = v
		}
	}
	if len(data) != 1 {
		return model.Errorf("graph has %d data inputs [%s]; nicc imports a policy with one input vector (and an LSTM's initial_h and initial_c)", len(data), strings.Join(data, ", "))
	}
	dims, width, err := inputShape(b.input)
	if err != nil {
		return err
	}
	b.live = map[string][]int64{b.input.name: dims}
	b.width, b.inWidth = width, width
	return nil
}

// inputShape reads the policy input's width. Every dimension but the last must be 1 or
// symbolic (a dynamic batch axis), and is taken to be 1.
func inputShape(v *valueInfo) ([]int64, int, error) {
	if !v.tensor {
		return nil, 0, model.Errorf("graph input %q is not a tensor", v.name)
	}
	if v.elemType != dtFloat && v.elemType != dtDouble {
		return nil, 0, model.Errorf("graph input %q has element type %s, want FLOAT or DOUBLE", v.name, dtypeName(v.elemType))
	}
	if !v.hasShape || len(v.dims) == 0 {
		return nil, 0, model.Errorf("graph input %q has no shape; nicc needs the input's width", v.name)
	}
	dims := make([]int64, len(v.dims))
	last := len(v.dims) - 1
	for i, d := range v.dims {
		switch {
		case i == last && (!d.known || d.value < 1 || d.value > model.MaxInputs):
			return nil, 0, model.Errorf("graph input %q has width %s, want 1..%d", v.name, dimString(d), model.MaxInputs)
		case i == last:
			dims[i] = d.value
		case d.known && d.value != 1:
			return nil, 0, model.Errorf("graph input %q has dimension %d of size %d; nicc evaluates one state at a time (batch 1)", v.name, i, d.value)
		default:
			dims[i] = 1
		}
	}
	return dims, int(dims[last]), nil
}

func dimString(d dimension) string {
	switch {
	case d.known:
		return strconv.FormatInt(d.value, 10)
	case d.param != "":
		return strconv.Quote(d.param)
	}
	return "unknown"
}

// inputNames names the input vector's entries: from the input's doc_string when it lists
// exactly one distinct name per entry, else "x[i]" for input "x".
func (b *builder) inputNames() []string {
	if names := strings.Split(b.input.doc, ","); len(names) == b.inWidth {
		seen := map[string]bool{}
		ok := true
		for i, s := range names {
			s = strings.TrimSpace(s)
			names[i] = s
			if s == "" || seen[s] || !utf8.ValidString(s) || strings.ContainsFunc(s, isControl) {
				ok = false
				break
			}
			seen[s] = true
		}
		if ok {
			return names
		}
	}
	base := strings.ToValidUTF8(b.input.name, "\uFFFD")
	names := make([]string, b.inWidth)
	for i := range names {
		names[i] = fmt.Sprintf("%s[%d]", base, i)
	}
	return names
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

func (b *builder) finish() error {
	outs := b.g.outputs
	if len(outs) == 0 {
		return model.Errorf("graph has no outputs")
	}
	if len(b.layers) == 0 {
		return model.Errorf("graph has no Gemm, MatMul or LSTM layer")
	}
	y := outs[0].name
	if _, ok := b.live[y]; !ok {
		return model.Errorf("graph output %q is not the end of the chain of layers that starts at input %q (the chain ends at %s)", y, b.input.name, b.liveNames())
	}
	seen := [2]bool{}
	for _, o := range outs {
		switch {
		case b.lstm != nil && o.name == b.stateOut[0]:
			seen[0] = true
		case b.lstm != nil && o.name == b.stateOut[1]:
			seen[1] = true
		case o.name != y:
			return model.Errorf("graph output %q is neither the policy's output %q nor an LSTM's final state", o.name, y)
		}
	}
	if b.lstm != nil {
		for i, what := range [2]string{"Y_h", "Y_c"} {
			if !seen[i] {
				return model.Errorf("%s: its %s %q is not a graph output; nicc carries the LSTM state from one decision to the next, so the ONNX model must return it", where(b.lstm), what, b.stateOut[i])
			}
		}
	}
	return nil
}

func (b *builder) liveNames() string {
	var s []string
	for name := range b.live {
		s = append(s, strconv.Quote(name))
	}
	slices.Sort(s)
	return strings.Join(s, " or ")
}

// where names a node for messages: `node "/fc1/Gemm" (Gemm)`.
func where(n *nodeProto) string {
	op := n.op
	if op == "" || strings.ContainsFunc(op, func(r rune) bool {
		return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		op = strconv.Quote(op)
	}
	if n.name == "" {
		return fmt.Sprintf("node %d (%s)", n.position, op)
	}
	return fmt.Sprintf("node %q (%s)", n.name, op)
}

func errAt(n *nodeProto, format string, args ...any) error {
	return model.Errorf("%s: %s", where(n), fmt.Sprintf(format, args...))
}

// inNode prefixes a tensor's fault with the node that uses it, keeping its offset.
func inNode(n *nodeProto, err error) error {
	if fe, ok := err.(*model.ParseError); ok {
		c := *fe
		c.Msg = where(n) + ": " + fe.Msg
		return &c
	}
	return err
}

// ops maps each supported op type to its handler.
var ops = map[string]func(*builder, *nodeProto) error{
	"Constant":  (*builder).constant,
	"Identity":  (*builder).identity,
	"Gemm":      (*builder).gemm,
	"MatMul":    (*builder).matmul,
	"Add":       (*builder).add,
	"Relu":      func(b *builder, n *nodeProto) error { return b.activation(n, model.ActReLU) },
	"Tanh":      func(b *builder, n *nodeProto) error { return b.activation(n, model.ActTanh) },
	"Sigmoid":   func(b *builder, n *nodeProto) error { return b.activation(n, model.ActSigmoid) },
	"LeakyRelu": func(b *builder, n *nodeProto) error { return b.activation(n, model.ActLeakyReLU) },
	"Clip":      func(b *builder, n *nodeProto) error { return b.activation(n, model.ActClip) },
	"Flatten":   (*builder).flatten,
	"Reshape":   (*builder).reshape,
	"Squeeze":   (*builder).squeeze,
	"Unsqueeze": (*builder).squeeze,
	"Gather":    (*builder).gather,
	"Transpose": (*builder).transpose,
	"LSTM":      (*builder).lstmNode,
}

// supportedOps lists the op types for the unsupported-op message.
const supportedOps = "Gemm, MatMul, Add, Relu, Tanh, Sigmoid, LeakyRelu, Clip, LSTM, Identity, Flatten, Reshape, Squeeze, Unsqueeze, Gather, Transpose, Constant"

func (b *builder) node(n *nodeProto) error {
	if n.domain != "" && n.domain != "ai.onnx" {
		return errAt(n, "op domain %q is not supported; nicc reads ai.onnx ops", n.domain)
	}
	h, ok := ops[n.op]
	if !ok {
		return errAt(n, "unsupported op (nicc imports %s)", supportedOps)
	}
	if len(n.outputs) == 0 || n.outputs[0] == "" {
		return errAt(n, "has no output")
	}
	for i, o := range n.outputs {
		if o != "" && (b.defined[o] || slices.Contains(n.outputs[:i], o)) {
			return errAt(n, "output %q is already defined", o)
		}
	}
	if err := h(b, n); err != nil {
		return err
	}
	for _, o := range n.outputs {
		if o != "" {
			b.defined[o] = true
		}
	}
	return nil
}

// attrSet is a node's attributes by name, after checking that each is one the op knows.
type attrSet struct {
	n *nodeProto
	m map[string]*attrProto
}

func attrsOf(n *nodeProto, known ...string) (attrSet, error) {
	s := attrSet{n: n, m: map[string]*attrProto{}}
	for _, a := range n.attrs {
		if !slices.Contains(known, a.name) {
			return s, errAt(n, "unsupported attribute %q", a.name)
		}
		if a.isRef {
			return s, errAt(n, "attribute %q refers to a function attribute, which is not supported", a.name)
		}
		if s.m[a.name] != nil {
			return s, errAt(n, "attribute %q is given twice", a.name)
		}
		s.m[a.name] = a
	}
	return s, nil
}

// get returns the attribute called name if it is present, after checking that it has type
// want. A value field left out reads as protobuf's default, zero or empty.
func (s attrSet) get(name string, want int64) (*attrProto, error) {
	a := s.m[name]
	if a == nil {
		return nil, nil
	}
	t := a.typ
	if t == 0 { // the writer left the type out: infer it from the value field present
		for k, has := range a.has {
			if has {
				t = int64(k)
				break
			}
		}
	}
	if t != want {
		return nil, errAt(s.n, "attribute %q is %s, want %s", name, attrTypeName(t), attrTypeName(want))
	}
	return a, nil
}

func (s attrSet) int(name string, def int64) (int64, error) {
	a, err := s.get(name, atInt)
	if a == nil || err != nil {
		return def, err
	}
	return a.i, nil
}

// flag reads a 0/1 attribute.
func (s attrSet) flag(name string) (bool, error) {
	v, err := s.int(name, 0)
	if err == nil && v != 0 && v != 1 {
		err = errAt(s.n, "attribute %s is %d, want 0 or 1", name, v)
	}
	return v == 1, err
}

func (s attrSet) float(name string, def float64) (float64, error) {
	a, err := s.get(name, atFloat)
	if a == nil || err != nil {
		return def, err
	}
	v := float64(a.f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, errAt(s.n, "attribute %s is %v", name, v)
	}
	return v, nil
}

func (s attrSet) has(name string) bool { return s.m[name] != nil }

// chainIn checks that input i of n is the chain's current vector and that no other input is,
// and returns the vector's shape.
func (b *builder) chainIn(n *nodeProto, i int) ([]int64, error) {
	if i >= len(n.inputs) || n.inputs[i] == "" {
		return nil, errAt(n, "input %d is missing", i)
	}
	dims, ok := b.live[n.inputs[i]]
	if !ok {
		if _, c := b.consts[n.inputs[i]]; c {
			return nil, errAt(n, "input %q is a constant; nicc imports one chain of layers from the input vector (the chain is at %s)", n.inputs[i], b.liveNames())
		}
		return nil, errAt(n, "input %q is not the chain's current value %s; nicc imports one chain of layers from the input vector to the output", n.inputs[i], b.liveNames())
	}
	for j, in := range n.inputs {
		if _, twice := b.live[in]; twice && j != i {
			return nil, errAt(n, "uses the chain's value %q twice", in)
		}
	}
	return dims, nil
}

// constIn returns input i of n as a constant, or nil when the input is absent.
func (b *builder) constIn(n *nodeProto, i int, what string) (*tensorProto, error) {
	if i >= len(n.inputs) || n.inputs[i] == "" {
		return nil, nil
	}
	name := n.inputs[i]
	if t, ok := b.consts[name]; ok {
		return t, nil
	}
	if _, ok := b.live[name]; ok {
		return nil, errAt(n, "%s must be a constant, not the chain's value %q", what, name)
	}
	if _, ok := b.graphIn[name]; ok {
		return nil, errAt(n, "%s %q is a graph input; nicc needs it as an initializer or Constant", what, name)
	}
	return nil, errAt(n, "%s %q is not defined before the node", what, name)
}

// needConst is constIn for an input the op cannot do without.
func (b *builder) needConst(n *nodeProto, i int, what string) (*tensorProto, error) {
	t, err := b.constIn(n, i, what)
	if t == nil && err == nil {
		err = errAt(n, "%s is missing", what)
	}
	return t, err
}

// advance makes the node's first output the chain's current vector, with shape dims.
func (b *builder) advance(n *nodeProto, dims []int64) error {
	if len(dims) > maxRank {
		return errAt(n, "output has %d dimensions, over %d", len(dims), maxRank)
	}
	if numel(dims) != int64(b.width) {
		return errAt(n, "output shape %v does not hold the %d-element vector", dims, b.width)
	}
	b.live = map[string][]int64{n.outputs[0]: dims}
	return nil
}

// numel multiplies dims, saturating at MaxInt64 (shapes here are bounded by maxRank small dims
// and the checks after it, so saturation only ever means "too big").
func numel(dims []int64) int64 {
	p := int64(1)
	for _, d := range dims {
		if d < 0 {
			return -1
		}
		if d != 0 && p > math.MaxInt64/d {
			return math.MaxInt64
		}
		p *= d
	}
	return p
}

func (b *builder) singleOutput(n *nodeProto) error {
	if len(n.outputs) != 1 {
		return errAt(n, "has %d outputs, want 1", len(n.outputs))
	}
	return nil
}

func (b *builder) constant(n *nodeProto) error {
	at, err := attrsOf(n, "value", "value_float", "value_floats", "value_int", "value_ints")
	if err != nil {
		return err
	}
	if err := b.singleOutput(n); err != nil {
		return err
	}
	if len(n.inputs) != 0 {
		return errAt(n, "has inputs")
	}
	if len(at.m) != 1 {
		return errAt(n, "has %d value attributes, want 1", len(at.m))
	}
	t := &tensorProto{off: -1, fromNode: true, name: n.outputs[0], inline: true, numel: 1}
	var a *attrProto
	switch {
	case at.has("value"):
		if a, err = at.get("value", atTensor); err != nil {
			return err
		}
		if a.t == nil {
			return errAt(n, "attribute value holds no tensor")
		}
		t = a.t
		t.name, t.fromNode = n.outputs[0], true
	case at.has("value_float"):
		if a, err = at.get("value_float", atFloat); err != nil {
			return err
		}
		t.inlineF = []float64{float64(a.f)}
	case at.has("value_int"):
		if a, err = at.get("value_int", atInt); err != nil {
			return err
		}
		t.inlineInt = []int64{a.i}
	case at.has("value_floats"):
		if a, err = at.get("value_floats", atFloats); err != nil {
			return err
		}
		t.inlineF = make([]float64, len(a.floats))
		for i, v := range a.floats {
			t.inlineF[i] = float64(v)
		}
		t.dims, t.numel = []int64{int64(len(a.floats))}, int64(len(a.floats))
	default:
		if a, err = at.get("value_ints", atInts); err != nil {
			return err
		}
		t.inlineInt = append([]int64{}, a.ints...)
		t.dims, t.numel = []int64{int64(len(a.ints))}, int64(len(a.ints))
	}
	b.consts[n.outputs[0]] = t
	return nil
}

// FileFormat is ONNX as nicc's format registry knows it: by the .onnx extension.
var FileFormat = model.FileFormat{Name: "onnx", Title: "ONNX", Exts: []string{".onnx"}, Parse: Parse,
	Holds:   "networks",
	Detects: "a .onnx file",
	Detect: func(ext string, _ []byte) (string, bool) {
		return "by its .onnx extension", ext == ".onnx"
	}}
