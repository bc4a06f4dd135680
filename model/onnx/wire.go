package onnx

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/nicc-dev/nicc/model"
)

// This file decodes the parts of onnx.proto (ONNX 1.12, IR version 8) that the importer reads,
// straight from the protobuf wire format. Unknown fields are skipped, as protobuf requires.
// Field numbers:
//
//	ModelProto         1 ir_version, 2 producer_name, 3 producer_version, 6 doc_string, 7 graph,
//	                   8 opset_import, 14 metadata_props (StringStringEntryProto: 1 key, 2 value)
//	OperatorSetIdProto 1 domain, 2 version
//	GraphProto         1 node, 2 name, 5 initializer, 11 input, 12 output
//	NodeProto          1 input, 2 output, 3 name, 4 op_type, 5 attribute, 7 domain
//	AttributeProto     1 name, 2 f, 3 i, 4 s, 5 t, 6 g, 7 floats, 8 ints, 9 strings, 10 tensors,
//	                   11 graphs, 14 tp, 15 type_protos, 20 type, 21 ref_attr_name,
//	                   22 sparse_tensor, 23 sparse_tensors
//	TensorProto        1 dims, 2 data_type, 3 segment, 4 float_data, 5 int32_data, 6 string_data,
//	                   7 int64_data, 8 name, 9 raw_data, 10 double_data, 11 uint64_data,
//	                   13 external_data, 14 data_location
//	ValueInfoProto     1 name, 2 type, 3 doc_string
//	TypeProto          1 tensor_type (Tensor: 1 elem_type, 2 shape)
//	TensorShapeProto   1 dim (Dimension: 1 dim_value, 2 dim_param)
//
// Every count is capped before anything is sized from it, so the memory a file can make the
// decoder allocate is a small multiple of the file's size.

// Caps on what one file may declare. Real policies are far below them.
const (
	maxNodes    = 1 << 14 // nodes in the graph
	maxTensors  = 1 << 14 // initializers
	maxValues   = 1 << 10 // graph inputs, graph outputs, opset imports
	maxNodeIO   = 64      // inputs or outputs of one node
	maxAttrs    = 64      // attributes of one node
	maxAttrList = 1 << 12 // entries of a list attribute
	maxRank     = 16      // dimensions of a tensor or value
	// maxElems caps a tensor's element count: every element takes at least one byte of the file.
	maxElems = model.MaxFileBytes
)

// Tensor element types (TensorProto.DataType).
const (
	dtFloat  = 1
	dtInt32  = 6
	dtInt64  = 7
	dtString = 8
	dtDouble = 11
)

var dtypeNames = map[int32]string{
	0: "UNDEFINED", 1: "FLOAT", 2: "UINT8", 3: "INT8", 4: "UINT16", 5: "INT16", 6: "INT32",
	7: "INT64", 8: "STRING", 9: "BOOL", 10: "FLOAT16", 11: "DOUBLE", 12: "UINT32", 13: "UINT64",
	14: "COMPLEX64", 15: "COMPLEX128", 16: "BFLOAT16",
}

func dtypeName(t int32) string {
	if n, ok := dtypeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("data type %d", t)
}

// Attribute types (AttributeProto.AttributeType).
const (
	atFloat   = 1
	atInt     = 2
	atString  = 3
	atTensor  = 4
	atGraph   = 5
	atFloats  = 6
	atInts    = 7
	atStrings = 8
)

var attrTypeNames = map[int64]string{
	0: "UNDEFINED", 1: "FLOAT", 2: "INT", 3: "STRING", 4: "TENSOR", 5: "GRAPH", 6: "FLOATS",
	7: "INTS", 8: "STRINGS", 9: "TENSORS", 10: "GRAPHS", 11: "SPARSE_TENSOR",
	12: "SPARSE_TENSORS", 13: "TYPE_PROTO", 14: "TYPE_PROTOS",
}

func attrTypeName(t int64) string {
	if n, ok := attrTypeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("attribute type %d", t)
}

type modelProto struct {
	irVersion       int64
	producer        string
	producerVersion string
	doc             string
	graph           *graphProto
	opsets          []opsetID
	metadata        [][2]string // metadata_props: key, value
}

type opsetID struct {
	domain  string
	version int64
}

type graphProto struct {
	name    string
	nodes   []*nodeProto
	inits   []*tensorProto
	inputs  []*valueInfo
	outputs []*valueInfo
}

type nodeProto struct {
	off      int64
	inputs   []string
	outputs  []string
	name     string
	op       string
	domain   string
	attrs    []*attrProto
	position int // index in the graph, for nodes without a name
}

type attrProto struct {
	off     int64
	name    string
	typ     int64 // 0 when the writer left it out
	f       float32
	i       int64
	s       []byte
	t       *tensorProto
	floats  []float32
	ints    []int64
	strings [][]byte
	// has records which value fields were present, by AttributeType.
	has   [atStrings + 1]bool
	isRef bool // ref_attr_name: only meaningful inside a function body
}

type valueInfo struct {
	name string
	doc  string
	// tensor is false when the type is absent or not a tensor type.
	tensor   bool
	elemType int32
	hasShape bool
	dims     []dimension
}

type dimension struct {
	value int64
	param string
	known bool // dim_value was given
}

// tensorProto keeps its message bytes, so typed data fields are decoded only when the tensor is
// used, against the element count its dims give.
type tensorProto struct {
	off      int64 // file offset of the tensor's field; -1 for an inline Constant
	fromNode bool  // the value of a Constant node, not an initializer
	msg      []byte
	name     string
	dims     []int64
	numel    int64
	dtype    int32
	raw      []byte
	hasRaw   bool
	external bool
	segment  bool
	// inline holds the values of a Constant node's value_float(s) or value_int(s).
	inline    bool
	inlineF   []float64
	inlineInt []int64
	// cacheF and cacheI hold the decoded elements after first use.
	cacheF []float64
	cacheI []int64
}

// reader walks the fields of one message. base is the file offset of b[0].
type reader struct {
	b    []byte
	base int64
	pos  int
}

// field is one decoded field: its number, wire type and value.
type field struct {
	num  protowire.Number
	typ  protowire.Type
	off  int64  // file offset of the tag
	v    uint64 // varint, fixed32 and fixed64 values
	b    []byte // length-delimited value
	boff int64  // file offset of b[0]
}

func wireErr(off int64, format string, args ...any) error {
	return &model.ParseError{Off: off, Msg: fmt.Sprintf(format, args...)}
}

// next decodes the next field; ok is false at the end of the message.
func (r *reader) next() (f field, ok bool, err error) {
	if r.pos >= len(r.b) {
		return field{}, false, nil
	}
	rest := r.b[r.pos:]
	f.off = r.base + int64(r.pos)
	num, typ, n := protowire.ConsumeTag(rest)
	if n < 0 {
		return f, false, wireErr(f.off, "bad field tag: %v", protowire.ParseError(n))
	}
	f.num, f.typ = num, typ
	rest = rest[n:]
	var m int
	switch typ {
	case protowire.VarintType:
		f.v, m = protowire.ConsumeVarint(rest)
	case protowire.Fixed32Type:
		var v uint32
		v, m = protowire.ConsumeFixed32(rest)
		f.v = uint64(v)
	case protowire.Fixed64Type:
		f.v, m = protowire.ConsumeFixed64(rest)
	case protowire.BytesType:
		f.b, m = protowire.ConsumeBytes(rest)
		if m >= 0 {
			f.boff = f.off + int64(n+m-len(f.b))
		}
	case protowire.StartGroupType:
		_, m = protowire.ConsumeGroup(num, rest)
	default:
		return f, false, wireErr(f.off, "field %d has unexpected wire type %d", num, typ)
	}
	if m < 0 {
		return f, false, wireErr(f.off, "field %d: %v", num, protowire.ParseError(m))
	}
	r.pos += n + m
	return f, true, nil
}

func (f *field) want(t protowire.Type, what string) error {
	if f.typ != t {
		return wireErr(f.off, "%s (field %d) has wire type %d, want %d", what, f.num, f.typ, t)
	}
	return nil
}

func (f *field) str(what string) (string, error) {
	if err := f.want(protowire.BytesType, what); err != nil {
		return "", err
	}
	return string(f.b), nil
}

func (f *field) int64(what string) (int64, error) {
	if err := f.want(protowire.VarintType, what); err != nil {
		return 0, err
	}
	return int64(f.v), nil
}

func (f *field) sub(what string) (*reader, error) {
	if err := f.want(protowire.BytesType, what); err != nil {
		return nil, err
	}
	return &reader{b: f.b, base: f.boff}, nil
}

// repeated calls fn for each element of a repeated scalar field, packed or not. elem is the
// element's wire type; max caps how many elements *count may reach.
func (f *field) repeated(elem protowire.Type, what string, count *int, max int, fn func(v uint64)) error {
	add := func(v uint64) error {
		if *count >= max {
			return wireErr(f.off, "%s has over %d entries", what, max)
		}
		*count++
		fn(v)
		return nil
	}
	if f.typ == elem {
		return add(f.v)
	}
	if f.typ != protowire.BytesType {
		return wireErr(f.off, "%s (field %d) has wire type %d, want %d or packed", what, f.num, f.typ, elem)
	}
	b := f.b
	for len(b) > 0 {
		var v uint64
		var n int
		switch elem {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var u uint32
			u, n = protowire.ConsumeFixed32(b)
			v = uint64(u)
		default:
			v, n = protowire.ConsumeFixed64(b)
		}
		if n < 0 {
			return wireErr(f.boff+int64(len(f.b)-len(b)), "%s: packed entry: %v", what, protowire.ParseError(n))
		}
		if err := add(v); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

func decodeModel(data []byte) (*modelProto, error) {
	m := &modelProto{}
	r := &reader{b: data}
	for {
		f, ok, err := r.next()
		if err != nil || !ok {
			if err == nil && m.graph == nil {
				err = model.Errorf("model has no graph")
			}
			return m, err
		}
		switch f.num {
		case 1:
			m.irVersion, err = f.int64("ir_version")
		case 2:
			m.producer, err = f.str("producer_name")
		case 3:
			m.producerVersion, err = f.str("producer_version")
		case 6:
			m.doc, err = f.str("doc_string")
		case 7:
			if m.graph != nil {
				return nil, wireErr(f.off, "model has a second graph")
			}
			var sr *reader
			if sr, err = f.sub("graph"); err == nil {
				m.graph, err = decodeGraph(sr)
			}
		case 8:
			if len(m.opsets) >= maxValues {
				return nil, wireErr(f.off, "model imports over %d opsets", maxValues)
			}
			var sr *reader
			if sr, err = f.sub("opset_import"); err == nil {
				var o opsetID
				o, err = decodeOpset(sr)
				m.opsets = append(m.opsets, o)
			}
		case 14:
			if len(m.metadata) >= maxValues {
				return nil, wireErr(f.off, "model has over %d metadata_props", maxValues)
			}
			var sr *reader
			if sr, err = f.sub("metadata_props"); err == nil {
				var kv [2]string
				kv, err = decodeStringPair(sr)
				m.metadata = append(m.metadata, kv)
			}
		}
		if err != nil {
			return nil, err
		}
	}
}

// decodeStringPair is a StringStringEntryProto: 1 key, 2 value.
func decodeStringPair(r *reader) (kv [2]string, err error) {
	for {
		f, ok, err := r.next()
		if err != nil || !ok {
			return kv, err
		}
		switch f.num {
		case 1:
			kv[0], err = f.str("metadata_props key")
		case 2:
			kv[1], err = f.str("metadata_props value")
		}
		if err != nil {
			return kv, err
		}
	}
}

func decodeOpset(r *reader) (o opsetID, err error) {
	for {
		f, ok, err := r.next()
		if err != nil || !ok {
			return o, err
		}
		switch f.num {
		case 1:
			o.domain, err = f.str("opset domain")
		case 2:
			o.version, err = f.int64("opset version")
		}
		if err != nil {
			return o, err
		}
	}
}

func decodeGraph(r *reader) (*graphProto, error) {
	g := &graphProto{}
	for {
		f, ok, err := r.next()
		if err != nil || !ok {
			return g, err
		}
		var sr *reader
		switch f.num {
		case 1:
			if len(g.nodes) >= maxNodes {
				return nil, wireErr(f.off, "graph has over %d nodes", maxNodes)
			}
			if sr, err = f.sub("node"); err == nil {
				var n *nodeProto
				n, err = decodeNode(sr, f.off)
				if n != nil {
					n.position = len(g.nodes)
				}
				g.nodes = append(g.nodes, n)
			}
		case 2:
			g.name, err = f.str("graph name")
		case 5:
			if len(g.inits) >= maxTensors {
				return nil, wireErr(f.off, "graph has over %d initializers", maxTensors)
			}
			var t *tensorProto
			t, err = decodeTensor(&f, "initializer")
			g.inits = append(g.inits, t)
		case 11, 12:
			list := &g.inputs
			if f.num == 12 {
				list = &g.outputs
			}
			if len(*list) >= maxValues {
				return nil, wireErr(f.off, "graph has over %d inputs or outputs", maxValues)
			}
			if sr, err = f.sub("graph input or output"); err == nil {
				var v *valueInfo
				v, err = decodeValueInfo(sr)
				*list = append(*list, v)
			}
		}
		if err != nil {
			return nil, err
		}
	}
}

func decodeNode(r *reader, off int64) (*nodeProto, error) {
	n := &nodeProto{off: off}
	for {
		f, ok, err := r.next()
		if err != nil || !ok {
			return n, err
		}
		switch f.num {
		case 1, 2:
			list := &n.inputs
			if f.num == 2 {
				list = &n.outputs
			}
			if len(*list) >= maxNodeIO {
				return nil, wireErr(f.off, "node has over %d inputs or outputs", maxNodeIO)
			}
			var s string
			s, err = f.str("node input or output")
			*list = append(*list, s)
		case 3:
			n.name, err = f.str("node name")
		case 4:
			n.op, err = f.str("node op_type")
		case 7:
			n.domain, err = f.str("node domain")
		case 5:
			if len(n.attrs) >= maxAttrs {
				return nil, wireErr(f.off, "node has over %d attributes", maxAttrs)
			}
			var sr *reader
			if sr, err = f.sub("attribute"); err == nil {
				var a *attrProto
				a, err = decodeAttr(sr, f.off)
				n.attrs = append(n.attrs, a)
			}
		}
		if err != nil {
			return nil, err
		}
	}
}

func decodeAttr(r *reader, off int64) (*attrProto, error) {
	a := &attrProto{off: off}
	nf, ni, ns := 0, 0, 0
	for {
		f, ok, err := r.next()
		if err != nil || !ok {
			return a, err
		}
		// Fields 10 tensors, 11 graphs, 14 tp, 15 type_protos, 22 sparse_tensor and
		// 23 sparse_tensors are skipped: no attribute the importer accepts holds them.
		switch f.num {
		case 1:
			a.name, err = f.str("attribute name")
		case 20:
			a.typ, err = f.int64("attribute type")
		case 21:
			a.isRef = true
		case 2:
			if err = f.want(protowire.Fixed32Type, "attribute f"); err == nil {
				a.f = math.Float32frombits(uint32(f.v))
				a.has[atFloat] = true
			}
		case 3:
			if a.i, err = f.int64("attribute i"); err == nil {
				a.has[atInt] = true
			}
		case 4:
			if err = f.want(protowire.BytesType, "attribute s"); err == nil {
				a.s = f.b
				a.has[atString] = true
			}
		case 5:
			if a.t, err = decodeTensor(&f, "attribute t"); err == nil {
				a.has[atTensor] = true
			}
		case 6:
			a.has[atGraph] = true
		case 7:
			a.has[atFloats] = true
			err = f.repeated(protowire.Fixed32Type, "attribute floats", &nf, maxAttrList, func(v uint64) {
				a.floats = append(a.floats, math.Float32frombits(uint32(v)))
			})
		case 8:
			a.has[atInts] = true
			err = f.repeated(protowire.VarintType, "attribute ints", &ni, maxAttrList, func(v uint64) {
				a.ints = append(a.ints, int64(v))
			})
		case 9:
			a.has[atStrings] = true
			if err = f.want(protowire.BytesType, "attribute strings"); err == nil {
				if ns >= maxAttrList {
					return nil, wireErr(f.off, "attribute strings has over %d entries", maxAttrList)
				}
				ns++
				a.strings = append(a.strings, f.b)
			}
		}
		if err != nil {
			return nil, err
		}
	}
}

func decodeTensor(f *field, what string) (*tensorProto, error) {
	r, err := f.sub(what)
	if err != nil {
		return nil, err
	}
	t := &tensorProto{off: f.off, msg: f.b}
	ndims := 0
	for {
		g, ok, err := r.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		switch g.num {
		case 1:
			var bad bool
			err = g.repeated(protowire.VarintType, "tensor dims", &ndims, maxRank, func(v uint64) {
				if int64(v) < 0 {
					bad = true
				}
				t.dims = append(t.dims, int64(v))
			})
			if err == nil && bad {
				err = wireErr(g.off, "tensor has a negative dimension")
			}
		case 2:
			var v int64
			v, err = g.int64("tensor data_type")
			t.dtype = int32(v)
		case 3:
			t.segment = true
		case 8:
			t.name, err = g.str("tensor name")
		case 9:
			if err = g.want(protowire.BytesType, "tensor raw_data"); err == nil {
				t.raw, t.hasRaw = g.b, true
			}
		case 13:
			t.external = true
		case 14:
			var v int64
			v, err = g.int64("tensor data_location")
			if v != 0 {
				t.external = true
			}
		}
		if err != nil {
			return nil, err
		}
	}
	t.numel = 1
	for _, d := range t.dims {
		if d != 0 && t.numel > maxElems/d {
			return nil, wireErr(t.off, "tensor %q has shape %v, over %d elements", t.name, t.dims, maxElems)
		}
		t.numel *= d
	}
	return t, nil
}

func decodeValueInfo(r *reader) (*valueInfo, error) {
	v := &valueInfo{}
	for {
		f, ok, err := r.next()
		if err != nil || !ok {
			return v, err
		}
		switch f.num {
		case 1:
			v.name, err = f.str("value name")
		case 3:
			v.doc, err = f.str("value doc_string")
		case 2:
			var sr *reader
			if sr, err = f.sub("value type"); err == nil {
				err = decodeType(sr, v)
			}
		}
		if err != nil {
			return nil, err
		}
	}
}

func decodeType(r *reader, v *valueInfo) error {
	for {
		f, ok, err := r.next()
		if err != nil || !ok {
			return err
		}
		if f.num != 1 {
			continue
		}
		v.tensor = true
		tr, err := f.sub("tensor type")
		if err != nil {
			return err
		}
		for {
			g, ok, err := tr.next()
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			switch g.num {
			case 1:
				var t int64
				t, err = g.int64("elem_type")
				v.elemType = int32(t)
			case 2:
				var sr *reader
				if sr, err = g.sub("shape"); err == nil {
					v.hasShape = true
					err = decodeShape(sr, v)
				}
			}
			if err != nil {
				return err
			}
		}
	}
}

func decodeShape(r *reader, v *valueInfo) error {
	for {
		f, ok, err := r.next()
		if err != nil || !ok {
			return err
		}
		if f.num != 1 {
			continue
		}
		if len(v.dims) >= maxRank {
			return wireErr(f.off, "value %q has over %d dimensions", v.name, maxRank)
		}
		dr, err := f.sub("dimension")
		if err != nil {
			return err
		}
		var d dimension
		for {
			g, ok, err := dr.next()
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			switch g.num {
			case 1:
				d.value, err = g.int64("dim_value")
				d.known = true
			case 2:
				d.param, err = g.str("dim_param")
			}
			if err != nil {
				return err
			}
		}
		v.dims = append(v.dims, d)
	}
}
