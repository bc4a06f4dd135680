package onnx

import (
	"encoding/binary"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// A small ONNX writer: enough of onnx.proto for Encode's dense networks and for the tests'
// graphs (those torch writes, and the broken ones it never would).

type pbModel struct {
	opset    int64 // ai.onnx opset; 0 leaves opset_import out
	graph    pbGraph
	producer string
	doc      string
	metadata [][2]string // metadata_props: key, value
}

type pbGraph struct {
	name    string
	nodes   []pbNode
	inits   []pbTensor
	inputs  []pbValue
	outputs []pbValue
}

type pbNode struct {
	op, name, domain string
	in, out          []string
	attrs            []pbAttr
}

type pbAttr struct {
	name   string
	typ    int64 // AttributeType
	noType bool  // leave the type field out, as old writers did
	f      float32
	i      int64
	s      string
	t      *pbTensor
	floats []float32
	ints   []int64
	strs   []string
}

type pbTensor struct {
	name  string
	dims  []int64
	dtype int32
	f     []float32 // FLOAT, as raw_data unless typed is set
	d     []float64 // DOUBLE
	i     []int64   // INT64
	typed bool      // write float_data / double_data / int64_data instead of raw_data
}

// pbValue is a graph input or output; a dim of -1 is symbolic ("batch").
type pbValue struct {
	name string
	dims []int64
	doc  string
}

func msg(b []byte, num protowire.Number, m []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, m)
}

func str(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func varint(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func (m pbModel) encode() []byte {
	var b []byte
	b = varint(b, 1, 8)
	b = str(b, 2, m.producer)
	if m.doc != "" {
		b = str(b, 6, m.doc)
	}
	b = msg(b, 7, m.graph.encode())
	if m.opset != 0 {
		var o []byte
		o = str(o, 1, "")
		o = varint(o, 2, uint64(m.opset))
		b = msg(b, 8, o)
	}
	for _, kv := range m.metadata {
		b = msg(b, 14, str(str(nil, 1, kv[0]), 2, kv[1]))
	}
	return b
}

func (g pbGraph) encode() []byte {
	var b []byte
	for _, n := range g.nodes {
		b = msg(b, 1, n.encode())
	}
	b = str(b, 2, g.name)
	for _, t := range g.inits {
		b = msg(b, 5, t.encode())
	}
	for _, v := range g.inputs {
		b = msg(b, 11, v.encode())
	}
	for _, v := range g.outputs {
		b = msg(b, 12, v.encode())
	}
	return b
}

func (n pbNode) encode() []byte {
	var b []byte
	for _, s := range n.in {
		b = str(b, 1, s)
	}
	for _, s := range n.out {
		b = str(b, 2, s)
	}
	b = str(b, 3, n.name)
	b = str(b, 4, n.op)
	if n.domain != "" {
		b = str(b, 7, n.domain)
	}
	for _, a := range n.attrs {
		b = msg(b, 5, a.encode())
	}
	return b
}

func (a pbAttr) encode() []byte {
	var b []byte
	b = str(b, 1, a.name)
	switch a.typ {
	case atFloat:
		b = protowire.AppendTag(b, 2, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, math.Float32bits(a.f))
	case atInt:
		b = varint(b, 3, uint64(a.i))
	case atString:
		b = str(b, 4, a.s)
	case atTensor:
		b = msg(b, 5, a.t.encode())
	case atFloats:
		var p []byte
		for _, f := range a.floats {
			p = protowire.AppendFixed32(p, math.Float32bits(f))
		}
		b = msg(b, 7, p)
	case atInts:
		for _, v := range a.ints { // unpacked, as onnx's Python helper writes them
			b = varint(b, 8, uint64(v))
		}
	case atStrings:
		for _, s := range a.strs {
			b = str(b, 9, s)
		}
	}
	if !a.noType {
		b = varint(b, 20, uint64(a.typ))
	}
	return b
}

func (t pbTensor) encode() []byte {
	var b []byte
	for _, d := range t.dims {
		b = varint(b, 1, uint64(d))
	}
	b = varint(b, 2, uint64(t.dtype))
	b = str(b, 8, t.name)
	var raw []byte
	switch {
	case t.typed && t.f != nil:
		var p []byte
		for _, f := range t.f {
			p = protowire.AppendFixed32(p, math.Float32bits(f))
		}
		b = msg(b, 4, p)
	case t.typed && t.d != nil:
		var p []byte
		for _, f := range t.d {
			p = protowire.AppendFixed64(p, math.Float64bits(f))
		}
		b = msg(b, 10, p)
	case t.typed && t.i != nil:
		var p []byte
		for _, v := range t.i {
			p = protowire.AppendVarint(p, uint64(v))
		}
		b = msg(b, 7, p)
	case t.f != nil:
		for _, f := range t.f {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(f))
		}
	case t.d != nil:
		for _, f := range t.d {
			raw = binary.LittleEndian.AppendUint64(raw, math.Float64bits(f))
		}
	case t.i != nil:
		for _, v := range t.i {
			raw = binary.LittleEndian.AppendUint64(raw, uint64(v))
		}
	}
	if raw != nil {
		b = msg(b, 9, raw)
	}
	return b
}

func (v pbValue) encode() []byte {
	var b []byte
	b = str(b, 1, v.name)
	var shape []byte
	for _, d := range v.dims {
		var dim []byte
		if d < 0 {
			dim = str(dim, 2, "batch")
		} else {
			dim = varint(dim, 1, uint64(d))
		}
		shape = msg(shape, 1, dim)
	}
	var tt []byte
	tt = varint(tt, 1, dtFloat)
	tt = msg(tt, 2, shape)
	b = msg(b, 2, msg(nil, 1, tt))
	if v.doc != "" {
		b = str(b, 3, v.doc)
	}
	return b
}
