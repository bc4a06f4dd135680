package fwsim

import (
	"github.com/nicc-dev/nicc/fwsim/trap"
)

// Decode decodes the instruction whose first bytes, read little endian, are raw, at address
// pc. The low two bits choose the length: other than 0b11 it is a 16-bit compressed
// instruction and only raw's low 16 bits are looked at; 0b11 is a 32-bit instruction.
//
// The accepted set is user-level RV64IMC + Zbb (see Kind). Compressed instructions are
// expanded to their base Kind with Size 2; RVC HINT encodings (e.g. C.NOP with a nonzero
// immediate, C.MV to x0) are legal and decode to their expansion, which has no effect.
// Anything else -- floating point, CSRs, atomics, reserved encodings (including the all-zero
// 16-bit word and 32-bit shifts with a shift amount out of range), instructions longer than 32
// bits -- is an error: a *trap.Trap wrapping trap.ErrIllegal with PC and Insn set.
func Decode(raw uint32, pc uint64) (Inst, error) {
	var in Inst
	var ok bool
	if raw&3 != 3 {
		raw &= 0xffff
		in, ok = decode16(raw)
		in.Size = 2
	} else {
		in, ok = decode32(raw)
		in.Size = 4
	}
	in.Raw = raw
	in.PC = pc
	if !ok {
		return Inst{PC: pc, Raw: raw, Size: in.Size}, &trap.Trap{PC: pc, Insn: raw, Err: trap.ErrIllegal, Detail: "cannot decode"}
	}
	return in, nil
}

// sext sign-extends the low n bits of v.
func sext(v uint32, n uint) int64 {
	return int64(int32(v<<(32-n)) >> (32 - n))
}

func bit(w uint32, i uint) uint32 { return w >> i & 1 }

func bitsOf(w uint32, hi, lo uint) uint32 { return w >> lo & (1<<(hi-lo+1) - 1) }

func decode32(w uint32) (Inst, bool) {
	if w&0x1f == 0x1f {
		return Inst{}, false // 48-bit and longer encodings
	}
	opcode := w & 0x7f
	rd := uint8(bitsOf(w, 11, 7))
	f3 := bitsOf(w, 14, 12)
	rs1 := uint8(bitsOf(w, 19, 15))
	rs2 := uint8(bitsOf(w, 24, 20))
	f7 := bitsOf(w, 31, 25)
	immI := sext(w>>20, 12)
	immS := sext(bitsOf(w, 31, 25)<<5|bitsOf(w, 11, 7), 12)
	immB := sext(bit(w, 31)<<12|bit(w, 7)<<11|bitsOf(w, 30, 25)<<5|bitsOf(w, 11, 8)<<1, 13)
	immU := int64(int32(w & 0xfffff000))
	immJ := sext(bit(w, 31)<<20|bitsOf(w, 19, 12)<<12|bit(w, 20)<<11|bitsOf(w, 30, 21)<<1, 21)

	r := func(k Kind) (Inst, bool) { return Inst{Kind: k, Rd: rd, Rs1: rs1, Rs2: rs2}, true }
	i := func(k Kind, imm int64) (Inst, bool) { return Inst{Kind: k, Rd: rd, Rs1: rs1, Imm: imm}, true }
	u := func(k Kind) (Inst, bool) { return Inst{Kind: k, Rd: rd, Rs1: rs1}, true }
	bad := func() (Inst, bool) { return Inst{}, false }

	switch opcode {
	case 0x37:
		return Inst{Kind: LUI, Rd: rd, Imm: immU}, true
	case 0x17:
		return Inst{Kind: AUIPC, Rd: rd, Imm: immU}, true
	case 0x6f:
		return Inst{Kind: JAL, Rd: rd, Imm: immJ}, true
	case 0x67:
		if f3 != 0 {
			return bad()
		}
		return i(JALR, immI)
	case 0x63:
		k := [8]Kind{BEQ, BNE, Invalid, Invalid, BLT, BGE, BLTU, BGEU}[f3]
		if k == Invalid {
			return bad()
		}
		return Inst{Kind: k, Rs1: rs1, Rs2: rs2, Imm: immB}, true
	case 0x03:
		k := [8]Kind{LB, LH, LW, LD, LBU, LHU, LWU, Invalid}[f3]
		if k == Invalid {
			return bad()
		}
		return i(k, immI)
	case 0x23:
		k := [8]Kind{SB, SH, SW, SD}[f3]
		if k == Invalid {
			return bad()
		}
		return Inst{Kind: k, Rs1: rs1, Rs2: rs2, Imm: immS}, true
	case 0x13: // OP-IMM
		shamt := int64(bitsOf(w, 25, 20))
		f6 := bitsOf(w, 31, 26)
		switch f3 {
		case 0:
			return i(ADDI, immI)
		case 2:
			return i(SLTI, immI)
		case 3:
			return i(SLTIU, immI)
		case 4:
			return i(XORI, immI)
		case 6:
			return i(ORI, immI)
		case 7:
			return i(ANDI, immI)
		case 1:
			switch {
			case f6 == 0:
				return i(SLLI, shamt)
			case w>>20 == 0x600:
				return u(CLZ)
			case w>>20 == 0x601:
				return u(CTZ)
			case w>>20 == 0x602:
				return u(CPOP)
			case w>>20 == 0x604:
				return u(SEXT_B)
			case w>>20 == 0x605:
				return u(SEXT_H)
			}
			return bad()
		case 5:
			switch {
			case f6 == 0:
				return i(SRLI, shamt)
			case f6 == 0x10:
				return i(SRAI, shamt)
			case f6 == 0x18:
				return i(RORI, shamt)
			case w>>20 == 0x287:
				return u(ORC_B)
			case w>>20 == 0x6b8:
				return u(REV8)
			}
			return bad()
		}
	case 0x1b: // OP-IMM-32
		shamt := int64(rs2)
		switch f3 {
		case 0:
			return i(ADDIW, immI)
		case 1:
			switch {
			case f7 == 0:
				return i(SLLIW, shamt)
			case w>>20 == 0x600:
				return u(CLZW)
			case w>>20 == 0x601:
				return u(CTZW)
			case w>>20 == 0x602:
				return u(CPOPW)
			}
		case 5:
			switch f7 {
			case 0:
				return i(SRLIW, shamt)
			case 0x20:
				return i(SRAIW, shamt)
			case 0x30:
				return i(RORIW, shamt)
			}
		}
		return bad()
	case 0x33: // OP
		switch f7 {
		case 0x00:
			return r([8]Kind{ADD, SLL, SLT, SLTU, XOR, SRL, OR, AND}[f3])
		case 0x20:
			k := [8]Kind{SUB, Invalid, Invalid, Invalid, XNOR, SRA, ORN, ANDN}[f3]
			if k == Invalid {
				return bad()
			}
			return r(k)
		case 0x01:
			return r([8]Kind{MUL, MULH, MULHSU, MULHU, DIV, DIVU, REM, REMU}[f3])
		case 0x05:
			k := [8]Kind{4: MIN, 5: MINU, 6: MAX, 7: MAXU}[f3]
			if k == Invalid {
				return bad()
			}
			return r(k)
		case 0x30:
			switch f3 {
			case 1:
				return r(ROL)
			case 5:
				return r(ROR)
			}
		}
		return bad()
	case 0x3b: // OP-32
		switch f7 {
		case 0x00:
			k := [8]Kind{0: ADDW, 1: SLLW, 5: SRLW}[f3]
			if k == Invalid {
				return bad()
			}
			return r(k)
		case 0x20:
			k := [8]Kind{0: SUBW, 5: SRAW}[f3]
			if k == Invalid {
				return bad()
			}
			return r(k)
		case 0x01:
			k := [8]Kind{0: MULW, 4: DIVW, 5: DIVUW, 6: REMW, 7: REMUW}[f3]
			if k == Invalid {
				return bad()
			}
			return r(k)
		case 0x04:
			if f3 == 4 && rs2 == 0 {
				return u(ZEXT_H)
			}
		case 0x30:
			switch f3 {
			case 1:
				return r(ROLW)
			case 5:
				return r(RORW)
			}
		}
		return bad()
	case 0x0f: // MISC-MEM
		switch f3 {
		case 0:
			return Inst{Kind: FENCE}, true
		case 1:
			return Inst{Kind: FENCE_I}, true
		}
		return bad()
	case 0x73: // SYSTEM
		switch w {
		case 0x00000073:
			return Inst{Kind: ECALL}, true
		case 0x00100073:
			return Inst{Kind: EBREAK}, true
		}
		return bad()
	}
	return bad()
}

// decode16 expands a compressed instruction (RVC for RV64, without the floating-point forms).
func decode16(w uint32) (Inst, bool) {
	bad := func() (Inst, bool) { return Inst{}, false }
	q := w & 3
	f3 := bitsOf(w, 15, 13)
	rdp := uint8(bitsOf(w, 4, 2)) + 8  // rd' / rs2'
	rs1p := uint8(bitsOf(w, 9, 7)) + 8 // rs1' / rd'
	rd := uint8(bitsOf(w, 11, 7))      // rd / rs1
	rs2 := uint8(bitsOf(w, 6, 2))
	imm6 := sext(bit(w, 12)<<5|bitsOf(w, 6, 2), 6)
	shamt := int64(bit(w, 12)<<5 | bitsOf(w, 6, 2))
	// CL/CS offsets
	offW := int64(bitsOf(w, 12, 10)<<3 | bit(w, 6)<<2 | bit(w, 5)<<6)
	offD := int64(bitsOf(w, 12, 10)<<3 | bitsOf(w, 6, 5)<<6)

	switch q {
	case 0:
		switch f3 {
		case 0: // C.ADDI4SPN
			imm := int64(bitsOf(w, 10, 7)<<6 | bitsOf(w, 12, 11)<<4 | bit(w, 5)<<3 | bit(w, 6)<<2)
			if imm == 0 {
				return bad() // includes the all-zero word
			}
			return Inst{Kind: ADDI, Rd: rdp, Rs1: 2, Imm: imm}, true
		case 2: // C.LW
			return Inst{Kind: LW, Rd: rdp, Rs1: rs1p, Imm: offW}, true
		case 3: // C.LD
			return Inst{Kind: LD, Rd: rdp, Rs1: rs1p, Imm: offD}, true
		case 6: // C.SW
			return Inst{Kind: SW, Rs1: rs1p, Rs2: rdp, Imm: offW}, true
		case 7: // C.SD
			return Inst{Kind: SD, Rs1: rs1p, Rs2: rdp, Imm: offD}, true
		}
		return bad() // C.FLD, C.FSD, reserved
	case 1:
		switch f3 {
		case 0: // C.NOP, C.ADDI (and their HINTs)
			return Inst{Kind: ADDI, Rd: rd, Rs1: rd, Imm: imm6}, true
		case 1: // C.ADDIW
			if rd == 0 {
				return bad()
			}
			return Inst{Kind: ADDIW, Rd: rd, Rs1: rd, Imm: imm6}, true
		case 2: // C.LI
			return Inst{Kind: ADDI, Rd: rd, Rs1: 0, Imm: imm6}, true
		case 3:
			if rd == 2 { // C.ADDI16SP
				imm := sext(bit(w, 12)<<9|bit(w, 6)<<4|bit(w, 5)<<6|bitsOf(w, 4, 3)<<7|bit(w, 2)<<5, 10)
				if imm == 0 {
					return bad()
				}
				return Inst{Kind: ADDI, Rd: 2, Rs1: 2, Imm: imm}, true
			}
			// C.LUI
			if imm6 == 0 {
				return bad()
			}
			return Inst{Kind: LUI, Rd: rd, Imm: imm6 << 12}, true
		case 4:
			switch bitsOf(w, 11, 10) {
			case 0: // C.SRLI
				return Inst{Kind: SRLI, Rd: rs1p, Rs1: rs1p, Imm: shamt}, true
			case 1: // C.SRAI
				return Inst{Kind: SRAI, Rd: rs1p, Rs1: rs1p, Imm: shamt}, true
			case 2: // C.ANDI
				return Inst{Kind: ANDI, Rd: rs1p, Rs1: rs1p, Imm: imm6}, true
			}
			var k Kind
			if bit(w, 12) == 0 {
				k = [4]Kind{SUB, XOR, OR, AND}[bitsOf(w, 6, 5)]
			} else {
				k = [4]Kind{SUBW, ADDW}[bitsOf(w, 6, 5)]
			}
			if k == Invalid {
				return bad()
			}
			return Inst{Kind: k, Rd: rs1p, Rs1: rs1p, Rs2: rdp}, true
		case 5: // C.J
			off := sext(bit(w, 12)<<11|bit(w, 11)<<4|bitsOf(w, 10, 9)<<8|bit(w, 8)<<10|
				bit(w, 7)<<6|bit(w, 6)<<7|bitsOf(w, 5, 3)<<1|bit(w, 2)<<5, 12)
			return Inst{Kind: JAL, Rd: 0, Imm: off}, true
		case 6, 7: // C.BEQZ, C.BNEZ
			off := sext(bit(w, 12)<<8|bitsOf(w, 11, 10)<<3|bitsOf(w, 6, 5)<<6|bitsOf(w, 4, 3)<<1|bit(w, 2)<<5, 9)
			k := BEQ
			if f3 == 7 {
				k = BNE
			}
			return Inst{Kind: k, Rs1: rs1p, Rs2: 0, Imm: off}, true
		}
	case 2:
		switch f3 {
		case 0: // C.SLLI (and its HINTs)
			return Inst{Kind: SLLI, Rd: rd, Rs1: rd, Imm: shamt}, true
		case 2: // C.LWSP
			if rd == 0 {
				return bad()
			}
			off := int64(bit(w, 12)<<5 | bitsOf(w, 6, 4)<<2 | bitsOf(w, 3, 2)<<6)
			return Inst{Kind: LW, Rd: rd, Rs1: 2, Imm: off}, true
		case 3: // C.LDSP
			if rd == 0 {
				return bad()
			}
			off := int64(bit(w, 12)<<5 | bitsOf(w, 6, 5)<<3 | bitsOf(w, 4, 2)<<6)
			return Inst{Kind: LD, Rd: rd, Rs1: 2, Imm: off}, true
		case 4:
			if bit(w, 12) == 0 {
				if rs2 == 0 { // C.JR
					if rd == 0 {
						return bad()
					}
					return Inst{Kind: JALR, Rd: 0, Rs1: rd}, true
				}
				return Inst{Kind: ADD, Rd: rd, Rs1: 0, Rs2: rs2}, true // C.MV
			}
			if rs2 == 0 {
				if rd == 0 {
					return Inst{Kind: EBREAK}, true // C.EBREAK
				}
				return Inst{Kind: JALR, Rd: 1, Rs1: rd}, true // C.JALR
			}
			return Inst{Kind: ADD, Rd: rd, Rs1: rd, Rs2: rs2}, true // C.ADD
		case 6: // C.SWSP
			off := int64(bitsOf(w, 12, 9)<<2 | bitsOf(w, 8, 7)<<6)
			return Inst{Kind: SW, Rs1: 2, Rs2: rs2, Imm: off}, true
		case 7: // C.SDSP
			off := int64(bitsOf(w, 12, 10)<<3 | bitsOf(w, 9, 7)<<6)
			return Inst{Kind: SD, Rs1: 2, Rs2: rs2, Imm: off}, true
		}
		return bad() // C.FLDSP, C.FSDSP
	}
	return bad()
}
