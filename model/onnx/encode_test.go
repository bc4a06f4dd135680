package onnx

// The tests' shorthands for the writer's pieces (encode.go).

func fl(name string, dims []int64, v ...float32) pbTensor {
	return pbTensor{name: name, dims: dims, dtype: dtFloat, f: v}
}

func i64(name string, dims []int64, v ...int64) pbTensor {
	return pbTensor{name: name, dims: dims, dtype: dtInt64, i: v}
}

func aFloat(name string, v float32) pbAttr   { return pbAttr{name: name, typ: atFloat, f: v} }
func aInt(name string, v int64) pbAttr       { return pbAttr{name: name, typ: atInt, i: v} }
func aStr(name, v string) pbAttr             { return pbAttr{name: name, typ: atString, s: v} }
func aInts(name string, v ...int64) pbAttr   { return pbAttr{name: name, typ: atInts, ints: v} }
func aStrs(name string, v ...string) pbAttr  { return pbAttr{name: name, typ: atStrings, strs: v} }
func aTensor(name string, t pbTensor) pbAttr { return pbAttr{name: name, typ: atTensor, t: &t} }
func vec(name string, dims ...int64) pbValue { return pbValue{name: name, dims: dims} }
