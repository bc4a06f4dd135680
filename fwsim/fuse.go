package fwsim

import "math"

// The fast path. run executes one of two op slices built from the same decoding:
//
//   - m.ops: one op per instruction, each a run of its own, so the step limit is checked
//     before every instruction (Trace steps through it);
//   - m.fast: the same ops where common sequences are fused into one op (the superinstructions
//     below), and where every op knows the instructions and cycles from it to the end of its
//     run, the straight line up to the next control transfer (jal does not end it: its run
//     goes on at its destination). run counts a whole run when it enters it and takes back
//     what follows a fault, so most ops do no counting at all.
//
// Both give the same instructions, cycles, traps and state; run switches to m.ops when a run
// would cross the step limit, so the limit stops exactly where one instruction at a time
// stops. fastpath_test.go holds m.fast to the interpreter as it was before (reference_test.go).

// Fused kinds, only in m.fast. An op of one stands for its n instructions at op indices idx,
// idx+1, ...: those ops stay in place after it, as a jump may land on any of them. Fused ops
// never fault.
const (
	opLI = opGoto + 1 + iota // lui rd, hi; addi(w) rd, rd, lo: rd = imm, the constant
	// rd = imm (the constant an lui, a li or an lui + addi(w) pair puts in rd), then a branch
	// comparing rs1 with it: taken if r[rs1] OP imm. The branch's order of operands is folded
	// into the comparison (blt rd, x is x > imm).
	opBrLT
	opBrGE
	opBrGT
	opBrLE
	opBrLTU
	opBrGEU
	opBrGTU
	opBrLEU
	opBrEQ
	opBrNE
	// A load, then what reads it: ld rd, imm(rs1), then the instruction after it, rs2 = x OP
	// y (add, sub, mul), or for opLdMulAdd the pair mul p, rs2, rd; add y, p, x (either order
	// of operands in each; p is the op's target) that multiplies the loaded word and adds the
	// product up. The load is the only instruction of a fused op that can fault, and it
	// faults first (run).
	opLdAdd
	opLdSub
	opLdMul
	opLdMulAdd
	// An immediate op, then an add or max of its result: rd = rs1 OP imm, then y = rd OP2 x
	// (either order of operands). slli + add indexes a table (rank trees), andi + add too
	// (LSTM), srai(w) + max is a relu.
	opSlliAdd
	opAndiAdd
	opSraiMax
	opSraiwMax
	opFusedEnd
)

// maxRunInsns caps a run's length (runInsns and runNeed are 16 bits): a longer straight line
// is cut into runs of at most this many instructions.
const maxRunInsns = 1 << 15

// counts reports whether op kind k is an instruction the counts include: not a pseudo kind.
func counts(k Kind) bool { return k > Invalid && k < kindEnd || k >= opLI && k < opFusedEnd }

// endsRun reports whether an op of kind k can continue elsewhere than at the op after it
// (jal continues at its destination, known before running: its run goes on there).
func endsRun(k Kind) bool {
	switch {
	case k.IsBranch(), k == JALR, k == ECALL, k == EBREAK:
		return true
	case k >= opBrLT && k <= opBrNE:
		return true
	}
	return !counts(k)
}

// prepareRuns sets the run fields of m.ops (every op its own run) and builds m.fast.
func (m *Machine) prepareRuns() {
	for i := range m.ops {
		o := &m.ops[i]
		o.n, o.last, o.runNeed, o.runCycles = 1, true, 1, o.cost
		o.runInsns = 0
		if counts(o.kind) {
			o.runInsns = 1
		}
	}
	m.fast = make([]op, len(m.ops))
	copy(m.fast, m.ops)
	for i := range m.fast {
		m.fuse(i)
	}
	m.setRuns()
}

// next is the op that runs after m.fast[i] in the same run: a jal's destination, or the op
// after it.
func (m *Machine) next(i int) int {
	if o := &m.fast[i]; o.kind == JAL {
		return int(o.target)
	}
	return i + int(m.fast[i].n)
}

// setRuns sets the run fields of m.fast: each op's own counts plus those of the op after it
// in its run, unless it ends the run. A run follows jal to its destination, so the op after
// can come earlier: each op's run is followed to an op already done, then counted back; a jal
// back into the run being followed (a loop without a branch) ends its run.
func (m *Machine) setRuns() {
	const (
		unseen = iota
		onPath
		done
	)
	state := make([]uint8, len(m.fast))
	var path []int
	for start := range m.fast {
		path = path[:0]
		for i := start; state[i] == unseen; i = m.next(i) {
			state[i] = onPath
			path = append(path, i)
			o := &m.fast[i]
			o.last = endsRun(o.kind)
			o.runInsns, o.runNeed, o.runCycles = uint16(o.n), uint16(o.n), o.cost
			if !counts(o.kind) {
				o.runInsns, o.runNeed = 0, 1
			}
			if !o.last && state[m.next(i)] == onPath {
				o.last = true
			}
			if o.last {
				break
			}
		}
		for k := len(path) - 1; k >= 0; k-- {
			i := path[k]
			state[i] = done
			o := &m.fast[i]
			if o.last {
				continue
			}
			next := &m.fast[m.next(i)]
			insns := uint64(o.runNeed) + uint64(next.runNeed)
			cycles := uint64(o.runCycles) + uint64(next.runCycles)
			if insns > maxRunInsns || cycles > math.MaxUint32 {
				o.last = true
				continue
			}
			o.runInsns += next.runInsns
			o.runNeed = uint16(insns)
			o.runCycles = uint32(cycles)
		}
	}
}

// fuse replaces m.fast[i] with a superinstruction when the ops from i form one.
func (m *Machine) fuse(i int) {
	ops := m.ops
	if ops[i].kind == LD {
		if f, ok := fuseLoad(ops, i); ok {
			m.fast[i] = f
		}
		return
	}
	if f, ok := fuseImm(ops, i); ok {
		m.fast[i] = f
		return
	}
	rd, k, n, ok := constAt(ops, i)
	if !ok {
		return
	}
	cost := ops[i].cost
	if n == 2 {
		cost += ops[i+1].cost
	}
	if b := ops[i+n]; b.kind.IsBranch() && (b.rs1 == rd) != (b.rs2 == rd) {
		x, swapped := b.rs1, false
		if b.rs1 == rd {
			x, swapped = b.rs2, true
		}
		m.fast[i] = op{kind: brKind(b.kind, swapped), rd: rd, rs1: x, imm: k, target: b.target,
			cost: cost + b.cost, n: uint8(n + 1)}
		return
	}
	if n == 2 {
		m.fast[i] = op{kind: opLI, rd: rd, imm: k, cost: cost, n: 2}
	}
}

// constAt reports whether the ops from i put a constant in a register: lui rd, hi followed by
// addi or addiw rd, rd, lo (n = 2), or a lone lui or li (addi rd, zero, imm; n = 1). rd is
// never x0 (decoding sends its writes to sinkReg).
func constAt(ops []op, i int) (rd uint8, k int64, n int, ok bool) {
	a := ops[i]
	switch {
	case a.kind == LUI && a.rd != sinkReg:
		b := ops[i+1]
		if (b.kind == ADDI || b.kind == ADDIW) && b.rd == a.rd && b.rs1 == a.rd {
			k = a.imm + b.imm
			if b.kind == ADDIW {
				k = int64(int32(k))
			}
			return a.rd, k, 2, true
		}
		return a.rd, a.imm, 1, true
	case a.kind == ADDI && a.rs1 == 0 && a.rd != sinkReg:
		return a.rd, a.imm, 1, true
	}
	return 0, 0, 0, false
}

// brKind is the fused kind of branch kind b with the constant as its second operand, or as
// its first if swapped.
func brKind(b Kind, swapped bool) Kind {
	switch b {
	case BEQ:
		return opBrEQ
	case BNE:
		return opBrNE
	case BLT:
		if swapped {
			return opBrGT
		}
		return opBrLT
	case BGE:
		if swapped {
			return opBrLE
		}
		return opBrGE
	case BLTU:
		if swapped {
			return opBrGTU
		}
		return opBrLTU
	}
	if swapped { // BGEU
		return opBrLEU
	}
	return opBrGEU
}

// fuseLoad is the superinstruction of the ld at ops[i] and what follows it, if they form one
// (see opLdAdd).
func fuseLoad(ops []op, i int) (op, bool) {
	ld := ops[i]
	if i+2 >= len(ops) || ld.rd == sinkReg {
		return op{}, false
	}
	b, c := ops[i+1], ops[i+2]
	t := ld.rd
	f := op{rd: t, rs1: ld.rs1, imm: ld.imm, cost: ld.cost + b.cost, n: 2}
	if p := b.rd; b.kind == MUL && (b.rs1 == t) != (b.rs2 == t) && c.kind == ADD && (c.rs1 == p) != (c.rs2 == p) {
		f.kind, f.rs2, f.target, f.x, f.y = opLdMulAdd, b.rs1^b.rs2^t, int32(p), c.rs1^c.rs2^p, c.rd
		f.cost += c.cost
		f.n = 3
		return f, true
	}
	switch b.kind {
	case ADD:
		f.kind = opLdAdd
	case SUB:
		f.kind = opLdSub
	case MUL:
		f.kind = opLdMul
	default:
		return op{}, false
	}
	f.rs2, f.x, f.y = b.rd, b.rs1, b.rs2
	return f, true
}

// immPairs are the pairs fuseImm fuses: an immediate op's kind and the kind after it, and
// the fused kind.
var immPairs = []struct{ first, then, fused Kind }{
	{SLLI, ADD, opSlliAdd},
	{ANDI, ADD, opAndiAdd},
	{SRAI, MAX, opSraiMax},
	{SRAIW, MAX, opSraiwMax},
}

// fuseImm is the superinstruction of the immediate op at ops[i] and the op after it that
// reads its result, if they form one (see opSlliAdd).
func fuseImm(ops []op, i int) (op, bool) {
	a := ops[i]
	if i+1 >= len(ops) || a.rd == sinkReg {
		return op{}, false
	}
	b, t := ops[i+1], a.rd
	for _, p := range immPairs {
		if a.kind == p.first && b.kind == p.then && (b.rs1 == t) != (b.rs2 == t) {
			return op{kind: p.fused, rd: t, rs1: a.rs1, imm: a.imm, x: b.rs1 ^ b.rs2 ^ t, y: b.rd,
				cost: a.cost + b.cost, n: 2}, true
		}
	}
	return op{}, false
}
