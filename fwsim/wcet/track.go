package wcet

// WCET: link-time constants in registers along straight runs of code, for jalr targets,
// jump tables and counted loops.

import "github.com/nicc-dev/nicc/fwsim"

// Abstract register values for resolving jalr targets along a straight run of code.
const (
	absUnknown = iota
	absConst   // v
	absBase    // v + an unknown index (a table base plus a scaled index)
	absLoad    // the value loaded from a table at v + index*size
)

type absVal struct {
	kind   uint8
	signed bool
	size   uint8
	v      uint64
}

// track returns the abstract value of register r just before the instruction at pc, from
// the straight run of code that leads to it: back through single-predecessor fall-throughs,
// then forward from the start of the run with every register unknown.
func (b *fbuild) track(pc uint64, r uint8) absVal {
	var run []fwsim.Inst
	cur := pc
	for len(run) < 64 {
		if cur == b.f.addr || b.preds[cur] != 1 {
			break
		}
		prev, ok := b.prevFall(cur)
		if !ok {
			break
		}
		run = append(run, prev)
		cur = prev.PC
	}
	var regs [32]absVal
	for i := len(run) - 1; i >= 0; i-- {
		in := run[i]
		if (in.Kind == fwsim.JAL || in.Kind == fwsim.JALR) && in.Rd != 0 {
			regs = [32]absVal{} // a call clobbers what we know
			continue
		}
		if in.Rd == 0 || in.Kind.IsStore() || in.Kind.IsBranch() {
			continue
		}
		regs[in.Rd] = absStep(in, &regs)
	}
	if r == 0 {
		return absVal{kind: absConst}
	}
	return regs[r]
}

// prevFall finds the instruction just before pc in memory that has an edge to pc (a
// fall-through, the return of a call, a branch's not-taken edge).
func (b *fbuild) prevFall(pc uint64) (fwsim.Inst, bool) {
	for _, d := range []uint64{2, 4} {
		p, ok := b.insts[pc-d]
		if !ok || p.Next() != pc {
			continue
		}
		for _, e := range b.edges[p.PC] {
			if !e.exit && e.to == pc {
				return p, true
			}
		}
	}
	return fwsim.Inst{}, false
}

func absStep(in fwsim.Inst, regs *[32]absVal) absVal {
	get := func(r uint8) absVal {
		if r == 0 {
			return absVal{kind: absConst}
		}
		return regs[r]
	}
	s1, s2 := get(in.Rs1), get(in.Rs2)
	switch in.Kind {
	case fwsim.LUI:
		return absVal{kind: absConst, v: uint64(in.Imm)}
	case fwsim.AUIPC:
		return absVal{kind: absConst, v: in.PC + uint64(in.Imm)}
	case fwsim.ADDI:
		switch s1.kind {
		case absConst, absBase:
			return absVal{kind: s1.kind, v: s1.v + uint64(in.Imm)}
		}
	case fwsim.ADDIW:
		if s1.kind == absConst {
			return absVal{kind: absConst, v: uint64(int64(int32(uint32(s1.v + uint64(in.Imm)))))}
		}
	case fwsim.SLLI:
		if s1.kind == absConst {
			return absVal{kind: absConst, v: s1.v << uint(in.Imm&63)}
		}
	case fwsim.ADD:
		switch {
		case s1.kind == absConst && s2.kind == absConst:
			return absVal{kind: absConst, v: s1.v + s2.v}
		case s1.kind == absConst && s2.kind == absUnknown:
			return absVal{kind: absBase, v: s1.v}
		case s2.kind == absConst && s1.kind == absUnknown:
			return absVal{kind: absBase, v: s2.v}
		}
	case fwsim.LW, fwsim.LWU, fwsim.LD:
		if s1.kind == absBase {
			return absVal{kind: absLoad, v: s1.v + uint64(in.Imm), size: uint8(in.Kind.AccessSize()), signed: in.Kind == fwsim.LW}
		}
	}
	return absVal{}
}

// maxTable caps the entries read from one jump table.
const maxTable = 4096

// jumpTable reads the targets of a table jump: entries of v.size bytes from v.v, while each
// is an address inside the function's symbol.
func (b *fbuild) jumpTable(in fwsim.Inst, v absVal) ([]uint64, error) {
	a := b.a
	sym, ok := a.im.SymbolAt(in.PC)
	if !ok || !sym.Func || sym.Size == 0 {
		return nil, b.errf(in.PC, ErrIndirectJump, "table jump outside a sized function symbol")
	}
	var seg fwsim.Segment
	found := false
	for _, s := range a.im.Segments() {
		if v.v >= s.Addr && v.v-s.Addr < s.Size {
			seg, found = s, true
		}
	}
	if !found || seg.Write {
		return nil, b.errf(in.PC, ErrIndirectJump, "jump table at 0x%x is not in read-only memory", v.v)
	}
	if a.mach == nil {
		m, err := fwsim.NewMachine(a.im, a.p)
		if err != nil {
			return nil, err
		}
		a.mach = m
	}
	size := uint64(v.size)
	var out []uint64
	seen := map[uint64]bool{}
	for i := uint64(0); i < maxTable; i++ {
		at := v.v + i*size
		if at < seg.Addr || at+size > seg.Addr+seg.Size {
			break
		}
		var t uint64
		var err error
		if size == 8 {
			t, err = a.mach.Read64(at)
		} else {
			var t32 uint32
			t32, err = a.mach.Read32(at)
			t = uint64(t32)
			if v.signed {
				t = uint64(int64(int32(t32)))
			}
		}
		if err != nil || t&1 != 0 || t < sym.Addr || t-sym.Addr >= sym.Size {
			break
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, b.errf(in.PC, ErrIndirectJump, "jump table at 0x%x has no entry inside %s", v.v, sym.Name)
	}
	return out, nil
}

// valueAfter is the link-time constant register r holds after the instruction in runs, when
// in is not a branch, jalr or call.
func (b *fbuild) valueAfter(in fwsim.Inst, r uint8) (int64, bool) {
	if r == 0 {
		return 0, true
	}
	if in.Kind.IsBranch() || in.Kind == fwsim.JALR || in.Kind == fwsim.JAL && in.Rd != 0 {
		return 0, false
	}
	v := b.track(in.PC, r)
	if writesRd(in) && in.Rd == r {
		var regs [32]absVal
		regs[in.Rs1] = b.track(in.PC, in.Rs1)
		regs[in.Rs2] = b.track(in.PC, in.Rs2)
		v = absStep(in, &regs)
	}
	return int64(v.v), v.kind == absConst
}

// writesRd reports whether in writes its rd.
func writesRd(in fwsim.Inst) bool {
	if in.Rd == 0 {
		return false
	}
	switch in.Kind.OperandForm() {
	case fwsim.FormR, fwsim.FormI, fwsim.FormUnary, fwsim.FormLoad, fwsim.FormU, fwsim.FormJ, fwsim.FormJALR:
		return true
	}
	return false
}
