package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/netsim"
)

func TestReadSimMatrixRefuses(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		{`{"scenarios": ["many-to-one"], "flows": [2], "seeds": [1], "policies": []}`, `"policies" is empty`},
		{`{"scenarios": ["many-to-one"], "flows": [2], "seeds": [1], "policies": ["swift"], "rate": 3}`, "unknown field"},
		{`{"scenarios": ["a","b","c","d","e","f","g","h","i","j"], "flows": [1,2,3,4,5,6,7,8,9,10], "seeds": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,87,88,89,90,91,92,93,94,95,96,97,98,99,100,101], "policies": ["a","b","c","d","e","f","g","h","i","j"]}`, "over 100000"},
		{`[1, 2]`, "cannot unmarshal"},
	} {
		f := filepath.Join(t.TempDir(), "m.json")
		if err := os.WriteFile(f, []byte(c.json), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadSimMatrix(f); err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), f) {
			t.Errorf("%s: %v; want an error naming the file and %q", c.json, err, c.want)
		}
	}
	for _, s := range []string{"1/1", "-1/2", "a/b", "3", "0/0"} {
		if _, _, err := ParseShard(s); err == nil {
			t.Errorf("--shard %q: no error", s)
		}
	}
}

// FuzzReadSimMatrix: any bytes are a matrix or an error naming the file, never a panic, and
// an accepted matrix has every run it numbers.
func FuzzReadSimMatrix(f *testing.F) {
	f.Add([]byte(`{"scenarios": ["many-to-one"], "flows": [2, 4], "seeds": [1], "policies": ["swift", "dcqcn"], "duration": "2ms"}`))
	f.Add([]byte(`{"scenarios": [], "flows": [2]}`))
	f.Add([]byte(`{"seeds": [18446744073709551615]}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "m.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := ReadSimMatrix(path)
		if err != nil {
			return
		}
		n := m.runs()
		if n < 1 || n > MaxMatrixRuns {
			t.Fatalf("accepted a matrix of %d runs", n)
		}
		last := m.run(n - 1)
		if last.Policy != m.Policies[len(m.Policies)-1] || last.Scenario != m.Scenarios[len(m.Scenarios)-1] {
			t.Fatalf("run %d is %+v", n-1, last)
		}
	})
}

// The matrix's table has each run's health, and a line for each unhealthy run saying why.
func TestSimMatrixTextHealth(t *testing.T) {
	run := func(i int, h *Health) SimRun {
		return SimRun{Index: i, Scenario: "many-to-one", Flows: 16, Policy: "p", Result: &SimReport{Health: h, Result: &netsim.Result{}}}
	}
	r := &SimMatrixReport{Shard: "1/1", Runs: []SimRun{
		run(0, &Health{Healthy: true}), run(1, &Health{Why: "drops 3 Gb/s > 0"}), run(2, nil),
	}}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 6 || !strings.HasSuffix(lines[1], "health") || !strings.HasSuffix(lines[2], " ok") ||
		!strings.HasSuffix(lines[3], " FAIL") || !strings.HasSuffix(lines[4], " -") || lines[5] != "run 1: health FAIL: drops 3 Gb/s > 0" {
		t.Errorf("matrix text:\n%s", b.String())
	}
}
