package artifact

import (
	"errors"
	"fmt"

	"github.com/nicc-dev/nicc/prove"

	"github.com/nicc-dev/nicc/nicsdk"
)

// FailKind is the kind of check a compile failed.
type FailKind int

const (
	// FailCheck is any other failed check: the firmware cannot be bounded, it faulted, the
	// sources differ from what nicc generated, or they failed to build.
	FailCheck FailKind = iota
	// FailMismatch: the golden model, the host builds and fwsim differ on a vector.
	FailMismatch
	// FailUBSan: the UBSan host build reported undefined behaviour.
	FailUBSan
	// FailOverBudget: the WCET does not fit the budget.
	FailOverBudget
	// FailOverMemory: the firmware's .text or .rodata is over the memory budget.
	FailOverMemory
	// FailProperty: a property --require named is not proven (refuted or unknown).
	FailProperty
	failKindEnd
)

var failKindNames = [...]string{FailCheck: "check", FailMismatch: "mismatch", FailUBSan: "ubsan", FailOverBudget: "over_budget", FailOverMemory: "over_memory", FailProperty: "property"}

func (k FailKind) String() string {
	if k >= 0 && k < failKindEnd {
		return failKindNames[k]
	}
	return fmt.Sprintf("failkind(%d)", int(k))
}

// Failure is the check a compile failed, as report.json holds it.
type Failure struct {
	Stage   string `json:"stage"` // the stage that failed: build, verify, budget
	Kind    string `json:"kind"`  // a FailKind's name
	Message string `json:"message"`
	// Mismatch is the first vector the implementations differ on (kind mismatch).
	Mismatch *Mismatch `json:"mismatch,omitempty"`
}

// FailureOf describes err, a *CheckError that stage returned.
func FailureOf(stage string, err error) *Failure {
	f := &Failure{Stage: stage, Kind: FailCheck.String(), Message: err.Error()}
	var me *MismatchError
	var ue *UBSanError
	var oe *OverMemoryError
	var pe *prove.NotProvenError
	switch {
	case errors.As(err, &pe):
		f.Kind = FailProperty.String()
	case errors.As(err, &oe):
		f.Kind = FailOverMemory.String()
	case errors.As(err, &me):
		f.Kind, f.Mismatch = FailMismatch.String(), me.First
	case errors.As(err, &ue):
		f.Kind = FailUBSan.String()
	}
	return f
}

// Mismatch is the first call on which the implementations verify compares differ: a call of
// the policy (Vector) or an event of an RL-CC sequence (Sequence, Event), its inputs, and
// what each implementation returned.
type Mismatch struct {
	Entry    string `json:"entry"`
	Vector   int    `json:"vector,omitempty"`   // the call's number among the policy vectors
	Sequence int    `json:"sequence,omitempty"` // the event sequence's number
	Event    int    `json:"event,omitempty"`    // the event's number within its sequence
	// Kind is how the vector was made (a VecKind), or how the sequence's flow context starts.
	Kind  string    `json:"kind"`
	Split string    `json:"split,omitempty"` // the split a threshold vector aims at: "tree T node N: x <= raw"
	X     []int32   `json:"x,omitempty"`     // the policy's raw inputs
	In    *EventArg `json:"event_in,omitempty"`
	// StateBefore is a stateful policy's state words, or the flow context's words, before
	// the call.
	StateBefore []uint32 `json:"state_before,omitempty"`

	Golden CallOutput `json:"golden"`
	Host   CallOutput `json:"host_c"`
	UBSan  CallOutput `json:"host_c_ubsan"`
	Fwsim  CallOutput `json:"fwsim"`
}

// CallOutput is what one implementation returned: the policy's y or the handler's rate,
// and the state words (or the flow context) after the call.
type CallOutput struct {
	Return     int64    `json:"return"`
	StateAfter []uint32 `json:"state_after,omitempty"`
}

// EventArg is the event a handler call was given.
type EventArg struct {
	Type        string `json:"type"`
	RTTNs       uint32 `json:"rtt_ns"`
	TimestampNs uint64 `json:"timestamp_ns"`
	FlowID      uint32 `json:"flow_id"`
	TxBytes     uint32 `json:"tx_bytes"`
}

// NewEventArg is e as a mismatch report gives it.
func NewEventArg(e nicsdk.Event) *EventArg {
	return &EventArg{Type: e.Type.String(), RTTNs: e.RTTNs, TimestampNs: e.TimestampNs, FlowID: e.FlowID, TxBytes: e.TxBytes}
}

func (m *Mismatch) String() string {
	out := func(o CallOutput) string {
		if len(o.StateAfter) == 0 {
			return fmt.Sprint(o.Return)
		}
		if m.In != nil {
			return fmt.Sprintf("rate %d context %v", o.Return, o.StateAfter)
		}
		return fmt.Sprintf("%d %v", o.Return, o.StateAfter)
	}
	outs := fmt.Sprintf("golden %s, host C %s, host C with UBSan %s, fwsim %s", out(m.Golden), out(m.Host), out(m.UBSan), out(m.Fwsim))
	switch {
	case m.In != nil:
		return fmt.Sprintf("%s on event %d of sequence %d (%s), event %+v, context before %v: %s",
			m.Entry, m.Event, m.Sequence, m.Kind, *m.In, m.StateBefore, outs)
	case m.StateBefore != nil:
		return fmt.Sprintf("%s(x, state) on vector %d (%s), x = %v, state %v: %s", m.Entry, m.Vector, m.Kind, m.X, m.StateBefore, outs)
	}
	split := ""
	if m.Split != "" {
		split = ", " + m.Split
	}
	return fmt.Sprintf("%s(x) on vector %d (%s%s), x = %v: %s", m.Entry, m.Vector, m.Kind, split, m.X, outs)
}

// MismatchError is verify's failure when the implementations differ.
type MismatchError struct {
	Differ, Vectors int
	First           *Mismatch
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("verify: %d of %d vectors differ; the first: %s", e.Differ, e.Vectors, e.First)
}

// UBSanError is verify's failure when the UBSan host build reports anything.
type UBSanError struct{ Err error }

// OverMemoryError is a firmware, or every code form of it, over the memory budget.
type OverMemoryError struct{ Msg string }

func (e *OverMemoryError) Error() string { return e.Msg }

func (e *UBSanError) Error() string {
	return "verify: the UBSan host build did not run clean: " + e.Err.Error()
}

func (e *UBSanError) Unwrap() error { return e.Err }
