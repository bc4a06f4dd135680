package fwsim

// A tiny assembler for tests: 32-bit encodings of every Kind, written from the RISC-V
// specification tables independently of decode.go's switch, plus helpers that run a few
// instructions on a Machine without an ELF file.

import (
	"encoding/binary"
	"fmt"
	"testing"
)

const (
	opLUI    = 0x37
	opAUIPC  = 0x17
	opJAL    = 0x6f
	opJALR   = 0x67
	opBRANCH = 0x63
	opLOAD   = 0x03
	opSTORE  = 0x23
	opIMM    = 0x13
	opIMM32  = 0x1b
	opOP     = 0x33
	opOP32   = 0x3b
	opMISC   = 0x0f
	opSYSTEM = 0x73
)

// encoding of one Kind: opcode, funct3, funct7 (R type), or the fixed upper 12 bits (unary).
type encoding struct {
	opc, f3, f7 uint32
	imm12       uint32 // unary: the whole imm[11:0] field
	shift       int    // immediate shifts: shamt width (6 or 5); f7 holds imm[11:5 or 6] prefix
}

var encodings = map[Kind]encoding{
	LUI: {opc: opLUI}, AUIPC: {opc: opAUIPC}, JAL: {opc: opJAL}, JALR: {opc: opJALR},
	BEQ: {opc: opBRANCH, f3: 0}, BNE: {opc: opBRANCH, f3: 1}, BLT: {opc: opBRANCH, f3: 4},
	BGE: {opc: opBRANCH, f3: 5}, BLTU: {opc: opBRANCH, f3: 6}, BGEU: {opc: opBRANCH, f3: 7},
	LB: {opc: opLOAD, f3: 0}, LH: {opc: opLOAD, f3: 1}, LW: {opc: opLOAD, f3: 2}, LD: {opc: opLOAD, f3: 3},
	LBU: {opc: opLOAD, f3: 4}, LHU: {opc: opLOAD, f3: 5}, LWU: {opc: opLOAD, f3: 6},
	SB: {opc: opSTORE, f3: 0}, SH: {opc: opSTORE, f3: 1}, SW: {opc: opSTORE, f3: 2}, SD: {opc: opSTORE, f3: 3},
	ADDI: {opc: opIMM, f3: 0}, SLTI: {opc: opIMM, f3: 2}, SLTIU: {opc: opIMM, f3: 3},
	XORI: {opc: opIMM, f3: 4}, ORI: {opc: opIMM, f3: 6}, ANDI: {opc: opIMM, f3: 7},
	SLLI: {opc: opIMM, f3: 1, f7: 0x00, shift: 6}, SRLI: {opc: opIMM, f3: 5, f7: 0x00, shift: 6},
	SRAI: {opc: opIMM, f3: 5, f7: 0x20, shift: 6}, RORI: {opc: opIMM, f3: 5, f7: 0x30, shift: 6},
	ADD: {opc: opOP, f3: 0}, SUB: {opc: opOP, f3: 0, f7: 0x20}, SLL: {opc: opOP, f3: 1},
	SLT: {opc: opOP, f3: 2}, SLTU: {opc: opOP, f3: 3}, XOR: {opc: opOP, f3: 4},
	SRL: {opc: opOP, f3: 5}, SRA: {opc: opOP, f3: 5, f7: 0x20}, OR: {opc: opOP, f3: 6}, AND: {opc: opOP, f3: 7},
	FENCE: {opc: opMISC, f3: 0}, FENCE_I: {opc: opMISC, f3: 1},
	ECALL: {opc: opSYSTEM, imm12: 0}, EBREAK: {opc: opSYSTEM, imm12: 1},
	ADDIW: {opc: opIMM32, f3: 0},
	SLLIW: {opc: opIMM32, f3: 1, f7: 0x00, shift: 5}, SRLIW: {opc: opIMM32, f3: 5, f7: 0x00, shift: 5},
	SRAIW: {opc: opIMM32, f3: 5, f7: 0x20, shift: 5}, RORIW: {opc: opIMM32, f3: 5, f7: 0x30, shift: 5},
	ADDW: {opc: opOP32, f3: 0}, SUBW: {opc: opOP32, f3: 0, f7: 0x20}, SLLW: {opc: opOP32, f3: 1},
	SRLW: {opc: opOP32, f3: 5}, SRAW: {opc: opOP32, f3: 5, f7: 0x20},
	MUL: {opc: opOP, f3: 0, f7: 1}, MULH: {opc: opOP, f3: 1, f7: 1}, MULHSU: {opc: opOP, f3: 2, f7: 1},
	MULHU: {opc: opOP, f3: 3, f7: 1}, DIV: {opc: opOP, f3: 4, f7: 1}, DIVU: {opc: opOP, f3: 5, f7: 1},
	REM: {opc: opOP, f3: 6, f7: 1}, REMU: {opc: opOP, f3: 7, f7: 1},
	MULW: {opc: opOP32, f3: 0, f7: 1}, DIVW: {opc: opOP32, f3: 4, f7: 1}, DIVUW: {opc: opOP32, f3: 5, f7: 1},
	REMW: {opc: opOP32, f3: 6, f7: 1}, REMUW: {opc: opOP32, f3: 7, f7: 1},
	ANDN: {opc: opOP, f3: 7, f7: 0x20}, ORN: {opc: opOP, f3: 6, f7: 0x20}, XNOR: {opc: opOP, f3: 4, f7: 0x20},
	CLZ: {opc: opIMM, f3: 1, imm12: 0x600}, CTZ: {opc: opIMM, f3: 1, imm12: 0x601}, CPOP: {opc: opIMM, f3: 1, imm12: 0x602},
	CLZW: {opc: opIMM32, f3: 1, imm12: 0x600}, CTZW: {opc: opIMM32, f3: 1, imm12: 0x601}, CPOPW: {opc: opIMM32, f3: 1, imm12: 0x602},
	MAX: {opc: opOP, f3: 6, f7: 5}, MAXU: {opc: opOP, f3: 7, f7: 5}, MIN: {opc: opOP, f3: 4, f7: 5}, MINU: {opc: opOP, f3: 5, f7: 5},
	SEXT_B: {opc: opIMM, f3: 1, imm12: 0x604}, SEXT_H: {opc: opIMM, f3: 1, imm12: 0x605},
	ZEXT_H: {opc: opOP32, f3: 4, imm12: 0x080},
	ROL:    {opc: opOP, f3: 1, f7: 0x30}, ROR: {opc: opOP, f3: 5, f7: 0x30},
	ROLW: {opc: opOP32, f3: 1, f7: 0x30}, RORW: {opc: opOP32, f3: 5, f7: 0x30},
	ORC_B: {opc: opIMM, f3: 5, imm12: 0x287}, REV8: {opc: opIMM, f3: 5, imm12: 0x6b8},
}

func rtype(f7, rs2, rs1, f3, rd, opc uint32) uint32 {
	return f7<<25 | rs2<<20 | rs1<<15 | f3<<12 | rd<<7 | opc
}

// enc returns the 32-bit encoding of in (Kind, registers, Imm); it panics on an immediate
// that does not fit, which is a bug in the test.
func enc(in Inst) uint32 {
	e, ok := encodings[in.Kind]
	if !ok {
		panic(fmt.Sprintf("enc: no encoding for %v", in.Kind))
	}
	rd, rs1, rs2 := uint32(in.Rd), uint32(in.Rs1), uint32(in.Rs2)
	imm := in.Imm
	fits := func(bits uint) {
		if imm < -(1<<(bits-1)) || imm >= 1<<(bits-1) {
			panic(fmt.Sprintf("enc %v: immediate %d does not fit %d bits", in.Kind, imm, bits))
		}
	}
	u := uint32(imm)
	switch in.Kind.OperandForm() {
	case FormR:
		return rtype(e.f7, rs2, rs1, e.f3, rd, e.opc)
	case FormUnary:
		return e.imm12<<20 | rs1<<15 | e.f3<<12 | rd<<7 | e.opc
	case FormI, FormLoad, FormJALR:
		if e.shift != 0 {
			if imm < 0 || imm >= 1<<e.shift {
				panic(fmt.Sprintf("enc %v: shift %d out of range", in.Kind, imm))
			}
			return e.f7<<25 | u<<20 | rs1<<15 | e.f3<<12 | rd<<7 | e.opc
		}
		fits(12)
		return (u&0xfff)<<20 | rs1<<15 | e.f3<<12 | rd<<7 | e.opc
	case FormStore:
		fits(12)
		return (u>>5&0x7f)<<25 | rs2<<20 | rs1<<15 | e.f3<<12 | (u&0x1f)<<7 | e.opc
	case FormBranch:
		fits(13)
		return (u>>12&1)<<31 | (u>>5&0x3f)<<25 | rs2<<20 | rs1<<15 | e.f3<<12 | (u>>1&0xf)<<8 | (u>>11&1)<<7 | e.opc
	case FormU:
		if imm&0xfff != 0 || imm < -(1<<31) || imm >= 1<<31 {
			panic(fmt.Sprintf("enc %v: %#x is not a 32-bit multiple of 4096", in.Kind, imm))
		}
		return u&0xfffff000 | rd<<7 | e.opc
	case FormJ:
		fits(21)
		return (u>>20&1)<<31 | (u>>1&0x3ff)<<21 | (u>>11&1)<<20 | (u>>12&0xff)<<12 | rd<<7 | e.opc
	case FormNone:
		if in.Kind == FENCE {
			return 0x0ff0000f // fence iorw, iorw
		}
		return e.imm12<<20 | e.opc | e.f3<<12
	}
	panic("enc: unknown format")
}

// Register numbers by ABI name, for readable tests.
const (
	zero = 0
	ra   = 1
	sp   = 2
	gp   = 3
	t0   = 5
	t1   = 6
	t2   = 7
	s0   = 8
	s1   = 9
	a0   = 10
	a1   = 11
	a2   = 12
	a3   = 13
	a4   = 14
	a5   = 15
	a6   = 16
	a7   = 17
)

// Shorthands building Insts for enc.
func r3(k Kind, rd, rs1, rs2 uint8) Inst       { return Inst{Kind: k, Rd: rd, Rs1: rs1, Rs2: rs2} }
func ri(k Kind, rd, rs1 uint8, imm int64) Inst { return Inst{Kind: k, Rd: rd, Rs1: rs1, Imm: imm} }
func st(k Kind, rs2, rs1 uint8, imm int64) Inst {
	return Inst{Kind: k, Rs1: rs1, Rs2: rs2, Imm: imm}
}
func br(k Kind, rs1, rs2 uint8, off int64) Inst { return Inst{Kind: k, Rs1: rs1, Rs2: rs2, Imm: off} }

var ret = ri(JALR, zero, ra, 0)

// code assembles a mix of Insts (encoded to 32 bits) and raw uint16 halfwords (compressed
// instructions, or any bits) into little-endian bytes.
func code(items ...any) []byte {
	var b []byte
	for _, it := range items {
		switch v := it.(type) {
		case Inst:
			b = binary.LittleEndian.AppendUint32(b, enc(v))
		case uint32:
			b = binary.LittleEndian.AppendUint32(b, v)
		case uint16:
			b = binary.LittleEndian.AppendUint16(b, v)
		default:
			panic(fmt.Sprintf("code: %T", it))
		}
	}
	return b
}

const testBase = 0x10000

// newTestMachine loads raw code at testBase with the given profile name ("" = default).
func newTestMachine(t testing.TB, prof string, b []byte) *Machine {
	t.Helper()
	im, err := RawImage(testBase, b)
	if err != nil {
		t.Fatal(err)
	}
	p, err := LookupProfile(prof)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMachine(im, p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// runCode runs raw code from its start with args in a0..a7.
func runCode(t testing.TB, b []byte, args ...uint64) (*Machine, Result, error) {
	t.Helper()
	m := newTestMachine(t, "", b)
	res, err := m.Call("_start", args...)
	return m, res, err
}
