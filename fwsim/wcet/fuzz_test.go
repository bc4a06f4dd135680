package wcet_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/fwsim/wcet"
)

// FuzzBound: on any bytes that load, Bound on each function gives a report or a *wcet.Error,
// never a panic; where it gives a report, LoopRuns makes the same run as Call and counts
// every loop. The seeds are fwsim's FuzzLoadELF's.
func FuzzBound(f *testing.F) {
	// Small seeds: the engine minimizes every new input, which takes long for big ones.
	for _, name := range []string{"tiny.elf", "tiny_stripped.elf", "rv32.elf", "ret.elf"} {
		data, err := os.ReadFile(filepath.Join("../testdata/elf", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		im, err := fwsim.LoadELF(data)
		if err != nil || im.MemSize() > fwsim.ArenaSize+fwsim.StackSize+1<<20 {
			return // fwsim's FuzzLoadELF checks the loader; large images are too slow here
		}
		for _, s := range im.Symbols() {
			if s.Func {
				fuzzBound(t, im, s.Name)
			}
		}
	})
}

func fuzzBound(t *testing.T, im *fwsim.Image, name string) {
	r, err := wcet.Bound(im, name, nil, wcet.Options{})
	if err != nil {
		if !errors.As(err, new(*wcet.Error)) {
			t.Fatalf("Bound(%s): error %v (%T) is not a *wcet.Error", name, err, err)
		}
		return
	}
	m1, err := fwsim.NewMachine(im, nil)
	if err != nil {
		t.Fatal(err)
	}
	m2, _ := fwsim.NewMachine(im, nil)
	m1.StepLimit, m2.StepLimit = 1000, 1000
	want, err1 := m1.Call(name, 5, 6)
	runs, got, err2 := wcet.LoopRuns(m2, r.Loops, name, 5, 6)
	if got != want || (err1 == nil) != (err2 == nil) || len(runs) != len(r.Loops) {
		t.Fatalf("%s: LoopRuns %+v, %v; Call %+v, %v", name, got, err2, want, err1)
	}
}
