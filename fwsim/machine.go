package fwsim

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/nicc-dev/nicc/fwsim/trap"
)

// ReturnAddress is the sentinel return address the harness puts in ra: a call ends when the
// firmware jumps to it. It lies outside every memory window (LoadELF rejects a window that
// would hold it).
const ReturnAddress = 0xffff_ffff_ffff_fff0

// DefaultStepLimit is a new Machine's StepLimit: far more than any decision should take
// (about 2 µs at a few GHz is a few thousand instructions), so that a runaway loop ends fast.
const DefaultStepLimit = 1 << 24

// Result is the outcome of one call.
type Result struct {
	A0     uint64 // the return value register
	Insns  uint64 // instructions executed, including the final return
	Cycles uint64 // their cost under the machine's profile
}

// Machine runs an Image. It owns a private copy of the image's memory, which persists across
// calls (flow contexts live there), and the image's code decoded once into a flat op slice.
//
// Memory is flat, little endian and bounds checked. Accesses must be naturally aligned (the
// engine may not support misaligned access, so fwsim is strict): a misaligned load or store
// traps with trap.ErrMisaligned. Loads may read anywhere in the window; stores must be at or
// above the lowest writable segment (or the arena if there is none), so code and the
// read-only data below it cannot be overwritten. Jumping anywhere but the start of a decoded
// instruction traps with trap.ErrIllegal.
//
// A Machine is not safe for concurrent use.
type Machine struct {
	// StepLimit is the number of instructions after which a call stops with
	// trap.ErrStepLimit. NewMachine sets DefaultStepLimit.
	StepLimit uint64

	im   *Image
	prof *Profile

	// regs[0..31] are x0..x31. Decoding redirects writes to x0 into regs[sinkReg], so
	// regs[0] stays zero without a check; 256 entries let a uint8 index skip bounds checks.
	regs [256]uint64

	mem      []byte
	base     uint64    // address of mem[0]
	storeLo  uint64    // lowest offset in mem a store may write
	loadMax  [9]uint64 // loadMax[n]: the highest offset in mem an n-byte load may read at
	storeMax [9]uint64 // storeMax[n]: the same for an n-byte store, less storeLo (below it wraps and fails)
	arenaLo  uint64    // addresses of the scratch arena [arenaLo, arenaHi)
	arenaHi  uint64
	arenaPtr uint64
	stackTop uint64

	ops     []op     // one op per instruction, each a run of its own: run near the step limit
	fast    []op     // ops with superinstructions and run counts: what run executes (see fuse.go)
	pcs     []uint64 // pcs[i] is the address of ops[i]
	raws    []uint32 // raws[i] is the encoding of ops[i]
	codeLo  uint64   // pcIndex[(pc-codeLo)/2] is the op at pc, or -1
	pcIndex []int32

	lastEntry string // the symbol Call looked up last, and its address: a decision loop calls one name
	lastAddr  uint64

	takenDelta uint64 // BranchTaken - BranchNotTaken, modulo 2^64
	stopIdx    int    // the op a run stopped at on reaching StepLimit: Trace resumes there
}

// sinkReg receives writes to x0.
const sinkReg = 32

// NewMachine decodes im's code once and prepares memory. p nil means the default profile.
func NewMachine(im *Image, p *Profile) (*Machine, error) {
	if im == nil {
		return nil, errors.New("fwsim: NewMachine: nil image")
	}
	p, err := orDefault(p)
	if err != nil {
		return nil, err
	}
	m := &Machine{StepLimit: DefaultStepLimit, im: im, prof: p}
	m.base = im.base
	m.mem = make([]byte, im.memSize)
	segEnd := im.segEnd
	m.storeLo = segEnd
	for _, s := range im.segs {
		if s.Write {
			m.storeLo = min(m.storeLo, s.Addr-im.base)
		}
	}
	for _, n := range []uint64{1, 2, 4, 8} {
		// Memory is at least the arena plus the stack, so these do not underflow.
		m.loadMax[n] = uint64(len(m.mem)) - n
		m.storeMax[n] = uint64(len(m.mem)) - m.storeLo - n
	}
	m.arenaLo = im.base + segEnd
	m.arenaHi = m.arenaLo + ArenaSize
	m.stackTop = (im.base + im.memSize) &^ 15
	copy(m.mem, im.mem) // the rest is already zero
	m.arenaPtr = m.arenaLo
	m.takenDelta = uint64(p.Costs.BranchTaken) - uint64(p.Costs.BranchNotTaken)
	m.decodeAll()
	m.prepareRuns()
	return m, nil
}

// Image is the image the machine runs.
func (m *Machine) Image() *Image { return m.im }

// Profile is the cycle model the machine counts with.
func (m *Machine) Profile() *Profile { return m.prof }

// Reset restores memory to the image's initial contents, clears the registers and frees
// everything Alloc handed out.
func (m *Machine) Reset() {
	n := copy(m.mem, m.im.mem)
	clear(m.mem[n:])
	m.regs = [256]uint64{}
	m.arenaPtr = m.arenaLo
}

// Reg returns integer register x<r> as the last call left it (r in 0..31).
func (m *Machine) Reg(r int) uint64 {
	if r < 0 || r > 31 {
		return 0
	}
	return m.regs[r]
}

// StackTop is the address sp holds at the start of every call.
func (m *Machine) StackTop() uint64 { return m.stackTop }

// Call runs the function named entry with up to eight integer or pointer arguments in
// a0..a7, and returns a0 and the instructions and cycles taken, when the function returns to
// the harness. Before the call every register is cleared, then sp is set to StackTop, gp to
// __global_pointer$ (if the image has it), ra to ReturnAddress. Memory is left as it is.
//
// A fault is returned as a *trap.Trap (test with errors.Is against the trap sentinels), with
// the counts up to the fault in Result. A missing symbol wraps ErrNoSymbol.
func (m *Machine) Call(entry string, args ...uint64) (Result, error) {
	if entry != m.lastEntry || entry == "" {
		s, ok := m.im.syms[entry]
		if !ok {
			return Result{}, fmt.Errorf("fwsim: call %q: %w", entry, ErrNoSymbol)
		}
		m.lastEntry, m.lastAddr = entry, s.Addr
	}
	return m.CallAddr(m.lastAddr, args...)
}

// CallAddr is Call with the entry given by address.
func (m *Machine) CallAddr(entry uint64, args ...uint64) (res Result, err error) {
	idx, err := m.enter(entry, args)
	if err != nil {
		return Result{}, err
	}
	defer m.recoverCall(entry, &res, &err)
	insns, cycles, err := m.run(idx)
	return Result{A0: m.regs[10], Insns: insns, Cycles: cycles}, err
}

// recoverCall, deferred, turns a panic of the interpreter into an error. It is an emulator
// bug, not a firmware fault: the machine starts over from a clean state, since state may be
// half updated.
func (m *Machine) recoverCall(entry uint64, res *Result, err *error) {
	if r := recover(); r != nil {
		m.Reset()
		*res, *err = Result{}, &trap.Trap{PC: entry, Err: trap.ErrIllegal, Detail: fmt.Sprintf("emulator fault during call (pc unknown): %v", r)}
	}
}

// enter checks a call to entry and sets the registers for it: all zero but sp, gp, ra and
// the arguments. It returns the entry's op index.
func (m *Machine) enter(entry uint64, args []uint64) (int, error) {
	if len(args) > 8 {
		return 0, fmt.Errorf("fwsim: call 0x%x: %d arguments, at most 8 fit in a0..a7", entry, len(args))
	}
	idx, ok := m.index(entry)
	if !ok {
		return 0, &trap.Trap{PC: entry, Err: trap.ErrIllegal, Detail: "call entry is not the start of a decoded instruction"}
	}
	clear(m.regs[:sinkReg+1])
	m.regs[2] = m.stackTop
	m.regs[3] = m.im.gp
	m.regs[1] = ReturnAddress
	for i, a := range args {
		m.regs[10+i] = a
	}
	return idx, nil
}

// index returns the op index of the instruction starting at pc.
func (m *Machine) index(pc uint64) (int, bool) {
	off := pc - m.codeLo
	if off&1 != 0 || off/2 >= uint64(len(m.pcIndex)) {
		return 0, false
	}
	i := m.pcIndex[off/2]
	return int(i), i >= 0
}

// Alloc reserves size bytes aligned to align (a power of two, at most 4096; 0 means 16) in
// the scratch arena, zeroes them and returns their address. The arena is not the stack and
// survives calls; ResetAlloc frees it all.
func (m *Machine) Alloc(size, align uint64) (uint64, error) {
	if align == 0 {
		align = 16
	}
	if align&(align-1) != 0 || align > 4096 {
		return 0, fmt.Errorf("fwsim: alloc: alignment %d is not a power of two up to 4096", align)
	}
	p := (m.arenaPtr + align - 1) &^ (align - 1)
	if p > m.arenaHi || size > m.arenaHi-p {
		return 0, fmt.Errorf("fwsim: alloc: %d bytes do not fit the %d-byte arena (%d used)", size, ArenaSize, m.arenaPtr-m.arenaLo)
	}
	m.arenaPtr = p + size
	clear(m.mem[p-m.base : p-m.base+size])
	return p, nil
}

// ResetAlloc frees everything Alloc handed out (memory is zeroed again on reuse).
func (m *Machine) ResetAlloc() { m.arenaPtr = m.arenaLo }

// span returns the n bytes of memory at addr; write requires them to be writable.
func (m *Machine) span(addr, n uint64, write bool) ([]byte, error) {
	off := addr - m.base
	size := uint64(len(m.mem))
	if addr < m.base || off > size || n > size-off {
		return nil, &trap.Trap{PC: addr, Err: trap.ErrOutOfRange, Detail: fmt.Sprintf("harness access of %d bytes at 0x%x outside [0x%x, 0x%x)", n, addr, m.base, m.base+size)}
	}
	if write && off < m.storeLo {
		return nil, &trap.Trap{PC: addr, Err: trap.ErrOutOfRange, Detail: fmt.Sprintf("harness write of %d bytes at 0x%x into read-only memory", n, addr)}
	}
	return m.mem[off : off+n], nil
}

// WriteBytes copies b into memory at addr. It may write anywhere a store could.
func (m *Machine) WriteBytes(addr uint64, b []byte) error {
	s, err := m.span(addr, uint64(len(b)), true)
	if err == nil {
		copy(s, b)
	}
	return err
}

// ReadBytes fills dst from memory at addr.
func (m *Machine) ReadBytes(addr uint64, dst []byte) error {
	s, err := m.span(addr, uint64(len(dst)), false)
	if err == nil {
		copy(dst, s)
	}
	return err
}

// Write32 stores v little endian at addr (no alignment required).
func (m *Machine) Write32(addr uint64, v uint32) error {
	s, err := m.span(addr, 4, true)
	if err == nil {
		binary.LittleEndian.PutUint32(s, v)
	}
	return err
}

// Write64 stores v little endian at addr (no alignment required).
func (m *Machine) Write64(addr uint64, v uint64) error {
	s, err := m.span(addr, 8, true)
	if err == nil {
		binary.LittleEndian.PutUint64(s, v)
	}
	return err
}

// Read32 loads a little-endian uint32 at addr (no alignment required).
func (m *Machine) Read32(addr uint64) (uint32, error) {
	s, err := m.span(addr, 4, false)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(s), nil
}

// Read64 loads a little-endian uint64 at addr (no alignment required).
func (m *Machine) Read64(addr uint64) (uint64, error) {
	s, err := m.span(addr, 8, false)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(s), nil
}

func errTruncated(pc uint64, raw uint32) error {
	return &trap.Trap{PC: pc, Insn: raw, Err: trap.ErrIllegal, Detail: "instruction runs past the end of its segment"}
}

func illegalAt(pc uint64, raw uint32, detail string) error {
	return &trap.Trap{PC: pc, Insn: raw, Err: trap.ErrIllegal, Detail: detail}
}
