package model_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/model"
)

// A native file's lists longer than a model may have are refused before they are decoded, in
// one line, with at most twice the file allocated (64 MiB of empty trees took 2.2 GB).
func TestUnmarshalRefusesLongListsEarly(t *testing.T) {
	const head = `{"format":"nicc.model/v1","inputs":["a"],`
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty trees", repeat(head+`"ensemble":{"base":0,"transform":"identity","trees":[`, `{}`, model.MaxTrees+1, `]}}`),
			"ensemble.trees: over 65536 entries"},
		{"nodes of all trees together", repeat(head+`"ensemble":{"base":0,"transform":"identity","trees":[`, `{"nodes":[`+strings.Repeat(`{},`, 127)+`{}]}`, model.MaxNodes/128+1, `]}}`),
			"ensemble.trees[].nodes: over 4194304 entries"},
		{"empty rows", repeat(head+`"layers":[{"op":"dense","in":1,"out":1,"w":[`, `[]`, model.MaxNodes+1, `]}]}`),
			"layers[].w: over 4194304 entries"},
		{"empty inputs", repeat(`{"inputs":[`, `""`, 2<<20/3, `]}`),
			"inputs: over 4096 entries"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := model.Unmarshal(c.data)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if a := after.TotalAlloc - before.TotalAlloc; a > 2*uint64(len(c.data)) {
				t.Errorf("allocated %d bytes for a file of %d before refusing it", a, len(c.data))
			}
		})
	}
}

// CheckLists counts the lists at its paths, summed over every list there, matching keys as
// encoding/json does (case-insensitively, escapes decoded), and nothing elsewhere.
func TestCheckLists(t *testing.T) {
	caps := model.ListCaps{"a.b": 3, "a.b[].c": 4}
	for _, c := range []struct {
		json, want string
	}{
		{`{"a":{"b":[1,2,3]}}`, ""},
		{`{"a":{"b":[1,2,3,4]}}`, "a.b: over 3 entries"},
		{`{"A":{"\u0042":[1,2,3,4]}}`, "a.b: over 3 entries"},
		{`{"a":{"b":[{"c":[1,2]},{"c":[3,4]}]}}`, ""},
		{`{"a":{"b":[{"c":[1,2]},{"c":[3]},{"C":[4,5]}]}}`, "a.b[].c: over 4 entries"},
		{`{"a":{"b":[{"c":[1,2]}],"x":[1,2,3,4,5,6]},"b":[1,2,3,4,5],"c":[[1,2,3,4,5]]}`, ""},
		{`{"x":"{\"a\":{\"b\":[1,2,3,4]}}","a":{"b":["]]]","[[[","\"]"]}}`, ""},
		{`{"a":{"b":[1,2,3,4]`, ""}, // not JSON: the decoder says so
	} {
		err := model.CheckLists([]byte(c.json), caps)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: error = %v, want %q", c.json, err, c.want)
		}
	}
}

// FuzzCheckLists: CheckLists ends on any input, and refuses only with a *model.ParseError
// naming a cap's path.
func FuzzCheckLists(f *testing.F) {
	for _, s := range []string{`{"a":{"b":[1,2,3,4]}}`, `{"A":{"\u0042":[{"c":[1,2,3]},{"c":[4,5]}]}}`, `{"a":{"b":["]",{"c":"["}]}}`, `[[[`, `{"a":`} {
		f.Add([]byte(s))
	}
	caps := model.ListCaps{"a.b": 3, "a.b[].c": 4}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := model.CheckLists(data, caps)
		var pe *model.ParseError
		if err != nil && (!errors.As(err, &pe) || !strings.Contains(err.Error(), "a.b")) {
			t.Fatalf("error %T: %v", err, err)
		}
	})
}

// repeat is head, n items separated by commas, and tail (model's tests cannot use modeltest's
// Repeat: modeltest depends on model).
func repeat(head, item string, n int, tail string) []byte {
	return []byte(head + strings.Repeat(item+",", n-1) + item + tail)
}
