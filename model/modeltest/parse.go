package modeltest

import (
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/model"
)

// CheckParsed is a file-format fuzz target's check of what parse made of data: an error must
// be a *model.ParseError (then it returns nil); a model must pass Validate, be one detect
// recognises (so that --format auto hands such a file to parse), evaluate on all-zero, all-NaN
// and all-1e30 inputs, and write as native JSON. It returns the model for the format's own checks.
func CheckParsed(t testing.TB, data []byte, parse func([]byte) (*model.Model, error), detect func([]byte) bool) *model.Model {
	t.Helper()
	m, err := parse(data)
	if err != nil {
		var pe *model.ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("error %T is not a *model.ParseError: %v", err, err)
		}
		return nil
	}
	if err := m.Validate(); err != nil {
		t.Fatalf("Parse returned an invalid model: %v", err)
	}
	if !detect(data) {
		t.Fatal("Parse read a model that Detect does not recognise: --format auto would not give it to Parse")
	}
	for _, v := range []float64{0, math.NaN(), 1e30} {
		x := make([]float64, m.NumInputs())
		for i := range x {
			x[i] = v
		}
		m.Eval(nil, x)
	}
	if _, err := model.Marshal(m); err != nil {
		t.Fatalf("a parsed model does not write as native JSON: %v", err)
	}
	return m
}

// Repeat is head, then item n times separated by commas, then tail: a file of n list entries.
func Repeat(head, item string, n int, tail string) []byte {
	b := make([]byte, 0, len(head)+n*(len(item)+1)+len(tail))
	b = append(b, head...)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, item...)
	}
	return append(b, tail...)
}

// CheckRefusedSmall checks that parse refuses data with a *model.ParseError containing want,
// having allocated at most 2 bytes per byte of data: a reader must refuse an over-long list
// before it decodes it (encoding/json took 75 bytes per byte of a list of empty objects).
func CheckRefusedSmall(t testing.TB, data []byte, parse func([]byte) (*model.Model, error), want string) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := parse(data)
	runtime.ReadMemStats(&after)
	var pe *model.ParseError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), want) {
		t.Fatalf("error = %v, want a *model.ParseError containing %q", err, want)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("error is not one line: %q", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 2*uint64(len(data)) {
		t.Fatalf("parse allocated %d bytes for a file of %d before refusing it; want at most twice the file", got, len(data))
	}
}
