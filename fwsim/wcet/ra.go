package wcet

// WCET: the return address. A path that leaves a function by ret or by a tail call is
// bounded as a return to its caller, which holds only if ra still holds the address the
// function was called with.

import (
	"fmt"
	"slices"

	"github.com/nicc-dev/nicc/fwsim"
)

// raState is what the analysis knows, at one point of a function, about where the return
// address it was called with is.
type raState struct {
	ret   uint32 // bit r: x<r> holds the return address
	sp    int64  // sp minus sp on entry, when spOK; else 0
	spOK  bool
	slots []int64 // offsets from sp on entry of the 8-byte stack slots holding it, sorted; shared, never changed in place
	lost  uint64  // with ra's bit clear: an instruction that overwrote ra (the lowest, if paths disagree)
}

const raBit = 1 << 1 // ra is x1

func (s raState) meet(t raState) raState {
	r := raState{ret: s.ret & t.ret}
	if s.spOK && t.spOK && s.sp == t.sp {
		r.sp, r.spOK = s.sp, true
	}
	for _, x := range s.slots {
		if slices.Contains(t.slots, x) {
			r.slots = append(r.slots, x)
		}
	}
	if r.ret&raBit == 0 {
		for _, u := range []raState{s, t} {
			if u.ret&raBit == 0 && (r.lost == 0 || u.lost < r.lost) {
				r.lost = u.lost
			}
		}
	}
	return r
}

func (s raState) equal(t raState) bool {
	return s.ret == t.ret && s.spOK == t.spOK && s.sp == t.sp && s.lost == t.lost && slices.Equal(s.slots, t.slots)
}

// raStep is the state after in, from the state s before it.
func (b *fbuild) raStep(s raState, in fwsim.Inst) raState {
	if (in.Kind == fwsim.JAL || in.Kind == fwsim.JALR) && in.Rd != 0 { // a call (explore refuses the others)
		r := raState{lost: in.PC} // the callee may change any register
		g := b.callees[in.PC]
		if g == nil { // it never returns: no path goes on
			return r
		}
		if g.keepsSP {
			r.sp, r.spOK = s.sp, s.spOK
		}
		if !g.writesAbove {
			r.slots = s.slots
		}
		return r
	}
	r := s
	if in.Kind.IsStore() {
		if in.Rs1 == 2 {
			if !s.spOK {
				r.slots = nil
				return r
			}
			at, n := s.sp+in.Imm, int64(in.Kind.AccessSize())
			r.slots = slices.DeleteFunc(slices.Clone(s.slots), func(x int64) bool { return x < at+n && at < x+8 })
			if in.Kind == fwsim.SD && s.ret&(1<<in.Rs2) != 0 {
				r.slots = append(r.slots, at)
				slices.Sort(r.slots)
			}
		}
		// A store through any other register is assumed to miss the saved return address.
		return r
	}
	if !writesRd(in) {
		return r
	}
	holds := false
	switch {
	case in.Kind == fwsim.ADDI && in.Imm == 0: // mv
		holds = s.ret&(1<<in.Rs1) != 0
	case in.Kind == fwsim.ADD && (in.Rs1 == 0 || in.Rs2 == 0): // c.mv
		holds = s.ret&(1<<(in.Rs1|in.Rs2)) != 0
	case in.Kind == fwsim.LD && in.Rs1 == 2 && s.spOK:
		holds = slices.Contains(s.slots, s.sp+in.Imm)
	}
	if holds {
		r.ret |= 1 << in.Rd
	} else {
		r.ret &^= 1 << in.Rd
		if in.Rd == 1 {
			r.lost = in.PC
		}
	}
	if in.Rd == 2 {
		r.sp, r.spOK = s.sp+in.Imm, s.spOK && in.Kind == fwsim.ADDI && in.Rs1 == 2
		if !r.spOK {
			r.sp = 0
		}
	}
	if r.ret&raBit != 0 {
		r.lost = 0
	}
	return r
}

// writesCaller reports whether in, run in state s, may store at or above sp on entry.
func writesCaller(s raState, in fwsim.Inst) bool {
	return in.Kind.IsStore() && in.Rs1 == 2 && (!s.spOK || s.sp+in.Imm+int64(in.Kind.AccessSize()) > 0)
}

// checkReturns proves, for every path that leaves the function by ret or a tail call, that
// ra holds the return address the function was called with; otherwise the path would not
// return to the caller, and its cost would bound nothing. It tracks that address forward
// through the function: ra holds it on entry; a register copied from a register that holds
// it (mv) holds it; `sd r, k(sp)` with sp a known offset from its value on entry saves it
// to that slot, and `ld r, k(sp)` from a slot that holds it restores it. Any other write to
// a register, a store through sp over the slot, or a call (which may change every register
// but sp, and keeps sp only if the callee restores it wherever it returns) loses it; where
// paths meet, only what holds on all of them holds. Stores through registers other than sp
// are assumed not to write a saved return address: in C only an out-of-bounds write could.
// A callee that may store into its caller's frame loses the caller's saved slots.
//
// It also sets keepsSP and writesAbove, which its callers' checks use.
func (b *fbuild) checkReturns() error {
	in := map[uint64]raState{b.f.addr: {ret: raBit, spOK: true}}
	work := []uint64{b.f.addr}
	for len(work) > 0 {
		pc := work[len(work)-1]
		work = work[:len(work)-1]
		out := b.raStep(in[pc], b.insts[pc])
		for _, e := range b.edges[pc] {
			if e.exit {
				continue
			}
			old, seen := in[e.to]
			next := out
			if seen {
				next = old.meet(out)
			}
			if !seen || !next.equal(old) {
				in[e.to] = next
				work = append(work, e.to)
			}
		}
	}
	pcs := make([]uint64, 0, len(b.insts))
	for pc := range b.insts {
		pcs = append(pcs, pc)
	}
	slices.Sort(pcs)
	f := b.f
	f.keepsSP = true
	for _, g := range b.callees {
		f.writesAbove = f.writesAbove || g.writesAbove
	}
	for _, pc := range pcs {
		s, inst := in[pc], b.insts[pc]
		f.writesAbove = f.writesAbove || writesCaller(s, inst)
		out := b.raStep(s, inst)
		for _, e := range b.edges[pc] {
			if !e.exit {
				continue
			}
			if out.ret&raBit == 0 {
				what := "ret"
				if e.tail != nil {
					what = "a tail call to " + e.tail.name
				}
				return b.errf(pc, ErrReturnAddress, "%s (%s), but ra may not hold the address %s was called with here: %s overwrote it",
					what, inst, f.name, b.overwrite(out.lost))
			}
			f.keepsSP = f.keepsSP && out.spOK && out.sp == 0 && (e.tail == nil || e.tail.keepsSP)
			f.writesAbove = f.writesAbove || e.tail != nil && e.tail.writesAbove
		}
	}
	return nil
}

// overwrite names the instruction at pc that overwrote ra.
func (b *fbuild) overwrite(pc uint64) string {
	in, ok := b.insts[pc]
	if !ok {
		return fmt.Sprintf("the instruction at 0x%x", pc)
	}
	if g := b.callees[pc]; g != nil {
		return fmt.Sprintf("the call to %s at %s", g.name, b.a.whereOr(pc, b.f))
	}
	return fmt.Sprintf("%s (%s)", b.a.whereOr(pc, b.f), in)
}
