package fwsim

import (
	"errors"
	"fmt"

	"github.com/nicc-dev/nicc/fwsim/trap"
)

// LoopRuns is Call made one instruction at a time, counting the runs of loop heads: runs[i]
// is the most times loops[i].Head ran in one entry into the loop. A run of the head right
// after one of the loop's Latches, in the same call of its function, is another iteration;
// any other run starts a new entry. A call made inside the loop stays in it until it
// returns (to the address in its link register, with sp as it was). Result and error are
// those of Call.
//
// It is slow, one step of the interpreter per instruction: a diagnostic, e.g. to name the
// loop bound that a run above its WCET exceeded.
func (m *Machine) LoopRuns(loops []LoopWCET, entry string, args ...uint64) (runs []int, res Result, err error) {
	s, ok := m.im.syms[entry]
	if !ok {
		return nil, Result{}, fmt.Errorf("fwsim: call %q: %w", entry, ErrNoSymbol)
	}
	idx, err := m.enter(s.Addr, args)
	if err != nil {
		return nil, Result{}, err
	}
	defer m.recoverCall(s.Addr, &res, &err)
	heads := map[uint64][]int{}
	latch := make([]map[uint64]bool, len(loops))
	for i, l := range loops {
		heads[l.Head] = append(heads[l.Head], i)
		latch[i] = map[uint64]bool{}
		for _, a := range l.Latches {
			latch[i][a] = true
		}
	}
	runs = make([]int, len(loops))
	cur := make([]int, len(loops))
	// A frame is one call in progress: where it returns to, sp at the call, and the last
	// instruction it ran.
	type frame struct {
		ret, sp uint64
		prev    uint64
		ran     bool
	}
	frames := []frame{{ret: ReturnAddress, sp: m.stackTop}}
	limit := m.StepLimit
	m.StepLimit = 1
	defer func() { m.StepLimit = limit }()
	for {
		if m.ops[idx].kind == opGoto {
			idx = int(m.ops[idx].target)
		}
		if res.Insns >= limit {
			return runs, res, m.fault(idx, trap.ErrStepLimit, "after %d instructions", res.Insns)
		}
		pc, o := m.pcs[idx], m.ops[idx]
		f := &frames[len(frames)-1]
		for _, i := range heads[pc] {
			if f.ran && latch[i][f.prev] {
				cur[i]++
			} else {
				cur[i] = 1
			}
			runs[i] = max(runs[i], cur[i])
		}
		f.prev, f.ran = pc, true
		sp := m.regs[2]
		insns, cycles, err := m.run(idx)
		res.Insns += insns
		res.Cycles += cycles
		res.A0 = m.regs[10]
		if err == nil {
			return runs, res, nil
		}
		if !errors.Is(err, trap.ErrStepLimit) {
			return runs, res, err
		}
		idx = m.stopIdx
		n := len(frames)
		switch {
		case (o.kind == JAL || o.kind == JALR) && o.rd != sinkReg:
			frames = append(frames, frame{ret: m.regs[o.rd], sp: sp})
		case n > 1 && m.pcs[idx] == frames[n-1].ret && m.regs[2] == frames[n-1].sp:
			frames = frames[:n-1]
		}
	}
}
