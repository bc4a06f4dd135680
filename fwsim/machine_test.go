package fwsim

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/fwsim/trap"
)

func newELFMachine(t testing.TB, name string) *Machine {
	t.Helper()
	im, err := LoadELF(readTestELF(t, name))
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMachine(im, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func call(t *testing.T, m *Machine, fn string, args ...uint64) uint64 {
	t.Helper()
	res, err := m.Call(fn, args...)
	if err != nil {
		t.Fatalf("%s%v: %v", fn, args, err)
	}
	if res.Insns == 0 || res.Cycles < res.Insns {
		t.Errorf("%s: %d instructions, %d cycles", fn, res.Insns, res.Cycles)
	}
	return res.A0
}

// decideRef is fw.c's decide in Go, for checking the emulated firmware.
func decideRef(w *[12]uint32, rtt, base uint32) uint32 {
	rate := w[0]
	if rate == 0 {
		rate = 1 << 20
	}
	infl := uint32(1 << 16)
	if base != 0 {
		infl = uint32((uint64(rtt) << 16) / uint64(base))
	}
	over := int32(infl) - (3 << 15)
	if over < 0 {
		over = 0
	}
	x := uint64(rate) << 12
	var r uint64
	bit := uint64(1) << 62
	for bit > x {
		bit >>= 2
	}
	for bit != 0 {
		if x >= r+bit {
			x -= r + bit
			r = r>>1 + bit
		} else {
			r >>= 1
		}
		bit >>= 2
	}
	sq := uint32(r)
	o := int32(uint32((uint64(uint32(over))*uint64(sq))>>16)) - 4194
	prev := int32(w[1])
	var y int32
	switch {
	case o < 100:
		y = 6000
		if prev < 0 {
			y = 3000
		}
	case o < 2000:
		y = -2000
		if prev < 1000 {
			y = 1000
		}
	case o < 20000:
		y = -8000 - o>>4
	default:
		y = -13000
	}
	w[2] = w[3]
	w[3] = uint32(o)
	w[1] = uint32(y)
	var mult uint32
	if y >= 0 {
		mult = 65536 + uint32(y*13)/1000
	} else {
		mult = uint32((65536 * 65536) / uint64(65536+uint32(-y)*13/1000))
	}
	nr := (uint64(rate) * uint64(mult)) >> 16
	nr = min(nr, 1<<20)
	nr = max(nr, 64)
	w[0] = uint32(nr)
	w[4]++
	return uint32(nr)
}

func TestHarness(t *testing.T) {
	for _, name := range []string{"fw.elf", "fw_O0.elf"} {
		t.Run(name, func(t *testing.T) {
			m := newELFMachine(t, name)
			if got := call(t, m, "add", 40, 2); got != 42 {
				t.Errorf("add = %d", got)
			}
			if got := call(t, m, "add", neg(-5), 3); got != neg(-2) {
				t.Errorf("add negative = %d", int64(got))
			}
			// State in memory persists across calls.
			call(t, m, "bump", 5)
			call(t, m, "bump", 6)
			if got := call(t, m, "bump", 7); got != 18 {
				t.Errorf("bump after 5, 6, 7 = %d, want 18", got)
			}
			addr, _, _ := m.Image().Symbol("counter")
			if v, err := m.Read64(addr); err != nil || v != 18 {
				t.Errorf("counter = %d, %v", v, err)
			}
			for i, want := range []int64{1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12, 13, -14, 15, -16} {
				if got := call(t, m, "lookup", uint64(i)); int64(got) != want {
					t.Errorf("lookup(%d) = %d, want %d", i, int64(got), want)
				}
			}
			if got := call(t, m, "divs", neg(-7), 2); int64(got) != -4 {
				t.Errorf("divs(-7, 2) = %d, want -3 + -1", int64(got))
			}
			if got := call(t, m, "divs", 7, 0); int64(got) != 6 {
				t.Errorf("divs(7, 0) = %d, want -1 + 7", int64(got))
			}
			if got := call(t, m, "fib", 15); got != 610 {
				t.Errorf("fib(15) = %d", got)
			}
			gp, _ := m.Image().GlobalPointer()
			if got := call(t, m, "getgp"); got != gp {
				t.Errorf("gp = %#x, want __global_pointer$ %#x", got, gp)
			}
			if got := call(t, m, "getsp"); got > m.StackTop() || m.StackTop()-got > 64 || m.StackTop()%16 != 0 {
				t.Errorf("sp = %#x, want just below the 16-aligned %#x", got, m.StackTop())
			}
			// An array placed with Alloc.
			arr, err := m.Alloc(4*100, 4)
			if err != nil {
				t.Fatal(err)
			}
			var want int64
			for i := 0; i < 100; i++ {
				v := int32(i*i - 1000)
				want += int64(v)
				m.Write32(arr+uint64(4*i), uint32(v))
			}
			if got := call(t, m, "sum", arr, 100); int64(got) != want {
				t.Errorf("sum = %d, want %d", int64(got), want)
			}
			// load and store through a pointer.
			p, _ := m.Alloc(8, 8)
			call(t, m, "store", p, 0xfeedface12345678)
			if got := call(t, m, "load", p); got != 0xfeedface12345678 {
				t.Errorf("load after store = %#x", got)
			}
			// A flow context: 12 words updated across events.
			ctx, _ := m.Alloc(48, 8)
			var ref [12]uint32
			rng := rand.New(rand.NewPCG(1, 2))
			for ev := 0; ev < 300; ev++ {
				base := uint32(8000 + rng.IntN(4000))
				rtt := base + uint32(rng.IntN(int(base)*3))
				if ev%50 == 0 {
					rtt = base
				}
				wantRate := decideRef(&ref, rtt, base)
				got := call(t, m, "decide", ctx, uint64(rtt), uint64(base))
				if uint32(got) != wantRate {
					t.Fatalf("event %d: decide = %d, want %d", ev, got, wantRate)
				}
			}
			var mem [48]byte
			m.ReadBytes(ctx, mem[:])
			for i := range ref {
				if w := binary.LittleEndian.Uint32(mem[4*i:]); w != ref[i] {
					t.Errorf("ctx word %d = %d, want %d", i, w, ref[i])
				}
			}
			if m.Reg(0) != 0 {
				t.Error("x0 is not zero")
			}
			if _, err := m.Call("no_such_function"); !errors.Is(err, ErrNoSymbol) {
				t.Errorf("missing symbol: %v", err)
			}
			if _, err := m.Call("add", 1, 2, 3, 4, 5, 6, 7, 8, 9); err == nil {
				t.Error("nine arguments accepted")
			}
		})
	}
}

// Cycles are the sum of the profile's per-class costs.
func TestCycleCounting(t *testing.T) {
	prog := code(
		ri(ADDI, a0, a0, 1),   // alu
		r3(MUL, a0, a0, a0),   // mul
		r3(MULHU, a1, a0, a0), // mulh
		r3(DIV, a1, a0, a0),   // div
		ri(LD, a2, sp, -8),    // load
		st(SD, a2, sp, -16),   // store
		Inst{Kind: JAL, Imm: 4},
		r3(ANDN, a0, a0, a1),                // zbb_logic
		Inst{Kind: CPOP, Rd: a3, Rs1: a0},   // zbb_count
		r3(MAX, a3, a3, a0),                 // zbb_minmax
		Inst{Kind: SEXT_B, Rd: a3, Rs1: a3}, // zbb_ext
		ri(RORI, a3, a3, 3),                 // zbb_rotate
		Inst{Kind: REV8, Rd: a3, Rs1: a3},   // zbb_byte
		br(BEQ, zero, zero, 8),              // branch taken
		ri(ADDI, zero, zero, 0),
		br(BNE, zero, zero, 8), // branch not taken
		ret,                    // jalr
	)
	for _, p := range Profiles() {
		m := newTestMachine(t, p.Name, prog)
		res, err := m.Call("_start", 3)
		if err != nil {
			t.Fatal(err)
		}
		var want uint64
		for c := ClassALU; c < classEnd; c++ {
			want += p.Cost(c, false)
		}
		want += p.Cost(ClassBranch, true)
		if res.Insns != 16 || res.Cycles != want {
			t.Errorf("%s: %d insns, %d cycles; want 16, %d", p.Name, res.Insns, res.Cycles, want)
		}
	}
}

func trapOf(t *testing.T, err error, sentinel error) *trap.Trap {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("error = %v, want %v", err, sentinel)
	}
	var tr *trap.Trap
	if !errors.As(err, &tr) {
		t.Fatalf("error %v is not a *trap.Trap", err)
	}
	return tr
}

func TestTrapsFromELF(t *testing.T) {
	m := newELFMachine(t, "fw.elf")
	loadAddr, _, _ := m.Image().Symbol("load")
	storeAddr, _, _ := m.Image().Symbol("store")
	p, _ := m.Alloc(16, 8)

	_, err := m.Call("load", 0)
	tr := trapOf(t, err, trap.ErrOutOfRange)
	if tr.PC != loadAddr || tr.Insn == 0 || !strings.Contains(tr.Detail, "0x0") {
		t.Errorf("trap %+v: want pc %#x, the instruction and the address", tr, loadAddr)
	}
	_, err = m.Call("load", p+4)
	trapOf(t, err, trap.ErrMisaligned)
	_, err = m.Call("store", p+1, 1)
	tr = trapOf(t, err, trap.ErrMisaligned)
	if tr.PC != storeAddr {
		t.Errorf("store trap pc %#x, want %#x", tr.PC, storeAddr)
	}
	_, err = m.Call("store", m.Image().Base()+m.Image().MemSize(), 1)
	trapOf(t, err, trap.ErrOutOfRange)
	_, err = m.Call("store", loadAddr&^7, 1) // into text
	tr = trapOf(t, err, trap.ErrOutOfRange)
	if !strings.Contains(tr.Detail, "read-only") {
		t.Errorf("store to text: %v", tr)
	}
	m.StepLimit = 10000
	m.Write64(p, 1)
	res, err := m.Call("spin", p)
	trapOf(t, err, trap.ErrStepLimit)
	if res.Insns != 10000 {
		t.Errorf("stopped after %d instructions, want 10000", res.Insns)
	}
	m.StepLimit = DefaultStepLimit
	// The machine still works after traps.
	if got := call(t, m, "add", 1, 2); got != 3 {
		t.Errorf("add after traps = %d", got)
	}
	// A call into the middle of an instruction.
	add, _, _ := m.Image().Symbol("decide")
	_, err = m.CallAddr(add + 1)
	trapOf(t, err, trap.ErrIllegal)
}

func TestTrapsRaw(t *testing.T) {
	for _, tc := range []struct {
		name   string
		code   []byte
		args   []uint64
		want   error
		pc     uint64
		detail string
	}{
		{"illegal-instruction", code(ri(ADDI, a0, a0, 1), uint32(0xffffffff)), nil, trap.ErrIllegal, testBase + 4, "decode"},
		{"all-zero-halfword", code(uint16(0), uint16(0)), nil, trap.ErrIllegal, testBase, "decode"},
		{"fall-off-the-end", code(ri(ADDI, a0, a0, 1)), nil, trap.ErrIllegal, testBase + 4, "end"},
		{"truncated-at-end", code(ri(ADDI, a0, a0, 1), uint16(0x0013)), nil, trap.ErrIllegal, testBase + 4, "past the end"},
		{"branch-outside", code(br(BEQ, zero, zero, 0x100), ret), nil, trap.ErrIllegal, testBase + 0x100, "jump from 0x10000"},
		{"jal-mid-instruction", code(Inst{Kind: JAL, Imm: 6}, ri(ADDI, a0, a0, 1), ret), nil, trap.ErrIllegal, testBase + 6, "jump from"},
		{"jalr-to-data", code(ri(JALR, zero, a1, 0), ret), []uint64{0, 0x5000}, trap.ErrIllegal, 0x5000, "jalr from 0x10000"},
		{"jalr-mid-instruction", code(ri(AUIPC, t0, 0, 0), ri(JALR, zero, t0, 6), ret, ret), nil, trap.ErrIllegal, testBase + 6, "jalr"},
		{"load-out-of-range", code(ri(LW, a0, a1, 0), ret), []uint64{0, 8}, trap.ErrOutOfRange, testBase, "0x8"},
		{"load-below-window", code(ri(LB, a0, a1, -1), ret), []uint64{0, testBase}, trap.ErrOutOfRange, testBase, "0xffff"},
		{"load-above-window", code(ri(LD, a0, sp, 0), ret), nil, trap.ErrOutOfRange, testBase, "outside memory"},
		{"load-misaligned", code(ri(LH, a0, sp, -3), ret), nil, trap.ErrMisaligned, testBase, "load 2 bytes"},
		{"store-misaligned", code(st(SW, a0, sp, -6), ret), nil, trap.ErrMisaligned, testBase, "store 4 bytes"},
		{"store-to-code", code(st(SB, a0, a1, 0), ret), []uint64{0, testBase + 4}, trap.ErrOutOfRange, testBase, "read-only"},
		{"ecall", code(ri(ADDI, a7, zero, 93), Inst{Kind: ECALL}), nil, trap.ErrEcall, testBase + 4, "a7=93"},
		{"ebreak", code(Inst{Kind: EBREAK}), nil, trap.ErrEbreak, testBase, ""},
		{"infinite-loop", code(Inst{Kind: JAL, Imm: 0}), nil, trap.ErrStepLimit, testBase, "after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestMachine(t, "", tc.code)
			m.StepLimit = 1000
			_, err := m.Call("_start", tc.args...)
			tr := trapOf(t, err, tc.want)
			if tr.PC != tc.pc || !strings.Contains(tr.Error(), tc.detail) {
				t.Errorf("trap %q: want pc %#x and %q", tr, tc.pc, tc.detail)
			}
		})
	}
}

// An emulator fault (here forced by corrupting a decoded branch) is recovered at Call,
// returned as an error, and the machine is reset to a usable state.
func TestPanicRecovered(t *testing.T) {
	m := newTestMachine(t, "", code(br(BEQ, zero, zero, 8), ret, ri(ADDI, a0, zero, 7), ret))
	p, _ := m.Alloc(8, 8)
	m.Write64(p, 99)
	saved := m.fast[0].target
	m.fast[0].target = 1 << 30
	_, err := m.Call("_start")
	tr := trapOf(t, err, trap.ErrIllegal)
	if !strings.Contains(tr.Detail, "emulator fault") {
		t.Errorf("trap %v", tr)
	}
	if v, _ := m.Read64(p); v != 0 {
		t.Errorf("memory not reset after a fault: %d", v)
	}
	m.fast[0].target = saved
	if res, err := m.Call("_start"); err != nil || res.A0 != 7 {
		t.Errorf("after recovery: %+v, %v", res, err)
	}
}

func TestAllocAndAccess(t *testing.T) {
	m := newTestMachine(t, "", code(ret))
	a, err := m.Alloc(3, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.Alloc(8, 64)
	c, _ := m.Alloc(0, 0)
	if b%64 != 0 || b < a+3 || c%16 != 0 || c < b+8 {
		t.Errorf("allocations %#x %#x %#x", a, b, c)
	}
	if _, err := m.Alloc(1, 3); err == nil {
		t.Error("alignment 3 accepted")
	}
	if _, err := m.Alloc(ArenaSize, 8); err == nil {
		t.Error("arena overflow accepted")
	}
	m.Write64(b, 0x1122334455667788)
	if v, _ := m.Read32(b + 4); v != 0x11223344 {
		t.Errorf("Read32 = %#x", v)
	}
	m.ResetAlloc()
	a2, _ := m.Alloc(3, 1)
	b2, _ := m.Alloc(8, 64)
	if a2 != a || b2 != b {
		t.Error("ResetAlloc did not rewind")
	}
	if v, _ := m.Read64(b2); v != 0 {
		t.Errorf("Alloc did not zero reused memory: %#x", v)
	}
	for _, bad := range []uint64{0, m.Image().Base() - 1, m.Image().Base() + m.Image().MemSize() - 4} {
		if err := m.Write64(bad, 1); !errors.Is(err, trap.ErrOutOfRange) {
			t.Errorf("Write64(%#x) = %v", bad, err)
		}
		if _, err := m.Read64(bad); !errors.Is(err, trap.ErrOutOfRange) {
			t.Errorf("Read64(%#x) = %v", bad, err)
		}
	}
	if err := m.WriteBytes(testBase, []byte{1}); !errors.Is(err, trap.ErrOutOfRange) {
		t.Errorf("write into code: %v", err)
	}
	if v, err := m.Read32(testBase); err != nil || v != enc(ret) {
		t.Errorf("reading code: %#x, %v", v, err)
	}
}

// Call allocates nothing on the Go heap.
func TestCallDoesNotAllocate(t *testing.T) {
	m := newELFMachine(t, "fw.elf")
	ctx, _ := m.Alloc(48, 8)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := m.Call("decide", ctx, 12000, 10000); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Call allocates %v times per run", allocs)
	}
}

// FuzzDecode: any 32 bits decode without panicking; a decoded instruction re-decodes the same,
// has a name and a class, and a 16-bit one expands to an instruction the 32-bit decoder
// accepts (its expansion).
func FuzzDecode(f *testing.F) {
	for _, seed := range []uint32{0, 1, 0x8082, 0x00a50533, 0x0000_0013, 0xffffffff, 0x6b855513, 0x4515, 0x9002} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw uint32) {
		in, err := Decode(raw, 0x1000)
		if err != nil {
			if !errors.Is(err, trap.ErrIllegal) {
				t.Fatalf("Decode(%#x) error %v is not ErrIllegal", raw, err)
			}
			return
		}
		again, err := Decode(in.Raw, in.PC)
		if err != nil || again != in {
			t.Fatalf("Decode(%#x) = %+v, re-decoding gives %+v, %v", raw, in, again, err)
		}
		if in.Kind == Invalid || in.Kind >= kindEnd || strings.HasPrefix(in.Kind.String(), "Kind(") {
			t.Fatalf("Decode(%#x): kind %v", raw, in.Kind)
		}
		_ = in.String()
		if in.Size == 2 {
			x, err := Decode(enc(in), in.PC)
			if err != nil {
				t.Fatalf("%#04x expands to %+v which does not decode: %v", raw&0xffff, in, err)
			}
			x.Raw, x.Size, in.Raw, in.Size = 0, 0, 0, 0
			if x != in {
				t.Fatalf("%#04x: expansion re-decodes to %+v, want %+v", raw&0xffff, x, in)
			}
		}
	})
}

// FuzzRun: random code runs to a result or a trap, never a panic (an emulator fault would
// surface as "emulator fault" in the trap).
func FuzzRun(f *testing.F) {
	f.Add(code(ri(ADDI, a0, a0, 1), ret), uint64(1), uint64(2))
	f.Add(code(br(BLT, a0, a1, -0), ret), uint64(1), uint64(2))
	f.Add(code(ri(LD, a0, a1, 0), st(SD, a0, sp, -8), ret), uint64(0), uint64(testBase))
	f.Add(readTestELF(f, "fw.elf")[0xe8:0x300], uint64(7), uint64(9))
	f.Fuzz(func(t *testing.T, b []byte, x, y uint64) {
		if len(b) == 0 || len(b) > 1<<16 {
			return
		}
		im, err := RawImage(testBase, b)
		if err != nil {
			t.Fatal(err)
		}
		m, err := NewMachine(im, nil)
		if err != nil {
			t.Fatal(err)
		}
		m.StepLimit = 5000
		for _, start := range []uint64{testBase, testBase + 2} {
			res, err := m.CallAddr(start, x, y, x^y)
			if err != nil {
				var tr *trap.Trap
				if !errors.As(err, &tr) || strings.Contains(tr.Detail, "emulator fault") {
					t.Fatalf("start %#x: %v", start, err)
				}
			}
			if res.Insns > m.StepLimit {
				t.Fatalf("%d instructions past the step limit", res.Insns)
			}
			if m.Reg(0) != 0 {
				t.Fatal("x0 written")
			}
		}
	})
}

// BenchmarkInterpreter calls a decision-sized firmware function repeatedly, counting cycles,
// and reports emulated instructions per second.
func BenchmarkInterpreter(b *testing.B) {
	m := newELFMachine(b, "fw.elf")
	ctx, _ := m.Alloc(48, 8)
	var insns uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := m.Call("decide", ctx, uint64(10000+i%20000), 10000)
		if err != nil {
			b.Fatal(err)
		}
		insns += res.Insns
	}
	b.ReportMetric(float64(insns)/b.Elapsed().Seconds()/1e6, "Minsn/s")
	b.ReportMetric(float64(insns)/float64(b.N), "insn/call")
}

// BenchmarkInterpreterLoop runs a long arithmetic loop (fib) to measure the dispatch loop
// without per-call overhead.
func BenchmarkInterpreterLoop(b *testing.B) {
	m := newELFMachine(b, "fw.elf")
	var insns uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := m.Call("fib", 20)
		if err != nil {
			b.Fatal(err)
		}
		insns += res.Insns
	}
	b.ReportMetric(float64(insns)/b.Elapsed().Seconds()/1e6, "Minsn/s")
}
