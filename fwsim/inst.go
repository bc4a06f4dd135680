// Package fwsim runs nicc's RISC-V firmware on an ordinary machine and counts its cycles.
//
// It has four parts:
//
//   - a decoder for user-level RV64IMC + Zbb (Decode, Inst, Kind), exactly what
//     riscv64-unknown-elf-gcc -march=rv64imc_zbb -mabi=lp64 emits;
//   - cycle profiles of in-order cores (Profile, Class, LookupProfile), data files embedded in
//     the binary, every number citing its source or marked an assumption;
//   - an ELF64 loader (LoadELF, ReadELF, Image) with symbols by name;
//   - an interpreter and call harness (Machine) that decodes the text once into a flat op
//     slice, then runs a named function with the standard calling convention until it returns,
//     counting instructions and cycles (Trace runs it one instruction at a time).
//
// The static WCET of a function, the bound its measured cycles never exceed, is package
// fwsim/wcet's: it reads an Image's code and costs it with a Profile.
//
// Faults are errors (see package fwsim/trap), never panics.
package fwsim

import (
	"fmt"
	"strings"
)

// Kind is a base RV64IMC + Zbb instruction. Compressed instructions decode to the base kind
// they expand to (C.ADDI -> ADDI, C.J -> JAL, C.MV -> ADD, ...); Inst.Size tells them apart.
type Kind uint8

const (
	Invalid Kind = iota // the zero Kind: not an instruction

	// RV64I
	LUI
	AUIPC
	JAL
	JALR
	BEQ
	BNE
	BLT
	BGE
	BLTU
	BGEU
	LB
	LH
	LW
	LD
	LBU
	LHU
	LWU
	SB
	SH
	SW
	SD
	ADDI
	SLTI
	SLTIU
	XORI
	ORI
	ANDI
	SLLI
	SRLI
	SRAI
	ADD
	SUB
	SLL
	SLT
	SLTU
	XOR
	SRL
	SRA
	OR
	AND
	FENCE   // executed as a no-op
	FENCE_I // executed as a no-op (code is never modified: stores to text trap)
	ECALL   // traps with trap.ErrEcall
	EBREAK  // traps with trap.ErrEbreak
	ADDIW
	SLLIW
	SRLIW
	SRAIW
	ADDW
	SUBW
	SLLW
	SRLW
	SRAW

	// M
	MUL
	MULH
	MULHSU
	MULHU
	DIV
	DIVU
	REM
	REMU
	MULW
	DIVW
	DIVUW
	REMW
	REMUW

	// Zbb
	ANDN
	ORN
	XNOR
	CLZ
	CLZW
	CTZ
	CTZW
	CPOP
	CPOPW
	MAX
	MAXU
	MIN
	MINU
	SEXT_B
	SEXT_H
	ZEXT_H
	ROL
	ROLW
	ROR
	RORI
	RORIW
	RORW
	ORC_B
	REV8

	kindEnd // sentinel: number of kinds
)

var kindNames = [...]string{
	Invalid: "invalid",
	LUI:     "lui", AUIPC: "auipc", JAL: "jal", JALR: "jalr",
	BEQ: "beq", BNE: "bne", BLT: "blt", BGE: "bge", BLTU: "bltu", BGEU: "bgeu",
	LB: "lb", LH: "lh", LW: "lw", LD: "ld", LBU: "lbu", LHU: "lhu", LWU: "lwu",
	SB: "sb", SH: "sh", SW: "sw", SD: "sd",
	ADDI: "addi", SLTI: "slti", SLTIU: "sltiu", XORI: "xori", ORI: "ori", ANDI: "andi",
	SLLI: "slli", SRLI: "srli", SRAI: "srai",
	ADD: "add", SUB: "sub", SLL: "sll", SLT: "slt", SLTU: "sltu", XOR: "xor",
	SRL: "srl", SRA: "sra", OR: "or", AND: "and",
	FENCE: "fence", FENCE_I: "fence.i", ECALL: "ecall", EBREAK: "ebreak",
	ADDIW: "addiw", SLLIW: "slliw", SRLIW: "srliw", SRAIW: "sraiw",
	ADDW: "addw", SUBW: "subw", SLLW: "sllw", SRLW: "srlw", SRAW: "sraw",
	MUL: "mul", MULH: "mulh", MULHSU: "mulhsu", MULHU: "mulhu",
	DIV: "div", DIVU: "divu", REM: "rem", REMU: "remu",
	MULW: "mulw", DIVW: "divw", DIVUW: "divuw", REMW: "remw", REMUW: "remuw",
	ANDN: "andn", ORN: "orn", XNOR: "xnor",
	CLZ: "clz", CLZW: "clzw", CTZ: "ctz", CTZW: "ctzw", CPOP: "cpop", CPOPW: "cpopw",
	MAX: "max", MAXU: "maxu", MIN: "min", MINU: "minu",
	SEXT_B: "sext.b", SEXT_H: "sext.h", ZEXT_H: "zext.h",
	ROL: "rol", ROLW: "rolw", ROR: "ror", RORI: "rori", RORIW: "roriw", RORW: "rorw",
	ORC_B: "orc.b", REV8: "rev8",
}

// String is the assembler mnemonic of the base instruction, e.g. "addi", "sext.b".
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Kinds returns every valid Kind (all but Invalid), in enum order.
func Kinds() []Kind {
	ks := make([]Kind, 0, kindEnd-1)
	for k := Invalid + 1; k < kindEnd; k++ {
		ks = append(ks, k)
	}
	return ks
}

// OperandForm says which operands a Kind has; it drives Inst.String and tells static analysis
// which fields of an Inst are meaningful.
type OperandForm uint8

const (
	FormNone   OperandForm = iota // fence, ecall, ebreak
	FormR                         // rd, rs1, rs2
	FormI                         // rd, rs1, imm (imm is the shift amount for shifts)
	FormUnary                     // rd, rs1 (Zbb clz, sext.b, rev8, ...)
	FormLoad                      // rd, imm(rs1)
	FormStore                     // rs2, imm(rs1)
	FormBranch                    // rs1, rs2, pc-relative imm
	FormU                         // rd, imm (lui: the value written; auipc: the offset added to pc)
	FormJ                         // rd, pc-relative imm (jal)
	FormJALR                      // rd, imm(rs1)
	operandFormEnd
)

var operandFormNames = [...]string{
	FormNone: "none", FormR: "R", FormI: "I", FormUnary: "unary", FormLoad: "load", FormStore: "store",
	FormBranch: "branch", FormU: "U", FormJ: "J", FormJALR: "jalr",
}

func (f OperandForm) String() string {
	if int(f) < len(operandFormNames) {
		return operandFormNames[f]
	}
	return fmt.Sprintf("OperandForm(%d)", uint8(f))
}

// OperandForm returns the operand shape of k.
func (k Kind) OperandForm() OperandForm {
	switch k {
	case LUI, AUIPC:
		return FormU
	case JAL:
		return FormJ
	case JALR:
		return FormJALR
	case BEQ, BNE, BLT, BGE, BLTU, BGEU:
		return FormBranch
	case LB, LH, LW, LD, LBU, LHU, LWU:
		return FormLoad
	case SB, SH, SW, SD:
		return FormStore
	case ADDI, SLTI, SLTIU, XORI, ORI, ANDI, SLLI, SRLI, SRAI, ADDIW, SLLIW, SRLIW, SRAIW, RORI, RORIW:
		return FormI
	case CLZ, CLZW, CTZ, CTZW, CPOP, CPOPW, SEXT_B, SEXT_H, ZEXT_H, ORC_B, REV8:
		return FormUnary
	case FENCE, FENCE_I, ECALL, EBREAK, Invalid:
		return FormNone
	}
	return FormR
}

// Inst is one decoded instruction.
//
// Fields not used by the Kind's OperandForm are zero. For a compressed instruction the fields are
// those of its 32-bit expansion (e.g. C.LI rd, imm is ADDI rd, x0, imm) and Size is 2.
//
// Imm is the sign-extended immediate: the byte offset for loads, stores and jalr; the
// pc-relative byte offset for branches and jal (see Target); the shift amount for shifts and
// rotates by immediate; for lui and auipc the full value imm20<<12, sign-extended from bit 31.
type Inst struct {
	Kind         Kind
	Rd, Rs1, Rs2 uint8
	Imm          int64
	PC           uint64 // address the instruction was decoded at
	Raw          uint32 // the encoding as fetched: 16 bits (zero-extended) when Size is 2
	Size         uint8  // 2 (compressed) or 4
}

// Class is the cost class of the instruction: Inst.Kind.Class().
func (i Inst) Class() Class { return i.Kind.Class() }

// Next is the address of the instruction that follows in memory: PC + Size.
func (i Inst) Next() uint64 { return i.PC + uint64(i.Size) }

// Target returns the destination of a pc-relative control transfer (branches and jal) and
// true; for every other kind, including jalr whose target is only known at run time, it
// returns 0, false.
func (i Inst) Target() (uint64, bool) {
	switch i.Kind.OperandForm() {
	case FormBranch, FormJ:
		return i.PC + uint64(i.Imm), true
	}
	return 0, false
}

// IsBranch reports whether k is a conditional branch (beq ... bgeu).
func (k Kind) IsBranch() bool { return k >= BEQ && k <= BGEU }

// IsLoad reports whether k reads memory.
func (k Kind) IsLoad() bool { return k >= LB && k <= LWU }

// IsStore reports whether k writes memory.
func (k Kind) IsStore() bool { return k >= SB && k <= SD }

// AccessSize is the number of bytes a load or store of kind k moves, or 0.
func (k Kind) AccessSize() int {
	switch k {
	case LB, LBU, SB:
		return 1
	case LH, LHU, SH:
		return 2
	case LW, LWU, SW:
		return 4
	case LD, SD:
		return 8
	}
	return 0
}

var regNames = [32]string{
	"zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2",
	"s0", "s1", "a0", "a1", "a2", "a3", "a4", "a5",
	"a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7",
	"s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6",
}

// RegName is the ABI name of integer register r ("zero", "ra", "sp", "a0", ...).
func RegName(r uint8) string {
	if r < 32 {
		return regNames[r]
	}
	return fmt.Sprintf("x%d", r)
}

// String disassembles i in the base (expanded) form, e.g. "addi a0, a0, 1",
// "lw a5, 12(sp)", "beq a0, zero, 0x1010"; a compressed instruction gets a "c:" prefix.
func (i Inst) String() string {
	var b strings.Builder
	if i.Size == 2 {
		b.WriteString("c:")
	}
	b.WriteString(i.Kind.String())
	r := RegName
	switch i.Kind.OperandForm() {
	case FormR:
		fmt.Fprintf(&b, " %s, %s, %s", r(i.Rd), r(i.Rs1), r(i.Rs2))
	case FormI:
		fmt.Fprintf(&b, " %s, %s, %d", r(i.Rd), r(i.Rs1), i.Imm)
	case FormUnary:
		fmt.Fprintf(&b, " %s, %s", r(i.Rd), r(i.Rs1))
	case FormLoad:
		fmt.Fprintf(&b, " %s, %d(%s)", r(i.Rd), i.Imm, r(i.Rs1))
	case FormStore:
		fmt.Fprintf(&b, " %s, %d(%s)", r(i.Rs2), i.Imm, r(i.Rs1))
	case FormBranch:
		t, _ := i.Target()
		fmt.Fprintf(&b, " %s, %s, 0x%x", r(i.Rs1), r(i.Rs2), t)
	case FormU:
		fmt.Fprintf(&b, " %s, 0x%x", r(i.Rd), uint64(i.Imm)>>12&0xfffff)
	case FormJ:
		t, _ := i.Target()
		fmt.Fprintf(&b, " %s, 0x%x", r(i.Rd), t)
	case FormJALR:
		fmt.Fprintf(&b, " %s, %d(%s)", r(i.Rd), i.Imm, r(i.Rs1))
	}
	return b.String()
}
