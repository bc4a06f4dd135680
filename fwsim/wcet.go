package fwsim

// Static worst-case execution time (WCET): see WCET.

import (
	"errors"
	"fmt"
	"math/bits"
	"sort"
	"strconv"
	"strings"
)

// Sentinel errors of WCET; a *WCETError wraps one. Test with errors.Is.
var (
	ErrUnboundedLoop = errors.New("loop without a bound")
	ErrIndirectJump  = errors.New("indirect jump or call the analysis cannot resolve")
	ErrRecursion     = errors.New("recursion")
	ErrIrreducible   = errors.New("irreducible control flow")
	ErrNoReturn      = errors.New("function never returns")
	ErrBadCode       = errors.New("bad code")
	ErrNoSuchLoop    = errors.New("loop bound for an address that is no loop head")
)

// WCETError is a reason WCET cannot bound a function. Func and FuncAddr name the function
// being analysed, PC the instruction (for ErrUnboundedLoop, the loop head).
type WCETError struct {
	Func     string
	FuncAddr uint64
	PC       uint64
	Err      error
	Detail   string
}

func (e *WCETError) Error() string {
	var b strings.Builder
	b.WriteString("fwsim: wcet: ")
	if e.Func != "" {
		fmt.Fprintf(&b, "%s: ", e.Func)
	}
	fmt.Fprintf(&b, "0x%x", e.PC)
	if e.Func != "" && e.PC >= e.FuncAddr {
		fmt.Fprintf(&b, " (%s+0x%x)", e.Func, e.PC-e.FuncAddr)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

func (e *WCETError) Unwrap() error { return e.Err }

// WCETOptions are the user's facts about the code that the analysis cannot see.
type WCETOptions struct {
	// LoopBounds bounds loops by the address of their head: the loop's first instruction,
	// which every path into the loop and every iteration passes through (the address an
	// ErrUnboundedLoop error names; ParseLoopHead turns "func+0x1c" into it). The bound N
	// is the most times the head instruction runs each time control enters the loop from
	// outside it, so N counts the last, exiting pass too: gcc's -O0 loop `for (i = 0; i < n;
	// i++)` tests i < n at its head n+1 times, while the rotated -O2 form runs its head n
	// times. A bound too large is safe (the WCET is looser); too small is unsound.
	LoopBounds map[uint64]int
}

// WCETReport is the result of WCET.
type WCETReport struct {
	Entry   string
	Addr    uint64
	Profile string
	// Cycles bounds Machine.Call(Entry, ...).Cycles for every input, with the same profile.
	Cycles uint64
	// Insns is the number of instructions on the worst-case path (loops unrolled to their
	// bounds, callees included): comparable to Result.Insns.
	Insns uint64
	// Functions are the entry and every function it reaches, entry first, then by address.
	Functions []FuncWCET
	// Loops are the loops found, with the bound used, by function then head address.
	Loops []LoopWCET
}

// FuncWCET is the bound of one function called on its own, its ret included.
type FuncWCET struct {
	Name   string
	Addr   uint64
	Cycles uint64
	Insns  uint64   // on its worst-case path
	Calls  []string // functions it calls or tail-calls, by name, sorted
}

// LoopWCET is one loop and how it was bounded.
type LoopWCET struct {
	Func    string
	Head    uint64
	Offset  uint64 // Head - the function's address
	Bound   int    // most runs of the head per entry into the loop
	Counted bool   // the bound was found by the analysis rather than given
	IterMax uint64 // cycles of the costliest iteration that goes round again
	Cycles  uint64 // cycles of the whole loop at its bound, exit included
}

// ParseLoopHead resolves a loop head written as an address ("0x10040", "10040" is hex too)
// or as a function symbol plus an offset ("on_event+0x40", "on_event+64").
func ParseLoopHead(im *Image, s string) (uint64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty loop head")
	}
	if name, off, ok := strings.Cut(s, "+"); ok {
		addr, _, found := im.Symbol(strings.TrimSpace(name))
		if !found {
			return 0, fmt.Errorf("loop head %q: %w", s, fmt.Errorf("%q: %w", name, ErrNoSymbol))
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

// WCET bounds the cycles of a call to the function entry under profile p (nil: the default
// profile): every Machine.Call(entry, ...) with the same profile takes at most
// WCETReport.Cycles, whatever the arguments and memory.
//
// The analysis works on the machine code of the ELF, with the same per-instruction costs the
// interpreter counts (see Profile), so its bound and Machine.Call's count are in the same
// units and cover the same instructions:
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
//   - A jump table (gcc's switch lowering: a table base from lui/auipc+addi, an index added
//     to it, a load, jr) is read from read-only memory; its targets are the table's entries
//     from its start up to the first that is not an address inside the function. Reading
//     past the real table can only add targets, never miss one.
//   - ecall and ebreak, and calls to functions that never return, end a path without a
//     cost: a run that gets there traps, so there is no measurement to bound.
//   - Loops are natural loops of a reducible graph. Each needs a bound (WCETOptions) unless
//     it is a simple counted loop the analysis recognises: no inner loop or call, one back
//     edge `bne t, u`, t stepped by a single addi/addiw on every iteration, t and u link-time
//     constants on the single way in (gcc -O2's `li t, 12 ... addiw t, t, -1; bnez t`).
//     Loops are collapsed innermost first, at (bound-1) × the costliest iteration plus the
//     costliest way out; then the longest path of the remaining DAG is the WCET.
//
// Refused with a *WCETError: a loop without a bound (ErrUnboundedLoop), an indirect jump or
// call that is none of the above (ErrIndirectJump), recursion (ErrRecursion), irreducible
// control flow (ErrIrreducible), an entry that never returns (ErrNoReturn), bytes that do
// not decode or code outside executable memory (ErrBadCode), a bound for an address that is
// no loop head (ErrNoSuchLoop).
//
// What Call and WCET count: Machine.Call counts every instruction from the entry's first one
// to the final ret that jumps to ReturnAddress, that ret included; WCET bounds exactly that
// sequence (the entry's paths end with the ret's cost). The harness itself runs no
// instructions of its own, so there is no call overhead to add or subtract.
func WCET(im *Image, entry string, p *Profile, opt WCETOptions) (*WCETReport, error) {
	if im == nil {
		return nil, errors.New("fwsim: wcet: nil image")
	}
	p, err := orDefault(p)
	if err != nil {
		return nil, err
	}
	addr, _, ok := im.Symbol(entry)
	if !ok {
		return nil, fmt.Errorf("fwsim: wcet: %q: %w", entry, ErrNoSymbol)
	}
	a := &wcetAnalysis{
		im: im, p: p, opt: opt,
		funcs:  map[uint64]*wcetFunc{},
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
		return nil, &WCETError{Func: f.name, FuncAddr: addr, PC: addr, Err: ErrNoReturn,
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
		return nil, &WCETError{PC: firstHex(unused), Err: ErrNoSuchLoop, Detail: detail}
	}
	r := &WCETReport{Entry: entry, Addr: addr, Profile: p.Name, Cycles: f.w.c, Insns: f.w.n}
	var fs []*wcetFunc
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
		r.Functions = append(r.Functions, FuncWCET{Name: g.name, Addr: g.addr, Cycles: g.w.c, Insns: g.w.n, Calls: calls})
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

// wt is a path weight: cycles, then instructions.
type wt struct{ c, n uint64 }

func (x wt) less(y wt) bool { return x.c < y.c || x.c == y.c && x.n < y.n }

// limit caps every weight: far beyond any decision, far below overflow.
const wcetLimit = 1 << 60

func (x wt) add(y wt) (wt, bool) {
	c, n := x.c+y.c, x.n+y.n
	return wt{c, n}, c <= wcetLimit && n <= wcetLimit && c >= x.c && n >= x.n
}

func (x wt) mul(k uint64) (wt, bool) {
	hc, c := bits.Mul64(x.c, k)
	hn, n := bits.Mul64(x.n, k)
	return wt{c, n}, hc == 0 && hn == 0 && c <= wcetLimit && n <= wcetLimit
}

// exitNode is the target of edges that leave the function (ret, tail call).
const exitNode = -1

type wedge struct {
	to int // node index, or exitNode
	w  wt
}

type wcetAnalysis struct {
	im     *Image
	p      *Profile
	opt    WCETOptions
	funcs  map[uint64]*wcetFunc
	active map[uint64]bool
	stack  []uint64
	starts map[uint64]string // function symbols by address
	used   map[uint64]bool   // loop bounds consumed
	mach   *Machine          // lazily, to read jump tables
}

type wcetFunc struct {
	name    string
	addr    uint64
	w       wt
	returns bool
	calls   map[uint64]bool
	loops   []LoopWCET
}

func (a *wcetAnalysis) name(addr uint64) string {
	if n, ok := a.starts[addr]; ok {
		return n
	}
	return fmt.Sprintf("0x%x", addr)
}

// fbuild is the state of one function's analysis.
type fbuild struct {
	a     *wcetAnalysis
	f     *wcetFunc
	insts map[uint64]Inst
	edges map[uint64][]pedge // by source pc
	preds map[uint64]int     // number of intra-function predecessors
	// resolved jalr: pc -> abstract value of rs1 used, re-checked once the graph is complete
	resolved map[uint64]absVal
}

// pedge is an edge by pc: to is a pc, or toExit.
type pedge struct {
	to   uint64
	exit bool
	w    wt
}

func (b *fbuild) errf(pc uint64, err error, format string, args ...any) error {
	return &WCETError{Func: b.f.name, FuncAddr: b.f.addr, PC: pc, Err: err, Detail: fmt.Sprintf(format, args...)}
}

// function analyses the function at addr (memoised). site is the pc of the call, for errors.
func (a *wcetAnalysis) function(addr, site uint64) (*wcetFunc, error) {
	if f, ok := a.funcs[addr]; ok {
		return f, nil
	}
	if a.active[addr] {
		var chain []string
		for _, s := range a.stack {
			chain = append(chain, a.name(s))
		}
		chain = append(chain, a.name(addr))
		caller := a.stack[len(a.stack)-1]
		return nil, &WCETError{Func: a.name(caller), FuncAddr: caller, PC: site, Err: ErrRecursion,
			Detail: "call chain " + strings.Join(chain, " -> ")}
	}
	a.active[addr] = true
	a.stack = append(a.stack, addr)
	defer func() {
		delete(a.active, addr)
		a.stack = a.stack[:len(a.stack)-1]
	}()
	f := &wcetFunc{name: a.name(addr), addr: addr, calls: map[uint64]bool{}}
	b := &fbuild{a: a, f: f, insts: map[uint64]Inst{}, edges: map[uint64][]pedge{},
		preds: map[uint64]int{}, resolved: map[uint64]absVal{}}
	if err := b.explore(); err != nil {
		return nil, err
	}
	if err := b.solve(); err != nil {
		return nil, err
	}
	a.funcs[addr] = f
	return f, nil
}

func (a *wcetAnalysis) cost(in Inst) wt { return wt{a.p.MaxCost(in.Class()), 1} }

// explore decodes every instruction reachable from the function's entry and builds its edges.
func (b *fbuild) explore() error {
	a := b.a
	work := []uint64{b.f.addr}
	for len(work) > 0 {
		pc := work[len(work)-1]
		work = work[:len(work)-1]
		if _, done := b.insts[pc]; done {
			continue
		}
		raw, err := a.im.Fetch(pc)
		if err != nil {
			return b.errf(pc, ErrBadCode, "control reaches it but %v", err)
		}
		in, err := Decode(raw, pc)
		if err != nil {
			return b.errf(pc, ErrBadCode, "control reaches it but %v", err)
		}
		if prev, ok := b.insts[pc-2]; ok && prev.Size == 4 {
			return b.errf(pc, ErrBadCode, "control reaches the middle of the instruction at 0x%x", pc-2)
		}
		if in.Size == 4 {
			if _, ok := b.insts[pc+2]; ok {
				return b.errf(pc, ErrBadCode, "instruction overlaps the one at 0x%x", pc+2)
			}
		}
		b.insts[pc] = in
		es, err := b.successors(in)
		if err != nil {
			return err
		}
		for _, e := range es {
			if e.exit {
				continue
			}
			if _, isFunc := a.starts[e.to]; isFunc && e.to != b.f.addr {
				return b.errf(pc, ErrBadCode, "internal: edge into function 0x%x not made a tail call", e.to)
			}
			b.preds[e.to]++
			work = append(work, e.to)
		}
		b.edges[pc] = es
	}
	// Re-check every resolved jalr now that all predecessors are known: a resolution read
	// registers along a straight run of code, which a jump found later may have entered.
	for pc, v := range b.resolved {
		if got := b.track(pc, b.insts[pc].Rs1); got != v {
			return b.errf(pc, ErrIndirectJump, "its target register is set along a path another jump joins")
		}
	}
	return nil
}

// edgeTo makes the edge from an instruction to pc with weight w: a tail call when pc is the
// start of another function, otherwise an edge inside the function.
func (b *fbuild) edgeTo(from, pc uint64, w wt) ([]pedge, error) {
	if _, isFunc := b.a.starts[pc]; isFunc && pc != b.f.addr {
		g, err := b.a.function(pc, from)
		if err != nil {
			return nil, err
		}
		b.f.calls[pc] = true
		if !g.returns {
			return nil, nil
		}
		tw, ok := w.add(g.w)
		if !ok {
			return nil, b.errf(from, ErrBadCode, "WCET overflows")
		}
		return []pedge{{exit: true, w: tw}}, nil
	}
	return []pedge{{to: pc, w: w}}, nil
}

// call is a call from the instruction in to the function at target, returning to in.Next().
func (b *fbuild) call(in Inst, target uint64) ([]pedge, error) {
	if _, isFunc := b.a.starts[target]; !isFunc {
		return nil, b.errf(in.PC, ErrIndirectJump, "call to 0x%x, which is not the start of a function symbol", target)
	}
	if target == b.f.addr {
		return nil, &WCETError{Func: b.f.name, FuncAddr: b.f.addr, PC: in.PC, Err: ErrRecursion,
			Detail: "call chain " + b.f.name + " -> " + b.f.name}
	}
	g, err := b.a.function(target, in.PC)
	if err != nil {
		return nil, err
	}
	b.f.calls[target] = true
	if !g.returns {
		return nil, nil // a noreturn call: the path ends (in a trap) there
	}
	w, ok := b.a.cost(in).add(g.w)
	if !ok {
		return nil, b.errf(in.PC, ErrBadCode, "WCET overflows")
	}
	return []pedge{{to: in.Next(), w: w}}, nil
}

func (b *fbuild) successors(in Inst) ([]pedge, error) {
	a := b.a
	p := a.p
	switch {
	case in.Kind.IsBranch():
		t, _ := in.Target()
		taken, err := b.edgeTo(in.PC, t, wt{p.Cost(ClassBranch, true), 1})
		if err != nil {
			return nil, err
		}
		fall, err := b.edgeTo(in.PC, in.Next(), wt{p.Cost(ClassBranch, false), 1})
		if err != nil {
			return nil, err
		}
		return append(taken, fall...), nil
	case in.Kind == JAL:
		t, _ := in.Target()
		switch in.Rd {
		case 0:
			return b.edgeTo(in.PC, t, a.cost(in))
		case 1:
			return b.call(in, t)
		}
		return nil, b.errf(in.PC, ErrIndirectJump, "jal with link register %s: only ra calls are analysed", RegName(in.Rd))
	case in.Kind == JALR:
		v := b.track(in.PC, in.Rs1)
		switch {
		case v.kind == absConst:
			b.resolved[in.PC] = v
			t := (v.v + uint64(in.Imm)) &^ 1
			switch in.Rd {
			case 0:
				return b.edgeTo(in.PC, t, a.cost(in))
			case 1:
				return b.call(in, t)
			}
			return nil, b.errf(in.PC, ErrIndirectJump, "jalr with link register %s: only ra calls are analysed", RegName(in.Rd))
		case v.kind == absLoad && in.Rd == 0 && in.Imm == 0:
			b.resolved[in.PC] = v
			targets, err := b.jumpTable(in, v)
			if err != nil {
				return nil, err
			}
			var es []pedge
			for _, t := range targets {
				e, err := b.edgeTo(in.PC, t, a.cost(in))
				if err != nil {
					return nil, err
				}
				es = append(es, e...)
			}
			return es, nil
		case in.Rd == 0 && in.Rs1 == 1 && in.Imm == 0:
			return []pedge{{exit: true, w: a.cost(in)}}, nil // ret
		}
		what := "jump"
		if in.Rd != 0 {
			what = "call"
		}
		return nil, b.errf(in.PC, ErrIndirectJump, "%s through %s, whose value is not a link-time constant (%s)", what, RegName(in.Rs1), in)
	case in.Kind == ECALL || in.Kind == EBREAK:
		return nil, nil // traps: the run ends in an error, not a measurement
	}
	return b.edgeTo(in.PC, in.Next(), a.cost(in))
}

// Abstract register values for resolving jalr targets along a straight run of code.
const (
	absUnknown = iota
	absConst   // v
	absBase    // v + an unknown index (a table base plus a scaled index)
	absLoad    // the value loaded from a table at v + index*size
)

type absVal struct {
	kind   uint8
	signed bool
	size   uint8
	v      uint64
}

// track returns the abstract value of register r just before the instruction at pc, from
// the straight run of code that leads to it: back through single-predecessor fall-throughs,
// then forward from the start of the run with every register unknown.
func (b *fbuild) track(pc uint64, r uint8) absVal {
	var run []Inst
	cur := pc
	for len(run) < 64 {
		if cur == b.f.addr || b.preds[cur] != 1 {
			break
		}
		prev, ok := b.prevFall(cur)
		if !ok {
			break
		}
		run = append(run, prev)
		cur = prev.PC
	}
	var regs [32]absVal
	for i := len(run) - 1; i >= 0; i-- {
		in := run[i]
		if (in.Kind == JAL || in.Kind == JALR) && in.Rd != 0 {
			regs = [32]absVal{} // a call clobbers what we know
			continue
		}
		if in.Rd == 0 || in.Kind.IsStore() || in.Kind.IsBranch() {
			continue
		}
		regs[in.Rd] = absStep(in, &regs)
	}
	if r == 0 {
		return absVal{kind: absConst}
	}
	return regs[r]
}

// prevFall finds the instruction just before pc in memory that has an edge to pc (a
// fall-through, the return of a call, a branch's not-taken edge).
func (b *fbuild) prevFall(pc uint64) (Inst, bool) {
	for _, d := range []uint64{2, 4} {
		p, ok := b.insts[pc-d]
		if !ok || p.Next() != pc {
			continue
		}
		for _, e := range b.edges[p.PC] {
			if !e.exit && e.to == pc {
				return p, true
			}
		}
	}
	return Inst{}, false
}

func absStep(in Inst, regs *[32]absVal) absVal {
	get := func(r uint8) absVal {
		if r == 0 {
			return absVal{kind: absConst}
		}
		return regs[r]
	}
	s1, s2 := get(in.Rs1), get(in.Rs2)
	switch in.Kind {
	case LUI:
		return absVal{kind: absConst, v: uint64(in.Imm)}
	case AUIPC:
		return absVal{kind: absConst, v: in.PC + uint64(in.Imm)}
	case ADDI:
		switch s1.kind {
		case absConst, absBase:
			return absVal{kind: s1.kind, v: s1.v + uint64(in.Imm)}
		}
	case ADDIW:
		if s1.kind == absConst {
			return absVal{kind: absConst, v: uint64(int64(int32(uint32(s1.v + uint64(in.Imm)))))}
		}
	case SLLI:
		if s1.kind == absConst {
			return absVal{kind: absConst, v: s1.v << uint(in.Imm&63)}
		}
	case ADD:
		switch {
		case s1.kind == absConst && s2.kind == absConst:
			return absVal{kind: absConst, v: s1.v + s2.v}
		case s1.kind == absConst && s2.kind == absUnknown:
			return absVal{kind: absBase, v: s1.v}
		case s2.kind == absConst && s1.kind == absUnknown:
			return absVal{kind: absBase, v: s2.v}
		}
	case LW, LWU, LD:
		if s1.kind == absBase {
			return absVal{kind: absLoad, v: s1.v + uint64(in.Imm), size: uint8(in.Kind.AccessSize()), signed: in.Kind == LW}
		}
	}
	return absVal{}
}

// maxTable caps the entries read from one jump table.
const maxTable = 4096

// jumpTable reads the targets of a table jump: entries of v.size bytes from v.v, while each
// is an address inside the function's symbol.
func (b *fbuild) jumpTable(in Inst, v absVal) ([]uint64, error) {
	a := b.a
	sym, ok := a.im.SymbolAt(in.PC)
	if !ok || !sym.Func || sym.Size == 0 {
		return nil, b.errf(in.PC, ErrIndirectJump, "table jump outside a sized function symbol")
	}
	var seg Segment
	found := false
	for _, s := range a.im.Segments() {
		if v.v >= s.Addr && v.v-s.Addr < s.Size {
			seg, found = s, true
		}
	}
	if !found || seg.Write {
		return nil, b.errf(in.PC, ErrIndirectJump, "jump table at 0x%x is not in read-only memory", v.v)
	}
	if a.mach == nil {
		m, err := NewMachine(a.im, a.p)
		if err != nil {
			return nil, err
		}
		a.mach = m
	}
	size := uint64(v.size)
	var out []uint64
	seen := map[uint64]bool{}
	for i := uint64(0); i < maxTable; i++ {
		at := v.v + i*size
		if at < seg.Addr || at+size > seg.Addr+seg.Size {
			break
		}
		var t uint64
		var err error
		if size == 8 {
			t, err = a.mach.Read64(at)
		} else {
			var t32 uint32
			t32, err = a.mach.Read32(at)
			t = uint64(t32)
			if v.signed {
				t = uint64(int64(int32(t32)))
			}
		}
		if err != nil || t&1 != 0 || t < sym.Addr || t-sym.Addr >= sym.Size {
			break
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, b.errf(in.PC, ErrIndirectJump, "jump table at 0x%x has no entry inside %s", v.v, sym.Name)
	}
	return out, nil
}

// solve turns the explored instructions into a graph, bounds its loops and takes the
// longest path.
func (b *fbuild) solve() error {
	pcs := make([]uint64, 0, len(b.insts))
	for pc := range b.insts {
		pcs = append(pcs, pc)
	}
	sort.Slice(pcs, func(i, j int) bool { return pcs[i] < pcs[j] })
	idx := make(map[uint64]int, len(pcs))
	for i, pc := range pcs {
		idx[pc] = i
	}
	n := len(pcs)
	g := &graph{n: n, out: make([][]wedge, n), pcs: pcs}
	for i, pc := range pcs {
		for _, e := range b.edges[pc] {
			to := exitNode
			if !e.exit {
				to = idx[e.to]
			}
			g.out[i] = append(g.out[i], wedge{to: to, w: e.w})
		}
	}
	entry := idx[b.f.addr]
	loops, err := g.loops(entry)
	if err != nil {
		if ie, ok := err.(*irreducible); ok {
			return b.errf(pcs[ie.at], ErrIrreducible, "a cycle is entered other than through one head (at 0x%x)", pcs[ie.head])
		}
		return err
	}
	// Bounds.
	var missing []string
	for _, l := range loops {
		head := pcs[l.head]
		n, ok := b.a.opt.LoopBounds[head]
		if ok {
			b.a.used[head] = true
			if n < 1 {
				return b.errf(head, ErrUnboundedLoop, "bound %d: a loop head runs at least once per entry", n)
			}
			l.bound = n
			continue
		}
		if n, ok := b.countedLoop(g, l, loops); ok {
			l.bound, l.counted = n, true
			continue
		}
		missing = append(missing, fmt.Sprintf("0x%x (%s+0x%x)", head, b.f.name, head-b.f.addr))
	}
	if len(missing) > 0 {
		first := loops[0].head
		for _, l := range loops {
			if l.bound == 0 {
				first = l.head
				break
			}
		}
		detail := fmt.Sprintf("the analysis cannot see how often it runs; bound head %s+0x%x with the most times it runs per entry into the loop",
			b.f.name, pcs[first]-b.f.addr)
		if len(missing) > 1 {
			detail += "; unbounded too: " + strings.Join(missing[1:], ", ")
		}
		return b.errf(pcs[first], ErrUnboundedLoop, "%s", detail)
	}
	// Collapse loops innermost first.
	rep := make([]int, n)
	for i := range rep {
		rep[i] = i
	}
	coll := map[int][]wedge{}
	for _, l := range loops {
		iter, exits, err := g.longest(l.head, l.head, l.body, rep, coll)
		if err != nil {
			return b.errf(pcs[l.head], ErrIrreducible, "%v", err)
		}
		if iter == nil {
			return b.errf(pcs[l.head], ErrIrreducible, "internal: loop has no back edge")
		}
		rest, ok := iter.mul(uint64(l.bound - 1))
		if !ok {
			return b.errf(pcs[l.head], ErrBadCode, "WCET overflows")
		}
		var ce []wedge
		var worst wt
		for _, e := range exits {
			w, ok := rest.add(e.w)
			if !ok {
				return b.errf(pcs[l.head], ErrBadCode, "WCET overflows")
			}
			if worst.less(w) {
				worst = w
			}
			ce = append(ce, wedge{to: e.to, w: w})
		}
		coll[l.head] = ce
		for v := range l.body {
			rep[v] = l.head
		}
		head := pcs[l.head]
		b.f.loops = append(b.f.loops, LoopWCET{Func: b.f.name, Head: head, Offset: head - b.f.addr,
			Bound: l.bound, Counted: l.counted, IterMax: iter.c, Cycles: worst.c})
	}
	_, exits, err := g.longest(rep[entry], -2, nil, rep, coll)
	if err != nil {
		return b.errf(b.f.addr, ErrIrreducible, "%v", err)
	}
	for _, e := range exits {
		if e.to == exitNode {
			b.f.returns = true
			b.f.w = e.w
		}
	}
	return nil
}

type graph struct {
	n   int
	out [][]wedge
	pcs []uint64
}

type loop struct {
	head    int
	body    map[int]bool // head included
	bound   int
	counted bool
}

type irreducible struct{ at, head int }

func (e *irreducible) Error() string { return "irreducible" }

// loops finds the natural loops (merged by head), innermost first, and fails on a cycle
// that is not one (irreducible control flow).
func (g *graph) loops(entry int) ([]*loop, error) {
	// Depth-first order, iteratively.
	const (
		white = iota
		grey
		black
	)
	color := make([]uint8, g.n)
	post := make([]int, 0, g.n)
	type frame struct{ v, i int }
	var retreat [][2]int
	stack := []frame{{entry, 0}}
	color[entry] = grey
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.i < len(g.out[top.v]) {
			e := g.out[top.v][top.i]
			top.i++
			if e.to == exitNode {
				continue
			}
			switch color[e.to] {
			case white:
				color[e.to] = grey
				stack = append(stack, frame{e.to, 0})
			case grey:
				retreat = append(retreat, [2]int{top.v, e.to})
			}
			continue
		}
		color[top.v] = black
		post = append(post, top.v)
		stack = stack[:len(stack)-1]
	}
	if len(retreat) == 0 {
		return nil, nil
	}
	// Dominators (Cooper, Harvey, Kennedy) over reverse postorder.
	order := make([]int, g.n) // postorder number
	for i := range order {
		order[i] = -1
	}
	for i, v := range post {
		order[v] = i
	}
	preds := make([][]int, g.n)
	for v := 0; v < g.n; v++ {
		if order[v] < 0 {
			continue
		}
		for _, e := range g.out[v] {
			if e.to != exitNode {
				preds[e.to] = append(preds[e.to], v)
			}
		}
	}
	idom := make([]int, g.n)
	for i := range idom {
		idom[i] = -1
	}
	idom[entry] = entry
	intersect := func(x, y int) int {
		for x != y {
			for order[x] < order[y] {
				x = idom[x]
			}
			for order[y] < order[x] {
				y = idom[y]
			}
		}
		return x
	}
	for changed := true; changed; {
		changed = false
		for i := len(post) - 1; i >= 0; i-- {
			v := post[i]
			if v == entry {
				continue
			}
			nd := -1
			for _, p := range preds[v] {
				if idom[p] < 0 {
					continue
				}
				if nd < 0 {
					nd = p
				} else {
					nd = intersect(p, nd)
				}
			}
			if nd != idom[v] {
				idom[v] = nd
				changed = true
			}
		}
	}
	dominates := func(h, v int) bool {
		for {
			if v == h {
				return true
			}
			if v == entry {
				return false
			}
			v = idom[v]
		}
	}
	byHead := map[int]*loop{}
	var heads []int
	for _, r := range retreat {
		src, h := r[0], r[1]
		if !dominates(h, src) {
			return nil, &irreducible{at: src, head: h}
		}
		l := byHead[h]
		if l == nil {
			l = &loop{head: h, body: map[int]bool{h: true}}
			byHead[h] = l
			heads = append(heads, h)
		}
		// Everything that reaches src without passing h.
		work := []int{src}
		for len(work) > 0 {
			v := work[len(work)-1]
			work = work[:len(work)-1]
			if l.body[v] {
				continue
			}
			l.body[v] = true
			work = append(work, preds[v]...)
		}
	}
	out := make([]*loop, 0, len(heads))
	for _, h := range heads {
		out = append(out, byHead[h])
	}
	sort.SliceStable(out, func(i, j int) bool {
		if len(out[i].body) != len(out[j].body) {
			return len(out[i].body) < len(out[j].body)
		}
		return out[i].head < out[j].head
	})
	return out, nil
}

// longest takes the longest paths from start over the graph with collapsed loops: nodes are
// mapped through rep, and a node with collapsed edges uses them unless it is head (the loop
// being solved, whose own instruction edges are wanted). With body non-nil, only nodes in
// body are inside; edges back to head are the loop's iterations (their worst weight is iter,
// nil if none) and edges leaving body are exits. With body nil every node is inside and the
// exits are the edges to exitNode. exits holds the worst weight per target.
func (g *graph) longest(start, head int, body map[int]bool, rep []int, coll map[int][]wedge) (iter *wt, exits []wedge, err error) {
	outOf := func(v int) []wedge {
		if v != head {
			if c, ok := coll[v]; ok {
				return c
			}
		}
		return g.out[v]
	}
	inside := func(v int) bool { return v != exitNode && (body == nil || body[v]) }
	mapTo := func(v int) int {
		if v == exitNode {
			return v
		}
		return rep[v]
	}
	// Topological order of the inside nodes reachable from start, edges to head ignored.
	const (
		white = iota
		grey
		black
	)
	color := map[int]uint8{}
	var post []int
	type frame struct{ v, i int }
	stack := []frame{{start, 0}}
	color[start] = grey
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		es := outOf(top.v)
		if top.i < len(es) {
			to := mapTo(es[top.i].to)
			top.i++
			if to == head || !inside(to) {
				continue
			}
			switch color[to] {
			case white:
				color[to] = grey
				stack = append(stack, frame{to, 0})
			case grey:
				return nil, nil, fmt.Errorf("a cycle through 0x%x remains after collapsing loops", g.pcs[to])
			}
			continue
		}
		color[top.v] = black
		post = append(post, top.v)
		stack = stack[:len(stack)-1]
	}
	dist := map[int]wt{start: {}}
	worstExit := map[int]wt{}
	var exitOrder []int
	for i := len(post) - 1; i >= 0; i-- {
		v := post[i]
		d := dist[v]
		for _, e := range outOf(v) {
			w, ok := d.add(e.w)
			if !ok {
				return nil, nil, fmt.Errorf("WCET overflows")
			}
			to := mapTo(e.to)
			switch {
			case to == head:
				if iter == nil || iter.less(w) {
					iter = &w
				}
			case inside(to):
				if old, ok := dist[to]; !ok || old.less(w) {
					dist[to] = w
				}
			default:
				old, ok := worstExit[to]
				if !ok {
					exitOrder = append(exitOrder, to)
				}
				if !ok || old.less(w) {
					worstExit[to] = w
				}
			}
		}
	}
	for _, t := range exitOrder {
		exits = append(exits, wedge{to: t, w: worstExit[t]})
	}
	return iter, exits, nil
}

// countedLoop recognises a simple counted loop and returns its bound. The loop has no inner
// loop and no call, and its only back edge is the taken edge of `bne t, u` (the not-taken
// edge leaves the loop). In the loop t is written by exactly one `addi t, t, s` or `addiw t,
// t, s` (s != 0) that every path from the head to the branch passes, and u (which may be
// zero) is not written at all. The loop is entered by a single edge, from a straight run of
// code that leaves t and u link-time constants c and k, with |c|, |k| < 2^30 and (k - c)
// a positive multiple of s. Then after the head's j-th run t = c + j·s at the branch, so the
// head runs exactly (k - c) / s times per entry unless the loop exits earlier.
func (b *fbuild) countedLoop(g *graph, l *loop, all []*loop) (int, bool) {
	for _, o := range all {
		if o != l && l.body[o.head] {
			return 0, false
		}
	}
	var back []int
	for v := range l.body {
		for _, e := range g.out[v] {
			if e.to == l.head {
				back = append(back, v)
			}
		}
	}
	if len(back) != 1 {
		return 0, false
	}
	br := b.insts[g.pcs[back[0]]]
	if br.Kind != BNE {
		return 0, false
	}
	if tgt, _ := br.Target(); tgt != g.pcs[l.head] || br.Next() == tgt {
		return 0, false
	}
	// Which operand steps: exactly one of them is written in the loop.
	written := map[uint8][]int{}
	for v := range l.body {
		in := b.insts[g.pcs[v]]
		if (in.Kind == JAL || in.Kind == JALR) && in.Rd != 0 {
			return 0, false
		}
		if writesRd(in) {
			written[in.Rd] = append(written[in.Rd], v)
		}
	}
	t, u := br.Rs1, br.Rs2
	if len(written[t]) == 0 {
		t, u = u, t
	}
	if t == 0 || len(written[t]) != 1 || len(written[u]) != 0 {
		return 0, false
	}
	dec := written[t][0]
	step := b.insts[g.pcs[dec]]
	if (step.Kind != ADDI && step.Kind != ADDIW) || step.Rs1 != t || step.Imm == 0 {
		return 0, false
	}
	// Every path from the head to the branch passes the step: without it, the branch is
	// unreachable.
	seen := map[int]bool{l.head: true}
	work := []int{l.head}
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		if v == dec {
			continue
		}
		for _, e := range g.out[v] {
			if e.to != exitNode && l.body[e.to] && !seen[e.to] {
				seen[e.to] = true
				work = append(work, e.to)
			}
		}
	}
	if seen[back[0]] {
		return 0, false
	}
	// A single entry edge, and the values of t and u on it.
	entries := 0
	var from int
	for v := 0; v < g.n; v++ {
		if l.body[v] {
			continue
		}
		for _, e := range g.out[v] {
			if e.to == l.head {
				entries++
				from = v
			}
		}
	}
	if entries != 1 {
		return 0, false
	}
	fin := b.insts[g.pcs[from]]
	c, ok1 := b.valueAfter(fin, t)
	k, ok2 := b.valueAfter(fin, u)
	const lim = 1 << 30
	if !ok1 || !ok2 || c <= -lim || c >= lim || k <= -lim || k >= lim {
		return 0, false
	}
	d := k - c
	if d%step.Imm != 0 || d/step.Imm <= 0 {
		return 0, false
	}
	return int(d / step.Imm), true
}

// valueAfter is the link-time constant register r holds after the instruction in runs, when
// in is not a branch, jalr or call.
func (b *fbuild) valueAfter(in Inst, r uint8) (int64, bool) {
	if r == 0 {
		return 0, true
	}
	if in.Kind.IsBranch() || in.Kind == JALR || in.Kind == JAL && in.Rd != 0 {
		return 0, false
	}
	v := b.track(in.PC, r)
	if writesRd(in) && in.Rd == r {
		var regs [32]absVal
		regs[in.Rs1] = b.track(in.PC, in.Rs1)
		regs[in.Rs2] = b.track(in.PC, in.Rs2)
		v = absStep(in, &regs)
	}
	return int64(v.v), v.kind == absConst
}

// writesRd reports whether in writes its rd.
func writesRd(in Inst) bool {
	if in.Rd == 0 {
		return false
	}
	switch in.Kind.Format() {
	case FmtR, FmtI, FmtUnary, FmtLoad, FmtU, FmtJ, FmtJALR:
		return true
	}
	return false
}
