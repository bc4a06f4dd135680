package wcet

// WCET: exploring each function's control flow into a graph of instructions, with calls,
// tail calls and returns.

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/nicc-dev/nicc/fwsim"
)

// wt is a path weight: cycles, then instructions.
type wt struct{ c, n uint64 }

func (x wt) less(y wt) bool { return x.c < y.c || x.c == y.c && x.n < y.n }

// weightLimit caps every weight: far beyond any decision, far below overflow.
const weightLimit = 1 << 60

func (x wt) add(y wt) (wt, bool) {
	c, n := x.c+y.c, x.n+y.n
	return wt{c, n}, c <= weightLimit && n <= weightLimit && c >= x.c && n >= x.n
}

func (x wt) mul(k uint64) (wt, bool) {
	hc, c := bits.Mul64(x.c, k)
	hn, n := bits.Mul64(x.n, k)
	return wt{c, n}, hc == 0 && hn == 0 && c <= weightLimit && n <= weightLimit
}

// exitNode is the target of edges that leave the function (ret, tail call).
const exitNode = -1

type wedge struct {
	to int // node index, or exitNode
	w  wt
}

type analysis struct {
	im     *fwsim.Image
	p      *fwsim.Profile
	opt    Options
	funcs  map[uint64]*fnBound
	active map[uint64]bool
	stack  []uint64
	starts map[uint64]string // function symbols by address
	used   map[uint64]bool   // loop bounds consumed
	mach   *fwsim.Machine    // lazily, to read jump tables
}

type fnBound struct {
	name    string
	addr    uint64
	w       wt
	returns bool
	calls   map[uint64]bool
	loops   []Loop
	// keepsSP: sp is back at its value on entry wherever the function returns.
	// writesAbove: it (or a function it calls) may store at or above sp on entry, into its
	// caller's frame. See checkReturns.
	keepsSP, writesAbove bool
}

func (a *analysis) name(addr uint64) string {
	if n, ok := a.starts[addr]; ok {
		return n
	}
	return fmt.Sprintf("0x%x", addr)
}

// fbuild is the state of one function's analysis.
type fbuild struct {
	a     *analysis
	f     *fnBound
	insts map[uint64]fwsim.Inst
	edges map[uint64][]pedge // by source pc
	preds map[uint64]int     // number of intra-function predecessors
	// resolved jalr: pc -> abstract value of rs1 used, re-checked once the graph is complete
	resolved map[uint64]absVal
	callees  map[uint64]*fnBound // by the pc of the call, for calls that return
}

// pedge is an edge by pc: to is a pc, or exit (a return, or a tail call to tail).
type pedge struct {
	to   uint64
	exit bool
	tail *fnBound
	w    wt
}

func (b *fbuild) errf(pc uint64, err error, format string, args ...any) error {
	return &Error{Func: b.f.name, FuncAddr: b.f.addr, PC: pc, Where: b.a.where(pc, b.f), Err: err, Detail: fmt.Sprintf(format, args...)}
}

// locate names pc by the function symbol that holds it, else by f (the function being
// analysed, which a jump may have led outside its symbol) when pc is past f's start.
func (a *analysis) locate(pc uint64, f *fnBound) (name string, off uint64, ok bool) {
	if s, found := a.im.SymbolAt(pc); found && s.Func {
		return a.name(s.Addr), pc - s.Addr, true
	}
	if f != nil && pc >= f.addr {
		return f.name, pc - f.addr, true
	}
	return "", 0, false
}

// where is locate as "func+0xoff", or "".
func (a *analysis) where(pc uint64, f *fnBound) string {
	if name, off, ok := a.locate(pc, f); ok {
		return fmt.Sprintf("%s+0x%x", name, off)
	}
	return ""
}

// whereOr is where, or pc in hex: either is a loop head ParseLoopHead reads.
func (a *analysis) whereOr(pc uint64, f *fnBound) string {
	if w := a.where(pc, f); w != "" {
		return w
	}
	return fmt.Sprintf("0x%x", pc)
}

// function analyses the function at addr (memoised). site is the pc of the call, for errors.
func (a *analysis) function(addr, site uint64) (*fnBound, error) {
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
		return nil, &Error{Func: a.name(caller), FuncAddr: caller, PC: site, Where: a.where(site, nil), Err: ErrRecursion,
			Detail: "call chain " + strings.Join(chain, " -> ")}
	}
	a.active[addr] = true
	a.stack = append(a.stack, addr)
	defer func() {
		delete(a.active, addr)
		a.stack = a.stack[:len(a.stack)-1]
	}()
	f := &fnBound{name: a.name(addr), addr: addr, calls: map[uint64]bool{}}
	b := &fbuild{a: a, f: f, insts: map[uint64]fwsim.Inst{}, edges: map[uint64][]pedge{},
		preds: map[uint64]int{}, resolved: map[uint64]absVal{}, callees: map[uint64]*fnBound{}}
	if err := b.explore(); err != nil {
		return nil, err
	}
	if err := b.checkReturns(); err != nil {
		return nil, err
	}
	if err := b.solve(); err != nil {
		return nil, err
	}
	a.funcs[addr] = f
	return f, nil
}

func (a *analysis) cost(in fwsim.Inst) wt { return wt{a.p.MaxCost(in.Class()), 1} }

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
		in, err := fwsim.Decode(raw, pc)
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
		return []pedge{{exit: true, tail: g, w: tw}}, nil
	}
	return []pedge{{to: pc, w: w}}, nil
}

// call is a call from the instruction in to the function at target, returning to in.Next().
func (b *fbuild) call(in fwsim.Inst, target uint64) ([]pedge, error) {
	if _, isFunc := b.a.starts[target]; !isFunc {
		return nil, b.errf(in.PC, ErrIndirectJump, "call to 0x%x, which is not the start of a function symbol", target)
	}
	if target == b.f.addr {
		return nil, b.errf(in.PC, ErrRecursion, "call chain %s -> %s", b.f.name, b.f.name)
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
	b.callees[in.PC] = g
	return []pedge{{to: in.Next(), w: w}}, nil
}

func (b *fbuild) successors(in fwsim.Inst) ([]pedge, error) {
	a := b.a
	p := a.p
	switch {
	case in.Kind.IsBranch():
		t, _ := in.Target()
		taken, err := b.edgeTo(in.PC, t, wt{p.Cost(fwsim.ClassBranch, true), 1})
		if err != nil {
			return nil, err
		}
		fall, err := b.edgeTo(in.PC, in.Next(), wt{p.Cost(fwsim.ClassBranch, false), 1})
		if err != nil {
			return nil, err
		}
		return append(taken, fall...), nil
	case in.Kind == fwsim.JAL:
		t, _ := in.Target()
		switch in.Rd {
		case 0:
			return b.edgeTo(in.PC, t, a.cost(in))
		case 1:
			return b.call(in, t)
		}
		return nil, b.errf(in.PC, ErrIndirectJump, "jal with link register %s: only ra calls are analysed", fwsim.RegName(in.Rd))
	case in.Kind == fwsim.JALR:
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
			return nil, b.errf(in.PC, ErrIndirectJump, "jalr with link register %s: only ra calls are analysed", fwsim.RegName(in.Rd))
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
		return nil, b.errf(in.PC, ErrIndirectJump, "%s through %s, whose value is not a link-time constant (%s)", what, fwsim.RegName(in.Rs1), in)
	case in.Kind == fwsim.ECALL || in.Kind == fwsim.EBREAK:
		return nil, nil // traps: the run ends in an error, not a measurement
	}
	return b.edgeTo(in.PC, in.Next(), a.cost(in))
}
