package fwsim

// The fast path (superinstructions, counts per run; see fuse.go) against the reference
// interpreter (reference_test.go, run as it was before the fast path): equal results,
// instruction and cycle counts, traps (pc, instruction, kind, detail), registers, memory and
// the op a step limit stopped at, on the test ELFs, on generated code full of the fused
// patterns and on fuzzed bytes, and at step limits that stop the call at every point of its
// run.

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/nicc-dev/nicc/fwsim/trap"
)

// FusedOps is the number of superinstructions in m's fast slice.
func FusedOps(m *Machine) int {
	n := 0
	for _, o := range m.fast {
		if o.kind >= opLI && o.kind < opFusedEnd {
			n++
		}
	}
	return n
}

// MachinePair is two machines for im: one for the fast path, one for RefCall.
func MachinePair(t testing.TB, im *Image) (fast, ref *Machine) {
	t.Helper()
	fast, err := NewMachine(im, nil)
	if err != nil {
		t.Fatal(err)
	}
	ref, err = NewMachine(im, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fast, ref
}

// CompareCall calls entry with args on both machines with the given step limit and returns
// what differs, or "" (the machines' memory and registers are compared after the call).
func CompareCall(fast, ref *Machine, entry uint64, limit uint64, args ...uint64) string {
	fast.StepLimit, ref.StepLimit = limit, limit
	fr, ferr := fast.CallAddr(entry, args...)
	rr, rerr := ref.RefCall(entry, args...)
	where := fmt.Sprintf("call 0x%x%v, step limit %d", entry, args, limit)
	if fr != rr {
		return fmt.Sprintf("%s: fast %+v, reference %+v (errors %v; %v)", where, fr, rr, ferr, rerr)
	}
	if msg := sameTrap(ferr, rerr); msg != "" {
		return where + ": " + msg
	}
	if errors.Is(rerr, trap.ErrStepLimit) && fast.stopIdx != ref.stopIdx {
		return fmt.Sprintf("%s: stopped at op %d, reference at %d", where, fast.stopIdx, ref.stopIdx)
	}
	if fast.regs != ref.regs {
		for i := range fast.regs {
			if fast.regs[i] != ref.regs[i] {
				return fmt.Sprintf("%s: x%d = %#x, reference %#x", where, i, fast.regs[i], ref.regs[i])
			}
		}
	}
	if !bytes.Equal(fast.mem, ref.mem) {
		return where + ": memory differs"
	}
	return ""
}

func sameTrap(a, b error) string {
	if (a == nil) != (b == nil) {
		return fmt.Sprintf("error %v, reference %v", a, b)
	}
	if a == nil {
		return ""
	}
	var ta, tb *trap.Trap
	if !errors.As(a, &ta) || !errors.As(b, &tb) {
		if a.Error() != b.Error() {
			return fmt.Sprintf("error %v, reference %v", a, b)
		}
		return ""
	}
	if *ta != *tb {
		return fmt.Sprintf("trap %+v, reference %+v", *ta, *tb)
	}
	return ""
}

// CompareLimits compares a call at a step limit of 1<<17 and, if it ran n instructions, at
// limits that stop it at every instruction up to 400, then at 200 more spread over the rest.
func CompareLimits(t testing.TB, fast, ref *Machine, entry uint64, args ...uint64) {
	t.Helper()
	const most = 1 << 17
	fast.StepLimit, ref.StepLimit = most, most
	res, _ := ref.RefCall(entry, args...)
	fast.CallAddr(entry, args...) // the same call, to keep the machines' memory equal
	if msg := CompareCall(fast, ref, entry, most, args...); msg != "" {
		t.Fatal(msg)
	}
	n := min(res.Insns+1, most)
	for k := uint64(0); k <= n; k++ {
		if k > 400 {
			k += n / 200
		}
		if msg := CompareCall(fast, ref, entry, k, args...); msg != "" {
			t.Fatal(msg)
		}
	}
}

// Every function of every test ELF, with a few argument sets, at every step limit.
func TestFastPathTestELFs(t *testing.T) {
	paths, err := filepath.Glob("testdata/elf/*.elf")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no test ELFs: %v", err)
	}
	fused := 0
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		im, err := LoadELF(data)
		if err != nil {
			continue // the ELFs the loader refuses (rv32.elf) have their own tests
		}
		fast, ref := MachinePair(t, im)
		fused += FusedOps(fast)
		for _, s := range im.sorted {
			if !s.Func {
				continue
			}
			t.Run(filepath.Base(p)+"/"+s.Name, func(t *testing.T) {
				for _, args := range [][]uint64{{}, {1, 2, 3}, {fast.stackTop - 64, 12000, 10000}, {^uint64(0), 1 << 63, 7}} {
					CompareLimits(t, fast, ref, s.Addr, args...)
				}
			})
		}
	}
	if fused == 0 {
		t.Error("the test ELFs have no superinstruction: the fast path went untested")
	}
}

// genProgram writes n random instruction groups, biased to the sequences fuse.go fuses:
// constants (lui + addi(w), li) then branches on them in either operand order, often against
// a register holding the same constant or one off it, sometimes with another instruction in
// between or a different register; branches over jumps, forward and backward; loads and
// stores that fault now and then, loads followed by an add, sub or mul of what they loaded
// or by a mul and an add; immediate ops followed by an add or max of their result; ecall; and at the end rets, or an illegal halfword, or
// nothing (the call runs off the end of the code).
func genProgram(r *rand.Rand, n int) []byte {
	regs := []uint8{a0, a1, a2, a3, a4, a5}
	reg := func() uint8 { return regs[r.IntN(len(regs))] }
	branches := []Kind{BEQ, BNE, BLT, BGE, BLTU, BGEU}
	his := []int64{0, 1 << 12, -1 << 12, 0x7ffff << 12, -1 << 31, 0x12345 << 12}
	los := []int64{0, 1, -1, 2047, -2048, 0x123}
	// constant puts hi + lo + d into rd: lui and addi or addiw, or li when hi is 0.
	constant := func(rd uint8, hi, lo, d int64, w bool) []any {
		lo = max(-2048, min(2047, lo+d))
		if hi == 0 && !w {
			return []any{ri(ADDI, rd, zero, lo)}
		}
		k := ADDI
		if w {
			k = ADDIW
		}
		return []any{ri(LUI, rd, 0, hi), ri(k, rd, rd, lo)}
	}
	var items []any
	// a2 points at a scratch buffer on the stack; the other registers hold the arguments.
	items = append(items, ri(ADDI, a2, sp, -256))
	for len(items) < n {
		rd := reg()
		switch r.IntN(10) {
		case 0, 1, 2: // constant + branch
			hi, lo, w := his[r.IntN(len(his))], los[r.IntN(len(los))], r.IntN(3) == 0
			if r.IntN(4) == 0 {
				hi, lo = int64(r.IntN(1<<20)-1<<19)<<12, int64(r.IntN(4096)-2048)
			}
			x := reg()
			if r.IntN(2) == 0 && x != rd {
				items = append(items, constant(x, hi, lo, int64(r.IntN(3)-1), w)...)
			}
			switch r.IntN(8) {
			case 0:
				items = append(items, ri(LUI, rd, 0, hi)) // a lone lui
			case 1:
				items = append(items, ri(LUI, rd, 0, hi), ri(ADDI, rd, reg(), lo)) // not a constant
			default:
				items = append(items, constant(rd, hi, lo, 0, w)...)
			}
			if r.IntN(6) == 0 {
				items = append(items, r3(ADD, reg(), reg(), reg()))
			}
			b := branches[r.IntN(len(branches))]
			off := int64(2*r.IntN(6)+1) * 4
			if r.IntN(2) == 0 {
				items = append(items, br(b, x, rd, off))
			} else {
				items = append(items, br(b, rd, x, off))
			}
		case 3: // branch over a jump, forward or a little backward
			j := int64(4 * (r.IntN(12) - 3))
			if j == 0 || j == 4 {
				j = 12
			}
			items = append(items, br(branches[r.IntN(6)], reg(), reg(), 8), Inst{Kind: JAL, Imm: j})
		case 4, 5: // memory: mostly in the scratch buffer, sometimes anywhere
			base, off := uint8(a2), int64(8*r.IntN(16))
			if r.IntN(8) == 0 {
				base, off = reg(), int64(r.IntN(4096)-2048)
			}
			switch r.IntN(3) {
			case 0:
				items = append(items, st([]Kind{SB, SH, SW, SD}[r.IntN(4)], reg(), base, off))
			case 1:
				items = append(items, ri([]Kind{LB, LH, LW, LD, LBU, LHU, LWU}[r.IntN(7)], rd, base, off))
			default: // ld, then what uses it: add, sub, mul, or mul then add (opLdAdd)
				items = append(items, ri(LD, rd, base, off))
				pair := func(k Kind) Inst {
					if r.IntN(2) == 0 {
						return r3(k, reg(), rd, reg())
					}
					return r3(k, reg(), reg(), rd)
				}
				if r.IntN(2) == 0 {
					items = append(items, pair([]Kind{ADD, SUB, MUL}[r.IntN(3)]))
				} else {
					p := rd
					if r.IntN(2) == 0 {
						p = reg()
					}
					m, a := r3(MUL, p, rd, reg()), r3(ADD, reg(), p, reg())
					if r.IntN(2) == 0 {
						m.Rs1, m.Rs2 = m.Rs2, m.Rs1
					}
					if r.IntN(2) == 0 {
						a.Rs1, a.Rs2 = a.Rs2, a.Rs1
					}
					items = append(items, m, a)
				}
			}
		case 6:
			if r.IntN(10) == 0 {
				items = append(items, Inst{Kind: ECALL})
			} else {
				items = append(items, r3([]Kind{MUL, DIVU, REMW, SUB}[r.IntN(4)], rd, reg(), reg()))
			}
		case 7: // an immediate op, then an add or max of its result (opSlliAdd)
			k := []Kind{SLLI, ANDI, SRAI, SRAIW}[r.IntN(4)]
			next := r3(ADD, reg(), rd, reg())
			if k == SRAI || k == SRAIW {
				next.Kind = MAX
			}
			if r.IntN(2) == 0 {
				next.Rs1, next.Rs2 = next.Rs2, next.Rs1
			}
			imm := map[Kind]int64{SLLI: 64, ANDI: 4096, SRAI: 64, SRAIW: 32}[k]
			imm = int64(r.IntN(int(imm)))
			if k == ANDI {
				imm -= 2048
			}
			items = append(items, ri(k, rd, reg(), imm), next)
		default:
			items = append(items, ri([]Kind{ADDI, XORI, SLLI, SRAI, ADDIW}[r.IntN(5)], rd, reg(), int64(r.IntN(32))))
		}
	}
	switch r.IntN(4) {
	case 0: // run off the end
	case 1:
		items = append(items, uint16(0), uint16(0)) // illegal
	default:
		for range 12 {
			items = append(items, ret)
		}
	}
	return code(items...)
}

// genArgs are a generated program's arguments: the constants it uses, one off them, or any.
func genArgs(r *rand.Rand) []uint64 {
	pool := []uint64{0, 1, 1 << 12, 0x7ffff7ff, 0x7fffffff, 0xffffffff_80000000, 0xffffffff_7fffffff, ^uint64(0), 0x12345123}
	args := make([]uint64, 4)
	for i := range args {
		v := pool[r.IntN(len(pool))] + uint64(r.IntN(3)-1)
		if r.IntN(4) == 0 {
			v = r.Uint64() >> r.IntN(64)
		}
		args[i] = v
	}
	return args
}

// Generated programs: fast path and reference agree at every step limit.
func TestFastPathGenerated(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 11))
	fused := 0
	for i := 0; i < 300; i++ {
		b := genProgram(r, 8+r.IntN(60))
		im, err := RawImage(testBase, b)
		if err != nil {
			t.Fatal(err)
		}
		fast, ref := MachinePair(t, im)
		fused += FusedOps(fast)
		args := genArgs(r)
		fast.StepLimit, ref.StepLimit = 2000, 2000
		if msg := CompareCall(fast, ref, testBase, 2000, args...); msg != "" {
			t.Fatalf("program %d: %s", i, msg)
		}
		for k := uint64(0); k < 300; k++ {
			if msg := CompareCall(fast, ref, testBase, k, args...); msg != "" {
				t.Fatalf("program %d: %s", i, msg)
			}
		}
	}
	if fused < 300 {
		t.Errorf("only %d superinstructions in 300 programs", fused)
	}
}

// FuzzFastPath: any code, from either of its first two halfwords, at any step limit.
func FuzzFastPath(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 8; i++ {
		f.Add(genProgram(r, 30), uint64(i), uint64(3*i), uint16(40*i))
	}
	f.Add(readTestELF(f, "fw.elf")[0xe8:0x300], uint64(7), uint64(9), uint16(100))
	f.Fuzz(func(t *testing.T, b []byte, x, y uint64, limit uint16) {
		if len(b) == 0 || len(b) > 1<<16 {
			return
		}
		im, err := RawImage(testBase, b)
		if err != nil {
			t.Fatal(err)
		}
		fast, ref := MachinePair(t, im)
		for _, start := range []uint64{testBase, testBase + 2} {
			for _, l := range []uint64{5000, uint64(limit)} {
				if msg := CompareCall(fast, ref, start, l, x, y, x^y); msg != "" {
					t.Fatal(msg)
				}
			}
		}
	})
}
