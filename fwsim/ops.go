package fwsim

// op is one decoded instruction ready to run: the hot loop touches nothing else.
type op struct {
	imm       int64  // immediate; for auipc the final value pc+imm; for jal the link value pc+size
	target    int32  // branches and jal: index of the destination op; opLdMulAdd: a register
	cost      uint32 // cycles (branches: the not-taken cost)
	runCycles uint32 // cycles from this op to the end of its run (branches not taken)
	runInsns  uint16 // instructions from this op to the end of its run
	runNeed   uint16 // runInsns, plus 1 if the run ends in a pseudo op (the step limit's check before it)
	kind      Kind   // a Kind, or one of the pseudo or fused kinds
	rd        uint8  // sinkReg instead of 0
	rs1       uint8
	rs2       uint8
	n         uint8 // instructions the op stands for (fused ops: more than 1); 1 for pseudo ops
	last      bool  // the op ends its run
	x, y      uint8 // fused ops: further registers (fuse.go)
}

// Pseudo kinds: ops that stand for a fault, placed where decoding could not give an
// instruction. Executing one traps; it is not counted as an instruction.
const (
	opIllegal   = kindEnd + iota // bytes that do not decode
	opTruncated                  // a 32-bit instruction cut by the end of its segment
	opEnd                        // the address just past an executable segment
	opBadJump                    // a branch or jal destination that is not an instruction; imm holds the source pc
	opGoto                       // the end of a sweep that reached already-decoded code: continue at target
)

// decodeAll decodes the executable segments once into m.ops and resolves pc-relative
// destinations to op indices.
//
// Decoding is a set of linear sweeps. The first start at the entry point, at every "$x"
// mapping symbol and at every function (or untyped) symbol in an executable segment; then every
// executable segment is swept from its start, for code without symbols. A sweep runs until
// the end of its segment (where an opEnd op goes) or until it reaches an address an earlier
// sweep already decoded (where an opGoto op continues there). So bytes before the code in a
// segment -- the ELF header, with the default linker script -- cannot throw the decoding of
// the code that follows out of step.
func (m *Machine) decodeAll() {
	im := m.im
	var lo, hi uint64
	first := true
	for _, s := range im.segs {
		if !s.Exec {
			continue
		}
		if first || s.Addr < lo {
			lo = s.Addr
		}
		if first || s.Addr+s.Size > hi {
			hi = s.Addr + s.Size
		}
		first = false
	}
	lo &^= 1
	m.codeLo = lo
	var text uint64
	for _, s := range im.segs {
		if s.Exec {
			text += s.Size
		}
	}
	n0 := int(text/3) + 16 // about one op per 3 bytes of mixed 2- and 4-byte code
	m.ops, m.pcs, m.raws = make([]op, 0, n0), make([]uint64, 0, n0), make([]uint32, 0, n0)
	m.pcIndex = make([]int32, (hi-lo)/2+1)
	for i := range m.pcIndex {
		m.pcIndex[i] = -1
	}
	emit := func(o op, pc uint64, raw uint32) {
		m.ops = append(m.ops, o)
		m.pcs = append(m.pcs, pc)
		m.raws = append(m.raws, raw)
	}
	sweep := func(pc uint64) {
		if pc&1 != 0 {
			return // no instruction starts at an odd address
		}
		var seg Segment
		ok := false
		for _, s := range im.segs {
			if s.Exec && pc >= s.Addr && pc-s.Addr < s.Size {
				seg, ok = s, true
				break
			}
		}
		if !ok {
			return
		}
		end := seg.Addr + seg.Size
		for {
			if end-pc < 2 {
				emit(op{kind: opEnd}, pc, 0)
				return
			}
			if j := m.pcIndex[(pc-lo)/2]; j >= 0 {
				emit(op{kind: opGoto, target: j}, pc, 0)
				return
			}
			m.pcIndex[(pc-lo)/2] = int32(len(m.ops))
			off := pc - im.base
			raw := uint32(im.byteAt(off)) | uint32(im.byteAt(off+1))<<8
			if raw&3 == 3 {
				if end-pc < 4 {
					emit(op{kind: opTruncated}, pc, raw)
					emit(op{kind: opEnd}, end, 0)
					return
				}
				raw |= uint32(im.byteAt(off+2))<<16 | uint32(im.byteAt(off+3))<<24
			}
			in, err := Decode(raw, pc)
			if err != nil {
				emit(op{kind: opIllegal}, pc, in.Raw)
			} else {
				emit(m.lower(in), pc, raw)
			}
			pc += uint64(in.Size)
		}
	}
	sweep(im.entry)
	for _, a := range im.codeMarks {
		sweep(a)
	}
	for _, s := range im.sorted {
		if s.Func || s.Size == 0 {
			sweep(s.Addr)
		}
	}
	for _, s := range im.segs {
		if s.Exec {
			sweep(s.Addr)
		}
	}
	// Resolve destinations. Unresolvable ones get a trap op of their own.
	n := len(m.ops)
	for i := 0; i < n; i++ {
		o := &m.ops[i]
		if !o.kind.IsBranch() && o.kind != JAL {
			continue
		}
		dst := m.pcs[i] + uint64(m.branchOffset(i))
		if j, ok := m.index(dst); ok {
			o.target = int32(j)
		} else {
			o.target = int32(len(m.ops))
			m.ops = append(m.ops, op{kind: opBadJump, imm: int64(m.pcs[i])})
			m.pcs = append(m.pcs, dst)
			m.raws = append(m.raws, 0)
			o = &m.ops[i]
		}
		if o.kind == JAL {
			o.imm = int64(m.pcs[i+1]) // link value: the address of the next instruction
		}
	}
}

// branchOffset returns the pc-relative offset of the branch or jal op i, kept in imm until
// decodeAll replaces jal's imm with its link value.
func (m *Machine) branchOffset(i int) int64 { return m.ops[i].imm }

// lower turns an Inst into an op: costs from the profile, x0 writes to the sink.
func (m *Machine) lower(in Inst) op {
	o := op{
		kind: in.Kind,
		rd:   in.Rd,
		rs1:  in.Rs1,
		rs2:  in.Rs2,
		imm:  in.Imm,
		cost: uint32(m.prof.Cost(in.Kind.Class(), false)),
	}
	if o.rd == 0 {
		o.rd = sinkReg
	}
	if in.Kind == AUIPC {
		o.imm = int64(in.PC + uint64(in.Imm))
	}
	return o
}
