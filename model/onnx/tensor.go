package onnx

import (
	"encoding/binary"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/nicc-dev/nicc/model"
)

// kind names where a tensor comes from, for messages.
func (t *tensorProto) kind() string {
	if t.fromNode {
		return "constant"
	}
	return "initializer"
}

// fault is an error about t's contents, at t's offset in the file when it has one.
func (t *tensorProto) fault(format string, args ...any) error {
	msg := fmt.Sprintf("%s %q: ", t.kind(), t.name) + fmt.Sprintf(format, args...)
	if t.off < 0 {
		return &model.ParseError{Off: -1, Msg: msg}
	}
	return &model.ParseError{Off: t.off, Msg: msg}
}

// typedField is the TensorProto field that holds elements of a data type when raw_data is not used.
var typedField = map[int32]struct {
	num  protowire.Number
	wire protowire.Type
	size int // bytes per element in raw_data
}{
	dtFloat:  {4, protowire.Fixed32Type, 4},
	dtInt32:  {5, protowire.VarintType, 4},
	dtInt64:  {7, protowire.VarintType, 8},
	dtDouble: {10, protowire.Fixed64Type, 8},
}

// dataFields are TensorProto's typed data fields: float, int32, string, int64, double, uint64.
var dataFields = [...]protowire.Number{4, 5, 6, 7, 10, 11}

// elems calls fn with each element's bits (raw little-endian bytes or the typed field's value),
// in order, after checking that there are exactly numel of them.
func (t *tensorProto) elems(fn func(v uint64)) error {
	if t.external {
		return t.fault("data is stored outside the file; nicc reads self-contained ONNX files")
	}
	if t.segment {
		return t.fault("is a segment of a larger tensor, which is not supported")
	}
	tf, ok := typedField[t.dtype]
	if !ok {
		return t.fault("has data type %s", dtypeName(t.dtype))
	}
	if t.hasRaw {
		if int64(len(t.raw)) != t.numel*int64(tf.size) {
			return t.fault("raw_data has %d bytes, want %d for shape %v of %s", len(t.raw), t.numel*int64(tf.size), t.dims, dtypeName(t.dtype))
		}
		for p := 0; p < len(t.raw); p += tf.size {
			if tf.size == 4 {
				fn(uint64(binary.LittleEndian.Uint32(t.raw[p:])))
			} else {
				fn(binary.LittleEndian.Uint64(t.raw[p:]))
			}
		}
		return nil
	}
	count := 0
	r := &reader{b: t.msg, base: t.off}
	if t.off < 0 {
		r.base = 0
	}
	for {
		f, ok, err := r.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if f.num == tf.num {
			// The count cannot pass numel, so fn never sees more elements than the shape holds.
			if err := f.repeated(tf.wire, dtypeName(t.dtype)+" data of "+t.kind()+" "+fmt.Sprintf("%q", t.name), &count, int(t.numel), fn); err != nil {
				return err
			}
			continue
		}
		for _, d := range dataFields {
			if f.num == d {
				return t.fault("holds data in field %d, which does not match its data type %s", f.num, dtypeName(t.dtype))
			}
		}
	}
	if int64(count) != t.numel {
		return t.fault("has %d elements, want %d for shape %v", count, t.numel, t.dims)
	}
	return nil
}

// capacity bounds the element count by the bytes that could hold the elements, so that nothing
// is sized from a shape the file has no data for.
func (t *tensorProto) capacity() int64 {
	tf, ok := typedField[t.dtype]
	if !ok {
		return 0
	}
	n := int64(len(t.msg))
	switch {
	case t.hasRaw:
		n = int64(len(t.raw)) / int64(tf.size)
	case tf.wire == protowire.Fixed32Type:
		n /= 4
	case tf.wire == protowire.Fixed64Type:
		n /= 8
	}
	return min(n, t.numel)
}

// values returns the elements of a FLOAT or DOUBLE tensor, widened to float64. The tensor is
// decoded once, however many nodes use it; callers must not modify the result.
func (t *tensorProto) values() ([]float64, error) {
	if t.cacheF != nil {
		return t.cacheF, nil
	}
	if t.inline {
		if t.inlineF == nil {
			return nil, t.fault("holds integers, want FLOAT or DOUBLE")
		}
		return t.inlineF, nil
	}
	if t.dtype != dtFloat && t.dtype != dtDouble {
		return nil, t.fault("has data type %s; nicc reads FLOAT and DOUBLE weights", dtypeName(t.dtype))
	}
	out := make([]float64, 0, t.capacity())
	var err error
	if t.dtype == dtFloat {
		err = t.elems(func(v uint64) { out = append(out, float64(math.Float32frombits(uint32(v)))) })
	} else {
		err = t.elems(func(v uint64) { out = append(out, math.Float64frombits(v)) })
	}
	if err != nil {
		return nil, err
	}
	t.cacheF = out
	return out, nil
}

// floats is values, refusing NaN and infinities.
func (t *tensorProto) floats() ([]float64, error) {
	out, err := t.values()
	if err != nil {
		return nil, err
	}
	for i, v := range out {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, t.fault("element %d is %v", i, v)
		}
	}
	return out, nil
}

// ints returns the elements of an INT64 or INT32 tensor of at most max elements, decoded once;
// callers must not modify the result.
func (t *tensorProto) ints(max int) ([]int64, error) {
	if t.numel > int64(max) {
		return nil, t.fault("has %d elements, want at most %d", t.numel, max)
	}
	if t.cacheI != nil {
		return t.cacheI, nil
	}
	if t.inline {
		if t.inlineInt == nil {
			return nil, t.fault("holds floats, want INT64")
		}
		return t.inlineInt, nil
	}
	out := make([]int64, 0, t.capacity())
	var err error
	switch t.dtype {
	case dtInt64:
		err = t.elems(func(v uint64) { out = append(out, int64(v)) })
	case dtInt32:
		if t.hasRaw {
			err = t.elems(func(v uint64) { out = append(out, int64(int32(uint32(v)))) })
		} else {
			err = t.elems(func(v uint64) { out = append(out, int64(int32(v))) })
		}
	default:
		return nil, t.fault("has data type %s, want INT64", dtypeName(t.dtype))
	}
	if err != nil {
		return nil, err
	}
	t.cacheI = out
	return out, nil
}
