package prove

import (
	"fmt"
	"slices"
	"time"

	"github.com/nicc-dev/nicc/quantize"
)

// span is a closed range of integers.
type span struct{ lo, hi int64 }

func (a span) mul(b span) span {
	p := []int64{a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi}
	return span{slices.Min(p), slices.Max(p)}
}

func (a span) add(b span) span { return span{a.lo + b.lo, a.hi + b.hi} }
func (a span) shr(s uint) span { return span{a.lo >> s, a.hi >> s} }
func (a span) clamp(lo, hi int64) span {
	return span{min(max(a.lo, lo), hi), min(max(a.hi, lo), hi)}
}
func (a span) union(b span) span { return span{min(a.lo, b.lo), max(a.hi, b.hi)} }

// memory is a recurrent policy's memory as ranges: each lane's h and c's code.
type memory struct{ h, c []span }

func (m memory) union(o memory) memory {
	u := memory{h: slices.Clone(m.h), c: slices.Clone(m.c)}
	for j := range u.h {
		u.h[j], u.c[j] = u.h[j].union(o.h[j]), u.c[j].union(o.c[j])
	}
	return u
}

func (m memory) equal(o memory) bool { return slices.Equal(m.h, o.h) && slices.Equal(m.c, o.c) }

// lstmBounds bounds one step of an integer LSTM (quantize.LSTMIR.Step, then Call's fold):
// every step of it is an interval operation with the exact integer rounding (sums by each
// weight's sign, products by their four corners, the floors and clamps on both ends, each
// table's range over its index range).
type lstmBounds struct {
	ir *quantize.LSTMIR
	// tables' ranges over an index range: monotone tables by their ends, the others scanned.
	sigmoid, gtable, cellDec, cellEnc, tanhC, outTable func(lo, hi int64) span
	m                                                  func(v int32) uint32 // the handler's multiplier
}

func tableRange[T uint8 | int8 | int16 | int32](table []T, base int64) func(lo, hi int64) span {
	monotone := slices.IsSorted(table)
	return func(lo, hi int64) span {
		lo, hi = max(lo+base, 0), min(hi+base, int64(len(table)-1))
		if monotone {
			return span{int64(table[lo]), int64(table[hi])}
		}
		s := span{int64(table[lo]), int64(table[lo])}
		for k := lo + 1; k <= hi; k++ {
			s = s.union(span{int64(table[k]), int64(table[k])})
		}
		return s
	}
}

func newLSTMBounds(ir *quantize.LSTMIR, m func(int32) uint32) (*lstmBounds, error) {
	if ir.OutMult < 0 {
		return nil, fmt.Errorf("negative output requantization multiplier %d", ir.OutMult)
	}
	return &lstmBounds{ir: ir, m: m, sigmoid: tableRange(ir.Sigmoid, 128), gtable: tableRange(ir.GTable, 128),
		cellDec: tableRange(ir.CellDec, 128), cellEnc: tableRange(ir.CellEnc, -ir.CellLo), tanhC: tableRange(ir.TanhC, -ir.CellLo),
		outTable: tableRange(ir.OutTable, quantize.OutHalf)}, nil
}

// step bounds the multiplier of one step from any input of b and any memory of mem, and the
// memory the step leaves.
func (lb *lstmBounds) step(b box, mem memory) (mlo, mhi uint32, next memory) {
	ir := lb.ir
	H := ir.Hidden
	in := make([]span, 0, ir.Pre.Out+H)
	v := make([]span, len(ir.Inputs))
	for i, f := range ir.Inputs {
		v[i] = span{quantize.ShiftRound(int64(min(max(b.lo[i], f.Min), f.Max)), ir.InShift[i]),
			quantize.ShiftRound(int64(min(max(b.hi[i], f.Min), f.Max)), ir.InShift[i])}
	}
	sum := func(l *quantize.LaneLayer, j int, v []span) span {
		s := span{int64(l.B[j]), int64(l.B[j])}
		for i, w := range l.W[j] {
			s = s.add(span{int64(w), int64(w)}.mul(v[i]))
		}
		return s
	}
	for j := range ir.Pre.Out {
		in = append(in, sum(&ir.Pre, j, v).shr(uint(ir.Pre.Shift[j])).clamp(0, quantize.PreMax))
	}
	in = append(in, mem.h...)
	idx := make([]span, 4*H)
	for r := range idx {
		idx[r] = sum(&ir.Gates, r, in).shr(uint(ir.Gates.Shift[r])).clamp(-128, 127)
	}
	next = memory{h: make([]span, H), c: make([]span, H)}
	acc := span{int64(ir.OutB), int64(ir.OutB)}
	for j := range H {
		i, f := lb.sigmoid(idx[j].lo, idx[j].hi), lb.sigmoid(idx[H+j].lo, idx[H+j].hi)
		g, o := lb.gtable(idx[2*H+j].lo, idx[2*H+j].hi), lb.sigmoid(idx[3*H+j].lo, idx[3*H+j].hi)
		t := f.mul(lb.cellDec(mem.c[j].lo, mem.c[j].hi)).add(i.mul(g)).shr(uint(ir.CellShift))
		next.c[j] = lb.cellEnc(t.lo, t.hi)
		hn := o.mul(lb.tanhC(t.lo, t.hi))
		next.h[j] = span{hn.lo + 64, hn.hi + 64}.shr(7)
		acc = acc.add(span{int64(ir.OutW[j]), int64(ir.OutW[j])}.mul(next.h[j]))
	}
	z := span{quantize.Requant(acc.lo, ir.OutMult, ir.OutShift), quantize.Requant(acc.hi, ir.OutMult, ir.OutShift)}.clamp(-quantize.OutHalf, quantize.OutHalf-1)
	mlo, mhi = ^uint32(0), 0
	for k := z.lo; k <= z.hi; k++ {
		m := lb.m(ir.Returned(ir.OutTable[k+quantize.OutHalf]))
		mlo, mhi = min(mlo, m), max(mhi, m)
	}
	return mlo, mhi, next
}

// reachable is a box holding every memory a flow can reach from a new flow's zero memory
// under any inputs of the domain: the least fixpoint of memory ∪ step(domain, memory).
func (lb *lstmBounds) reachable(whole box) memory {
	H := lb.ir.Hidden
	mem := memory{h: make([]span, H), c: make([]span, H)}
	for {
		_, _, next := lb.step(whole, mem)
		grown := mem.union(next)
		if grown.equal(mem) {
			return mem
		}
		mem = grown
	}
}

// text is the memory box in a line: each lane's widest ranges of h and c, and how many lanes
// reach them.
func (m memory) text() string {
	h, c := m.h[0], m.c[0]
	for j := range m.h {
		h, c = h.union(m.h[j]), c.union(m.c[j])
	}
	return fmt.Sprintf("h within [%d, %d] and c's code within [%d, %d] in each of its %d lanes, a byte each", h.lo, h.hi, c.lo, c.hi, len(m.h))
}

// lstmProof tries to prove p for an integer LSTM: a search for flows that break it first
// (searchSequences, a quarter of the budget), then branch and bound over the inputs with the
// memory anywhere in the box every flow's memory stays in (reachable). A box no bound proves
// is not a counterexample (its memory may not be reachable), so the result is proven or
// unknown.
func (d *domain) lstmProof(ir *quantize.LSTMIR, p Property) (*Result, error) {
	budget := d.budget()
	d.in.Budget = budget / 4
	res, err := d.searchSequences(p)
	d.in.Budget = budget
	if err != nil || res.Verdict != Unknown {
		return res, err
	}
	searched := res.Method
	c, _ := d.checkOf(p)
	lb, err := newLSTMBounds(ir, d.m)
	if err != nil {
		return nil, err
	}
	mem := lb.reachable(d.whole())
	res.Assumes = boxAssumes + "; the recurrent policy's memory anywhere in the box that holds every memory a flow reaches from a new flow's zero memory under inputs of the domain (" + mem.text() + ")"
	deadline := time.Now().Add(budget * 3 / 4)
	stack := []box{c.region}
	var proven float64
	boxes, open := 0, false
	for len(stack) > 0 && (boxes&255 != 0 || time.Now().Before(deadline)) {
		boxes++
		b := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if lo, hi, _ := lb.step(b, mem); c.ok(lo) && c.ok(hi) {
			proven += b.states()
			continue
		}
		i, at, ok := d.split(ir.InShift, b)
		if !ok {
			open = true // one network input, with every memory of the box: not proven
			continue
		}
		left, right := b.clone(), b.clone()
		left.hi[i], right.lo[i] = at, at+1
		stack = append(stack, left, right)
	}
	res.ProvenShare = proven / res.Domain
	if len(stack) == 0 && !open {
		res.Verdict, res.ProvenShare = Proven, 1
		res.Method = fmt.Sprintf("interval propagation through one step of the integer LSTM from every memory of the reachable box, branch and bound: every one of %d boxes proven; %s", boxes, searched)
		return res, nil
	}
	res.Method = fmt.Sprintf("interval propagation through one step of the integer LSTM from every memory of the reachable box, branch and bound: %d boxes, %.4g%% of the region proven; before it, %s", boxes, 100*res.ProvenShare, searched)
	return res, nil
}
