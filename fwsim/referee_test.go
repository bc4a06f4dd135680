package fwsim_test

// qemu-riscv64 as the independent referee for fwsim: the same ELF runs under both, and the final
// registers and memory must agree byte for byte.
//
// TestQemuRefereeInstructions: random instruction streams covering every instruction fwsim
// implements, from a fixed seed (NICC_REFEREE_PROGRAMS and NICC_REFEREE_SEED change the count
// and the seed; `task fuzz` runs more).
//
// TestQemuRefereeC: C programs compiled at -O0, -O2 and -Os (testdata/referee/*.c).
//
// TestQemuCtzwBug: the one place qemu 7.2 is wrong (ctzw with a zero low word under a nonzero
// upper word); fwsim and qemu are both checked against the specification there.
//
// The instruction-stream generator:
//
// A program is straight-line code with short forward branches and jumps. It runs inside
// testdata/referee/isa_rt.S, which loads x1 and x3..x31 from the program's init block (edge-heavy
// random values), points sp at a 512-byte scratch area (also initialised from the block), and
// after the body stores all 31 registers and hands the 768-byte context back.
//
// The generator emits assembler text with every encoding pinned: uncompressed instructions
// under `.option norvc`, compressed ones by their explicit c.* mnemonic under `.option rvc`, so
// coverage never depends on the assembler's choice. It tracks sp's offset into the scratch
// area so every load and store has an in-range, naturally aligned address (fwsim traps on a
// misaligned access; qemu would not). Branch targets never split a multi-instruction item (a
// base-register setup and its load, an operand setup and its divide), and sp only moves when no
// branch is pending, so the tracked offset holds on every path.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nicc-dev/nicc/fwsim"
)

const (
	isaCtxSize     = 768 // x0..x31 then the scratch area
	isaScratchOff  = 256 // scratch area offset in the context
	isaScratchSize = 512
	isaInitWords   = isaCtxSize / 8
	isaSPMax       = 256 // sp moves within [scratch, scratch+isaSPMax] (multiples of 16)
)

var abiNames = [32]string{
	"zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2",
	"s0", "s1", "a0", "a1", "a2", "a3", "a4", "a5",
	"a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7",
	"s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6",
}

// isaProg is one generated program.
type isaProg struct {
	Lines []string             // the body as assembler text, labels included, without directives
	Init  [isaInitWords]uint64 // initial context: x0..x31 (x0 and sp slots 0), then scratch
}

// Listing is the program as numbered lines, for failure reports.
func (p *isaProg) Listing() string {
	var b strings.Builder
	for i, l := range p.Lines {
		fmt.Fprintf(&b, "  %3d  %s\n", i, l)
	}
	return b.String()
}

// isaMnemonics is every instruction form the generator emits: the uncompressed RV64IM + Zbb
// kinds (named as fwsim.Kind.String names them) and every RV64C integer form. ecall and
// ebreak (and c.ebreak) trap in fwsim and kill the process under qemu, so they are not in a
// stream; fwsim's own table tests cover them.
var isaMnemonics = []string{
	// RV64I
	"lui", "auipc", "jal", "jalr", "beq", "bne", "blt", "bge", "bltu", "bgeu",
	"lb", "lh", "lw", "ld", "lbu", "lhu", "lwu", "sb", "sh", "sw", "sd",
	"addi", "slti", "sltiu", "xori", "ori", "andi", "slli", "srli", "srai",
	"add", "sub", "sll", "slt", "sltu", "xor", "srl", "sra", "or", "and",
	"fence", "fence.i",
	"addiw", "slliw", "srliw", "sraiw", "addw", "subw", "sllw", "srlw", "sraw",
	// M
	"mul", "mulh", "mulhsu", "mulhu", "div", "divu", "rem", "remu",
	"mulw", "divw", "divuw", "remw", "remuw",
	// Zbb
	"andn", "orn", "xnor", "clz", "clzw", "ctz", "ctzw", "cpop", "cpopw",
	"max", "maxu", "min", "minu", "sext.b", "sext.h", "zext.h",
	"rol", "rolw", "ror", "rori", "roriw", "rorw", "orc.b", "rev8",
	// RV64C
	"c.addi4spn", "c.lw", "c.ld", "c.sw", "c.sd",
	"c.nop", "c.addi", "c.addiw", "c.li", "c.addi16sp", "c.lui",
	"c.srli", "c.srai", "c.andi", "c.sub", "c.xor", "c.or", "c.and", "c.subw", "c.addw",
	"c.j", "c.beqz", "c.bnez",
	"c.slli", "c.lwsp", "c.ldsp", "c.jr", "c.mv", "c.jalr", "c.add", "c.swsp", "c.sdsp",
}

var (
	rTypeOps = []string{
		"add", "sub", "sll", "slt", "sltu", "xor", "srl", "sra", "or", "and",
		"addw", "subw", "sllw", "srlw", "sraw",
		"mul", "mulh", "mulhsu", "mulhu", "mulw",
		"andn", "orn", "xnor", "max", "maxu", "min", "minu", "rol", "rolw", "ror", "rorw",
	}
	divOps   = []string{"div", "divu", "rem", "remu", "divw", "divuw", "remw", "remuw"}
	iTypeOps = []string{"addi", "slti", "sltiu", "xori", "ori", "andi", "addiw"}
	shift64  = []string{"slli", "srli", "srai", "rori"}
	shift32  = []string{"slliw", "srliw", "sraiw", "roriw"}
	unaryOps = []string{"clz", "clzw", "ctz", "ctzw", "cpop", "cpopw", "sext.b", "sext.h", "zext.h", "orc.b", "rev8"}
	loadOps  = map[string]int{"lb": 1, "lh": 2, "lw": 4, "ld": 8, "lbu": 1, "lhu": 2, "lwu": 4}
	storeOps = map[string]int{"sb": 1, "sh": 2, "sw": 4, "sd": 8}
	brOps    = []string{"beq", "bne", "blt", "bge", "bltu", "bgeu"}
)

// edge64 are register values that find bugs: zero, ones, sign boundaries at 8, 16, 32 and 64
// bits, shift-amount boundaries, alternating patterns.
var edge64 = []uint64{
	0, 1, 2, 3, 0xffffffffffffffff, 0xfffffffffffffffe,
	0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x10000,
	0x7fffffff, 0x80000000, 0xffffffff, 0x100000000,
	0xffffffff80000000, 0xffffffff7fffffff, 0xffffffff00000000, 0x00000000ffffffff,
	0x8000000000000000, 0x7fffffffffffffff, 0x8000000000000001, 0x8000000080000000,
	31, 32, 33, 63, 64, 65, 0xffffffffffffffc0, 0xffffffffffffffe0,
	0x5555555555555555, 0xaaaaaaaaaaaaaaaa, 0x0101010101010101, 0x8080808080808080,
	0x00ff00ff00ff00ff, 0xff00ff00ff00ff00, 0x0123456789abcdef, 0xfedcba9876543210,
}

// edge32 are the low words that matter to the W forms.
var edge32 = []uint32{0, 1, 0xffffffff, 0x80000000, 0x7fffffff, 0x80000001, 0xfffffffe, 31, 32, 63, 0x8000, 0xffff8000}

var imm12Edges = []int{0, 1, -1, 2047, -2048, 2046, -2047, 0x7f, 0x80, 0xff, 31, 32, 63}

type pendingLabel struct {
	name string
	left int // items still to emit before the label
}

// isaGen generates programs from one seeded source.
type isaGen struct {
	r    *rand.Rand
	Seen map[string]int // mnemonic -> times emitted

	// per program
	idx     int
	lines   []string
	spOff   int // sp - scratch base
	pending []pendingLabel
	nlabel  int
	tmps    []string
}

func newISAGen(seed uint64) *isaGen {
	return &isaGen{r: rand.New(rand.NewPCG(seed, 0x6e696363)), Seen: map[string]int{}}
}

// value is an edge-heavy random 64-bit value.
func (g *isaGen) value() uint64 {
	switch g.r.IntN(8) {
	case 0, 1, 2:
		return edge64[g.r.IntN(len(edge64))]
	case 3: // an edge low word under random upper bits
		return g.r.Uint64()&^0xffffffff | uint64(edge32[g.r.IntN(len(edge32))])
	case 4: // small signed
		return uint64(int64(g.r.IntN(257) - 128))
	case 5: // sign-extended random word
		return uint64(int64(int32(g.r.Uint32())))
	case 6: // edge plus or minus a little
		return edge64[g.r.IntN(len(edge64))] + uint64(int64(g.r.IntN(5)-2))
	}
	return g.r.Uint64()
}

func (g *isaGen) imm12() int {
	if g.r.IntN(2) == 0 {
		return imm12Edges[g.r.IntN(len(imm12Edges))]
	}
	return g.r.IntN(4096) - 2048
}

// anyReg is any of x0..x31 as a source.
func (g *isaGen) anyReg() string { return abiNames[g.r.IntN(32)] }

// dstReg is a destination: never sp, rarely x0.
func (g *isaGen) dstReg() string {
	if g.r.IntN(40) == 0 {
		return "zero"
	}
	for {
		r := 1 + g.r.IntN(31)
		if r != 2 {
			return abiNames[r]
		}
	}
}

// tmpReg is a destination other than x0, sp and the names in avoid.
func (g *isaGen) tmpReg(avoid ...string) string {
	for {
		r := abiNames[1+g.r.IntN(31)]
		if r == "sp" {
			continue
		}
		ok := true
		for _, a := range avoid {
			ok = ok && a != r
		}
		if ok {
			return r
		}
	}
}

// cReg is one of x8..x15, the registers of the three-bit compressed fields.
func (g *isaGen) cReg() string { return abiNames[8+g.r.IntN(8)] }

func (g *isaGen) seen(m string) { g.Seen[m]++ }

// item emits one unit a branch may skip as a whole, then places the labels it completes.
func (g *isaGen) item(lines ...string) {
	g.lines = append(g.lines, lines...)
	keep := g.pending[:0]
	for _, p := range g.pending {
		p.left--
		if p.left <= 0 {
			g.lines = append(g.lines, p.name+":")
		} else {
			keep = append(keep, p)
		}
	}
	g.pending = keep
}

// label is a fresh local label.
func (g *isaGen) label() string {
	g.nlabel++
	return fmt.Sprintf(".Lp%d_%d", g.idx, g.nlabel)
}

// forward emits a control-transfer item whose target is placed after 1..maxSkip more items.
func (g *isaGen) forward(maxSkip int, build func(target string) []string) {
	t := g.label()
	g.item(build(t)...)
	g.pending = append(g.pending, pendingLabel{name: t, left: 1 + g.r.IntN(maxSkip)})
}

// setReg returns a `li` setting r to v (the assembler expands it with uncompressed
// instructions under norvc).
func setReg(r string, v uint64) string { return fmt.Sprintf("li %s, 0x%x", r, v) }

// program generates program idx with about n items.
func (g *isaGen) program(idx, n int) *isaProg {
	g.idx, g.lines, g.spOff, g.pending, g.nlabel = idx, nil, 0, nil, 0
	p := &isaProg{}
	for r := 1; r < 32; r++ {
		if r != 2 {
			p.Init[r] = g.value()
		}
	}
	for i := 32; i < isaInitWords; i++ {
		p.Init[i] = g.value()
	}
	g.lines = append(g.lines, "ld t6, -8(sp)") // t6 carried the body address; reload its init value
	for i := 0; i < n; i++ {
		g.one()
	}
	for len(g.pending) > 0 {
		g.item("addi zero, zero, 0") // plain nop: a landing pad for the last labels
	}
	if g.spOff != 0 {
		g.lines = append(g.lines, fmt.Sprintf("addi sp, sp, %d", -g.spOff))
	}
	g.lines = append(g.lines, "j isa_exit")
	p.Lines = g.lines
	return p
}

// one emits one random item.
func (g *isaGen) one() {
	m := isaMnemonics[g.r.IntN(len(isaMnemonics))]
	switch {
	case m == "c.addi16sp" && len(g.pending) > 0:
		m = "c.nop" // sp only moves where every path agrees on it
	}
	g.seen(m)
	rd := g.dstReg()
	switch {
	case contains(rTypeOps, m):
		rs1, rs2 := g.anyReg(), g.anyReg()
		var pre []string
		if g.r.IntN(4) == 0 { // force edge operands
			rs1, rs2 = g.tmpReg(), ""
			rs2 = g.tmpReg(rs1)
			pre = []string{setReg(rs1, g.value()), setReg(rs2, g.value())}
		}
		g.item(append(pre, fmt.Sprintf("%s %s, %s, %s", m, rd, rs1, rs2))...)
	case contains(divOps, m):
		rs1, rs2 := g.anyReg(), g.anyReg()
		var pre []string
		w := strings.HasSuffix(m, "w")
		switch g.r.IntN(6) {
		case 0: // divide by zero
			rs2 = "zero"
		case 1: // a zero divisor from a register, garbage above bit 31 for the W forms
			rs1, rs2 = g.anyReg(), g.tmpReg()
			v := uint64(0)
			if w {
				v = g.r.Uint64() << 32
			}
			pre = []string{setReg(rs2, v)}
		case 2: // MIN / -1, the overflow case
			rs1 = g.tmpReg()
			rs2 = g.tmpReg(rs1)
			lo, neg1 := uint64(1)<<63, ^uint64(0)
			if w {
				lo = g.r.Uint64()<<32 | 0x80000000
				neg1 = g.r.Uint64()<<32 | 0xffffffff
			}
			pre = []string{setReg(rs1, lo), setReg(rs2, neg1)}
		case 3: // edge operands
			rs1 = g.tmpReg()
			rs2 = g.tmpReg(rs1)
			pre = []string{setReg(rs1, g.value()), setReg(rs2, g.value())}
		}
		g.item(append(pre, fmt.Sprintf("%s %s, %s, %s", m, rd, rs1, rs2))...)
	case contains(iTypeOps, m):
		g.item(fmt.Sprintf("%s %s, %s, %d", m, rd, g.anyReg(), g.imm12()))
	case contains(shift64, m):
		g.item(fmt.Sprintf("%s %s, %s, %d", m, rd, g.anyReg(), g.shamt(64)))
	case contains(shift32, m):
		g.item(fmt.Sprintf("%s %s, %s, %d", m, rd, g.anyReg(), g.shamt(32)))
	case m == "ctzw":
		// qemu 7.2 gets ctzw wrong when the low word is zero and the upper word is not: it
		// counts all 64 bits (ctzw 0x8000000000000000 gives 63, the spec says 32). The
		// operand is set here to a value outside that case; TestQemuCtzwBug pins it down.
		rs := g.tmpReg()
		v := g.value()
		if uint32(v) == 0 && v != 0 {
			v |= 1 << g.r.IntN(32)
		}
		g.item(setReg(rs, v), fmt.Sprintf("ctzw %s, %s", rd, rs))
	case contains(unaryOps, m):
		rs := g.anyReg()
		var pre []string
		if g.r.IntN(4) == 0 {
			rs = g.tmpReg()
			pre = []string{setReg(rs, g.value())}
		}
		g.item(append(pre, fmt.Sprintf("%s %s, %s", m, rd, rs))...)
	case m == "lui" || m == "auipc":
		g.item(fmt.Sprintf("%s %s, 0x%x", m, rd, g.imm20()))
	case loadOps[m] > 0:
		g.item(g.memAccess(m, rd, loadOps[m])...)
	case storeOps[m] > 0:
		g.item(g.memAccess(m, g.anyReg(), storeOps[m])...)
	case contains(brOps, m):
		rs1, rs2 := g.anyReg(), g.anyReg()
		if g.r.IntN(8) == 0 {
			rs2 = rs1
		}
		g.forward(3, func(t string) []string { return []string{fmt.Sprintf("%s %s, %s, %s", m, rs1, rs2, t)} })
	case m == "jal":
		g.forward(3, func(t string) []string { return []string{fmt.Sprintf("jal %s, %s", rd, t)} })
	case m == "jalr":
		// rt = the target (+1 sometimes: jalr clears bit 0), via auipc/%pcrel; rd may be rt.
		rt := g.tmpReg()
		if g.r.IntN(4) == 0 {
			rd = rt
		}
		odd := g.r.IntN(3) == 0
		g.forward(3, func(t string) []string {
			a := g.label()
			if odd {
				t += "+1"
			}
			return []string{fmt.Sprintf("%s: auipc %s, %%pcrel_hi(%s)", a, rt, t), fmt.Sprintf("jalr %s, %%pcrel_lo(%s)(%s)", rd, a, rt)}
		})
	case m == "fence":
		g.item([]string{"fence", "fence rw, rw", "fence r, r", "fence w, w", "fence iorw, iorw", "fence i, o"}[g.r.IntN(6)])
	case m == "fence.i":
		g.item(".insn 0x0000100f # fence.i")

	// RV64C
	case m == "c.addi4spn":
		g.item(fmt.Sprintf("c.addi4spn %s, sp, %d", g.cReg(), 4*(1+g.r.IntN(255))))
	case m == "c.lw" || m == "c.ld" || m == "c.sw" || m == "c.sd":
		g.item(g.cMemAccess(m)...)
	case m == "c.nop":
		g.item("c.nop")
	case m == "c.addi":
		g.item(fmt.Sprintf("c.addi %s, %d", g.tmpReg(), g.nzImm6()))
	case m == "c.addiw":
		g.item(fmt.Sprintf("c.addiw %s, %d", g.tmpReg(), g.r.IntN(64)-32))
	case m == "c.li":
		g.item(fmt.Sprintf("c.li %s, %d", g.tmpReg(), g.r.IntN(64)-32))
	case m == "c.addi16sp":
		to := g.spOff
		for to == g.spOff {
			to = 16 * g.r.IntN(isaSPMax/16+1)
		}
		g.item(fmt.Sprintf("c.addi16sp sp, %d", to-g.spOff))
		g.spOff = to
	case m == "c.lui":
		v := g.nzImm6()
		g.item(fmt.Sprintf("c.lui %s, 0x%x", g.tmpReg(), uint32(v)&0xfffff))
	case m == "c.srli" || m == "c.srai":
		g.item(fmt.Sprintf("%s %s, %d", m, g.cReg(), 1+g.r.IntN(63)))
	case m == "c.andi":
		g.item(fmt.Sprintf("c.andi %s, %d", g.cReg(), g.r.IntN(64)-32))
	case m == "c.sub" || m == "c.xor" || m == "c.or" || m == "c.and" || m == "c.subw" || m == "c.addw":
		g.item(fmt.Sprintf("%s %s, %s", m, g.cReg(), g.cReg()))
	case m == "c.j":
		g.forward(3, func(t string) []string { return []string{"c.j " + t} })
	case m == "c.beqz" || m == "c.bnez":
		rs := g.cReg()
		g.forward(2, func(t string) []string { return []string{fmt.Sprintf("%s %s, %s", m, rs, t)} })
	case m == "c.slli":
		g.item(fmt.Sprintf("c.slli %s, %d", g.tmpReg(), 1+g.r.IntN(63)))
	case m == "c.lwsp" || m == "c.ldsp":
		w := 4
		if m == "c.ldsp" {
			w = 8
		}
		g.item(fmt.Sprintf("%s %s, %d(sp)", m, g.tmpReg(), g.spOffset(w)))
	case m == "c.swsp" || m == "c.sdsp":
		w := 4
		if m == "c.sdsp" {
			w = 8
		}
		g.item(fmt.Sprintf("%s %s, %d(sp)", m, g.anyReg(), g.spOffset(w)))
	case m == "c.jr" || m == "c.jalr":
		rt := g.tmpReg()
		odd := g.r.IntN(3) == 0
		g.forward(3, func(t string) []string {
			a := g.label()
			if odd {
				t += "+1"
			}
			return []string{
				fmt.Sprintf("%s: auipc %s, %%pcrel_hi(%s)", a, rt, t),
				fmt.Sprintf("addi %s, %s, %%pcrel_lo(%s)", rt, rt, a),
				fmt.Sprintf("%s %s", m, rt),
			}
		})
	case m == "c.mv" || m == "c.add":
		rs := g.anyReg()
		for rs == "zero" {
			rs = g.anyReg()
		}
		g.item(fmt.Sprintf("%s %s, %s", m, g.tmpReg(), rs))
	default:
		panic("isagen: no generator for " + m)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// shamt is a shift amount below n, edge-heavy.
func (g *isaGen) shamt(n int) int {
	if g.r.IntN(3) == 0 {
		return []int{0, 1, n - 1, n / 2, n/2 - 1}[g.r.IntN(5)]
	}
	return g.r.IntN(n)
}

func (g *isaGen) imm20() uint32 {
	if g.r.IntN(3) == 0 {
		return []uint32{0, 1, 0x7ffff, 0x80000, 0xfffff, 0x80001}[g.r.IntN(6)]
	}
	return g.r.Uint32() & 0xfffff
}

func (g *isaGen) nzImm6() int {
	for {
		if v := g.r.IntN(64) - 32; v != 0 {
			return v
		}
	}
}

// scratchAddr is a random offset into the scratch area aligned to w, with w bytes in range.
func (g *isaGen) scratchAddr(w int) int { return w * g.r.IntN(isaScratchSize/w) }

// memAccess is a load or store of width w at an aligned scratch address: either sp-relative,
// or through a base register set from sp just before (any register, any alignment, so the
// offset carries the difference).
func (g *isaGen) memAccess(m, reg string, w int) []string {
	a := g.scratchAddr(w) - g.spOff // address relative to sp
	if g.r.IntN(4) == 0 {
		return []string{fmt.Sprintf("%s %s, %d(sp)", m, reg, a)}
	}
	rb := g.tmpReg()
	k := g.r.IntN(2048) - 1024
	return []string{
		fmt.Sprintf("addi %s, sp, %d", rb, k),
		fmt.Sprintf("%s %s, %d(%s)", m, reg, a-k, rb),
	}
}

// cMemAccess is c.lw/c.ld/c.sw/c.sd: base in x8..x15 set from sp (c.addi4spn when it
// reaches), offset a multiple of the width in [0, 31*w].
func (g *isaGen) cMemAccess(m string) []string {
	w := 4
	if m == "c.ld" || m == "c.sd" {
		w = 8
	}
	rb, reg := g.cReg(), g.cReg()
	a := g.scratchAddr(w) - g.spOff
	off := w * g.r.IntN(32)
	k := a - off
	set := fmt.Sprintf("addi %s, sp, %d", rb, k)
	if k >= 4 && k <= 1020 && k%4 == 0 && g.r.IntN(2) == 0 {
		set = fmt.Sprintf("c.addi4spn %s, sp, %d", rb, k)
		g.seen("c.addi4spn")
	}
	return []string{set, fmt.Sprintf("%s %s, %d(%s)", m, reg, off, rb)}
}

// spOffset is an offset for c.lwsp/c.ldsp/c.swsp/c.sdsp: a multiple of w, at most 63*w, with
// sp+off inside the scratch area.
func (g *isaGen) spOffset(w int) int {
	max := (isaScratchSize - w - g.spOff) / w
	if max > 63 {
		max = 63
	}
	return w * g.r.IntN(max+1)
}

// isaSource is the assembly file (a .s: no C preprocessor) for programs, numbered from first:
// the bodies in .text and, in .rodata, the table isa_progs (body, init) that isa_rt.S's
// run_case indexes. The init blocks are the bytes of the file inits (isaInits), included
// whole in .data: data, not code, they stay out of the executable segment that fwsim decodes,
// and out of the text the assembler parses.
func isaSource(first int, progs []*isaProg, inits string) string {
	var b strings.Builder
	b.WriteString("# Generated by fwsim's referee test (referee_test.go). Do not edit.\n")
	b.WriteString("\t.option norvc\n\t.option norelax\n\t.text\n")
	for i, p := range progs {
		fmt.Fprintf(&b, "isa_body_%d: # program %d\n", i, first+i)
		for _, l := range p.Lines {
			switch {
			case strings.HasSuffix(l, ":"):
				fmt.Fprintf(&b, "%s\n", l)
			case strings.HasPrefix(l, "c."):
				fmt.Fprintf(&b, "\t.option rvc\n\t%s\n\t.option norvc\n", l)
			default:
				fmt.Fprintf(&b, "\t%s\n", l)
			}
		}
	}
	b.WriteString("\t.globl isa_bodies, isa_bodies_end\n\t.set isa_bodies, isa_body_0\nisa_bodies_end:\n")
	b.WriteString("\t.section .rodata\n\t.balign 8\n\t.globl isa_progs\nisa_progs:\n")
	for i := range progs {
		fmt.Fprintf(&b, "\t.dword isa_body_%d, isa_inits + %d\n", i, i*isaCtxSize)
	}
	fmt.Fprintf(&b, "\t.data\n\t.balign 8\nisa_inits:\n\t.incbin %q\n", inits)
	return b.String()
}

// isaInits is the programs' init blocks, one after another, as little-endian words.
func isaInits(progs []*isaProg) []byte {
	out := make([]byte, 0, len(progs)*isaCtxSize)
	for _, p := range progs {
		for _, w := range p.Init {
			out = binary.LittleEndian.AppendUint64(out, w)
		}
	}
	return out
}

// compressedForm names the RV64C instruction with encoding raw (16 bits), from its
// quadrant and funct bits alone, independently of fwsim's decoder; "" if it is none of the
// integer forms.
func compressedForm(raw uint32) string {
	f3 := raw >> 13 & 7
	rd := raw >> 7 & 31
	rs2 := raw >> 2 & 31
	b12 := raw >> 12 & 1
	switch raw & 3 {
	case 0:
		return map[uint32]string{0: "c.addi4spn", 2: "c.lw", 3: "c.ld", 6: "c.sw", 7: "c.sd"}[f3]
	case 1:
		switch f3 {
		case 0:
			if rd == 0 {
				return "c.nop"
			}
			return "c.addi"
		case 1:
			return "c.addiw"
		case 2:
			return "c.li"
		case 3:
			if rd == 2 {
				return "c.addi16sp"
			}
			return "c.lui"
		case 4:
			switch raw >> 10 & 3 {
			case 0:
				return "c.srli"
			case 1:
				return "c.srai"
			case 2:
				return "c.andi"
			}
			op := raw >> 5 & 3
			if b12 == 0 {
				return [4]string{"c.sub", "c.xor", "c.or", "c.and"}[op]
			}
			return [4]string{"c.subw", "c.addw", "", ""}[op]
		case 5:
			return "c.j"
		case 6:
			return "c.beqz"
		case 7:
			return "c.bnez"
		}
	case 2:
		switch f3 {
		case 0:
			return "c.slli"
		case 2:
			return "c.lwsp"
		case 3:
			return "c.ldsp"
		case 4:
			switch {
			case b12 == 0 && rs2 == 0:
				return "c.jr"
			case b12 == 0:
				return "c.mv"
			case rs2 == 0 && rd == 0:
				return "c.ebreak"
			case rs2 == 0:
				return "c.jalr"
			}
			return "c.add"
		case 6:
			return "c.swsp"
		case 7:
			return "c.sdsp"
		}
	}
	return ""
}

// countForms decodes the program bodies of an ISA referee ELF (isa_bodies to
// isa_bodies_end) and adds the number of each instruction form found to counts: the base
// mnemonic for 32-bit encodings, the c.* name for 16-bit ones. This is the coverage of the
// bytes fwsim runs, whatever the generator meant to emit.
func countForms(im *fwsim.Image, counts map[string]int) error {
	lo, _, ok1 := im.Symbol("isa_bodies")
	hi, _, ok2 := im.Symbol("isa_bodies_end")
	if !ok1 || !ok2 || hi < lo {
		return fmt.Errorf("ELF lacks isa_bodies/isa_bodies_end")
	}
	insts, err := im.Disassemble(lo, hi-lo)
	if err != nil {
		return fmt.Errorf("decoding the program bodies: %v", err)
	}
	for _, in := range insts {
		if in.Size == 2 {
			counts[compressedForm(in.Raw)]++
		} else {
			counts[in.Kind.String()]++
		}
	}
	return nil
}

// missingMnemonics lists the isaMnemonics the generator has not emitted yet.
func (g *isaGen) missingMnemonics() []string {
	var miss []string
	for _, m := range isaMnemonics {
		if g.Seen[m] == 0 {
			miss = append(miss, m)
		}
	}
	sort.Strings(miss)
	return miss
}

// isaBatch is the number of programs per ELF: qemu starts once per batch.
const isaBatch = 1000

// envUint reads a positive integer setting from the environment, or returns def.
func envUint(t *testing.T, name string, def uint64) uint64 {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseUint(v, 0, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

// TestQemuRefereeInstructions runs NICC_REFEREE_PROGRAMS (default 20,000) random programs
// from seed NICC_REFEREE_SEED (default 1) under qemu-riscv64 and fwsim and requires the
// final registers and scratch memory to agree for every one.
func TestQemuRefereeInstructions(t *testing.T) {
	t.Parallel()
	requireCC(t)
	requireTool(t, qemuRV)
	n := int(envUint(t, "NICC_REFEREE_PROGRAMS", 20000))
	seed := envUint(t, "NICC_REFEREE_SEED", 1)
	if n < 1 {
		t.Fatal("NICC_REFEREE_PROGRAMS must be at least 1")
	}

	g := newISAGen(seed)
	progs := make([]*isaProg, n)
	for i := range progs {
		progs[i] = g.program(i, 12+g.r.IntN(40))
	}
	// Coverage is checked on the decoded ELFs below. The generator's own tally is only a
	// cross-check for small runs.
	if miss := g.missingMnemonics(); len(miss) > 0 && n >= 1000 {
		t.Errorf("instruction forms never generated in %d programs: %v", n, miss)
	}

	dir := t.TempDir()
	nb := (n + isaBatch - 1) / isaBatch
	type outcome struct {
		err        error
		mismatches int
		reports    []string
		insns      uint64
		forms      map[string]int
	}
	results := make([]outcome, nb)
	start := time.Now()
	parallel(nb, runtime.GOMAXPROCS(0), func(b int) {
		lo, hi := b*isaBatch, min(n, (b+1)*isaBatch)
		res := &results[b]
		src := filepath.Join(dir, fmt.Sprintf("isa%d.s", b))
		elfPath := filepath.Join(dir, fmt.Sprintf("isa%d.elf", b))
		inits := filepath.Join(dir, fmt.Sprintf("isa%d.init", b))
		if res.err = os.WriteFile(inits, isaInits(progs[lo:hi]), 0o644); res.err != nil {
			return
		}
		if res.err = os.WriteFile(src, []byte(isaSource(lo, progs[lo:hi], inits)), 0o644); res.err != nil {
			return
		}
		elf, err := compileELF(build{
			Out: elfPath, Opt: "-O2",
			Defines: []string{fmt.Sprintf("NCASES=%d", hi-lo), fmt.Sprintf("CASE_SIZE=%d", isaCtxSize)},
			Srcs:    []string{"start.S", "isa_rt.S", src},
		})
		if err != nil {
			res.err = err
			return
		}
		want, _, err := qemuExec(time.Minute, elfPath)
		if err != nil {
			res.err = err
			return
		}
		if len(want) != (hi-lo)*isaCtxSize {
			res.err = fmt.Errorf("%s: qemu wrote %d bytes, want %d", elfPath, len(want), (hi-lo)*isaCtxSize)
			return
		}
		m, out, err := newRefereeMachine(elf, isaCtxSize)
		if err != nil {
			res.err = fmt.Errorf("%s: %v", elfPath, err)
			return
		}
		res.forms = map[string]int{}
		if err := countForms(m.Image(), res.forms); err != nil {
			res.err = fmt.Errorf("%s: %v", elfPath, err)
			return
		}
		got := make([]byte, isaCtxSize)
		for i := lo; i < hi; i++ {
			q := want[(i-lo)*isaCtxSize : (i-lo+1)*isaCtxSize]
			r, err := m.Call("run_case", uint64(i-lo), out)
			res.insns += r.Insns
			if err == nil {
				err = m.ReadBytes(out, got)
			}
			if err == nil && r.A0 != out {
				err = fmt.Errorf("run_case returned 0x%x, want the buffer 0x%x", r.A0, out)
			}
			if err == nil && bytes.Equal(got, q) {
				continue
			}
			res.mismatches++
			if len(res.reports) < 5 {
				res.reports = append(res.reports, isaMismatch(i, seed, progs[i], got, q, err))
			}
			if err != nil { // a trap may leave the machine mid-program: start afresh
				if m, out, err = newRefereeMachine(elf, isaCtxSize); err != nil {
					res.err = err
					return
				}
			}
		}
	})
	mismatches, shown := 0, 0
	var insns uint64
	forms := map[string]int{}
	for b, r := range results {
		if r.err != nil {
			t.Fatalf("batch %d: %v", b, r.err)
		}
		mismatches += r.mismatches
		insns += r.insns
		for f, c := range r.forms {
			forms[f] += c
		}
		for _, rep := range r.reports {
			if shown < 10 {
				t.Error(rep)
				shown++
			}
		}
	}
	if mismatches > 0 {
		t.Errorf("%d of %d programs disagree with qemu (seed %d)", mismatches, n, seed)
	}

	// Every form the generator knows, and every kind fwsim decodes but the two that trap,
	// must be in the bytes that ran. Small runs (NICC_REFEREE_PROGRAMS < 1000) only log.
	report := t.Errorf
	if n < 1000 {
		report = t.Logf
	}
	for _, k := range fwsim.Kinds() {
		if k != fwsim.ECALL && k != fwsim.EBREAK && !contains(isaMnemonics, k.String()) {
			t.Errorf("fwsim implements %v but the generator has no form for it", k)
		}
	}
	rarest, rare := "", 0
	for _, f := range isaMnemonics {
		switch c := forms[f]; {
		case c == 0:
			report("%s never occurs in the %d programs' code", f, n)
		case rarest == "" || c < rare:
			rarest, rare = f, c
		}
	}
	for f := range forms {
		if !contains(isaMnemonics, f) {
			t.Errorf("the programs' code holds %d of %q, which the generator does not emit", forms[f], f)
		}
	}
	t.Logf("qemu referee: %d random programs (seed %d, %d ELFs), %d mismatches; %d instruction forms in the code, the rarest (%s) %d times; fwsim ran %d instructions; %v",
		n, seed, nb, mismatches, len(forms), rarest, rare, insns, time.Since(start).Round(time.Millisecond))
}

// newRefereeMachine loads elf into a fresh fwsim machine with the default profile and
// allocates a case buffer of size bytes.
func newRefereeMachine(elf []byte, size uint64) (*fwsim.Machine, uint64, error) {
	im, err := fwsim.LoadELF(elf)
	if err != nil {
		return nil, 0, err
	}
	p, err := fwsim.LookupProfile(fwsim.DefaultProfile)
	if err != nil {
		return nil, 0, err
	}
	m, err := fwsim.NewMachine(im, p)
	if err != nil {
		return nil, 0, err
	}
	out, err := m.Alloc(size, 16)
	if err != nil {
		return nil, 0, err
	}
	return m, out, nil
}

// isaMismatch describes how program i's final context from fwsim (got) differs from qemu's
// (want), or the error fwsim stopped with, followed by the program listing.
func isaMismatch(i int, seed uint64, p *isaProg, got, want []byte, err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "program %d (seed %d) disagrees with qemu:\n", i, seed)
	if err != nil {
		fmt.Fprintf(&b, "  fwsim: %v\n", err)
	} else {
		le := binary.LittleEndian
		for r := 0; r < 32; r++ {
			g, w := le.Uint64(got[8*r:]), le.Uint64(want[8*r:])
			if g != w {
				fmt.Fprintf(&b, "  x%-2d %-4s fwsim 0x%016x  qemu 0x%016x  (initial 0x%016x)\n", r, abiNames[r], g, w, p.Init[r])
			}
		}
		for off := isaScratchOff; off < isaCtxSize; off += 8 {
			g, w := le.Uint64(got[off:]), le.Uint64(want[off:])
			if g != w {
				fmt.Fprintf(&b, "  scratch+%-3d fwsim 0x%016x  qemu 0x%016x  (initial 0x%016x)\n", off-isaScratchOff, g, w, p.Init[off/8])
			}
		}
	}
	b.WriteString("  program (sp = scratch base on entry; t6 reloaded first):\n")
	b.WriteString(p.Listing())
	return b.String()
}

// cProgram is one compiled-C referee program: sources (besides start.S and rt.c) that define
// run_case, its number of cases and its result buffer size.
type cProgram struct {
	name     string
	srcs     []string
	ncases   int
	caseSize int
}

// refereeOpts are the optimisation levels every C program is compiled at.
var refereeOpts = []string{"-O0", "-O2", "-Os"}

// TestQemuRefereeC compiles each C referee program at -O0, -O2 and -Os, runs every case under
// qemu-riscv64 and fwsim, and requires the result buffers to agree byte for byte.
func TestQemuRefereeC(t *testing.T) {
	t.Parallel()
	requireCC(t)
	requireTool(t, qemuRV)
	dir := t.TempDir()
	progs := []cProgram{
		{name: "arith", srcs: []string{"arith.c"}, ncases: 32 * 32, caseSize: 768},
		{name: "fixed", srcs: []string{"fixed.c"}, ncases: 2000, caseSize: 512},
		{name: "decision", srcs: []string{"decision_case.c", "decision.c"}, ncases: 1000, caseSize: 128},
	}
	type job struct {
		p   cProgram
		opt string
	}
	var jobs []job
	for _, p := range progs {
		for _, o := range refereeOpts {
			jobs = append(jobs, job{p, o})
		}
	}
	type outcome struct {
		err        error
		mismatches int
		reports    []string
		insns      uint64
	}
	results := make([]outcome, len(jobs))
	parallel(len(jobs), runtime.GOMAXPROCS(0), func(j int) {
		p, opt, res := jobs[j].p, jobs[j].opt, &results[j]
		name := p.name + opt
		elfPath := filepath.Join(dir, name+".elf")
		elf, err := compileELF(build{
			Out: elfPath, Opt: opt,
			Defines: []string{fmt.Sprintf("NCASES=%d", p.ncases), fmt.Sprintf("CASE_SIZE=%d", p.caseSize)},
			Srcs:    append([]string{"start.S", "rt.c"}, p.srcs...),
		})
		if err != nil {
			res.err = err
			return
		}
		want, _, err := qemuExec(time.Minute, elfPath)
		if err != nil {
			res.err = err
			return
		}
		if len(want) != p.ncases*p.caseSize {
			res.err = fmt.Errorf("%s: qemu wrote %d bytes, want %d", name, len(want), p.ncases*p.caseSize)
			return
		}
		m, out, err := newRefereeMachine(elf, uint64(p.caseSize))
		if err != nil {
			res.err = fmt.Errorf("%s: %v", name, err)
			return
		}
		zero := make([]byte, p.caseSize)
		got := make([]byte, p.caseSize)
		for i := 0; i < p.ncases; i++ {
			q := want[i*p.caseSize : (i+1)*p.caseSize]
			if n := binary.LittleEndian.Uint64(q); n < 2 || n > uint64(p.caseSize/8) {
				res.err = fmt.Errorf("%s case %d: qemu says the case put %d words, the buffer holds %d (fix the C or CASE_SIZE)", name, i, n, p.caseSize/8)
				return
			}
			err := m.WriteBytes(out, zero)
			var r fwsim.Result
			if err == nil {
				r, err = m.Call("run_case", uint64(i), out)
				res.insns += r.Insns
			}
			if err == nil {
				err = m.ReadBytes(out, got)
			}
			if err == nil && bytes.Equal(got, q) {
				continue
			}
			res.mismatches++
			if len(res.reports) < 3 {
				res.reports = append(res.reports, cMismatch(name, i, got, q, err, keepArtifact(elfPath)))
			}
			if err != nil {
				if m, out, err = newRefereeMachine(elf, uint64(p.caseSize)); err != nil {
					res.err = err
					return
				}
			}
		}
	})
	cases, mismatches := 0, 0
	var insns uint64
	for j, r := range results {
		if r.err != nil {
			t.Fatalf("%s%s: %v", jobs[j].p.name, jobs[j].opt, r.err)
		}
		cases += jobs[j].p.ncases
		mismatches += r.mismatches
		insns += r.insns
		for _, rep := range r.reports {
			t.Error(rep)
		}
		if r.mismatches > 0 {
			t.Errorf("%s%s: %d of %d cases disagree with qemu", jobs[j].p.name, jobs[j].opt, r.mismatches, jobs[j].p.ncases)
		}
	}
	t.Logf("qemu referee, compiled C: %d programs x %v = %d ELFs, %d cases, %d mismatches; fwsim ran %d instructions",
		len(progs), refereeOpts, len(jobs), cases, mismatches, insns)
}

// cMismatch describes how case i of a C referee ELF differs between fwsim (got) and qemu
// (want), word by word, or the error fwsim stopped with.
func cMismatch(name string, i int, got, want []byte, err error, kept string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s case %d disagrees with qemu (ELF kept at %s):\n", name, i, kept)
	if err != nil {
		fmt.Fprintf(&b, "  fwsim: %v\n", err)
		return b.String()
	}
	shown := 0
	for off := 0; off < len(want); off += 8 {
		g, w := binary.LittleEndian.Uint64(got[off:]), binary.LittleEndian.Uint64(want[off:])
		if g != w && shown < 8 {
			fmt.Fprintf(&b, "  result word %d: fwsim 0x%016x  qemu 0x%016x\n", off/8, g, w)
			shown++
		}
	}
	return b.String()
}

// keepArtifact copies a file that shows a disagreement out of the test's temporary
// directory, so it can be disassembled after the test, and returns the copy's path.
func keepArtifact(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return path + " (not kept: " + err.Error() + ")"
	}
	dst := filepath.Join(os.TempDir(), "nicc-referee-"+filepath.Base(path))
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		return path + " (not kept: " + err.Error() + ")"
	}
	return dst
}

// countProbeValues is the number of .dwords in count_probe.S's count_values.
const countProbeValues = 18

// TestQemuCtzwBug runs the Zbb count instructions on register values with every kind of upper
// word under fwsim and qemu, and checks both against the specification (Go's math/bits on
// the whole register or its low word). fwsim must match the specification everywhere. qemu
// 7.2 does not for ctzw when the low word is zero and the upper word is not: it counts
// trailing zeros of all 64 bits (ctzw 0x8000000000000000 gives 63, the specification 32).
// That is the one disagreement the referee knows about, so the random streams give ctzw
// operands outside it. Any other qemu deviation fails the test. If qemu stops deviating, the
// test logs that the generator's ctzw restriction is no longer needed.
func TestQemuCtzwBug(t *testing.T) {
	requireCC(t)
	requireTool(t, qemuRV)
	const size = 64
	elfPath := filepath.Join(t.TempDir(), "count.elf")
	elf := buildELF(t, build{
		Out: elfPath, Opt: "-O2",
		Defines: []string{fmt.Sprintf("NCASES=%d", countProbeValues), fmt.Sprintf("CASE_SIZE=%d", size)},
		Srcs:    []string{"start.S", "count_probe.S"},
	})
	want := qemuRun(t, elfPath)
	if len(want) != countProbeValues*size {
		t.Fatalf("qemu wrote %d bytes, want %d", len(want), countProbeValues*size)
	}
	m, out, err := newRefereeMachine(elf, size)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"clz", "ctz", "cpop", "clzw", "ctzw", "cpopw"}
	le := binary.LittleEndian
	got := make([]byte, size)
	qemuBug := 0
	for i := 0; i < countProbeValues; i++ {
		if _, err := m.Call("run_case", uint64(i), out); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if err := m.ReadBytes(out, got); err != nil {
			t.Fatal(err)
		}
		q := want[i*size : (i+1)*size]
		v := le.Uint64(q)
		if g := le.Uint64(got); g != v {
			t.Fatalf("case %d: fwsim loaded 0x%x, qemu 0x%x", i, g, v)
		}
		w := uint32(v)
		spec := []uint64{
			uint64(bits.LeadingZeros64(v)), uint64(bits.TrailingZeros64(v)), uint64(bits.OnesCount64(v)),
			uint64(bits.LeadingZeros32(w)), uint64(bits.TrailingZeros32(w)), uint64(bits.OnesCount32(w)),
		}
		for k, name := range names {
			f, qv := le.Uint64(got[8+8*k:]), le.Uint64(q[8+8*k:])
			if f != spec[k] {
				t.Errorf("fwsim: %s 0x%016x = %d, the specification says %d", name, v, f, spec[k])
			}
			if qv != spec[k] {
				if name == "ctzw" && w == 0 && v != 0 && qv == uint64(bits.TrailingZeros64(v)) {
					qemuBug++
					continue
				}
				t.Errorf("qemu: %s 0x%016x = %d, the specification says %d (a qemu deviation the referee does not know)", name, v, qv, spec[k])
			}
		}
	}
	if qemuBug > 0 {
		t.Logf("qemu-riscv64 ctzw bug present (%d of %d probes: a zero low word under a nonzero upper word counts 64 bits); fwsim follows the specification", qemuBug, countProbeValues)
	} else {
		t.Logf("qemu-riscv64 ctzw agrees with the specification here: the generator's ctzw operand restriction is no longer needed")
	}
}
