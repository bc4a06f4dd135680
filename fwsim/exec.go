package fwsim

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/nicc-dev/nicc/fwsim/trap"
)

// op is one decoded instruction ready to run: the hot loop touches nothing else.
type op struct {
	imm       int64  // immediate; for auipc the final value pc+imm; for jal the link value pc+size
	target    int32  // branches and jal: index of the destination op
	cost      uint32 // cycles (branches: the not-taken cost)
	runCycles uint32 // cycles from this op to the end of its run (branches not taken)
	runInsns  uint16 // instructions from this op to the end of its run
	runNeed   uint16 // runInsns, plus 1 if the run ends in a pseudo op (the step limit's check before it)
	kind      Kind   // a Kind, or one of the pseudo or fused kinds
	rd        uint8  // sinkReg instead of 0
	rs1       uint8
	rs2       uint8
	n         uint8 // instructions the op stands for (fused ops: more than 1)
	last      bool  // the op ends its run
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

// fault builds the trap for op i.
func (m *Machine) fault(i int, err error, format string, a ...any) error {
	return &trap.Trap{PC: m.pcs[i], Insn: m.raws[i], Err: err, Detail: fmt.Sprintf(format, a...)}
}

func (m *Machine) memFault(i int, kind Kind, addr uint64) error {
	n := uint64(kind.AccessSize())
	what := "load"
	if kind.IsStore() {
		what = "store"
	}
	if addr&(n-1) != 0 {
		return m.fault(i, trap.ErrMisaligned, "%s %d bytes at 0x%x", what, n, addr)
	}
	size := uint64(len(m.mem))
	if kind.IsStore() && addr >= m.base && addr-m.base < size {
		return m.fault(i, trap.ErrOutOfRange, "store %d bytes at 0x%x: read-only memory (below 0x%x)", n, addr, m.base+m.storeLo)
	}
	return m.fault(i, trap.ErrOutOfRange, "%s %d bytes at 0x%x outside memory [0x%x, 0x%x)", what, n, addr, m.base, m.base+size)
}

func sx32(v uint64) uint64 { return uint64(int64(int32(uint32(v)))) }

// run executes from op idx until the call returns to ReturnAddress or faults.
//
// It runs m.fast, a run at a time (see fuse.go): entering a run counts its instructions and
// cycles to its end, and a fault inside takes back what follows the faulting op. A run that
// would cross the step limit is run from m.ops, one instruction per run. exec does the
// work; run turns its exits into results and traps.
func (m *Machine) run(idx int) (insns, cycles uint64, err error) {
	ops := m.fast
	for {
		var why exit
		var addr uint64
		idx, insns, cycles, why, addr = m.exec(ops, idx, insns, cycles)
		o := &ops[idx]
		switch why {
		case exitReturn:
			return insns, cycles, nil
		case exitLimit:
			if &ops[0] == &m.fast[0] {
				ops = m.ops
				continue
			}
			m.stopIdx = idx
			return insns, cycles, m.fault(idx, trap.ErrStepLimit, "after %d instructions", insns)
		case exitJALR:
			return insns, cycles, &trap.Trap{PC: addr, Err: trap.ErrIllegal,
				Detail: fmt.Sprintf("jalr from 0x%x to an address that is not a decoded instruction", m.pcs[idx])}
		}
		if counts(o.kind) {
			// The run was counted to its end: o counts, what follows it does not.
			insns -= uint64(o.runInsns) - 1
			cycles -= uint64(o.runCycles) - uint64(o.cost)
		}
		return insns, cycles, m.opFault(idx, o.kind, addr)
	}
}

// exit says why exec returned.
type exit uint8

const (
	exitReturn exit = iota // jalr to ReturnAddress: the call is over
	exitLimit              // the run at idx would cross the step limit
	exitFault              // op idx faults (a load or store at addr, ecall, ebreak, a pseudo op)
	exitJALR               // the jalr at idx goes to addr, which is not a decoded instruction
)

// opFault is the trap of op i of kind k, which faulted (a load or store: at addr).
func (m *Machine) opFault(i int, k Kind, addr uint64) error {
	switch k {
	case ECALL:
		return m.fault(i, trap.ErrEcall, "a7=%d", m.regs[17])
	case EBREAK:
		return m.fault(i, trap.ErrEbreak, "")
	case opIllegal:
		return m.fault(i, trap.ErrIllegal, "cannot decode")
	case opTruncated:
		return m.fault(i, trap.ErrIllegal, "instruction runs past the end of its segment")
	case opEnd:
		return m.fault(i, trap.ErrIllegal, "ran past the end of executable code")
	case opBadJump:
		return &trap.Trap{PC: m.pcs[i], Err: trap.ErrIllegal,
			Detail: fmt.Sprintf("jump from 0x%x to an address that is not a decoded instruction", uint64(m.fast[i].imm))}
	}
	if k.IsLoad() || k.IsStore() {
		return m.memFault(i, k, addr)
	}
	return m.fault(i, trap.ErrIllegal, "no handler for %v", k)
}

// exec runs ops from idx, a run at a time, until the call returns, an op faults or a run
// would cross the step limit, and says which (see run). It makes no calls, so that the loop's
// state stays in registers.
func (m *Machine) exec(ops []op, idx int, insns, cycles uint64) (int, uint64, uint64, exit, uint64) {
	r := &m.regs
	le := binary.LittleEndian

run:
	for {
		o := &ops[idx]
		if insns+uint64(o.runNeed) > m.StepLimit {
			return idx, insns, cycles, exitLimit, 0
		}
		insns += uint64(o.runInsns)
		cycles += uint64(o.runCycles)
		for {
			o := &ops[idx]
			switch o.kind {
			case LUI:
				r[o.rd] = uint64(o.imm)
			case AUIPC:
				r[o.rd] = uint64(o.imm)
			case JAL:
				r[o.rd] = uint64(o.imm)
				idx = int(o.target)
				continue run
			case JALR:
				t := (r[o.rs1] + uint64(o.imm)) &^ 1
				r[o.rd] = m.pcs[idx+1]
				if t == ReturnAddress {
					return idx, insns, cycles, exitReturn, 0
				}
				off := t - m.codeLo
				if off/2 >= uint64(len(m.pcIndex)) || off&1 != 0 || m.pcIndex[off/2] < 0 {
					return idx, insns, cycles, exitJALR, t
				}
				idx = int(m.pcIndex[off/2])
				continue run
			case BEQ:
				if r[o.rs1] == r[o.rs2] {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
			case BNE:
				if r[o.rs1] != r[o.rs2] {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
			case BLT:
				if int64(r[o.rs1]) < int64(r[o.rs2]) {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
			case BGE:
				if int64(r[o.rs1]) >= int64(r[o.rs2]) {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
			case BLTU:
				if r[o.rs1] < r[o.rs2] {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
			case BGEU:
				if r[o.rs1] >= r[o.rs2] {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}

			case LB:
				a := r[o.rs1] + uint64(o.imm)
				off := a - m.base
				if off > m.loadMax[1] {
					return idx, insns, cycles, exitFault, a
				}
				r[o.rd] = uint64(int64(int8(m.mem[off])))
			case LBU:
				a := r[o.rs1] + uint64(o.imm)
				off := a - m.base
				if off > m.loadMax[1] {
					return idx, insns, cycles, exitFault, a
				}
				r[o.rd] = uint64(m.mem[off])
			case LH:
				a := r[o.rs1] + uint64(o.imm)
				off := a - m.base
				if off > m.loadMax[2] || a&1 != 0 {
					return idx, insns, cycles, exitFault, a
				}
				r[o.rd] = uint64(int64(int16(le.Uint16(m.mem[off:]))))
			case LHU:
				a := r[o.rs1] + uint64(o.imm)
				off := a - m.base
				if off > m.loadMax[2] || a&1 != 0 {
					return idx, insns, cycles, exitFault, a
				}
				r[o.rd] = uint64(le.Uint16(m.mem[off:]))
			case LW:
				a := r[o.rs1] + uint64(o.imm)
				off := a - m.base
				if off > m.loadMax[4] || a&3 != 0 {
					return idx, insns, cycles, exitFault, a
				}
				r[o.rd] = uint64(int64(int32(le.Uint32(m.mem[off:]))))
			case LWU:
				a := r[o.rs1] + uint64(o.imm)
				off := a - m.base
				if off > m.loadMax[4] || a&3 != 0 {
					return idx, insns, cycles, exitFault, a
				}
				r[o.rd] = uint64(le.Uint32(m.mem[off:]))
			case LD:
				a := r[o.rs1] + uint64(o.imm)
				off := a - m.base
				if off > m.loadMax[8] || a&7 != 0 {
					return idx, insns, cycles, exitFault, a
				}
				r[o.rd] = le.Uint64(m.mem[off:])
			case SB:
				a := r[o.rs1] + uint64(o.imm)
				off := a - m.base
				if off-m.storeLo > m.storeMax[1] {
					return idx, insns, cycles, exitFault, a
				}
				m.mem[off] = byte(r[o.rs2])
			case SH:
				a := r[o.rs1] + uint64(o.imm)
				off := a - m.base
				if off-m.storeLo > m.storeMax[2] || a&1 != 0 {
					return idx, insns, cycles, exitFault, a
				}
				le.PutUint16(m.mem[off:], uint16(r[o.rs2]))
			case SW:
				a := r[o.rs1] + uint64(o.imm)
				off := a - m.base
				if off-m.storeLo > m.storeMax[4] || a&3 != 0 {
					return idx, insns, cycles, exitFault, a
				}
				le.PutUint32(m.mem[off:], uint32(r[o.rs2]))
			case SD:
				a := r[o.rs1] + uint64(o.imm)
				off := a - m.base
				if off-m.storeLo > m.storeMax[8] || a&7 != 0 {
					return idx, insns, cycles, exitFault, a
				}
				le.PutUint64(m.mem[off:], r[o.rs2])

			case ADDI:
				r[o.rd] = r[o.rs1] + uint64(o.imm)
			case SLTI:
				r[o.rd] = b2u(int64(r[o.rs1]) < o.imm)
			case SLTIU:
				r[o.rd] = b2u(r[o.rs1] < uint64(o.imm))
			case XORI:
				r[o.rd] = r[o.rs1] ^ uint64(o.imm)
			case ORI:
				r[o.rd] = r[o.rs1] | uint64(o.imm)
			case ANDI:
				r[o.rd] = r[o.rs1] & uint64(o.imm)
			case SLLI:
				r[o.rd] = r[o.rs1] << (o.imm & 63)
			case SRLI:
				r[o.rd] = r[o.rs1] >> (o.imm & 63)
			case SRAI:
				r[o.rd] = uint64(int64(r[o.rs1]) >> (o.imm & 63))
			case ADD:
				r[o.rd] = r[o.rs1] + r[o.rs2]
			case SUB:
				r[o.rd] = r[o.rs1] - r[o.rs2]
			case SLL:
				r[o.rd] = r[o.rs1] << (r[o.rs2] & 63)
			case SLT:
				r[o.rd] = b2u(int64(r[o.rs1]) < int64(r[o.rs2]))
			case SLTU:
				r[o.rd] = b2u(r[o.rs1] < r[o.rs2])
			case XOR:
				r[o.rd] = r[o.rs1] ^ r[o.rs2]
			case SRL:
				r[o.rd] = r[o.rs1] >> (r[o.rs2] & 63)
			case SRA:
				r[o.rd] = uint64(int64(r[o.rs1]) >> (r[o.rs2] & 63))
			case OR:
				r[o.rd] = r[o.rs1] | r[o.rs2]
			case AND:
				r[o.rd] = r[o.rs1] & r[o.rs2]
			case FENCE, FENCE_I:
			case ADDIW:
				r[o.rd] = sx32(r[o.rs1] + uint64(o.imm))
			case SLLIW:
				r[o.rd] = sx32(uint64(uint32(r[o.rs1]) << (o.imm & 31)))
			case SRLIW:
				r[o.rd] = sx32(uint64(uint32(r[o.rs1]) >> (o.imm & 31)))
			case SRAIW:
				r[o.rd] = uint64(int64(int32(r[o.rs1]) >> (o.imm & 31)))
			case ADDW:
				r[o.rd] = sx32(r[o.rs1] + r[o.rs2])
			case SUBW:
				r[o.rd] = sx32(r[o.rs1] - r[o.rs2])
			case SLLW:
				r[o.rd] = sx32(uint64(uint32(r[o.rs1]) << (r[o.rs2] & 31)))
			case SRLW:
				r[o.rd] = sx32(uint64(uint32(r[o.rs1]) >> (r[o.rs2] & 31)))
			case SRAW:
				r[o.rd] = uint64(int64(int32(r[o.rs1]) >> (r[o.rs2] & 31)))

			case MUL:
				r[o.rd] = r[o.rs1] * r[o.rs2]
			case MULH:
				r[o.rd] = mulh(r[o.rs1], r[o.rs2])
			case MULHSU:
				r[o.rd] = mulhsu(r[o.rs1], r[o.rs2])
			case MULHU:
				hi, _ := bits.Mul64(r[o.rs1], r[o.rs2])
				r[o.rd] = hi
			case DIV:
				r[o.rd] = div(r[o.rs1], r[o.rs2])
			case DIVU:
				r[o.rd] = divu(r[o.rs1], r[o.rs2])
			case REM:
				r[o.rd] = rem(r[o.rs1], r[o.rs2])
			case REMU:
				r[o.rd] = remu(r[o.rs1], r[o.rs2])
			case MULW:
				r[o.rd] = sx32(r[o.rs1] * r[o.rs2])
			case DIVW:
				r[o.rd] = divw(r[o.rs1], r[o.rs2])
			case DIVUW:
				r[o.rd] = divuw(r[o.rs1], r[o.rs2])
			case REMW:
				r[o.rd] = remw(r[o.rs1], r[o.rs2])
			case REMUW:
				r[o.rd] = remuw(r[o.rs1], r[o.rs2])

			case ANDN:
				r[o.rd] = r[o.rs1] &^ r[o.rs2]
			case ORN:
				r[o.rd] = r[o.rs1] | ^r[o.rs2]
			case XNOR:
				r[o.rd] = ^(r[o.rs1] ^ r[o.rs2])
			case CLZ:
				r[o.rd] = uint64(bits.LeadingZeros64(r[o.rs1]))
			case CLZW:
				r[o.rd] = uint64(bits.LeadingZeros32(uint32(r[o.rs1])))
			case CTZ:
				r[o.rd] = uint64(bits.TrailingZeros64(r[o.rs1]))
			case CTZW:
				r[o.rd] = uint64(bits.TrailingZeros32(uint32(r[o.rs1])))
			case CPOP:
				r[o.rd] = cpop(r[o.rs1])
			case CPOPW:
				r[o.rd] = cpop(uint64(uint32(r[o.rs1])))
			case MAX:
				r[o.rd] = uint64(max(int64(r[o.rs1]), int64(r[o.rs2])))
			case MAXU:
				r[o.rd] = max(r[o.rs1], r[o.rs2])
			case MIN:
				r[o.rd] = uint64(min(int64(r[o.rs1]), int64(r[o.rs2])))
			case MINU:
				r[o.rd] = min(r[o.rs1], r[o.rs2])
			case SEXT_B:
				r[o.rd] = uint64(int64(int8(r[o.rs1])))
			case SEXT_H:
				r[o.rd] = uint64(int64(int16(r[o.rs1])))
			case ZEXT_H:
				r[o.rd] = uint64(uint16(r[o.rs1]))
			case ROL:
				r[o.rd] = bits.RotateLeft64(r[o.rs1], int(r[o.rs2]&63))
			case ROLW:
				r[o.rd] = sx32(uint64(bits.RotateLeft32(uint32(r[o.rs1]), int(r[o.rs2]&31))))
			case ROR:
				r[o.rd] = bits.RotateLeft64(r[o.rs1], -int(r[o.rs2]&63))
			case RORI:
				r[o.rd] = bits.RotateLeft64(r[o.rs1], -int(o.imm&63))
			case RORIW:
				r[o.rd] = sx32(uint64(bits.RotateLeft32(uint32(r[o.rs1]), -int(o.imm&31))))
			case RORW:
				r[o.rd] = sx32(uint64(bits.RotateLeft32(uint32(r[o.rs1]), -int(r[o.rs2]&31))))
			case ORC_B:
				r[o.rd] = orcb(r[o.rs1])
			case REV8:
				r[o.rd] = bits.ReverseBytes64(r[o.rs1])

			case opGoto:
				idx = int(o.target)
				continue run
			default: // ecall, ebreak and the pseudo ops that fault
				return idx, insns, cycles, exitFault, 0
			case opLI:
				r[o.rd] = uint64(o.imm)
				idx++
			case opBrLT:
				r[o.rd] = uint64(o.imm)
				if int64(r[o.rs1]) < o.imm {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx += int(o.n) - 1
			case opBrGE:
				r[o.rd] = uint64(o.imm)
				if int64(r[o.rs1]) >= o.imm {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx += int(o.n) - 1
			case opBrGT:
				r[o.rd] = uint64(o.imm)
				if int64(r[o.rs1]) > o.imm {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx += int(o.n) - 1
			case opBrLE:
				r[o.rd] = uint64(o.imm)
				if int64(r[o.rs1]) <= o.imm {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx += int(o.n) - 1
			case opBrLTU:
				r[o.rd] = uint64(o.imm)
				if r[o.rs1] < uint64(o.imm) {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx += int(o.n) - 1
			case opBrGEU:
				r[o.rd] = uint64(o.imm)
				if r[o.rs1] >= uint64(o.imm) {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx += int(o.n) - 1
			case opBrGTU:
				r[o.rd] = uint64(o.imm)
				if r[o.rs1] > uint64(o.imm) {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx += int(o.n) - 1
			case opBrLEU:
				r[o.rd] = uint64(o.imm)
				if r[o.rs1] <= uint64(o.imm) {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx += int(o.n) - 1
			case opBrEQ:
				r[o.rd] = uint64(o.imm)
				if r[o.rs1] == uint64(o.imm) {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx += int(o.n) - 1
			case opBrNE:
				r[o.rd] = uint64(o.imm)
				if r[o.rs1] != uint64(o.imm) {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx += int(o.n) - 1
			}
			idx++
			if o.last {
				continue run
			}
		}
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func mulh(a, b uint64) uint64 {
	hi, _ := bits.Mul64(a, b)
	if int64(a) < 0 {
		hi -= b
	}
	if int64(b) < 0 {
		hi -= a
	}
	return hi
}

func mulhsu(a, b uint64) uint64 {
	hi, _ := bits.Mul64(a, b)
	if int64(a) < 0 {
		hi -= b
	}
	return hi
}

// RISC-V division never traps: x/0 is all ones (unsigned) or -1 (signed), x%0 is x, and the
// signed overflow MIN/-1 gives MIN with remainder 0.
func div(a, b uint64) uint64 {
	switch {
	case b == 0:
		return math.MaxUint64
	case int64(a) == math.MinInt64 && int64(b) == -1:
		return a
	}
	return uint64(int64(a) / int64(b))
}

func divu(a, b uint64) uint64 {
	if b == 0 {
		return math.MaxUint64
	}
	return a / b
}

func rem(a, b uint64) uint64 {
	switch {
	case b == 0:
		return a
	case int64(a) == math.MinInt64 && int64(b) == -1:
		return 0
	}
	return uint64(int64(a) % int64(b))
}

func remu(a, b uint64) uint64 {
	if b == 0 {
		return a
	}
	return a % b
}

func divw(a, b uint64) uint64 {
	x, y := int32(a), int32(b)
	switch {
	case y == 0:
		return math.MaxUint64
	case x == math.MinInt32 && y == -1:
		return uint64(int64(x))
	}
	return uint64(int64(x / y))
}

func divuw(a, b uint64) uint64 {
	x, y := uint32(a), uint32(b)
	if y == 0 {
		return math.MaxUint64
	}
	return sx32(uint64(x / y))
}

func remw(a, b uint64) uint64 {
	x, y := int32(a), int32(b)
	switch {
	case y == 0:
		return uint64(int64(x))
	case x == math.MinInt32 && y == -1:
		return 0
	}
	return uint64(int64(x % y))
}

func remuw(a, b uint64) uint64 {
	x, y := uint32(a), uint32(b)
	if y == 0 {
		return sx32(uint64(x))
	}
	return sx32(uint64(x % y))
}

// cpop is bits.OnesCount64 without its CPU feature check, which would hold a register in
// exec's loop.
func cpop(v uint64) uint64 {
	v -= v >> 1 & 0x5555555555555555
	v = v&0x3333333333333333 + v>>2&0x3333333333333333
	v = (v + v>>4) & 0x0f0f0f0f0f0f0f0f
	return v * 0x0101010101010101 >> 56
}

func orcb(v uint64) uint64 {
	var out uint64
	for i := 0; i < 64; i += 8 {
		if v>>i&0xff != 0 {
			out |= 0xff << i
		}
	}
	return out
}
