package golden

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/model/modeltest"
	"github.com/nicc-dev/nicc/quantize"
)

// The load and quantize stages on a small ensemble: the handler the input names choose, and
// the input formats (the RL-CC grid, or each feature's range covering its --ranges column).
func TestLoadQuantizeStages(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		inputs  []string
		handler artifact.Handler
	}{
		{modeltest.RLCCInputs, artifact.HandlerRLCC},
		{[]string{"f0", "f1", "f2"}, artifact.HandlerNone},
	} {
		path := filepath.Join(dir, c.inputs[0]+".json")
		if err := modeltest.Save(path, modeltest.Trees("small", c.inputs, 4, 3, 2)); err != nil {
			t.Fatal(err)
		}
		opt := Options{Model: path}
		if c.handler == artifact.HandlerNone {
			opt.Ranges = filepath.Join(dir, "rows.csv")
			if err := os.WriteFile(opt.Ranges, []byte("f0,f1,f2\n-1000,0,5\n1000,0.5,6\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		g := New(opt)
		if err := g.Load(""); err != nil {
			t.Fatal(err)
		}
		if g.Handler != c.handler || g.Float.NumInputs() != len(c.inputs) {
			t.Fatalf("%v: loaded handler %v, %d inputs", c.inputs, g.Handler, g.Float.NumInputs())
		}
		if err := g.Quantize(); err != nil {
			t.Fatal(err)
		}
		ir, ok := g.Policy.(*quantize.TreeIR)
		if !ok {
			t.Fatalf("%v: policy %T", c.inputs, g.Policy)
		}
		for i, in := range ir.Inputs {
			lo, hi := in.Value(in.Min), in.Value(in.Max)
			switch {
			case c.handler == artifact.HandlerRLCC && in != g.rlccInputs()[i]:
				t.Errorf("input %s: %+v, not the RL-CC grid's", in.Name, in)
			case c.handler == artifact.HandlerNone && i == 0 && (lo > -1000 || hi < 1000):
				t.Errorf("input %s: range [%v, %v] does not cover its column [-1000, 1000]", in.Name, lo, hi)
			}
		}
	}
}
