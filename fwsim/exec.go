package fwsim

import (
	"encoding/binary"
	"math/bits"
)

// exec runs ops from idx, a run at a time, until the call returns, an op faults or a run
// would cross the step limit, and says which (see run). It makes no calls, so that the loop's
// state stays in registers, and each op that continues its run ends in its own continue:
// measured, that is about 12% faster than a tail all ops share.
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
	step:
		for {
			o := &ops[idx]
			switch o.kind {
			case LUI:
				r[o.rd] = uint64(o.imm)
				if idx++; !o.last {
					continue
				}
			case AUIPC:
				r[o.rd] = uint64(o.imm)
				if idx++; !o.last {
					continue
				}
			case JAL:
				r[o.rd] = uint64(o.imm)
				if idx = int(o.target); !o.last {
					continue
				}
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
				idx++
			case BNE:
				if r[o.rs1] != r[o.rs2] {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx++
			case BLT:
				if int64(r[o.rs1]) < int64(r[o.rs2]) {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx++
			case BGE:
				if int64(r[o.rs1]) >= int64(r[o.rs2]) {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx++
			case BLTU:
				if r[o.rs1] < r[o.rs2] {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx++
			case BGEU:
				if r[o.rs1] >= r[o.rs2] {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx++
			case LB:
				a := r[o.rs1] + uint64(o.imm)
				off := a - m.base
				if off > m.loadMax[1] {
					return idx, insns, cycles, exitFault, a
				}
				r[o.rd] = uint64(int64(int8(m.mem[off])))
				if idx++; !o.last {
					continue
				}
			case LBU:
				a := r[o.rs1] + uint64(o.imm)
				off := a - m.base
				if off > m.loadMax[1] {
					return idx, insns, cycles, exitFault, a
				}
				r[o.rd] = uint64(m.mem[off])
				if idx++; !o.last {
					continue
				}
			case LH:
				a := r[o.rs1] + uint64(o.imm)
				off := a - m.base
				if off > m.loadMax[2] || a&1 != 0 {
					return idx, insns, cycles, exitFault, a
				}
				r[o.rd] = uint64(int64(int16(le.Uint16(m.mem[off:]))))
				if idx++; !o.last {
					continue
				}
			case LHU:
				a := r[o.rs1] + uint64(o.imm)
				off := a - m.base
				if off > m.loadMax[2] || a&1 != 0 {
					return idx, insns, cycles, exitFault, a
				}
				r[o.rd] = uint64(le.Uint16(m.mem[off:]))
				if idx++; !o.last {
					continue
				}
			case LW:
				a := r[o.rs1] + uint64(o.imm)
				off := a - m.base
				if off > m.loadMax[4] || a&3 != 0 {
					return idx, insns, cycles, exitFault, a
				}
				r[o.rd] = uint64(int64(int32(le.Uint32(m.mem[off:]))))
				if idx++; !o.last {
					continue
				}
			case LWU:
				a := r[o.rs1] + uint64(o.imm)
				off := a - m.base
				if off > m.loadMax[4] || a&3 != 0 {
					return idx, insns, cycles, exitFault, a
				}
				r[o.rd] = uint64(le.Uint32(m.mem[off:]))
				if idx++; !o.last {
					continue
				}
			case LD:
				a := r[o.rs1] + uint64(o.imm)
				off := a - m.base
				if off > m.loadMax[8] || a&7 != 0 {
					return idx, insns, cycles, exitFault, a
				}
				r[o.rd] = le.Uint64(m.mem[off:])
				if idx++; !o.last {
					continue
				}
			case SB:
				a := r[o.rs1] + uint64(o.imm)
				off := a - m.base
				if off-m.storeLo > m.storeMax[1] {
					return idx, insns, cycles, exitFault, a
				}
				m.mem[off] = byte(r[o.rs2])
				if idx++; !o.last {
					continue
				}
			case SH:
				a := r[o.rs1] + uint64(o.imm)
				off := a - m.base
				if off-m.storeLo > m.storeMax[2] || a&1 != 0 {
					return idx, insns, cycles, exitFault, a
				}
				le.PutUint16(m.mem[off:], uint16(r[o.rs2]))
				if idx++; !o.last {
					continue
				}
			case SW:
				a := r[o.rs1] + uint64(o.imm)
				off := a - m.base
				if off-m.storeLo > m.storeMax[4] || a&3 != 0 {
					return idx, insns, cycles, exitFault, a
				}
				le.PutUint32(m.mem[off:], uint32(r[o.rs2]))
				if idx++; !o.last {
					continue
				}
			case SD:
				a := r[o.rs1] + uint64(o.imm)
				off := a - m.base
				if off-m.storeLo > m.storeMax[8] || a&7 != 0 {
					return idx, insns, cycles, exitFault, a
				}
				le.PutUint64(m.mem[off:], r[o.rs2])

				if idx++; !o.last {
					continue
				}
			case ADDI:
				r[o.rd] = r[o.rs1] + uint64(o.imm)
				if idx++; !o.last {
					continue
				}
			case SLTI:
				r[o.rd] = b2u(int64(r[o.rs1]) < o.imm)
				if idx++; !o.last {
					continue
				}
			case SLTIU:
				r[o.rd] = b2u(r[o.rs1] < uint64(o.imm))
				if idx++; !o.last {
					continue
				}
			case XORI:
				r[o.rd] = r[o.rs1] ^ uint64(o.imm)
				if idx++; !o.last {
					continue
				}
			case ORI:
				r[o.rd] = r[o.rs1] | uint64(o.imm)
				if idx++; !o.last {
					continue
				}
			case ANDI:
				r[o.rd] = r[o.rs1] & uint64(o.imm)
				if idx++; !o.last {
					continue
				}
			case SLLI:
				r[o.rd] = r[o.rs1] << (o.imm & 63)
				if idx++; !o.last {
					continue
				}
			case SRLI:
				r[o.rd] = r[o.rs1] >> (o.imm & 63)
				if idx++; !o.last {
					continue
				}
			case SRAI:
				r[o.rd] = uint64(int64(r[o.rs1]) >> (o.imm & 63))
				if idx++; !o.last {
					continue
				}
			case ADD:
				r[o.rd] = r[o.rs1] + r[o.rs2]
				if idx++; !o.last {
					continue
				}
			case SUB:
				r[o.rd] = r[o.rs1] - r[o.rs2]
				if idx++; !o.last {
					continue
				}
			case SLL:
				r[o.rd] = r[o.rs1] << (r[o.rs2] & 63)
				if idx++; !o.last {
					continue
				}
			case SLT:
				r[o.rd] = b2u(int64(r[o.rs1]) < int64(r[o.rs2]))
				if idx++; !o.last {
					continue
				}
			case SLTU:
				r[o.rd] = b2u(r[o.rs1] < r[o.rs2])
				if idx++; !o.last {
					continue
				}
			case XOR:
				r[o.rd] = r[o.rs1] ^ r[o.rs2]
				if idx++; !o.last {
					continue
				}
			case SRL:
				r[o.rd] = r[o.rs1] >> (r[o.rs2] & 63)
				if idx++; !o.last {
					continue
				}
			case SRA:
				r[o.rd] = uint64(int64(r[o.rs1]) >> (r[o.rs2] & 63))
				if idx++; !o.last {
					continue
				}
			case OR:
				r[o.rd] = r[o.rs1] | r[o.rs2]
				if idx++; !o.last {
					continue
				}
			case AND:
				r[o.rd] = r[o.rs1] & r[o.rs2]
				if idx++; !o.last {
					continue
				}
			case FENCE, FENCE_I:
				if idx++; !o.last {
					continue
				}
			case ADDIW:
				r[o.rd] = sx32(r[o.rs1] + uint64(o.imm))
				if idx++; !o.last {
					continue
				}
			case SLLIW:
				r[o.rd] = sx32(uint64(uint32(r[o.rs1]) << (o.imm & 31)))
				if idx++; !o.last {
					continue
				}
			case SRLIW:
				r[o.rd] = sx32(uint64(uint32(r[o.rs1]) >> (o.imm & 31)))
				if idx++; !o.last {
					continue
				}
			case SRAIW:
				r[o.rd] = uint64(int64(int32(r[o.rs1]) >> (o.imm & 31)))
				if idx++; !o.last {
					continue
				}
			case ADDW:
				r[o.rd] = sx32(r[o.rs1] + r[o.rs2])
				if idx++; !o.last {
					continue
				}
			case SUBW:
				r[o.rd] = sx32(r[o.rs1] - r[o.rs2])
				if idx++; !o.last {
					continue
				}
			case SLLW:
				r[o.rd] = sx32(uint64(uint32(r[o.rs1]) << (r[o.rs2] & 31)))
				if idx++; !o.last {
					continue
				}
			case SRLW:
				r[o.rd] = sx32(uint64(uint32(r[o.rs1]) >> (r[o.rs2] & 31)))
				if idx++; !o.last {
					continue
				}
			case SRAW:
				r[o.rd] = uint64(int64(int32(r[o.rs1]) >> (r[o.rs2] & 31)))

				if idx++; !o.last {
					continue
				}
			case MUL:
				r[o.rd] = r[o.rs1] * r[o.rs2]
				if idx++; !o.last {
					continue
				}
			case MULH:
				r[o.rd] = mulh(r[o.rs1], r[o.rs2])
				if idx++; !o.last {
					continue
				}
			case MULHSU:
				r[o.rd] = mulhsu(r[o.rs1], r[o.rs2])
				if idx++; !o.last {
					continue
				}
			case MULHU:
				hi, _ := bits.Mul64(r[o.rs1], r[o.rs2])
				r[o.rd] = hi
				if idx++; !o.last {
					continue
				}
			case DIV:
				r[o.rd] = div(r[o.rs1], r[o.rs2])
				if idx++; !o.last {
					continue
				}
			case DIVU:
				r[o.rd] = divu(r[o.rs1], r[o.rs2])
				if idx++; !o.last {
					continue
				}
			case REM:
				r[o.rd] = rem(r[o.rs1], r[o.rs2])
				if idx++; !o.last {
					continue
				}
			case REMU:
				r[o.rd] = remu(r[o.rs1], r[o.rs2])
				if idx++; !o.last {
					continue
				}
			case MULW:
				r[o.rd] = sx32(r[o.rs1] * r[o.rs2])
				if idx++; !o.last {
					continue
				}
			case DIVW:
				r[o.rd] = divw(r[o.rs1], r[o.rs2])
				if idx++; !o.last {
					continue
				}
			case DIVUW:
				r[o.rd] = divuw(r[o.rs1], r[o.rs2])
				if idx++; !o.last {
					continue
				}
			case REMW:
				r[o.rd] = remw(r[o.rs1], r[o.rs2])
				if idx++; !o.last {
					continue
				}
			case REMUW:
				r[o.rd] = remuw(r[o.rs1], r[o.rs2])

				if idx++; !o.last {
					continue
				}
			case ANDN:
				r[o.rd] = r[o.rs1] &^ r[o.rs2]
				if idx++; !o.last {
					continue
				}
			case ORN:
				r[o.rd] = r[o.rs1] | ^r[o.rs2]
				if idx++; !o.last {
					continue
				}
			case XNOR:
				r[o.rd] = ^(r[o.rs1] ^ r[o.rs2])
				if idx++; !o.last {
					continue
				}
			case CLZ:
				r[o.rd] = uint64(bits.LeadingZeros64(r[o.rs1]))
				if idx++; !o.last {
					continue
				}
			case CLZW:
				r[o.rd] = uint64(bits.LeadingZeros32(uint32(r[o.rs1])))
				if idx++; !o.last {
					continue
				}
			case CTZ:
				r[o.rd] = uint64(bits.TrailingZeros64(r[o.rs1]))
				if idx++; !o.last {
					continue
				}
			case CTZW:
				r[o.rd] = uint64(bits.TrailingZeros32(uint32(r[o.rs1])))
				if idx++; !o.last {
					continue
				}
			case CPOP:
				r[o.rd] = cpop(r[o.rs1])
				if idx++; !o.last {
					continue
				}
			case CPOPW:
				r[o.rd] = cpop(uint64(uint32(r[o.rs1])))
				if idx++; !o.last {
					continue
				}
			case MAX:
				r[o.rd] = uint64(max(int64(r[o.rs1]), int64(r[o.rs2])))
				if idx++; !o.last {
					continue
				}
			case MAXU:
				r[o.rd] = max(r[o.rs1], r[o.rs2])
				if idx++; !o.last {
					continue
				}
			case MIN:
				r[o.rd] = uint64(min(int64(r[o.rs1]), int64(r[o.rs2])))
				if idx++; !o.last {
					continue
				}
			case MINU:
				r[o.rd] = min(r[o.rs1], r[o.rs2])
				if idx++; !o.last {
					continue
				}
			case SEXT_B:
				r[o.rd] = uint64(int64(int8(r[o.rs1])))
				if idx++; !o.last {
					continue
				}
			case SEXT_H:
				r[o.rd] = uint64(int64(int16(r[o.rs1])))
				if idx++; !o.last {
					continue
				}
			case ZEXT_H:
				r[o.rd] = uint64(uint16(r[o.rs1]))
				if idx++; !o.last {
					continue
				}
			case ROL:
				r[o.rd] = bits.RotateLeft64(r[o.rs1], int(r[o.rs2]&63))
				if idx++; !o.last {
					continue
				}
			case ROLW:
				r[o.rd] = sx32(uint64(bits.RotateLeft32(uint32(r[o.rs1]), int(r[o.rs2]&31))))
				if idx++; !o.last {
					continue
				}
			case ROR:
				r[o.rd] = bits.RotateLeft64(r[o.rs1], -int(r[o.rs2]&63))
				if idx++; !o.last {
					continue
				}
			case RORI:
				r[o.rd] = bits.RotateLeft64(r[o.rs1], -int(o.imm&63))
				if idx++; !o.last {
					continue
				}
			case RORIW:
				r[o.rd] = sx32(uint64(bits.RotateLeft32(uint32(r[o.rs1]), -int(o.imm&31))))
				if idx++; !o.last {
					continue
				}
			case RORW:
				r[o.rd] = sx32(uint64(bits.RotateLeft32(uint32(r[o.rs1]), -int(r[o.rs2]&31))))
				if idx++; !o.last {
					continue
				}
			case ORC_B:
				r[o.rd] = orcb(r[o.rs1])
				if idx++; !o.last {
					continue
				}
			case REV8:
				r[o.rd] = bits.ReverseBytes64(r[o.rs1])

				if idx++; !o.last {
					continue
				}
			case opGoto:
				idx = int(o.target)
				continue run
			default: // ecall, ebreak and the pseudo ops that fault
				return idx, insns, cycles, exitFault, 0
			case opLI:
				r[o.rd] = uint64(o.imm)
				if idx += 2; !o.last {
					continue
				}
			case opBrLT:
				r[o.rd] = uint64(o.imm)
				if int64(r[o.rs1]) < o.imm {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx += int(o.n)
			case opBrGE:
				r[o.rd] = uint64(o.imm)
				if int64(r[o.rs1]) >= o.imm {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx += int(o.n)
			case opBrGT:
				r[o.rd] = uint64(o.imm)
				if int64(r[o.rs1]) > o.imm {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx += int(o.n)
			case opBrLE:
				r[o.rd] = uint64(o.imm)
				if int64(r[o.rs1]) <= o.imm {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx += int(o.n)
			case opBrLTU:
				r[o.rd] = uint64(o.imm)
				if r[o.rs1] < uint64(o.imm) {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx += int(o.n)
			case opBrGEU:
				r[o.rd] = uint64(o.imm)
				if r[o.rs1] >= uint64(o.imm) {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx += int(o.n)
			case opBrGTU:
				r[o.rd] = uint64(o.imm)
				if r[o.rs1] > uint64(o.imm) {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx += int(o.n)
			case opBrLEU:
				r[o.rd] = uint64(o.imm)
				if r[o.rs1] <= uint64(o.imm) {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx += int(o.n)
			case opBrEQ:
				r[o.rd] = uint64(o.imm)
				if r[o.rs1] == uint64(o.imm) {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx += int(o.n)
			case opBrNE:
				r[o.rd] = uint64(o.imm)
				if r[o.rs1] != uint64(o.imm) {
					cycles += m.takenDelta
					idx = int(o.target)
					continue run
				}
				idx += int(o.n)
			// A fused load goes on to the next op itself while it is of the same kind: the
			// emitted layers are long chains of them, and a compare predicts better than the
			// switch's jump.
			case opLdAdd:
				for {
					a := r[o.rs1] + uint64(o.imm)
					off := a - m.base
					if off > m.loadMax[8] || a&7 != 0 {
						return idx, insns, cycles, exitFault, a
					}
					r[o.rd] = le.Uint64(m.mem[off:])
					r[o.rs2] = r[o.x] + r[o.y]
					if idx += 2; o.last {
						continue run
					}
					if o = &ops[idx]; o.kind != opLdAdd {
						continue step
					}
				}
			case opLdSub:
				for {
					a := r[o.rs1] + uint64(o.imm)
					off := a - m.base
					if off > m.loadMax[8] || a&7 != 0 {
						return idx, insns, cycles, exitFault, a
					}
					r[o.rd] = le.Uint64(m.mem[off:])
					r[o.rs2] = r[o.x] - r[o.y]
					if idx += 2; o.last {
						continue run
					}
					if o = &ops[idx]; o.kind != opLdSub {
						continue step
					}
				}
			case opSlliAdd:
				r[o.rd] = r[o.rs1] << (o.imm & 63)
				r[o.y] = r[o.rd] + r[o.x]
				if idx += 2; !o.last {
					continue
				}
			case opAndiAdd:
				r[o.rd] = r[o.rs1] & uint64(o.imm)
				r[o.y] = r[o.rd] + r[o.x]
				if idx += 2; !o.last {
					continue
				}
			case opSraiMax:
				r[o.rd] = uint64(int64(r[o.rs1]) >> (o.imm & 63))
				r[o.y] = uint64(max(int64(r[o.rd]), int64(r[o.x])))
				if idx += 2; !o.last {
					continue
				}
			case opSraiwMax:
				r[o.rd] = uint64(int64(int32(r[o.rs1]) >> (o.imm & 31)))
				r[o.y] = uint64(max(int64(r[o.rd]), int64(r[o.x])))
				if idx += 2; !o.last {
					continue
				}
			case opLdMul:
				a := r[o.rs1] + uint64(o.imm)
				off := a - m.base
				if off > m.loadMax[8] || a&7 != 0 {
					return idx, insns, cycles, exitFault, a
				}
				r[o.rd] = le.Uint64(m.mem[off:])
				r[o.rs2] = r[o.x] * r[o.y]
				if idx += 2; !o.last {
					continue
				}
			case opLdMulAdd:
				for {
					a := r[o.rs1] + uint64(o.imm)
					off := a - m.base
					if off > m.loadMax[8] || a&7 != 0 {
						return idx, insns, cycles, exitFault, a
					}
					r[o.rd] = le.Uint64(m.mem[off:])
					p := uint8(o.target)
					r[p] = r[o.rs2] * r[o.rd]
					r[o.y] = r[p] + r[o.x]
					if idx += 3; o.last {
						continue run
					}
					if o = &ops[idx]; o.kind != opLdMulAdd {
						continue step
					}
				}
			}
			continue run
		}
	}
}
