package wcet_test

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/fwsim/trap"
	"github.com/nicc-dev/nicc/fwsim/wcet"
)

// TestLoopRuns: the most runs of each loop head per entry into the loop, through calls made
// inside a loop, jumps into another function's loop, and nested loops; the call's result and
// counts are Call's.
func TestLoopRuns(t *testing.T) {
	shapes, err := fwsim.LoadELF(buildWCET(t, "shapes.S", "-O2"))
	if err != nil {
		t.Fatal(err)
	}
	loops, err := fwsim.LoadELF(buildWCET(t, "loop.c", "-O0"))
	if err != nil {
		t.Fatal(err)
	}
	flows := make([]int32, 64)
	for _, c := range []struct {
		im    *fwsim.Image
		entry string
		in    wcetInput
		want  map[string]int // runs by the function that holds the head
	}{
		// calls_count(4) calls count_up(3) on each of its 4 iterations.
		{shapes, "calls_count", ints(4), map[string]int{"calls_count": 4, "count_up": 3}},
		{shapes, "tail_into", ints(5), map[string]int{"count_up": 6}},
		// -O0: a loop's head is its test, which runs once more than the body.
		{loops, "popcount16", ints(0xffff), map[string]int{"popcount16": 17}},
		{loops, "sum_window", wcetInput{{mem: words32(flows[:8])}, {v: 5}}, map[string]int{"sum_window": 6}},
	} {
		r := wcetWithBounds(t, c.im, c.entry, nil, 100)
		m, err := fwsim.NewMachine(c.im, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := runInput(t, m, c.entry, c.in)
		m.Reset()
		args := make([]uint64, len(c.in))
		for i, a := range c.in {
			args[i] = a.v
			if a.mem != nil {
				p, _ := m.Alloc(uint64(len(a.mem)), 16)
				m.WriteBytes(p, a.mem)
				args[i] = p
			}
		}
		runs, res, err := wcet.LoopRuns(m, r.Loops, c.entry, args...)
		if err != nil || res != want {
			t.Errorf("%s: LoopRuns result %+v, %v; Call's %+v", c.entry, res, err, want)
		}
		got := map[string]int{}
		for i, l := range r.Loops {
			got[l.Func] = runs[i]
		}
		if !maps.Equal(got, c.want) {
			t.Errorf("%s: runs %v, want %v", c.entry, got, c.want)
		}
	}

	// Nested loops at -O0: scale_all(flows, 3, 5) enters the inner loop 3 times; its head
	// runs 6 times per entry (18 in all), the outer head 4 times.
	r := wcetWithBounds(t, loops, "scale_all", nil, 100)
	m, err := fwsim.NewMachine(loops, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := m.Alloc(256, 16)
	runs, _, err := wcet.LoopRuns(m, r.Loops, "scale_all", p, 3, 5)
	slices.Sort(runs)
	if err != nil || !slices.Equal(runs, []int{4, 6}) {
		t.Errorf("scale_all(3, 5): runs %v, %v; want 4 and 6", runs, err)
	}
	// The step limit holds as in Call.
	m.StepLimit = 50
	if _, res, err := wcet.LoopRuns(m, r.Loops, "scale_all", p, 8, 8); !errors.Is(err, trap.ErrStepLimit) || res.Insns != 50 {
		t.Errorf("step limit 50: %+v, %v", res, err)
	}
}

// TestWCETLoopHeadName: a loop reached by a jump into another function's code is named by
// the function that holds its head, and takes a bound by that name.
func TestWCETLoopHeadName(t *testing.T) {
	im, err := fwsim.LoadELF(buildWCET(t, "shapes.S", "-O2"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = wcet.Bound(im, "tail_into", nil, wcet.Options{})
	var we *wcet.Error
	if !errors.Is(err, wcet.ErrUnboundedLoop) || !errors.As(err, &we) || we.Func != "tail_into" || we.Where != "count_up+0x2" ||
		!strings.Contains(err.Error(), "(count_up+0x2): loop without a bound") || !strings.Contains(err.Error(), "bound head count_up+0x2 with") {
		t.Fatalf("got %v, want the head named count_up+0x2", err)
	}
	head, err := wcet.ParseLoopHead(im, we.Where)
	if err != nil || head != we.PC {
		t.Fatalf("ParseLoopHead(%s) = 0x%x, %v; want 0x%x", we.Where, head, err, we.PC)
	}
	r, err := wcet.Bound(im, "tail_into", nil, wcet.Options{LoopBounds: map[uint64]int{head: 6}})
	if err != nil || len(r.Loops) != 1 || r.Loops[0].Func != "count_up" || r.Loops[0].Offset != 2 || r.Loops[0].Head != head {
		t.Fatalf("with a bound: %+v, %v", r, err)
	}
	m, err := fwsim.NewMachine(im, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := m.Call("tail_into", 5); err != nil || res.Cycles != r.Cycles {
		t.Errorf("tail_into(5) runs the head 6 times: %d cycles, %v; want the WCET %d", res.Cycles, err, r.Cycles)
	}
}
