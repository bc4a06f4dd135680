package fwsim

// ISA table tests: every instruction, run on the interpreter, against values worked out by
// hand from the RISC-V specification (unprivileged ISA, RV64I/M and Zbb 1.0.0 chapters).

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/fwsim/trap"
)

const (
	min64 = uint64(1) << 63
	max64 = min64 - 1
	ones  = math.MaxUint64
	min32 = 0xffffffff80000000 // int32 min, sign-extended
	max32 = 0x7fffffff
)

func neg(v int64) uint64 { return uint64(v) }

// aluCase runs `k a0, a1, a2` (R), `k a0, a1, imm` (I) or `k a0, a1` (unary) with a1 = a,
// a2 = b, and expects a0 = want.
type aluCase struct {
	k    Kind
	name string
	a, b uint64
	imm  int64
	want uint64
}

var aluCases = []aluCase{
	// RV64I register-register
	{ADD, "simple", 2, 3, 0, 5},
	{ADD, "wrap", max64, 1, 0, min64},
	{ADD, "negative", neg(-5), 3, 0, neg(-2)},
	{SUB, "simple", 5, 3, 0, 2},
	{SUB, "borrow", 0, 1, 0, ones},
	{SUB, "min-1", min64, 1, 0, max64},
	{SLL, "one", 1, 63, 0, min64},
	{SLL, "low6bits", 1, 64 + 3, 0, 8},
	{SLL, "amount0xff", 3, 0xff, 0, min64},
	{SRL, "logical", min64, 63, 0, 1},
	{SRL, "low6bits", 0x100, 64 + 4, 0, 0x10},
	{SRA, "arith", min64, 63, 0, ones},
	{SRA, "low6bits", neg(-256), 64 + 4, 0, neg(-16)},
	{SRA, "positive", 0x100, 4, 0, 0x10},
	{SLT, "less", neg(-1), 0, 0, 1},
	{SLT, "notless", 0, neg(-1), 0, 0},
	{SLT, "equal", 7, 7, 0, 0},
	{SLTU, "less", 0, ones, 0, 1},
	{SLTU, "notless", ones, 0, 0, 0},
	{XOR, "bits", 0xff00, 0x0ff0, 0, 0xf0f0},
	{OR, "bits", 0xff00, 0x0ff0, 0, 0xfff0},
	{AND, "bits", 0xff00, 0x0ff0, 0, 0x0f00},

	// RV64I register-immediate
	{ADDI, "positive", 5, 0, 7, 12},
	{ADDI, "negative", 5, 0, -7, neg(-2)},
	{ADDI, "imm-min", 0, 0, -2048, neg(-2048)},
	{ADDI, "imm-max", 0, 0, 2047, 2047},
	{SLTI, "less", neg(-3), 0, -2, 1},
	{SLTI, "notless", 5, 0, -2, 0},
	{SLTIU, "sext-imm-is-huge", 5, 0, -1, 1},
	{SLTIU, "seqz", 0, 0, 1, 1},
	{SLTIU, "notless", 2, 0, 1, 0},
	{XORI, "not", 0x0f, 0, -1, ^uint64(0x0f)},
	{ORI, "sext", 0, 0, -2048, neg(-2048)},
	{ANDI, "sext", ones, 0, -16, neg(-16)},
	{ANDI, "mask", 0x1234, 0, 0xff, 0x34},
	{SLLI, "63", 1, 0, 63, min64},
	{SLLI, "32", 1, 0, 32, 1 << 32},
	{SRLI, "63", min64, 0, 63, 1},
	{SRLI, "33", ones, 0, 33, 0x7fffffff},
	{SRAI, "63", min64, 0, 63, ones},
	{SRAI, "40", neg(-1 << 50), 0, 40, neg(-1 << 10)},

	// RV64I W forms: 32-bit result, sign-extended
	{ADDIW, "sext", max32, 0, 1, min32},
	{ADDIW, "ignores-high", 0xffffffff00000005, 0, 1, 6},
	{ADDIW, "sext.w", 0x80000000, 0, 0, min32},
	{SLLIW, "sext", 1, 0, 31, min32},
	{SLLIW, "drop-high", 0x100000001, 0, 1, 2},
	{SRLIW, "zero-fill-then-sext", 0xffffffff, 0, 0, ones},
	{SRLIW, "zero-fill", 0xffffffff, 0, 4, 0x0fffffff},
	{SRLIW, "ignores-high", 0xabcd00000010, 0, 4, 1},
	{SRAIW, "sign-fill", 0x80000000, 0, 4, 0xfffffffff8000000},
	{SRAIW, "31", 0x80000000, 0, 31, ones},
	{ADDW, "overflow", max32, 1, 0, min32},
	{ADDW, "ignores-high", 0x1_00000001, 0x2_00000002, 0, 3},
	{SUBW, "underflow", 0x80000000, 1, 0, max32},
	{SUBW, "negative", 0, 1, 0, ones},
	{SLLW, "low5bits", 1, 32 + 31, 0, min32},
	{SLLW, "amount33", 1, 33, 0, 2},
	{SRLW, "low5bits", 0x80000000, 32 + 31, 0, 1},
	{SRLW, "zero", 0xffffffff, 0, 0, ones},
	{SRAW, "low5bits", 0x80000000, 32 + 31, 0, ones},
	{SRAW, "sign", 0x80000000, 1, 0, 0xffffffffc0000000},

	// M
	{MUL, "simple", 6, 7, 0, 42},
	{MUL, "wrap", min64, 2, 0, 0},
	{MUL, "negative", neg(-3), 5, 0, neg(-15)},
	{MULH, "neg*neg", neg(-1), neg(-1), 0, 0},
	{MULH, "neg*pos", neg(-1), 1, 0, ones},
	{MULH, "min*min", min64, min64, 0, 1 << 62},
	{MULH, "max*max", max64, max64, 0, 0x3fffffffffffffff},
	{MULHSU, "neg*unsigned", neg(-1), ones, 0, ones},
	{MULHSU, "pos*unsigned", 2, ones, 0, 1},
	{MULHSU, "min*max", min64, ones, 0, min64},
	{MULHU, "max*max", ones, ones, 0, ones - 1},
	{MULHU, "2^32*2^32", 1 << 32, 1 << 32, 0, 1},
	{DIV, "simple", 42, 6, 0, 7},
	{DIV, "truncates-toward-zero", neg(-7), 2, 0, neg(-3)},
	{DIV, "by-zero", 42, 0, 0, ones},
	{DIV, "by-zero-negative", neg(-42), 0, 0, ones},
	{DIV, "min/-1", min64, neg(-1), 0, min64},
	{DIVU, "simple", 42, 6, 0, 7},
	{DIVU, "by-zero", 42, 0, 0, ones},
	{DIVU, "unsigned", neg(-2), 2, 0, max64},
	{DIVU, "min/-1", min64, neg(-1), 0, 0},
	{REM, "simple", 43, 6, 0, 1},
	{REM, "sign-of-dividend", neg(-7), 2, 0, neg(-1)},
	{REM, "by-zero", 42, 0, 0, 42},
	{REM, "by-zero-negative", neg(-42), 0, 0, neg(-42)},
	{REM, "min%-1", min64, neg(-1), 0, 0},
	{REMU, "simple", 43, 6, 0, 1},
	{REMU, "by-zero", neg(-42), 0, 0, neg(-42)},
	{REMU, "unsigned", neg(-1), 10, 0, 5},
	{MULW, "sext", 0x10000, 0x8000, 0, min32},
	{MULW, "ignores-high", 0x1_00000003, 0x5_00000005, 0, 15},
	{MULW, "negative", neg(-3), 5, 0, neg(-15)},
	{DIVW, "simple", 42, 6, 0, 7},
	{DIVW, "ignores-high", 0x7_0000002a, 0x9_00000006, 0, 7},
	{DIVW, "by-zero", 42, 0, 0, ones},
	{DIVW, "by-zero-high-bits", 42, 0x1_00000000, 0, ones},
	{DIVW, "min/-1", 0x80000000, 0xffffffff, 0, min32},
	{DIVW, "negative", neg(-7), 2, 0, neg(-3)},
	{DIVUW, "simple", 42, 6, 0, 7},
	{DIVUW, "by-zero", 42, 0, 0, ones},
	{DIVUW, "unsigned-then-sext", 0xfffffffe, 1, 0, neg(-2)},
	{DIVUW, "min/-1", 0x80000000, 0xffffffff, 0, 0},
	{REMW, "simple", 43, 6, 0, 1},
	{REMW, "by-zero", 0x1_80000000, 0, 0, min32},
	{REMW, "min%-1", 0x80000000, 0xffffffff, 0, 0},
	{REMW, "sign-of-dividend", neg(-7), 2, 0, neg(-1)},
	{REMUW, "simple", 43, 6, 0, 1},
	{REMUW, "by-zero-sext", 0x1_80000000, 0, 0, min32},
	{REMUW, "unsigned", 0xffffffff, 10, 0, 5},

	// Zbb
	{ANDN, "bits", 0xff, 0x0f, 0, 0xf0},
	{ORN, "bits", 0xf0, ^uint64(0x0f), 0, 0xff},
	{XNOR, "bits", 0xff, 0x0f, 0, ^uint64(0xf0)},
	{CLZ, "zero", 0, 0, 0, 64},
	{CLZ, "one", 1, 0, 0, 63},
	{CLZ, "top", min64, 0, 0, 0},
	{CLZW, "zero", 0xffffffff00000000, 0, 0, 32},
	{CLZW, "one", 1, 0, 0, 31},
	{CLZW, "top", 0x80000000, 0, 0, 0},
	{CTZ, "zero", 0, 0, 0, 64},
	{CTZ, "top", min64, 0, 0, 63},
	{CTZ, "one", 1, 0, 0, 0},
	{CTZW, "zero", 0xffffffff00000000, 0, 0, 32},
	{CTZW, "bit31", 0x80000000, 0, 0, 31},
	{CPOP, "all", ones, 0, 0, 64},
	{CPOP, "zero", 0, 0, 0, 0},
	{CPOP, "mixed", 0xf0f0, 0, 0, 8},
	{CPOPW, "ignores-high", ones, 0, 0, 32},
	{CPOPW, "low", 0x1_00000007, 0, 0, 3},
	{MAX, "signed", neg(-1), 1, 0, 1},
	{MAX, "min-max", min64, max64, 0, max64},
	{MAXU, "unsigned", neg(-1), 1, 0, ones},
	{MIN, "signed", neg(-1), 1, 0, ones},
	{MIN, "min-max", min64, max64, 0, min64},
	{MINU, "unsigned", neg(-1), 1, 0, 1},
	{SEXT_B, "neg", 0x1234_5680, 0, 0, neg(-128)},
	{SEXT_B, "pos", 0xffff_ff7f, 0, 0, 0x7f},
	{SEXT_H, "neg", 0x1234_8000, 0, 0, neg(-32768)},
	{SEXT_H, "pos", 0xffff_7fff, 0, 0, 0x7fff},
	{ZEXT_H, "high-cleared", ones, 0, 0, 0xffff},
	{ZEXT_H, "low", 0x1234_5678, 0, 0, 0x5678},
	{ROL, "wrap", min64 | 1, 1, 0, 3},
	{ROL, "low6bits", 1, 64 + 4, 0, 16},
	{ROR, "wrap", 3, 1, 0, min64 | 1},
	{ROR, "low6bits", 16, 64 + 4, 0, 1},
	{RORI, "wrap", 1, 0, 1, min64},
	{RORI, "63", 1, 0, 63, 2},
	{ROLW, "wrap-sext", 0x40000000, 1, 0, min32},
	{ROLW, "low5bits", 0x80000000, 32 + 1, 0, 1},
	{ROLW, "ignores-high", 0xffff_ffff_0000_0001, 0, 0, 1},
	{RORW, "wrap-sext", 1, 1, 0, min32},
	{RORW, "low5bits", 2, 32 + 1, 0, 1},
	{RORIW, "wrap-sext", 1, 0, 1, min32},
	{RORIW, "31", 1, 0, 31, 2},
	{RORIW, "0-sext", 0x80000000, 0, 0, min32},
	{ORC_B, "bytes", 0x0001_0200_0000_8000, 0, 0, 0x00ff_ff00_0000_ff00},
	{ORC_B, "zero", 0, 0, 0, 0},
	{REV8, "bytes", 0x0102_0304_0506_0708, 0, 0, 0x0807_0605_0403_0201},
}

func TestALU(t *testing.T) {
	covered := map[Kind]bool{}
	for _, tc := range aluCases {
		covered[tc.k] = true
		t.Run(fmt.Sprintf("%v/%s", tc.k, tc.name), func(t *testing.T) {
			var in Inst
			switch tc.k.OperandForm() {
			case FormR:
				in = r3(tc.k, a0, a1, a2)
			case FormI:
				in = ri(tc.k, a0, a1, tc.imm)
			case FormUnary:
				in = Inst{Kind: tc.k, Rd: a0, Rs1: a1}
			default:
				t.Fatalf("format %v in the ALU table", tc.k.OperandForm())
			}
			_, res, err := runCode(t, code(in, ret), 0xdead, tc.a, tc.b)
			if err != nil {
				t.Fatal(err)
			}
			if res.A0 != tc.want {
				t.Errorf("%v(%#x, %#x, imm %d) = %#x, want %#x", tc.k, tc.a, tc.b, tc.imm, res.A0, tc.want)
			}
			// The same with rd = rs1 (a1 overwritten), which the interpreter must not confuse.
			switch tc.k.OperandForm() {
			case FormR:
				in = r3(tc.k, a1, a1, a2)
			case FormI:
				in = ri(tc.k, a1, a1, tc.imm)
			case FormUnary:
				in = Inst{Kind: tc.k, Rd: a1, Rs1: a1}
			}
			m, _, err := runCode(t, code(in, ret), 0, tc.a, tc.b)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Reg(a1); got != tc.want {
				t.Errorf("rd=rs1: got %#x, want %#x", got, tc.want)
			}
		})
	}
	// Every register-register, register-immediate and unary kind has a case.
	for _, k := range Kinds() {
		switch k.OperandForm() {
		case FormR, FormI, FormUnary:
			if !covered[k] {
				t.Errorf("no ALU case for %v", k)
			}
		}
	}
}

// Writes to x0 are discarded and x0 reads as zero, whatever the instruction.
func TestX0HardWired(t *testing.T) {
	for _, k := range Kinds() {
		var in Inst
		switch k.OperandForm() {
		case FormR:
			in = r3(k, zero, a1, a2)
		case FormI:
			in = ri(k, zero, a1, 1)
		case FormUnary:
			in = Inst{Kind: k, Rd: zero, Rs1: a1}
		case FormU:
			in = ri(k, zero, 0, 0x12345000)
		case FormLoad:
			in = ri(k, zero, sp, -8)
		default:
			continue
		}
		t.Run(k.String(), func(t *testing.T) {
			// k x0, ...; then a0 = x0 + x0
			m, res, err := runCode(t, code(in, r3(ADD, a0, zero, zero), ret), 5, 0x1234_5678_9abc_def1, 3)
			if err != nil {
				t.Fatal(err)
			}
			if res.A0 != 0 || m.Reg(0) != 0 {
				t.Errorf("x0 = %#x after %v", res.A0, in)
			}
		})
	}
}

func TestLUIAUIPC(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Inst
		want uint64
	}{
		{"lui/positive", ri(LUI, a0, 0, 0x12345000), 0x12345000},
		{"lui/sign-extends", ri(LUI, a0, 0, -0x80000000), min32},
		{"lui/all-ones", ri(LUI, a0, 0, -0x1000), neg(-0x1000)},
		{"auipc/zero", ri(AUIPC, a0, 0, 0), testBase},
		{"auipc/positive", ri(AUIPC, a0, 0, 0x1000), testBase + 0x1000},
		{"auipc/negative", ri(AUIPC, a0, 0, -0x10000), testBase - 0x10000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, res, err := runCode(t, code(tc.in, ret))
			if err != nil {
				t.Fatal(err)
			}
			if res.A0 != tc.want {
				t.Errorf("got %#x, want %#x", res.A0, tc.want)
			}
		})
	}
	// auipc at a later pc
	_, res, err := runCode(t, code(ri(ADDI, zero, zero, 0), ri(AUIPC, a0, 0, 0x2000), ret))
	if err != nil || res.A0 != testBase+4+0x2000 {
		t.Errorf("auipc at +4 = %#x, %v", res.A0, err)
	}
}

func TestBranches(t *testing.T) {
	type bc struct {
		a, b  uint64
		taken bool
	}
	cases := map[Kind][]bc{
		BEQ:  {{1, 1, true}, {1, 2, false}, {ones, ones, true}},
		BNE:  {{1, 1, false}, {1, 2, true}},
		BLT:  {{neg(-1), 0, true}, {0, neg(-1), false}, {5, 5, false}, {min64, max64, true}},
		BGE:  {{neg(-1), 0, false}, {0, neg(-1), true}, {5, 5, true}},
		BLTU: {{neg(-1), 0, false}, {0, neg(-1), true}, {5, 5, false}},
		BGEU: {{neg(-1), 0, true}, {0, neg(-1), false}, {5, 5, true}},
	}
	for _, k := range Kinds() {
		if !k.IsBranch() {
			continue
		}
		if len(cases[k]) == 0 {
			t.Errorf("no case for %v", k)
		}
		for _, c := range cases[k] {
			t.Run(fmt.Sprintf("%v/%#x,%#x", k, c.a, c.b), func(t *testing.T) {
				prog := code(
					br(k, a1, a2, 12),     // 0
					ri(ADDI, a0, zero, 0), // 4: not taken
					ret,                   // 8
					ri(ADDI, a0, zero, 1), // 12: taken
					ret,                   // 16
				)
				for _, prof := range Profiles() {
					m := newTestMachine(t, prof.Name, prog)
					res, err := m.Call("_start", 0, c.a, c.b)
					if err != nil {
						t.Fatal(err)
					}
					if (res.A0 == 1) != c.taken {
						t.Fatalf("taken = %v, want %v", res.A0 == 1, c.taken)
					}
					want := prof.Cost(ClassBranch, c.taken) + prof.Cost(ClassALU, false) + prof.Cost(ClassJALR, false)
					if res.Insns != 3 || res.Cycles != want {
						t.Errorf("%s: insns %d cycles %d, want 3 and %d", prof.Name, res.Insns, res.Cycles, want)
					}
				}
			})
		}
	}
	// A backward branch: count down a loop.
	_, res, err := runCode(t, code(
		ri(ADDI, a0, zero, 0), // 0
		ri(ADDI, a0, a0, 1),   // 4
		br(BLT, a0, a1, -4),   // 8
		ret,                   // 12
	), 0, 10)
	if err != nil || res.A0 != 10 || res.Insns != 1+2*10+1 {
		t.Errorf("loop: %+v, %v", res, err)
	}
}

func TestJumps(t *testing.T) {
	t.Run("jal/link-and-target", func(t *testing.T) {
		m, res, err := runCode(t, code(
			Inst{Kind: JAL, Rd: t0, Imm: 8}, // 0
			ri(ADDI, a0, zero, 7),           // 4: skipped
			r3(ADD, a0, t0, zero),           // 8
			ret,
		))
		if err != nil {
			t.Fatal(err)
		}
		if res.A0 != testBase+4 || m.Reg(t0) != testBase+4 {
			t.Errorf("a0 = %#x, want the link %#x", res.A0, testBase+4)
		}
	})
	t.Run("jalr/clears-bit0-and-links", func(t *testing.T) {
		_, res, err := runCode(t, code(
			ri(AUIPC, t1, 0, 0),   // 0: t1 = base
			ri(JALR, t0, t1, 13),  // 4: jump to base+12 (13 with bit 0 cleared)
			ri(ADDI, a0, zero, 1), // 8: skipped
			r3(ADD, a0, t0, zero), // 12
			ret,
		))
		if err != nil {
			t.Fatal(err)
		}
		if res.A0 != testBase+8 {
			t.Errorf("a0 = %#x, want link %#x", res.A0, testBase+8)
		}
	})
	t.Run("jalr/rd=rs1", func(t *testing.T) {
		_, res, err := runCode(t, code(
			ri(AUIPC, a0, 0, 0), // 0
			ri(JALR, a0, a0, 8), // 4: a0 = link 8 after reading a0 for the target
			ret,                 // 8
		))
		if err != nil || res.A0 != testBase+8 {
			t.Errorf("a0 = %#x, %v; want %#x", res.A0, err, testBase+8)
		}
	})
	t.Run("call-and-return", func(t *testing.T) {
		// a nested call: save ra, call a function at +24 with jal, restore ra.
		_, res, err := runCode(t, code(
			r3(ADD, s1, ra, zero),            // 0
			Inst{Kind: JAL, Rd: ra, Imm: 16}, // 4 -> 20
			ri(ADDI, a0, a0, 100),            // 8
			r3(ADD, ra, s1, zero),            // 12
			ret,                              // 16
			ri(ADDI, a0, a0, 1),              // 20
			ret,                              // 24
		), 5)
		if err != nil || res.A0 != 106 {
			t.Errorf("a0 = %d, %v; want 106", res.A0, err)
		}
	})
}

func TestLoadsStores(t *testing.T) {
	pattern := []byte{0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88}
	loads := []struct {
		k    Kind
		want uint64
	}{
		{LB, neg(-127)}, {LBU, 0x81}, {LH, 0xffffffffffff8281}, {LHU, 0x8281},
		{LW, 0xffffffff84838281}, {LWU, 0x84838281}, {LD, 0x8887868584838281},
	}
	for _, l := range loads {
		for _, off := range []int64{-8, 0, 8, 2040} {
			t.Run(fmt.Sprintf("%v/offset%d", l.k, off), func(t *testing.T) {
				m := newTestMachine(t, "", code(ri(l.k, a0, a1, off), ret))
				buf, err := m.Alloc(4096, 8)
				if err != nil {
					t.Fatal(err)
				}
				p := buf + 1024
				if err := m.WriteBytes(uint64(int64(p)+off), pattern); err != nil {
					t.Fatal(err)
				}
				res, err := m.Call("_start", 0, p)
				if err != nil {
					t.Fatal(err)
				}
				if res.A0 != l.want {
					t.Errorf("got %#x, want %#x", res.A0, l.want)
				}
			})
		}
	}
	stores := []struct {
		k Kind
		n int
	}{{SB, 1}, {SH, 2}, {SW, 4}, {SD, 8}}
	for _, s := range stores {
		for _, off := range []int64{-16, 0, 24} {
			t.Run(fmt.Sprintf("%v/offset%d", s.k, off), func(t *testing.T) {
				m := newTestMachine(t, "", code(st(s.k, a2, a1, off), ret))
				buf, _ := m.Alloc(256, 8)
				p := buf + 64
				fill := []byte{0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee}
				q := uint64(int64(p)+off) - 1
				m.WriteBytes(q, fill)
				if _, err := m.Call("_start", 0, p, 0x1122334455667788); err != nil {
					t.Fatal(err)
				}
				got := make([]byte, 10)
				m.ReadBytes(q, got)
				want := append([]byte{0xee}, []byte{0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}[:s.n]...)
				want = append(want, fill[:10-len(want)]...)
				if string(got) != string(want) {
					t.Errorf("memory = % x, want % x", got, want)
				}
			})
		}
	}
}

func TestFenceIsNop(t *testing.T) {
	for _, k := range []Kind{FENCE, FENCE_I} {
		_, res, err := runCode(t, code(Inst{Kind: k}, ri(ADDI, a0, a0, 1), ret), 41)
		if err != nil || res.A0 != 42 || res.Insns != 3 {
			t.Errorf("%v: %+v, %v", k, res, err)
		}
	}
}

func TestEcallEbreakTrap(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
		want error
	}{
		{"ecall", code(Inst{Kind: ECALL}, ret), trap.ErrEcall},
		{"ebreak", code(Inst{Kind: EBREAK}, ret), trap.ErrEbreak},
		{"c.ebreak", code(uint16(0x9002), uint16(0x8082)), trap.ErrEbreak},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runCode(t, tc.b)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			var tr *trap.Trap
			if !errors.As(err, &tr) || tr.PC != testBase || tr.Insn == 0 {
				t.Errorf("trap = %+v, want pc %#x and the instruction", tr, testBase)
			}
		})
	}
}

// TestCompressedExpansion checks each compressed form against its 32-bit expansion: the pairs
// in testdata/rvc_pairs.txt were assembled by riscv64-unknown-elf-as (see
// testdata/gen_rvc.sh), once with the c.* mnemonic and once with the base instruction under
// .option norvc. Both must decode to the same Kind, registers and immediate, and behave alike.
func TestCompressedExpansion(t *testing.T) {
	pairs := readRVCPairs(t)
	forms := map[string]int{}
	for _, p := range pairs {
		forms[p.form]++
		t.Run(fmt.Sprintf("%s/line:%d", p.form, p.line), func(t *testing.T) {
			c, err := Decode(uint32(p.c16), 0x1000)
			if err != nil {
				t.Fatalf("%s: decode %#04x: %v", p.asm, p.c16, err)
			}
			x, err := Decode(p.x32, 0x1000)
			if err != nil {
				t.Fatalf("%s: decode %#08x: %v", p.asm, p.x32, err)
			}
			if c.Size != 2 || x.Size != 4 || c.Raw != uint32(p.c16) {
				t.Errorf("sizes %d, %d; raw %#x", c.Size, x.Size, c.Raw)
			}
			c.Size, x.Size, c.Raw, x.Raw = 0, 0, 0, 0
			if c != x {
				t.Errorf("%s: compressed %#04x decodes to %+v, expansion %#08x to %+v", p.asm, p.c16, c, p.x32, x)
			}
		})
	}
	for _, f := range rvcForms {
		if forms[f] == 0 {
			t.Errorf("no pair for %s", f)
		}
	}
}

// rvcForms are all compressed instructions valid for RV64 without floating point.
var rvcForms = []string{
	"c.addi4spn", "c.lw", "c.ld", "c.sw", "c.sd", "c.nop", "c.addi", "c.addiw", "c.li",
	"c.addi16sp", "c.lui", "c.srli", "c.srai", "c.andi", "c.sub", "c.xor", "c.or", "c.and",
	"c.subw", "c.addw", "c.j", "c.beqz", "c.bnez", "c.slli", "c.lwsp", "c.ldsp", "c.jr",
	"c.mv", "c.ebreak", "c.jalr", "c.add", "c.swsp", "c.sdsp",
}

// Compressed instructions run like their expansion, including the link of c.jalr (pc+2).
func TestCompressedRun(t *testing.T) {
	// c.li a0, 5; c.addi a0, -1; c.slli a0, 4; c.mv a1, a0; c.add a0, a1; c.jr ra
	// = ((5-1)<<4)*2 = 128
	_, res, err := runCode(t, code(uint16(0x4515), uint16(0x157d), uint16(0x0512), uint16(0x85aa), uint16(0x952e), uint16(0x8082)))
	if err != nil || res.A0 != 128 || res.Insns != 6 {
		t.Errorf("got %+v, %v; want a0 = 128 in 6 instructions", res, err)
	}
	// c.jalr link is pc+2: auipc t0,0; addi t0,t0,10; c.jalr t0 (at 8) -> 10: c.mv a0, ra; restore; ret
	_, res, err = runCode(t, code(
		ri(AUIPC, t0, 0, 0),   // 0
		ri(ADDI, t0, t0, 14),  // 4
		r3(ADD, s1, ra, zero), // 8
		uint16(0x9282),        // 12: c.jalr t0 -> 14
		uint16(0x8506),        // 14: c.mv a0, ra
		r3(ADD, ra, s1, zero), // 16
		ret,                   // 20
	))
	if err != nil || res.A0 != testBase+14 {
		t.Errorf("c.jalr link = %#x, %v; want %#x", res.A0, err, testBase+14)
	}
}

func TestIllegalEncodings(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  uint32
	}{
		{"c/all-zero", 0x0000},
		{"c.addi4spn/imm0", 0x0004},
		{"c.fld", 0x2000 | 0x8},
		{"c.fsd", 0xa000 | 0x8},
		{"c/q0-reserved", 0x8000 | 0x8},
		{"c.addiw/rd0", 0x2001 | 1<<2},
		{"c.addi16sp/imm0", 0x6101},
		{"c.lui/imm0", 0x6501}, // c.lui a0, 0
		{"c.subw-reserved", 0x9c01 | 2<<5},
		{"c.addw-reserved", 0x9c01 | 3<<5},
		{"c.fldsp", 0x2002 | 10<<7},
		{"c.fsdsp", 0xa002},
		{"c.lwsp/rd0", 0x4002},
		{"c.ldsp/rd0", 0x6002},
		{"c.jr/rs1=0", 0x8002},
		{"48-bit", 0x0000001f},
		{"64-bit", 0x0000003f},
		{"slli/shamt-bit-6", enc(ri(SLLI, a0, a0, 1)) | 1<<26},
		{"srai/bad-funct6", enc(ri(SRAI, a0, a0, 1)) | 1<<27},
		{"slliw/shamt5", enc(ri(SLLIW, a0, a0, 1)) | 1<<25},
		{"srliw/shamt5", enc(ri(SRLIW, a0, a0, 1)) | 1<<25},
		{"sraiw/shamt5", enc(ri(SRAIW, a0, a0, 1)) | 1<<25},
		{"roriw/shamt5", enc(ri(RORIW, a0, a0, 1)) | 1<<25},
		{"load/funct3=7", 0x00007003},
		{"store/funct3=4", 0x00004023},
		{"branch/funct3=2", 0x00002063},
		{"jalr/funct3=1", 0x00001067},
		{"add/funct7=2", rtype(2, 1, 1, 0, 1, opOP)},
		{"addw/funct3=2", rtype(0, 1, 1, 2, 1, opOP32)},
		{"zext.h/rs2!=0", enc(Inst{Kind: ZEXT_H, Rd: a0, Rs1: a0}) | 1<<20},
		{"zext.h/rv32-encoding", rtype(4, 0, 10, 4, 10, opOP)},
		{"rev8/rv32-encoding", 0x69855513},
		{"clz/bad-imm", enc(Inst{Kind: CLZ, Rd: a0, Rs1: a0}) | 3<<20},
		{"csrrw", 0x34011073},
		{"csrr-cycle", 0xc0002573},
		{"mret", 0x30200073},
		{"wfi", 0x10500073},
		{"ecall/with-rd", 0x000000f3},
		{"amoadd.w", 0x00b5252f},
		{"lr.d", 0x1005352f},
		{"flw", 0x00052007},
		{"fadd.s", 0x00b57553},
		{"fence/funct3=2", 0x0000200f},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := tc.raw
			in, err := Decode(raw, 0x1234)
			if !errors.Is(err, trap.ErrIllegal) {
				t.Fatalf("Decode(%#x) = %v, %v; want ErrIllegal", raw, in, err)
			}
			var tr *trap.Trap
			if !errors.As(err, &tr) || tr.PC != 0x1234 {
				t.Errorf("trap %+v, want pc 0x1234", tr)
			}
			wantSize := uint8(4)
			if raw&3 != 3 {
				wantSize = 2
			}
			if in.Size != wantSize || in.Kind != Invalid {
				t.Errorf("illegal Inst = %+v, want Kind invalid and Size %d", in, wantSize)
			}
		})
	}
}

// Legal corner encodings: RVC HINTs decode to their (no-effect) expansion; shifts use the full
// RV64 shamt range.
func TestLegalCorners(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  uint32
		want Inst
	}{
		{"c.nop", 0x0001, ri(ADDI, 0, 0, 0)},
		{"c.nop-hint", 0x0005, ri(ADDI, 0, 0, 1)},
		{"c.addi-hint-imm0", 0x0501, ri(ADDI, a0, a0, 0)},
		{"c.li-hint-rd0", 0x4005, ri(ADDI, 0, 0, 1)},
		{"c.mv-hint-rd0", 0x802a, r3(ADD, 0, 0, a0)},
		{"c.add-hint-rd0", 0x902a, r3(ADD, 0, 0, a0)},
		{"c.slli-hint-rd0", 0x0006, ri(SLLI, 0, 0, 1)},
		{"c.slli-shamt32", 0x1502, ri(SLLI, a0, a0, 32)},
		{"c.srli-shamt63", 0x917d, ri(SRLI, a0, a0, 63)},
		{"c.srai-shamt0", 0x8501, ri(SRAI, a0, a0, 0)},
		{"c.lui-hint-rd0", 0x6005, ri(LUI, 0, 0, 0x1000)},
		{"c.lui-negative", 0x757d, ri(LUI, a0, 0, -0x1000)},
		{"srai-63", enc(ri(SRAI, a0, a0, 63)), ri(SRAI, a0, a0, 63)},
		{"fence-tso", 0x8330000f, Inst{Kind: FENCE}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := Decode(tc.raw, 0)
			if err != nil {
				t.Fatal(err)
			}
			in.Size, in.Raw = 0, 0
			if in != tc.want {
				t.Errorf("Decode(%#x) = %+v, want %+v", tc.raw, in, tc.want)
			}
		})
	}
}

// Every Kind round-trips through the test assembler and the decoder.
func TestEncodeDecodeAllKinds(t *testing.T) {
	for _, k := range Kinds() {
		var in Inst
		switch k.OperandForm() {
		case FormR:
			in = r3(k, 5, 6, 31)
		case FormI:
			in = ri(k, 7, 8, 3)
			if k == ADDI || k == SLTI || k == SLTIU || k == XORI || k == ORI || k == ANDI || k == ADDIW {
				in.Imm = -2048
			}
		case FormUnary:
			in = Inst{Kind: k, Rd: 9, Rs1: 10}
		case FormLoad, FormJALR:
			in = ri(k, 11, 12, 2047)
		case FormStore:
			in = st(k, 13, 14, -2048)
		case FormBranch:
			in = br(k, 15, 16, -4096)
		case FormU:
			in = ri(k, 17, 0, -0x80000000)
		case FormJ:
			in = Inst{Kind: k, Rd: 1, Imm: 0xffffe}
		case FormNone:
			in = Inst{Kind: k}
		}
		raw := enc(in)
		got, err := Decode(raw, 0x4000)
		if err != nil {
			t.Errorf("%v: Decode(%#08x): %v", k, raw, err)
			continue
		}
		want := in
		want.PC, want.Raw, want.Size = 0x4000, raw, 4
		if got != want {
			t.Errorf("%v: Decode(%#08x) = %+v, want %+v", k, raw, got, want)
		}
		if s := got.String(); !strings.HasPrefix(s, k.String()) {
			t.Errorf("%v: String() = %q", k, s)
		}
		if got.Class() != k.Class() {
			t.Errorf("%v: Inst.Class differs from Kind.Class", k)
		}
	}
}

type rvcPair struct {
	c16  uint16
	x32  uint32
	form string
	asm  string
	line int
}

func readRVCPairs(t *testing.T) []rvcPair {
	t.Helper()
	data, err := os.ReadFile("testdata/rvc_pairs.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []rvcPair
	for i, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var p rvcPair
		body, asm, _ := strings.Cut(line, "#")
		if _, err := fmt.Sscanf(body, "%x %x %s", &p.c16, &p.x32, &p.form); err != nil {
			t.Fatalf("rvc_pairs.txt:%d: %v", i+1, err)
		}
		p.asm, p.line = strings.TrimSpace(asm), i+1
		out = append(out, p)
	}
	return out
}
