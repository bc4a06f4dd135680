package artifact

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/target"
)

const seedReport = `{"model":{"inputs":["a","b"]},"handler":"none","entry":"nicc_policy",
"inputs":[{"name":"a","frac":16,"min":-5,"max":5},{"name":"b","frac":0,"min":0,"max":9}],
"budget":{"core":{"name":"dpa"}},"manifest":{"files":[],"verdicts":{"verify":"pass"}}}`

func TestCSVVectors(t *testing.T) {
	r, err := parseReport([]byte(seedReport))
	if err != nil {
		t.Fatal(err)
	}
	// The header selects a and b by name; a is Q16 clamped to [-5, 5] raw, b Q0.
	rr, err := model.NewRowReader(strings.NewReader("b,x,a\n3.4,9,0.00002\n100,0,-1\n"))
	if err != nil {
		t.Fatal(err)
	}
	vs, err := csvVectors(rr, r)
	if err != nil {
		t.Fatal(err)
	}
	want := []budget.Vector{
		{Line: 2, Args: []budget.Arg{{Bytes: target.Int32Bytes([]int32{1, 3})}}},
		{Line: 3, Args: []budget.Arg{{Bytes: target.Int32Bytes([]int32{-5, 9})}}},
	}
	if d := cmp.Diff(want, vs); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// An LSTM's state words follow x, zeroed.
	r.LSTM = &LSTMInfo{StateWords: 6}
	rr, _ = model.NewRowReader(strings.NewReader("1,2\n"))
	if vs, err = csvVectors(rr, r); err != nil || len(vs[0].Args) != 2 || !bytes.Equal(vs[0].Args[1].Bytes, make([]byte, 24)) {
		t.Errorf("stateful: %+v, %v", vs, err)
	}
}

func FuzzParseReport(f *testing.F) {
	f.Add([]byte(seedReport))
	f.Add([]byte(strings.Replace(seedReport, `"none"`, `"rlcc"`, 1)))
	f.Add([]byte(`{"handler":"none","lstm":{"state_words":99}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseReport(data)
		if err != nil {
			return
		}
		if len(r.Inputs) == 0 || len(r.Inputs) != len(r.Model.Inputs) || r.Budget == nil {
			t.Fatalf("accepted %+v", r)
		}
		for _, in := range r.Inputs {
			in.Format().Quantize(1)
		}
	})
}

func FuzzCSVVectors(f *testing.F) {
	f.Add("1,2\n3,4\n", true)
	f.Add("b,a\n1e9,-1e9\nNaN,1\n", true)
	f.Add("1,2,3\n2147483648,0,0\n", false)
	f.Add("x\n1.5\n", false)
	r, err := parseReport([]byte(seedReport))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data string, formats bool) {
		rr, err := model.NewRowReader(strings.NewReader(data))
		if err != nil {
			return
		}
		rep := r
		if !formats {
			rep = nil
		}
		vs, err := csvVectors(rr, rep)
		if err != nil {
			return
		}
		for _, v := range vs {
			if len(v.Args) != 1 || len(v.Args[0].Bytes)%4 != 0 || (formats && len(v.Args[0].Bytes) != 8) {
				t.Fatalf("line %d: %+v", v.Line, v)
			}
		}
	})
}

func TestFailKindsHaveNames(t *testing.T) {
	for k := range failKindEnd {
		if s := k.String(); s == "" || strings.HasPrefix(s, "failkind(") {
			t.Errorf("fail kind %d has no name", int(k))
		}
	}
}
