package fwsim

// The reference interpreter the fast path is tested against (fastpath_test.go): the loop run
// was before superinstructions and run counts (commit f21c111), kept verbatim. It executes
// m.ops, the one-op-per-instruction slice, checking the step limit and counting instructions
// and cycles before every instruction.

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/nicc-dev/nicc/fwsim/trap"
)

// RefCall is CallAddr on the reference interpreter.
func (m *Machine) RefCall(entry uint64, args ...uint64) (res Result, err error) {
	idx, err := m.enter(entry, args)
	if err != nil {
		return Result{}, err
	}
	defer m.recoverCall(entry, &res, &err)
	insns, cycles, err := m.refRun(idx)
	return Result{A0: m.regs[10], Insns: insns, Cycles: cycles}, err
}

// refRun executes from op idx until the call returns to ReturnAddress or faults.
func (m *Machine) refRun(idx int) (insns, cycles uint64, err error) {
	ops := m.ops
	r := &m.regs
	mem := m.mem
	base := m.base
	size := uint64(len(mem))
	// Highest offsets at which an access of n bytes still fits (memory is at least the
	// arena plus the stack, so these do not underflow).
	lim1, lim2, lim4, lim8 := size-1, size-2, size-4, size-8
	// Stores: off-storeLo must be <= wlimN (off below storeLo wraps around and fails).
	slo := m.storeLo
	w := size - slo
	wlim1, wlim2, wlim4, wlim8 := w-1, w-2, w-4, w-8
	limit := m.StepLimit
	takenDelta := m.takenDelta
	le := binary.LittleEndian

	for {
		if insns >= limit {
			m.stopIdx = idx
			return insns, cycles, m.fault(idx, trap.ErrStepLimit, "after %d instructions", insns)
		}
		o := &ops[idx]
		insns++
		cycles += uint64(o.cost)
		switch o.kind {
		case LUI:
			r[o.rd] = uint64(o.imm)
		case AUIPC:
			r[o.rd] = uint64(o.imm)
		case JAL:
			r[o.rd] = uint64(o.imm)
			idx = int(o.target)
			continue
		case JALR:
			t := (r[o.rs1] + uint64(o.imm)) &^ 1
			r[o.rd] = m.pcs[idx+1]
			if t == ReturnAddress {
				return insns, cycles, nil
			}
			off := t - m.codeLo
			if off/2 >= uint64(len(m.pcIndex)) || off&1 != 0 || m.pcIndex[off/2] < 0 {
				return insns, cycles, &trap.Trap{PC: t, Err: trap.ErrIllegal,
					Detail: fmt.Sprintf("jalr from 0x%x to an address that is not a decoded instruction", m.pcs[idx])}
			}
			idx = int(m.pcIndex[off/2])
			continue
		case BEQ:
			if r[o.rs1] == r[o.rs2] {
				cycles += takenDelta
				idx = int(o.target)
				continue
			}
		case BNE:
			if r[o.rs1] != r[o.rs2] {
				cycles += takenDelta
				idx = int(o.target)
				continue
			}
		case BLT:
			if int64(r[o.rs1]) < int64(r[o.rs2]) {
				cycles += takenDelta
				idx = int(o.target)
				continue
			}
		case BGE:
			if int64(r[o.rs1]) >= int64(r[o.rs2]) {
				cycles += takenDelta
				idx = int(o.target)
				continue
			}
		case BLTU:
			if r[o.rs1] < r[o.rs2] {
				cycles += takenDelta
				idx = int(o.target)
				continue
			}
		case BGEU:
			if r[o.rs1] >= r[o.rs2] {
				cycles += takenDelta
				idx = int(o.target)
				continue
			}

		case LB:
			a := r[o.rs1] + uint64(o.imm)
			off := a - base
			if off > lim1 {
				return insns, cycles, m.memFault(idx, o.kind, a)
			}
			r[o.rd] = uint64(int64(int8(mem[off])))
		case LBU:
			a := r[o.rs1] + uint64(o.imm)
			off := a - base
			if off > lim1 {
				return insns, cycles, m.memFault(idx, o.kind, a)
			}
			r[o.rd] = uint64(mem[off])
		case LH:
			a := r[o.rs1] + uint64(o.imm)
			off := a - base
			if off > lim2 || a&1 != 0 {
				return insns, cycles, m.memFault(idx, o.kind, a)
			}
			r[o.rd] = uint64(int64(int16(le.Uint16(mem[off:]))))
		case LHU:
			a := r[o.rs1] + uint64(o.imm)
			off := a - base
			if off > lim2 || a&1 != 0 {
				return insns, cycles, m.memFault(idx, o.kind, a)
			}
			r[o.rd] = uint64(le.Uint16(mem[off:]))
		case LW:
			a := r[o.rs1] + uint64(o.imm)
			off := a - base
			if off > lim4 || a&3 != 0 {
				return insns, cycles, m.memFault(idx, o.kind, a)
			}
			r[o.rd] = uint64(int64(int32(le.Uint32(mem[off:]))))
		case LWU:
			a := r[o.rs1] + uint64(o.imm)
			off := a - base
			if off > lim4 || a&3 != 0 {
				return insns, cycles, m.memFault(idx, o.kind, a)
			}
			r[o.rd] = uint64(le.Uint32(mem[off:]))
		case LD:
			a := r[o.rs1] + uint64(o.imm)
			off := a - base
			if off > lim8 || a&7 != 0 {
				return insns, cycles, m.memFault(idx, o.kind, a)
			}
			r[o.rd] = le.Uint64(mem[off:])
		case SB:
			a := r[o.rs1] + uint64(o.imm)
			off := a - base
			if off-slo > wlim1 {
				return insns, cycles, m.memFault(idx, o.kind, a)
			}
			mem[off] = byte(r[o.rs2])
		case SH:
			a := r[o.rs1] + uint64(o.imm)
			off := a - base
			if off-slo > wlim2 || a&1 != 0 {
				return insns, cycles, m.memFault(idx, o.kind, a)
			}
			le.PutUint16(mem[off:], uint16(r[o.rs2]))
		case SW:
			a := r[o.rs1] + uint64(o.imm)
			off := a - base
			if off-slo > wlim4 || a&3 != 0 {
				return insns, cycles, m.memFault(idx, o.kind, a)
			}
			le.PutUint32(mem[off:], uint32(r[o.rs2]))
		case SD:
			a := r[o.rs1] + uint64(o.imm)
			off := a - base
			if off-slo > wlim8 || a&7 != 0 {
				return insns, cycles, m.memFault(idx, o.kind, a)
			}
			le.PutUint64(mem[off:], r[o.rs2])

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
		case ECALL:
			return insns, cycles, m.fault(idx, trap.ErrEcall, "a7=%d", r[17])
		case EBREAK:
			return insns, cycles, m.fault(idx, trap.ErrEbreak, "")
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
			r[o.rd] = uint64(bits.OnesCount64(r[o.rs1]))
		case CPOPW:
			r[o.rd] = uint64(bits.OnesCount32(uint32(r[o.rs1])))
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

		case opIllegal:
			insns--
			return insns, cycles, m.fault(idx, trap.ErrIllegal, "cannot decode")
		case opTruncated:
			insns--
			return insns, cycles, m.fault(idx, trap.ErrIllegal, "instruction runs past the end of its segment")
		case opEnd:
			insns--
			return insns, cycles, m.fault(idx, trap.ErrIllegal, "ran past the end of executable code")
		case opGoto:
			insns--
			idx = int(o.target)
			continue
		case opBadJump:
			insns--
			return insns, cycles, &trap.Trap{PC: m.pcs[idx], Err: trap.ErrIllegal,
				Detail: fmt.Sprintf("jump from 0x%x to an address that is not a decoded instruction", uint64(o.imm))}
		default:
			insns--
			return insns, cycles, m.fault(idx, trap.ErrIllegal, "no handler for %v", o.kind)
		}
		idx++
	}
}
