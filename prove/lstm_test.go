package prove

import (
	"math/rand/v2"
	"testing"

	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
)

// shippedLSTM is rlcc_adpg_lstm quantized over the handler's grid, its multiplier folded in,
// as compile --target int does (on calibration rows of its own).
func shippedLSTM(t *testing.T) *quantize.LSTMIR {
	ir, err := quantize.LSTM(loadModel(t, "rlcc_adpg_lstm.json"), gridInputs(), calibRows(rand.New(rand.NewPCG(2, 2)), 2048), quantize.LSTMOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ir.FoldRLCC()
	return ir
}

// One step's bounds contain the exact multiplier and the exact next memory, for every input
// and memory tried inside boxes of every size; and the reachable box holds every memory of
// 2,000 random flows of 64 decisions.
func TestLSTMBoundsContain(t *testing.T) {
	ir := shippedLSTM(t)
	d, err := newDomain(input(ir))
	if err != nil {
		t.Fatal(err)
	}
	lb, err := newLSTMBounds(ir, d.m)
	if err != nil {
		t.Fatal(err)
	}
	H := ir.Hidden
	rng := rand.New(rand.NewPCG(8, 8))
	narrow := func(lo, hi int64) (int64, int64) {
		w := (hi - lo) >> rng.IntN(10)
		l := lo + rng.Int64N(hi-lo-w+1)
		return l, l + w
	}
	whole := d.whole()
	for n := range 2000 {
		b := whole.clone()
		for i := range b.lo {
			l, h := narrow(int64(b.lo[i]), int64(b.hi[i]))
			b.lo[i], b.hi[i] = int32(l), int32(h)
		}
		mem := memory{h: make([]span, H), c: make([]span, H)}
		for j := range H {
			l, h := narrow(-127, 127)
			mem.h[j] = span{l, h}
			l, h = narrow(-127, 127)
			mem.c[j] = span{l, h}
		}
		mlo, mhi, next := lb.step(b, mem)
		for range 8 {
			x := d.random(rng, b)
			state := make([]uint32, ir.StateWords())
			for j := range H {
				setLane(state, j, mem.h[j].lo+rng.Int64N(mem.h[j].hi-mem.h[j].lo+1))
				setLane(state, H+j, mem.c[j].lo+rng.Int64N(mem.c[j].hi-mem.c[j].lo+1))
			}
			m := d.m(ir.Call(x, state))
			if m < mlo || m > mhi {
				t.Fatalf("box %d: the multiplier %d is outside the bounds [%d, %d]", n, m, mlo, mhi)
			}
			for j := range H {
				if h, c := lane(state, j), lane(state, H+j); h < next.h[j].lo || h > next.h[j].hi || c < next.c[j].lo || c > next.c[j].hi {
					t.Fatalf("box %d lane %d: next h %d, c %d outside [%d, %d] and [%d, %d]", n, j, h, c, next.h[j].lo, next.h[j].hi, next.c[j].lo, next.c[j].hi)
				}
			}
		}
	}
	reach := lb.reachable(whole)
	for range 2000 {
		state := make([]uint32, ir.StateWords())
		var xs [][]int32
		var m uint32
		for k := range 64 {
			x := d.chain(xs, m, d.draw(rng, whole, k))
			xs = append(xs, x)
			m = d.m(ir.Call(x, state))
			for j := range H {
				if h, c := lane(state, j), lane(state, H+j); h < reach.h[j].lo || h > reach.h[j].hi || c < reach.c[j].lo || c > reach.c[j].hi {
					t.Fatalf("a flow's memory lane %d h %d c %d is outside the reachable box %s", j, h, c, reach.text())
				}
			}
		}
	}
}

func lane(state []uint32, k int) int64 { return int64(int8(state[k/4] >> (8 * (k % 4)))) }

func setLane(state []uint32, k int, v int64) {
	sh := 8 * (k % 4)
	state[k/4] = state[k/4]&^(0xff<<sh) | uint32(uint8(int8(v)))<<sh
}

// A recurrent policy's counterexample is a flow: rows from a new flow's memory, each row's
// past what the rows before it saw and chose, the property broken at the last, as the
// golden model replays them.
func TestLSTMSequenceCounterexample(t *testing.T) {
	ir := shippedLSTM(t)
	inputs := ir.Inputs
	props := []Property{mustProperty(t, "raises-when-idle")}
	r, err := Run(input(ir), props)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := newDomain(input(ir))
	refuted := 0
	for k, res := range r.Results {
		t.Logf("%s: %s (%s)", res.Property, res.Verdict, res.Method)
		ce := res.Counterexample
		if res.Verdict != Refuted {
			continue
		}
		refuted++
		if !ce.Sequence || len(ce.Raw) != len(ce.Golden) {
			t.Fatalf("%s: %+v, want a sequence with a multiplier a row", res.Property, ce)
		}
		state := make([]uint32, ir.StateWords())
		var got uint32
		for i, x := range ce.Raw {
			if i == 0 && (x[0] != 65536 || x[2] != 65536 || x[3] != nicsdk.ObsMin(nicsdk.DefaultParams())) {
				t.Errorf("%s: the first row %v has not a new flow's past (1, 1, −T)", res.Property, ce.Rows[0])
			}
			if i > 0 && (uint32(x[0]) != min(max(ce.Golden[i-1], uint32(inputs[0].Min)), uint32(inputs[0].Max)) || x[2] != ce.Raw[i-1][0] || x[3] != ce.Raw[i-1][1]) {
				t.Errorf("%s: row %d %v is not the flow's next decision after %v", res.Property, i+1, ce.Rows[i], ce.Rows[i-1])
			}
			got = d.m(ir.Call(x, state))
			if got != ce.Golden[i] {
				t.Fatalf("%s: row %d replays to %d, the counterexample says %d", res.Property, i+1, got, ce.Golden[i])
			}
		}
		if c, _ := d.checkOf(props[k]); c.ok(got) {
			t.Errorf("%s: the last row's multiplier %d does not break it", res.Property, got)
		}
	}
	if refuted == 0 {
		t.Error("raises-when-idle not refuted: the test needs a counterexample to check")
	}
}
