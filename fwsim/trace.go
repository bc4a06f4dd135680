package fwsim

import (
	"errors"
	"fmt"

	"github.com/nicc-dev/nicc/fwsim/trap"
)

// Trace is Call made one instruction at a time: before each instruction runs, it calls visit
// with it (an instruction that does not decode has Kind Invalid; running it traps), while Reg
// still reads the registers as the instruction will find them. Result and error are those of
// Call.
//
// It is slow, one step of the interpreter per instruction: a diagnostic, e.g. to count the
// iterations of a loop (wcet.LoopRuns).
func (m *Machine) Trace(entry string, visit func(Inst), args ...uint64) (res Result, err error) {
	s, ok := m.im.syms[entry]
	if !ok {
		return Result{}, fmt.Errorf("fwsim: call %q: %w", entry, ErrNoSymbol)
	}
	idx, err := m.enter(s.Addr, args)
	if err != nil {
		return Result{}, err
	}
	defer m.recoverCall(s.Addr, &res, &err)
	limit := m.StepLimit
	m.StepLimit = 1
	defer func() { m.StepLimit = limit }()
	for {
		if m.ops[idx].kind == opGoto {
			idx = int(m.ops[idx].target)
		}
		if res.Insns >= limit {
			return res, m.fault(idx, trap.ErrStepLimit, "after %d instructions", res.Insns)
		}
		in, _ := Decode(m.raws[idx], m.pcs[idx])
		visit(in)
		insns, cycles, err := m.run(idx)
		res.Insns += insns
		res.Cycles += cycles
		res.A0 = m.regs[10]
		if err == nil || !errors.Is(err, trap.ErrStepLimit) {
			return res, err
		}
		idx = m.stopIdx
	}
}
