package distill

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/rlcc"
)

func TestReadStatesCSV(t *testing.T) {
	d, err := ReadStatesCSV(strings.NewReader("a_prev,o,a_prev2,o_prev\n1,0.5,0.9,-0.2\n1.1,3,1,0\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := &Dataset{Names: rlcc.Names, X: [][]float64{{1, 1.1}, {0.5, 3}, {0.9, 1}, {-0.2, 0}}}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("got %+v, want %+v", d, want)
	}
	d, err = ReadStatesCSV(strings.NewReader("1\t2\n3\t4\n"))
	if err != nil || d.Names != nil || !reflect.DeepEqual(d.X, [][]float64{{1, 3}, {2, 4}}) {
		t.Errorf("TSV without header: %+v, %v", d, err)
	}
	for _, c := range []struct{ in, want string }{
		{"", "no data rows"},
		{"a,b\n", "no data rows"},
		{"1,2\n3\n", "line 2: 1 values, want 2"},
		{"1,2\n3,x\n", `line 2: column 2: "x" is not a number`},
		{"1,2\n3,NaN\n", "state 2: column 2 is NaN"},
		{"1,+Inf\n", "state 1: column 2 is +Inf"},
		{"a,b,c\n1,2\n", "line 2: 2 values, want 3"},
	} {
		if _, err := ReadStatesCSV(strings.NewReader(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
}

func TestStatesSampler(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.csv")
	var b strings.Builder
	b.WriteString("x,y\n")
	for i := range 100 {
		b.WriteString(string(rune('0'+i%10)) + "," + string(rune('0'+i/10)) + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadStates(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Inputs() != 2 {
		t.Errorf("inputs %d", s.Inputs())
	}
	all, _ := s.Sample(0, 1)
	if stateRows(all) != 100 || all.X[0][13] != 3 || all.X[1][13] != 1 {
		t.Errorf("all states: %d rows, row 13 = (%v, %v)", stateRows(all), all.X[0][13], all.X[1][13])
	}
	some, _ := s.Sample(10, 1)
	again, _ := s.Sample(10, 1)
	if stateRows(some) != 10 || !reflect.DeepEqual(some, again) || !reflect.DeepEqual(some.Names, []string{"x", "y"}) {
		t.Errorf("10 states: %+v (again %+v)", some, again)
	}
	seen := map[[2]float64]bool{}
	for r := range 10 {
		k := [2]float64{some.X[0][r], some.X[1][r]}
		if seen[k] {
			t.Errorf("state %v drawn twice", k)
		}
		seen[k] = true
	}
	if _, err := LoadStates(filepath.Join(t.TempDir(), "missing.csv")); err == nil {
		t.Error("missing file accepted")
	}
	empty := filepath.Join(t.TempDir(), "empty.csv")
	os.WriteFile(empty, nil, 0o644)
	if _, err := LoadStates(empty); err == nil || !strings.Contains(err.Error(), "empty.csv: no data rows") {
		t.Errorf("empty file: %v", err)
	}
}

func FuzzReadStatesCSV(f *testing.F) {
	f.Add("a_prev,o,a_prev2,o_prev\n1,0.5,0.9,-0.2\n")
	f.Add("1\t2\n3\tNaN\n")
	f.Add("x\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		d, err := ReadStatesCSV(strings.NewReader(in))
		if err != nil {
			return
		}
		if len(d.X) == 0 || len(d.X[0]) == 0 {
			t.Fatal("no error, but no states")
		}
		for i, col := range d.X {
			if len(col) != len(d.X[0]) {
				t.Fatalf("column %d has %d rows, column 0 has %d", i, len(col), len(d.X[0]))
			}
		}
		if d.Names != nil && len(d.Names) != len(d.X) {
			t.Fatalf("%d names for %d columns", len(d.Names), len(d.X))
		}
	})
}
