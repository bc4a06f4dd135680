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
// *model.FormatError: with a byte offset for faults in the protobuf encoding, without one
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
		Format: model.Format,
		Doc:    docOf(mp, opset),
		Inputs: b.inputNames(),
		Layers: b.layers,
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
	if fe, ok := err.(*model.FormatError); ok {
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
	"LSTM":      (*builder).lstmNode,
}

// supportedOps lists the op types for the unsupported-op message.
const supportedOps = "Gemm, MatMul, Add, Relu, Tanh, Sigmoid, LeakyRelu, Clip, LSTM, Identity, Flatten, Reshape, Squeeze, Unsqueeze, Gather, Constant"

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

func (b *builder) identity(n *nodeProto) error {
	if _, err := attrsOf(n); err != nil {
		return err
	}
	if err := b.singleOutput(n); err != nil {
		return err
	}
	if len(n.inputs) != 1 {
		return errAt(n, "has %d inputs, want 1", len(n.inputs))
	}
	if t, ok := b.consts[n.inputs[0]]; ok { // a constant under a second name
		b.consts[n.outputs[0]] = t
		return nil
	}
	dims, err := b.chainIn(n, 0)
	if err != nil {
		return err
	}
	return b.advance(n, dims)
}

// weights reads a constant weight tensor, naming the node on any fault.
func (b *builder) weights(n *nodeProto, t *tensorProto) ([]float64, error) {
	if b.params += t.numel; b.params > MaxParams {
		return nil, errAt(n, "the model reads over %d weights (%s %q has shape %v)", MaxParams, t.kind(), t.name, t.dims)
	}
	v, err := t.floats()
	if err != nil {
		return nil, inNode(n, err)
	}
	return v, nil
}

// startDense appends a dense layer of the given weights and bias.
func (b *builder) startDense(n *nodeProto, w [][]float64, bias []float64) error {
	for r, row := range w {
		for c, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return errAt(n, "weight [%d][%d] is %v after scaling by alpha", r, c, v)
			}
		}
	}
	for i, v := range bias {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errAt(n, "bias [%d] is %v after scaling by beta", i, v)
		}
	}
	b.layers = append(b.layers, model.Layer{Op: model.OpDense, In: b.width, Out: len(w), W: w, B: bias})
	b.open = true
	return nil
}

func (b *builder) gemm(n *nodeProto) error {
	at, err := attrsOf(n, "alpha", "beta", "transA", "transB")
	if err != nil {
		return err
	}
	alpha, err := at.float("alpha", 1)
	if err != nil {
		return err
	}
	beta, err := at.float("beta", 1)
	if err != nil {
		return err
	}
	transA, err := at.flag("transA")
	if err != nil {
		return err
	}
	transB, err := at.flag("transB")
	if err != nil {
		return err
	}
	if err := b.singleOutput(n); err != nil {
		return err
	}
	dims, err := b.chainIn(n, 0)
	if err != nil {
		return err
	}
	if len(dims) != 2 || dims[0] != 1 && !transA || dims[1] != 1 && transA {
		return errAt(n, "input A has shape %v (transA=%d); nicc needs one row, a batch-1 vector", dims, b2i(transA))
	}
	k := int64(b.width)
	bt, err := b.needConst(n, 1, "weight B")
	if err != nil {
		return err
	}
	if len(bt.dims) != 2 {
		return errAt(n, "weight B %q has shape %v, want a matrix", bt.name, bt.dims)
	}
	rows, cols := bt.dims[0], bt.dims[1] // B is K×N, or N×K with transB
	out := cols
	if transB {
		out = rows
	}
	if transB && cols != k || !transB && rows != k {
		return errAt(n, "weight B %q has shape %v (transB=%d), which does not fit an input of width %d", bt.name, bt.dims, b2i(transB), k)
	}
	if out < 1 || out > model.MaxWidth {
		return errAt(n, "weight B %q has shape %v: %d outputs, want 1..%d", bt.name, bt.dims, out, model.MaxWidth)
	}
	flat, err := b.weights(n, bt)
	if err != nil {
		return err
	}
	w := make([][]float64, out)
	for o := range w {
		w[o] = make([]float64, k)
		for i := range w[o] {
			if transB {
				w[o][i] = alpha * flat[int64(o)*k+int64(i)]
			} else {
				w[o][i] = alpha * flat[int64(i)*out+int64(o)]
			}
		}
	}
	var bias []float64
	ct, err := b.constIn(n, 2, "bias C")
	if err != nil {
		return err
	}
	if ct != nil {
		if bias, err = b.broadcast(n, ct, []int64{1, out}); err != nil {
			return err
		}
		for i := range bias {
			bias[i] *= beta
		}
	}
	if err := b.startDense(n, w, bias); err != nil {
		return err
	}
	b.width = int(out)
	return b.advance(n, []int64{1, out})
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

func (b *builder) matmul(n *nodeProto) error {
	if _, err := attrsOf(n); err != nil {
		return err
	}
	if err := b.singleOutput(n); err != nil {
		return err
	}
	if len(n.inputs) != 2 {
		return errAt(n, "has %d inputs, want 2", len(n.inputs))
	}
	if _, ok := b.live[n.inputs[1]]; ok {
		return errAt(n, "the chain's value %q is the right-hand operand; nicc needs x·W with a constant W", n.inputs[1])
	}
	dims, err := b.chainIn(n, 0)
	if err != nil {
		return err
	}
	for i := 0; i < len(dims)-1; i++ {
		if dims[i] != 1 {
			return errAt(n, "input A has shape %v; nicc needs a batch-1 vector (all dimensions but the last 1)", dims)
		}
	}
	k := int64(b.width)
	bt, err := b.needConst(n, 1, "weight B")
	if err != nil {
		return err
	}
	if len(bt.dims) != 2 {
		return errAt(n, "weight B %q has shape %v, want a matrix", bt.name, bt.dims)
	}
	if bt.dims[0] != k {
		return errAt(n, "weight B %q has shape %v, which does not fit an input of width %d", bt.name, bt.dims, k)
	}
	out := bt.dims[1]
	if out < 1 || out > model.MaxWidth {
		return errAt(n, "weight B %q has shape %v: %d outputs, want 1..%d", bt.name, bt.dims, out, model.MaxWidth)
	}
	flat, err := b.weights(n, bt)
	if err != nil {
		return err
	}
	w := make([][]float64, out)
	for o := range w {
		w[o] = make([]float64, k)
		for i := range w[o] {
			w[o][i] = flat[int64(i)*out+int64(o)]
		}
	}
	if err := b.startDense(n, w, nil); err != nil {
		return err
	}
	b.width = int(out)
	od := slices.Clone(dims)
	od[len(od)-1] = out
	return b.advance(n, od)
}

// add folds the addition of a constant into the bias of the dense layer just before it.
func (b *builder) add(n *nodeProto) error {
	if _, err := attrsOf(n); err != nil {
		return err
	}
	if err := b.singleOutput(n); err != nil {
		return err
	}
	if len(n.inputs) != 2 {
		return errAt(n, "has %d inputs, want 2", len(n.inputs))
	}
	ci := 0
	if _, ok := b.live[n.inputs[1]]; ok {
		ci = 1
	}
	dims, err := b.chainIn(n, ci)
	if err != nil {
		return err
	}
	ct, err := b.needConst(n, 1-ci, "addend")
	if err != nil {
		return err
	}
	if !b.open {
		return errAt(n, "adds a constant that does not follow a Gemm or MatMul; nicc folds Add into a dense layer's bias")
	}
	// Bidirectional broadcast: the result must still be the same vector, not a bigger tensor.
	rank := max(len(dims), len(ct.dims))
	if rank > maxRank {
		return errAt(n, "addend %q has %d dimensions, over %d", ct.name, len(ct.dims), maxRank)
	}
	od := make([]int64, rank)
	for i := range od {
		a, c := dimAt(dims, i, rank), dimAt(ct.dims, i, rank)
		switch {
		case a == c || c == 1:
			od[i] = a
		case a == 1:
			od[i] = c
		default:
			return errAt(n, "addend %q of shape %v does not broadcast against the vector of shape %v", ct.name, ct.dims, dims)
		}
	}
	if numel(od) != int64(b.width) {
		return errAt(n, "adding %q of shape %v would spread the vector of shape %v into shape %v", ct.name, ct.dims, dims, od)
	}
	add, err := b.broadcast(n, ct, od)
	if err != nil {
		return err
	}
	l := &b.layers[len(b.layers)-1]
	if l.B == nil {
		l.B = make([]float64, l.Out)
	}
	for i, v := range add {
		l.B[i] += v
		if math.IsInf(l.B[i], 0) {
			return errAt(n, "bias [%d] overflows", i)
		}
	}
	return b.advance(n, od)
}

// dimAt is dimension i of dims right-aligned to rank, 1 where dims is shorter.
func dimAt(dims []int64, i, rank int) int64 {
	j := i - (rank - len(dims))
	if j < 0 {
		return 1
	}
	return dims[j]
}

// broadcast expands constant t to shape to (unidirectional numpy broadcasting) and returns
// it flattened in row-major order.
func (b *builder) broadcast(n *nodeProto, t *tensorProto, to []int64) ([]float64, error) {
	if len(t.dims) > len(to) {
		return nil, errAt(n, "%s %q has shape %v, which does not broadcast to %v", t.kind(), t.name, t.dims, to)
	}
	for i := range to {
		if d := dimAt(t.dims, i, len(to)); d != 1 && d != to[i] {
			return nil, errAt(n, "%s %q has shape %v, which does not broadcast to %v", t.kind(), t.name, t.dims, to)
		}
	}
	src, err := b.weights(n, t)
	if err != nil {
		return nil, err
	}
	total := numel(to)
	out := make([]float64, total)
	idx := make([]int64, len(to))
	for k := range out {
		// Row-major index of k in to, then the source offset with broadcast axes pinned to 0.
		rem := int64(k)
		for i := len(to) - 1; i >= 0; i-- {
			idx[i] = rem % to[i]
			rem /= to[i]
		}
		off, stride := int64(0), int64(1)
		for i := len(to) - 1; i >= 0; i-- {
			d := dimAt(t.dims, i, len(to))
			if d != 1 {
				off += idx[i] * stride
			}
			stride *= d
		}
		out[k] = src[off]
	}
	return out, nil
}

func (b *builder) activation(n *nodeProto, act model.Activation) error {
	var known []string
	if act == model.ActLeakyReLU {
		known = []string{"alpha"}
	}
	at, err := attrsOf(n, known...)
	if err != nil {
		return err
	}
	if err := b.singleOutput(n); err != nil {
		return err
	}
	dims, err := b.chainIn(n, 0)
	if err != nil {
		return err
	}
	if !b.open {
		return errAt(n, "activation does not follow a dense layer; nicc folds each activation into the Gemm or MatMul (+Add) just before it")
	}
	l := &b.layers[len(b.layers)-1]
	switch act {
	case model.ActLeakyReLU:
		if l.Alpha, err = at.float("alpha", 0.01); err != nil {
			return err
		}
	case model.ActClip:
		if l.Lo, l.Hi, err = b.clipBounds(n); err != nil {
			return err
		}
	}
	if act != model.ActClip && len(n.inputs) != 1 {
		return errAt(n, "has %d inputs, want 1", len(n.inputs))
	}
	l.Act = act
	b.open = false
	return b.advance(n, dims)
}

// clipBounds reads Clip's min and max inputs; a missing or infinite bound becomes
// ∓math.MaxFloat64, and min > max becomes [max, max], both exact for finite inputs.
func (b *builder) clipBounds(n *nodeProto) (lo, hi float64, err error) {
	if len(n.inputs) > 3 {
		return 0, 0, errAt(n, "has %d inputs, want at most 3", len(n.inputs))
	}
	bound := func(i int, what string, def float64) (float64, error) {
		t, err := b.constIn(n, i, what)
		if t == nil || err != nil {
			return def, err
		}
		if t.numel != 1 {
			return 0, errAt(n, "%s %q has shape %v, want a scalar", what, t.name, t.dims)
		}
		v, err := t.values()
		if err != nil {
			return 0, inNode(n, err)
		}
		if math.IsNaN(v[0]) {
			return 0, errAt(n, "%s %q is NaN", what, t.name)
		}
		if math.IsInf(v[0], 0) {
			return math.Copysign(math.MaxFloat64, v[0]), nil
		}
		return v[0], nil
	}
	if lo, err = bound(1, "min", -math.MaxFloat64); err != nil {
		return
	}
	if hi, err = bound(2, "max", math.MaxFloat64); err != nil {
		return
	}
	lo = min(lo, hi)
	return lo, hi, nil
}

func (b *builder) flatten(n *nodeProto) error {
	at, err := attrsOf(n, "axis")
	if err != nil {
		return err
	}
	if err := b.singleOutput(n); err != nil {
		return err
	}
	axis, err := at.int("axis", 1)
	if err != nil {
		return err
	}
	dims, err := b.chainIn(n, 0)
	if err != nil {
		return err
	}
	if len(n.inputs) != 1 {
		return errAt(n, "has %d inputs, want 1", len(n.inputs))
	}
	r := int64(len(dims))
	if axis < -r || axis > r {
		return errAt(n, "axis %d is out of range for shape %v", axis, dims)
	}
	if axis < 0 {
		axis += r
	}
	return b.advance(n, []int64{numel(dims[:axis]), numel(dims[axis:])})
}

func (b *builder) reshape(n *nodeProto) error {
	at, err := attrsOf(n, "allowzero")
	if err != nil {
		return err
	}
	if err := b.singleOutput(n); err != nil {
		return err
	}
	allowZero, err := at.flag("allowzero")
	if err != nil {
		return err
	}
	dims, err := b.chainIn(n, 0)
	if err != nil {
		return err
	}
	if len(n.inputs) != 2 {
		return errAt(n, "has %d inputs, want 2", len(n.inputs))
	}
	st, err := b.needConst(n, 1, "shape")
	if err != nil {
		return err
	}
	shape, err := st.ints(maxRank)
	if err != nil {
		return inNode(n, err)
	}
	od := make([]int64, len(shape))
	infer := -1
	for i, s := range shape {
		switch {
		case s == -1 && infer < 0:
			infer = i
			od[i] = 1
		case s == 0 && !allowZero:
			if i >= len(dims) {
				return errAt(n, "shape %v copies dimension %d, which the input of shape %v lacks", shape, i, dims)
			}
			od[i] = dims[i]
		case s < 0:
			return errAt(n, "shape %v is not a valid target shape", shape)
		default:
			od[i] = s
		}
	}
	if infer >= 0 {
		p := numel(od)
		if p == 0 || int64(b.width)%p != 0 {
			return errAt(n, "shape %v does not fit the %d-element vector", shape, b.width)
		}
		od[infer] = int64(b.width) / p
	}
	return b.advance(n, od)
}

// squeeze handles Squeeze and Unsqueeze. Their axes are an attribute before opset 13 and an
// input from opset 13 on.
func (b *builder) squeeze(n *nodeProto) error {
	var known []string
	if b.opset < 13 {
		known = []string{"axes"}
	}
	at, err := attrsOf(n, known...)
	if err != nil {
		return err
	}
	if err := b.singleOutput(n); err != nil {
		return err
	}
	dims, err := b.chainIn(n, 0)
	if err != nil {
		return err
	}
	var axes []int64
	hasAxes := false
	if b.opset < 13 {
		if len(n.inputs) != 1 {
			return errAt(n, "has %d inputs; before opset 13 the axes are an attribute", len(n.inputs))
		}
		a, err := at.get("axes", atInts)
		if err != nil {
			return err
		}
		if a != nil {
			if len(a.ints) > maxRank {
				return errAt(n, "has %d axes, over %d", len(a.ints), maxRank)
			}
			axes, hasAxes = a.ints, true
		}
	} else {
		if len(n.inputs) > 2 {
			return errAt(n, "has %d inputs, want at most 2", len(n.inputs))
		}
		t, err := b.constIn(n, 1, "axes")
		if err != nil {
			return err
		}
		if t != nil {
			if axes, err = t.ints(maxRank); err != nil {
				return inNode(n, err)
			}
			hasAxes = true
		}
	}
	if n.op == "Unsqueeze" {
		if !hasAxes {
			return errAt(n, "has no axes")
		}
		r := int64(len(dims) + len(axes))
		ins := make([]bool, r)
		for _, a := range axes {
			if a < -r || a >= r {
				return errAt(n, "axis %d is out of range for an output of rank %d", a, r)
			}
			if a < 0 {
				a += r
			}
			if ins[a] {
				return errAt(n, "axis %d is given twice", a)
			}
			ins[a] = true
		}
		od := make([]int64, 0, r)
		j := 0
		for i := range ins {
			if ins[i] {
				od = append(od, 1)
			} else {
				od = append(od, dims[j])
				j++
			}
		}
		return b.advance(n, od)
	}
	r := int64(len(dims))
	drop := make([]bool, r)
	if !hasAxes {
		for i, d := range dims {
			drop[i] = d == 1
		}
	}
	for _, a := range axes {
		if a < -r || a >= r {
			return errAt(n, "axis %d is out of range for shape %v", a, dims)
		}
		if a < 0 {
			a += r
		}
		if drop[a] {
			return errAt(n, "axis %d is given twice", a)
		}
		if dims[a] != 1 {
			return errAt(n, "axis %d of shape %v is not 1", a, dims)
		}
		drop[a] = true
	}
	var od []int64
	for i, d := range dims {
		if !drop[i] {
			od = append(od, d)
		}
	}
	return b.advance(n, od)
}

// gather accepts only the pick of index 0 (or -1) along an axis of size 1, as torch writes for
// out[0] on an LSTM's output: the vector itself, reshaped.
func (b *builder) gather(n *nodeProto) error {
	at, err := attrsOf(n, "axis")
	if err != nil {
		return err
	}
	if err := b.singleOutput(n); err != nil {
		return err
	}
	axis, err := at.int("axis", 0)
	if err != nil {
		return err
	}
	dims, err := b.chainIn(n, 0)
	if err != nil {
		return err
	}
	if len(n.inputs) != 2 {
		return errAt(n, "has %d inputs, want 2", len(n.inputs))
	}
	t, err := b.needConst(n, 1, "indices")
	if err != nil {
		return err
	}
	idx, err := t.ints(1)
	if err != nil {
		return inNode(n, err)
	}
	r := int64(len(dims))
	if axis < -r || axis >= r {
		return errAt(n, "axis %d is out of range for shape %v", axis, dims)
	}
	if axis < 0 {
		axis += r
	}
	if dims[axis] != 1 || len(idx) != 1 || (idx[0] != 0 && idx[0] != -1) {
		return errAt(n, "selects part of the vector (indices %v on axis %d of shape %v); nicc supports Gather only as index 0 of a size-1 axis", idx, axis, dims)
	}
	od := slices.Concat(dims[:axis], t.dims, dims[axis+1:])
	return b.advance(n, od)
}

// lstmGate maps the IR's gate blocks (PyTorch order i, f, g, o) to ONNX's (i, o, f, c).
var lstmGate = [4]int{0, 2, 3, 1}

func (b *builder) lstmNode(n *nodeProto) error {
	at, err := attrsOf(n, "hidden_size", "direction", "activations", "clip", "input_forget",
		"layout", "activation_alpha", "activation_beta")
	if err != nil {
		return err
	}
	for _, a := range []string{"clip", "activation_alpha", "activation_beta"} {
		if at.has(a) {
			return errAt(n, "attribute %s is not supported", a)
		}
	}
	if forget, err := at.int("input_forget", 0); err != nil || forget != 0 {
		if err == nil {
			err = errAt(n, "input_forget=%d is not supported", forget)
		}
		return err
	}
	if layout, err := at.int("layout", 0); err != nil || layout != 0 {
		if err == nil {
			err = errAt(n, "layout=%d is not supported; nicc reads layout 0 (seq, batch, feature)", layout)
		}
		return err
	}
	if a, err := at.get("direction", atString); err != nil {
		return err
	} else if a != nil && string(a.s) != "forward" {
		return errAt(n, "direction %q is not supported; nicc reads forward LSTMs", a.s)
	}
	if a, err := at.get("activations", atStrings); err != nil {
		return err
	} else if a != nil {
		want := []string{"Sigmoid", "Tanh", "Tanh"}
		got := make([]string, len(a.strings))
		for i, s := range a.strings {
			got[i] = string(s)
		}
		if !slices.Equal(got, want) {
			return errAt(n, "activations %q are not supported; nicc reads the default [Sigmoid Tanh Tanh]", got)
		}
	}
	if b.lstm != nil {
		return errAt(n, "is a second LSTM; nicc supports one")
	}
	if len(n.inputs) > 8 {
		return errAt(n, "has %d inputs, want at most 8", len(n.inputs))
	}
	if len(n.outputs) > 3 {
		return errAt(n, "has %d outputs, want at most 3", len(n.outputs))
	}
	dims, err := b.chainIn(n, 0)
	if err != nil {
		return err
	}
	k := int64(b.width)
	if len(dims) != 3 || dims[0] != 1 || dims[1] != 1 {
		return errAt(n, "input X has shape %v, want [1 1 %d] (seq_len 1, batch 1)", dims, k)
	}
	wt, err := b.needConst(n, 1, "W")
	if err != nil {
		return err
	}
	rt, err := b.needConst(n, 2, "R")
	if err != nil {
		return err
	}
	if len(rt.dims) != 3 || rt.dims[0] != 1 || rt.dims[2] < 1 || rt.dims[2] > model.MaxWidth || rt.dims[1] != 4*rt.dims[2] {
		return errAt(n, "R %q has shape %v, want [1 4·hidden hidden] with hidden 1..%d", rt.name, rt.dims, model.MaxWidth)
	}
	h := rt.dims[2]
	if hs, err := at.int("hidden_size", h); err != nil {
		return err
	} else if hs != h {
		return errAt(n, "hidden_size is %d but R %q has shape %v", hs, rt.name, rt.dims)
	}
	if !slices.Equal(wt.dims, []int64{1, 4 * h, k}) {
		return errAt(n, "W %q has shape %v, want [1 %d %d] for hidden size %d and input width %d", wt.name, wt.dims, 4*h, k, h, k)
	}
	bt, err := b.constIn(n, 3, "B")
	if err != nil {
		return err
	}
	if bt != nil && !slices.Equal(bt.dims, []int64{1, 8 * h}) {
		return errAt(n, "B %q has shape %v, want [1 %d]", bt.name, bt.dims, 8*h)
	}
	if len(n.inputs) > 4 && n.inputs[4] != "" {
		st, err := b.constIn(n, 4, "sequence_lens")
		if err != nil {
			return err
		}
		lens, err := st.ints(1)
		if err != nil {
			return inNode(n, err)
		}
		if len(lens) != 1 || lens[0] != 1 {
			return errAt(n, "sequence_lens %v is not [1]", lens)
		}
	}
	if len(n.inputs) > 7 && n.inputs[7] != "" {
		return errAt(n, "peephole weights P are not supported")
	}
	var state [2]string
	for i, what := range [2]string{"initial_h", "initial_c"} {
		j := 5 + i
		if j >= len(n.inputs) || n.inputs[j] == "" {
			return errAt(n, "has no %s input; nicc carries the LSTM state from one decision to the next, so the ONNX model must take it as a graph input", what)
		}
		v, ok := b.graphIn[n.inputs[j]]
		if !ok || v == b.input {
			return errAt(n, "%s %q is not a graph input of its own", what, n.inputs[j])
		}
		if !v.tensor || v.elemType != dtFloat && v.elemType != dtDouble {
			return errAt(n, "%s %q is not a FLOAT or DOUBLE tensor", what, v.name)
		}
		if v.hasShape {
			if len(v.dims) != 3 || (v.dims[0].known && v.dims[0].value != 1) || (v.dims[1].known && v.dims[1].value != 1) || (v.dims[2].known && v.dims[2].value != h) {
				return errAt(n, "%s %q has a shape other than [1 1 %d]", what, v.name, h)
			}
		}
		state[i] = n.inputs[j]
	}
	if state[0] == state[1] {
		return errAt(n, "initial_h and initial_c are the same input %q", state[0])
	}
	for i, what := range [2]string{"Y_h", "Y_c"} {
		if len(n.outputs) <= 1+i || n.outputs[1+i] == "" {
			return errAt(n, "has no %s output; nicc carries the LSTM state from one decision to the next, so the ONNX model must return it", what)
		}
		b.stateOut[i] = n.outputs[1+i]
	}
	w, err := b.weights(n, wt)
	if err != nil {
		return err
	}
	r, err := b.weights(n, rt)
	if err != nil {
		return err
	}
	l := model.Layer{Op: model.OpLSTM, In: int(k), Out: int(h),
		W: gateRows(w, h, k), R: gateRows(r, h, h)}
	if bt != nil {
		bb, err := b.weights(n, bt)
		if err != nil {
			return err
		}
		// ONNX's B is Wb then Rb, 4·hidden each.
		l.B = slices.Concat(gateRows(bb[:4*h], h, 1)...)
		l.RB = slices.Concat(gateRows(bb[4*h:], h, 1)...)
	}
	b.open = false
	b.layers = append(b.layers, l)
	b.lstm = n
	b.width = int(h)
	// Y (the step's output, [seq dir batch hidden]) and Y_h ([dir batch hidden]) are the same
	// vector; the chain may continue from either.
	y := n.outputs[0]
	b.live = map[string][]int64{}
	if y != "" {
		b.live[y] = []int64{1, 1, 1, h}
	}
	b.live[b.stateOut[0]] = []int64{1, 1, h}
	return nil
}

// gateRows slices a flat [4·h × cols] ONNX gate matrix into rows, reordering the gate blocks
// from ONNX's i, o, f, c to the IR's i, f, g, o.
func gateRows(flat []float64, h, cols int64) [][]float64 {
	rows := make([][]float64, 0, 4*h)
	for _, g := range lstmGate {
		for j := int64(0); j < h; j++ {
			r := int64(g)*h + j
			rows = append(rows, slices.Clone(flat[r*cols:(r+1)*cols]))
		}
	}
	return rows
}
