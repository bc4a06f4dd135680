package fwsim

import (
	"fmt"

	"github.com/nicc-dev/nicc/fwsim/trap"
)

// run executes from op idx until the call returns to ReturnAddress or faults.
//
// It runs m.fast, a run at a time (see fuse.go): entering a run counts its instructions and
// cycles to its end, and a fault inside takes back what follows the faulting op. A run that
// would cross the step limit is run from m.ops, one instruction per run. exec does the
// work; run turns its exits into results and traps.
func (m *Machine) run(idx int) (insns, cycles uint64, err error) {
	ops, stepping := m.fast, false
	for {
		var why exit
		var addr uint64
		idx, insns, cycles, why, addr = m.exec(ops, idx, insns, cycles)
		o := &ops[idx]
		switch why {
		case exitReturn:
			return insns, cycles, nil
		case exitLimit:
			if !stepping {
				ops, stepping = m.ops, true
				continue
			}
			m.stopIdx = idx
			return insns, cycles, m.fault(idx, trap.ErrStepLimit, "after %d instructions", insns)
		case exitJALR:
			return insns, cycles, &trap.Trap{PC: addr, Err: trap.ErrIllegal,
				Detail: fmt.Sprintf("jalr from 0x%x to an address that is not a decoded instruction", m.pcs[idx])}
		}
		// A fused op faults in its first instruction, a load (fuse.go): m.ops[idx] is that
		// instruction alone, and the same op as o when o is not fused.
		first := &m.ops[idx]
		if counts(o.kind) {
			// The run was counted to its end: the faulting instruction counts, what follows
			// it does not.
			insns -= uint64(o.runInsns) - 1
			cycles -= uint64(o.runCycles) - uint64(first.cost)
		}
		return insns, cycles, m.opFault(idx, first.kind, addr)
	}
}

// exit says why exec returned.
type exit uint8

const (
	exitReturn exit = iota // jalr to ReturnAddress: the call is over
	exitLimit              // the run at idx would cross the step limit
	exitFault              // op idx faults (a load or store at addr, ecall, ebreak, a pseudo op)
	exitJALR               // the jalr at idx goes to addr, which is not a decoded instruction
)

// opFault is the trap of op i of kind k, which faulted (a load or store: at addr).
func (m *Machine) opFault(i int, k Kind, addr uint64) error {
	switch k {
	case ECALL:
		return m.fault(i, trap.ErrEcall, "a7=%d", m.regs[17])
	case EBREAK:
		return m.fault(i, trap.ErrEbreak, "")
	case opIllegal:
		return m.fault(i, trap.ErrIllegal, "cannot decode")
	case opTruncated:
		return m.fault(i, trap.ErrIllegal, "instruction runs past the end of its segment")
	case opEnd:
		return m.fault(i, trap.ErrIllegal, "ran past the end of executable code")
	case opBadJump:
		return &trap.Trap{PC: m.pcs[i], Err: trap.ErrIllegal,
			Detail: fmt.Sprintf("jump from 0x%x to an address that is not a decoded instruction", uint64(m.fast[i].imm))}
	}
	if k.IsLoad() || k.IsStore() {
		return m.memFault(i, k, addr)
	}
	return m.fault(i, trap.ErrIllegal, "no handler for %v", k)
}

// fault builds the trap for op i.
func (m *Machine) fault(i int, err error, format string, a ...any) error {
	return &trap.Trap{PC: m.pcs[i], Insn: m.raws[i], Err: err, Detail: fmt.Sprintf(format, a...)}
}

func (m *Machine) memFault(i int, kind Kind, addr uint64) error {
	n := uint64(kind.AccessSize())
	what := "load"
	if kind.IsStore() {
		what = "store"
	}
	if addr&(n-1) != 0 {
		return m.fault(i, trap.ErrMisaligned, "%s %d bytes at 0x%x", what, n, addr)
	}
	size := uint64(len(m.mem))
	if kind.IsStore() && addr >= m.base && addr-m.base < size {
		return m.fault(i, trap.ErrOutOfRange, "store %d bytes at 0x%x: read-only memory (below 0x%x)", n, addr, m.base+m.storeLo)
	}
	return m.fault(i, trap.ErrOutOfRange, "%s %d bytes at 0x%x outside memory [0x%x, 0x%x)", what, n, addr, m.base, m.base+size)
}
