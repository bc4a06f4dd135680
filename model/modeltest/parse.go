package modeltest

import (
	"errors"
	"math"
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
