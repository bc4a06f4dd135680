// Package wcet bounds the worst-case execution time (WCET) of firmware statically: the longest
// path through an ELF's machine code from an entry function, at the costs the emulator
// (fwsim) counts, so that every fwsim.Machine.Call of it takes at most the bound. See Bound.
package wcet

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/nicc-dev/nicc/fwsim"
)

// Sentinel errors of Bound; a *Error wraps one. Test with errors.Is.
var (
	ErrUnboundedLoop = errors.New("loop without a bound")
	ErrIndirectJump  = errors.New("indirect jump or call the analysis cannot resolve")
	ErrRecursion     = errors.New("recursion")
	ErrIrreducible   = errors.New("irreducible control flow")
	ErrNoReturn      = errors.New("function never returns")
	ErrBadCode       = errors.New("bad code")
	ErrNoSuchLoop    = errors.New("loop bound for an address that is no loop head")
	ErrReturnAddress = errors.New("return address not preserved")
)

// Error is a reason Bound cannot bound a function. Func and FuncAddr name the function
// being analysed, PC the instruction (for ErrUnboundedLoop, the loop head). Where names PC
// as function+offset, by the function symbol that holds PC: control can reach another
// function's code by a jump, so that need not be Func. ParseLoopHead reads it back.
type Error struct {
	Func     string
	FuncAddr uint64
	PC       uint64
	Where    string // "" if no function symbol holds PC and PC is below FuncAddr
	Err      error
	Detail   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("fwsim: wcet: ")
	if e.Func != "" {
		fmt.Fprintf(&b, "%s: ", e.Func)
	}
	fmt.Fprintf(&b, "0x%x", e.PC)
	if e.Where != "" {
		fmt.Fprintf(&b, " (%s)", e.Where)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Options are the user's facts about the code that the analysis cannot see.
type Options struct {
	// LoopBounds bounds loops by the address of their head: the loop's first instruction,
	// which every path into the loop and every iteration passes through (the address an
	// ErrUnboundedLoop error names; ParseLoopHead turns "func+0x1c" into it). The bound N
	// is the most times the head instruction runs each time control enters the loop from
	// outside it, so N counts the last, exiting pass too: gcc's -O0 loop `for (i = 0; i < n;
	// i++)` tests i < n at its head n+1 times, while the rotated -O2 form runs its head n
	// times. A bound too large is safe (the WCET is looser); too small is unsound, which a
	// run above the WCET shows: LoopRuns then counts the runs to name the loop.
	LoopBounds map[uint64]int
}

// Report is the result of Bound.
type Report struct {
	Entry   string
	Addr    uint64
	Profile string
	// Cycles bounds fwsim.Machine.Call(Entry, ...).Cycles for every input, with the same
	// profile.
	Cycles uint64
	// Insns is the number of instructions on the worst-case path (loops unrolled to their
	// bounds, callees included): comparable to fwsim.Result.Insns.
	Insns uint64
	// Functions are the entry and every function it reaches, entry first, then by address.
	Functions []Func
	// Loops are the loops found, with the bound used, by function then head address.
	Loops []Loop
}

// Func is the bound of one function called on its own, its ret included.
type Func struct {
	Name   string
	Addr   uint64
	Cycles uint64
	Insns  uint64   // on its worst-case path
	Calls  []string // functions it calls or tail-calls, by name, sorted
}

// Loop is one loop and how it was bounded.
type Loop struct {
	Func    string // the function symbol that holds Head
	Head    uint64
	Offset  uint64 // Head - Func's address
	Bound   int    // most runs of the head per entry into the loop
	Counted bool   // the bound was found by the analysis rather than given
	IterMax uint64 // cycles of the costliest iteration that goes round again
	Cycles  uint64 // cycles of the whole loop at its bound, exit included
	// Latches are the loop's instructions with an edge back to Head, by address: a run of
	// Head right after one (in the same call) is another iteration, any other run of Head
	// a new entry into the loop. LoopRuns counts with them.
	Latches []uint64
}

// ParseLoopHead resolves a loop head written as an address ("0x10040", "10040" is hex too)
// or as a function symbol plus an offset ("on_event+0x40", "on_event+64").
func ParseLoopHead(im *fwsim.Image, s string) (uint64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty loop head")
	}
	if name, off, ok := strings.Cut(s, "+"); ok {
		addr, _, found := im.Symbol(strings.TrimSpace(name))
		if !found {
			return 0, fmt.Errorf("loop head %q: %w", s, fmt.Errorf("%q: %w", name, fwsim.ErrNoSymbol))
		}
		o, err := strconv.ParseUint(strings.TrimSpace(off), 0, 64)
		if err != nil {
			return 0, fmt.Errorf("loop head %q: offset %q is not a number", s, off)
		}
		return addr + o, nil
	}
	h := strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	v, err := strconv.ParseUint(h, 16, 64)
	if err != nil {
		if addr, _, found := im.Symbol(s); found {
			return addr, nil
		}
		return 0, fmt.Errorf("loop head %q is not a hex address or symbol+offset", s)
	}
	return v, nil
}

// Bound bounds the cycles of a call to the function entry under profile p (nil: the default
// profile): every fwsim.Machine.Call(entry, ...) with the same profile takes at most
// Report.Cycles, whatever the arguments and memory.
//
// The analysis works on the machine code of the ELF, with the same per-instruction costs the
// interpreter counts (see fwsim.Profile), so its bound and fwsim.Machine.Call's count are in
// the same units and cover the same instructions:
//
//   - Each function reachable from the entry is explored from its first instruction by
//     following control flow (not by a linear sweep of its symbol), one graph node per
//     instruction. An edge carries the cost of the instruction it leaves: a branch's taken
//     edge costs BranchTaken, its fall-through BranchNotTaken; a call costs the call
//     instruction plus the callee's WCET; every other instruction costs its class
//     (division at its worst case).
//   - Calls are jal ra, or jalr ra through a register whose value is a link-time constant
//     (auipc+jalr: with -Wl,--no-relax, `call f` stays that pair). Control reaching the
//     first instruction of another function by a jump, a branch or a fall-through is a tail
//     call: it costs that function's WCET and ends the path, since that function returns to
//     our caller. `ret` (jalr x0, 0(ra)) ends a path.
//   - A ret or a tail call returns to the caller only if ra still holds the address the
//     function was called with, so each must be proven to (see checkReturns in ra.go):
//     ra holds it until written, a copy (mv) or a stack slot saved by `sd ra, k(sp)` holds
//     it until overwritten, and `ld ra, k(sp)` from that slot, with sp where it was,
//     restores it. A call loses every register but sp, which it keeps when the callee
//     restores sp wherever it returns. Assumed, not proven: a store through a register other
//     than sp does not hit a saved return address (in C only an out-of-bounds write could).
//     Only `addi sp, sp, k` keeps sp known: a function that saves ra and moves sp otherwise
//     (a variable-length array or alloca, whose epilogue restores sp from s0) is refused.
//   - A jump table (gcc's switch lowering: a table base from lui/auipc+addi, an index added
//     to it, a load, jr) is read from read-only memory; its targets are the table's entries
//     from its start up to the first that is not an address inside the function. Reading
//     past the real table can only add targets, never miss one.
//   - ecall and ebreak, and calls to functions that never return, end a path without a
//     cost: a run that gets there traps, so there is no measurement to bound.
//   - Loops are natural loops of a reducible graph. Each needs a bound (Options) unless
//     it is a simple counted loop the analysis recognises: no inner loop or call, one back
//     edge `bne t, u`, t stepped by a single addi/addiw on every iteration, t and u link-time
//     constants on the single way in (gcc -O2's `li t, 12 ... addiw t, t, -1; bnez t`).
//     Loops are collapsed innermost first, at (bound-1) × the costliest iteration plus the
//     costliest way out; then the longest path of the remaining DAG is the WCET.
//
// Refused with a *Error: a loop without a bound (ErrUnboundedLoop), an indirect jump or
// call that is none of the above (ErrIndirectJump), recursion (ErrRecursion), irreducible
// control flow (ErrIrreducible), an entry that never returns (ErrNoReturn), bytes that do
// not decode or code outside executable memory (ErrBadCode), a bound for an address that is
// no loop head (ErrNoSuchLoop), a ret or tail call where ra may not hold the return address
// (ErrReturnAddress, naming the instruction that overwrote ra).
//
// What Call and Bound count: fwsim.Machine.Call counts every instruction from the entry's
// first one to the final ret that jumps to fwsim.ReturnAddress, that ret included; Bound
// bounds exactly that sequence (the entry's paths end with the ret's cost). The harness itself runs no
// instructions of its own, so there is no call overhead to add or subtract.
func Bound(im *fwsim.Image, entry string, p *fwsim.Profile, opt Options) (*Report, error) {
	if im == nil {
		return nil, errors.New("fwsim: wcet: nil image")
	}
	var err error
	if p == nil {
		p, err = fwsim.LookupProfile(fwsim.DefaultProfile)
	} else {
		err = p.Validate()
	}
	if err != nil {
		return nil, err
	}
	addr, _, ok := im.Symbol(entry)
	if !ok {
		return nil, fmt.Errorf("fwsim: wcet: %q: %w", entry, fwsim.ErrNoSymbol)
	}
	a := &analysis{
		im: im, p: p, opt: opt,
		funcs:  map[uint64]*fnBound{},
		active: map[uint64]bool{},
		starts: map[uint64]string{},
		used:   map[uint64]bool{},
	}
	for _, s := range im.Symbols() {
		if !s.Func {
			continue
		}
		if old, dup := a.starts[s.Addr]; !dup || better(s.Name, old) {
			a.starts[s.Addr] = s.Name
		}
	}
	// The entry keeps the name the caller used, even if another symbol aliases it.
	a.starts[addr] = entry
	f, err := a.function(addr, addr)
	if err != nil {
		return nil, err
	}
	if !f.returns {
		return nil, &Error{Func: f.name, FuncAddr: addr, PC: addr, Where: f.name + "+0x0", Err: ErrNoReturn,
			Detail: "no path from its entry reaches a ret"}
	}
	var unused []string
	for h := range opt.LoopBounds {
		if !a.used[h] {
			unused = append(unused, fmt.Sprintf("0x%x", h))
		}
	}
	if len(unused) > 0 {
		sort.Strings(unused)
		detail := fmt.Sprintf("no loop in %s or the functions it calls has its head there", entry)
		if len(unused) > 1 {
			detail += "; nor at " + strings.Join(unused[1:], ", ")
		}
		return nil, &Error{PC: firstHex(unused), Err: ErrNoSuchLoop, Detail: detail}
	}
	r := &Report{Entry: entry, Addr: addr, Profile: p.Name, Cycles: f.w.c, Insns: f.w.n}
	var fs []*fnBound
	for _, g := range a.funcs {
		fs = append(fs, g)
	}
	sort.Slice(fs, func(i, j int) bool {
		if (fs[i].addr == addr) != (fs[j].addr == addr) {
			return fs[i].addr == addr
		}
		return fs[i].addr < fs[j].addr
	})
	for _, g := range fs {
		var calls []string
		for c := range g.calls {
			calls = append(calls, a.funcs[c].name)
		}
		sort.Strings(calls)
		r.Functions = append(r.Functions, Func{Name: g.name, Addr: g.addr, Cycles: g.w.c, Insns: g.w.n, Calls: calls})
		r.Loops = append(r.Loops, g.loops...)
	}
	sort.SliceStable(r.Loops, func(i, j int) bool {
		if r.Loops[i].Func != r.Loops[j].Func {
			return r.Loops[i].Func < r.Loops[j].Func
		}
		return r.Loops[i].Head < r.Loops[j].Head
	})
	return r, nil
}

func firstHex(s []string) uint64 {
	v, _ := strconv.ParseUint(strings.TrimPrefix(s[0], "0x"), 16, 64)
	return v
}

// better prefers a global-looking name to a local one (".L", "$x") and then the shorter.
func better(a, b string) bool {
	la, lb := strings.HasPrefix(a, ".") || strings.HasPrefix(a, "$"), strings.HasPrefix(b, ".") || strings.HasPrefix(b, "$")
	if la != lb {
		return lb
	}
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}
