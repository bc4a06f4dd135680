// Package trap holds the faults fwsim reports when firmware does something the engine would
// not survive. Each is a sentinel; a *Trap carries where it happened. Test with errors.Is.
package trap

import (
	"errors"
	"fmt"
)

var (
	ErrIllegal    = errors.New("illegal instruction")
	ErrMisaligned = errors.New("misaligned access")
	ErrOutOfRange = errors.New("access out of range")
	ErrEcall      = errors.New("ecall")
	ErrEbreak     = errors.New("ebreak")
	ErrStepLimit  = errors.New("step limit reached")
)

// Trap is a fault at one instruction.
type Trap struct {
	PC     uint64
	Insn   uint32 // the raw instruction: 16 bits for a compressed one
	Err    error  // one of the sentinels above
	Detail string // e.g. "load 8 bytes at 0x1003"
}

func (t *Trap) Error() string {
	s := fmt.Sprintf("pc 0x%x: insn 0x%08x: %v", t.PC, t.Insn, t.Err)
	if t.Detail != "" {
		s += ": " + t.Detail
	}
	return s
}

func (t *Trap) Unwrap() error { return t.Err }
