// Package abi is nicc's own firmware ABI, nicc_policy and nicc_on_event, and the one place
// that calls them inside fwsim: verify, eval DIR and the simulator's firmware controller all
// run a compile's firmware through Firmware.
package abi

import (
	"fmt"

	"github.com/nicc-dev/nicc/codegen"
	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/target"
)

// The entry points of nicc's ABI.
const (
	EntryHandler = nicsdk.HandlerEntry // the RL-CC event handler: nicc_on_event(ev, ctx)
	EntryPolicy  = codegen.DefaultFunc // the model alone: nicc_policy(x[, state])
)

// ELFFile is the firmware's file in a compile directory.
const ELFFile = "firmware.elf"

// Target is nicc's own ABI as a target.Target: a compile's firmware.elf, its event handler
// nicc_on_event.
var Target target.Target = niccTarget{}

type niccTarget struct{}

func (niccTarget) Name() string  { return "nicc" }
func (niccTarget) ELF() string   { return ELFFile }
func (niccTarget) Entry() string { return EntryHandler }

func (niccTarget) Open(path, core string) (target.Engine, error) {
	return Load(path, core, Shape{Handler: true})
}

// Firmware is a firmware ELF loaded into fwsim, with emulator memory for one call's
// arguments: the inputs and a stateful policy's words for EntryPolicy, the event and the flow
// context for EntryHandler. The emulator's memory (the firmware's data) persists across calls,
// as on the engine.
type Firmware struct {
	m          *fwsim.Machine
	prof       *fwsim.Profile
	x, st      uint64 // the policy's inputs and state words
	ev, ctx    uint64 // the handler's event and flow context
	stateWords int
	ctxBuf     []byte
}

// Shape is what the arguments of a compile's entries take: the policy's inputs and state
// words, and whether the ELF has the RL-CC event handler.
type Shape struct {
	Inputs, StateWords int
	Handler            bool
}

// Load loads the ELF at path under core's profile, checks it has the entries s calls, and
// allocates their arguments' memory.
func Load(path, core string, s Shape) (*Firmware, error) {
	m, p, err := target.Load(path, core)
	if err != nil {
		return nil, err
	}
	entries := []string{EntryPolicy}
	if s.Handler {
		entries = append(entries, EntryHandler)
	}
	for _, e := range entries {
		if _, _, ok := m.Image().Symbol(e); !ok {
			return nil, fmt.Errorf("%s: entry %q: %w", path, e, fwsim.ErrNoSymbol)
		}
	}
	f := &Firmware{m: m, prof: p, stateWords: s.StateWords, ctxBuf: make([]byte, nicsdk.CtxBytes)}
	type alloc struct {
		dst         *uint64
		size, align uint64
	}
	allocs := []alloc{{&f.x, uint64(4 * max(1, s.Inputs)), 16}}
	if s.StateWords > 0 {
		allocs = append(allocs, alloc{&f.st, uint64(4 * s.StateWords), 16})
	}
	if s.Handler {
		allocs = append(allocs, alloc{&f.ev, nicsdk.EventBytes, 8}, alloc{&f.ctx, nicsdk.CtxBytes, 16})
	}
	for _, a := range allocs {
		if *a.dst, err = m.Alloc(a.size, a.align); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// Profile is the core profile the firmware runs under.
func (f *Firmware) Profile() *fwsim.Profile { return f.prof }

// Machine is the emulator, for a caller that measures or inspects beyond the entries.
func (f *Firmware) Machine() *fwsim.Machine { return f.m }

// Policy calls EntryPolicy on x and, for a stateful policy, on the words state, which it
// updates in place with what the firmware left: the return and the call's cycles.
func (f *Firmware) Policy(x []int32, state []uint32) (int32, uint64, error) {
	if err := f.m.WriteBytes(f.x, target.Int32Bytes(x)); err != nil {
		return 0, 0, err
	}
	var r fwsim.Result
	var err error
	if f.stateWords > 0 {
		if len(state) != f.stateWords {
			return 0, 0, fmt.Errorf("%d state words; the policy keeps %d", len(state), f.stateWords)
		}
		if err := f.m.WriteBytes(f.st, target.WordBytes(state)); err != nil {
			return 0, 0, err
		}
		r, err = f.m.Call(EntryPolicy, f.x, f.st)
	} else {
		r, err = f.m.Call(EntryPolicy, f.x)
	}
	if err != nil {
		return 0, 0, err
	}
	if f.stateWords > 0 {
		out, err := target.ReadWords(f.m, f.st, f.stateWords)
		if err != nil {
			return 0, 0, err
		}
		copy(state, out)
	}
	return int32(uint32(r.A0)), r.Cycles, nil
}

// Boot does nothing: nicc's ABI has no start-up entry.
func (f *Firmware) Boot() error { return nil }

// Start is a new flow's context as the handler starts it (what rlcc_init writes, which the
// firmware's first call would write too), so that the flow's first rate is the init rate.
func (f *Firmware) Start(ctx *nicsdk.FlowCtx, p nicsdk.Params, l nicsdk.Layout) uint32 {
	*ctx = nicsdk.FlowCtx{}
	nicsdk.InitLayout(ctx, p, l)
	return ctx[nicsdk.CtxRate]
}

// Decide calls EntryHandler on ev and the flow context ctx, which it updates with what the
// firmware left: the rate returned (fxp20) and the call's cycles.
func (f *Firmware) Decide(ev nicsdk.Event, ctx *nicsdk.FlowCtx) (uint32, uint64, error) {
	if f.ev == 0 {
		return 0, 0, fmt.Errorf("%s: the firmware was loaded without the event handler", EntryHandler)
	}
	if err := f.m.WriteBytes(f.ev, ev.Bytes()); err != nil {
		return 0, 0, err
	}
	if err := f.m.WriteBytes(f.ctx, ctx.Bytes()); err != nil {
		return 0, 0, err
	}
	r, err := f.m.Call(EntryHandler, f.ev, f.ctx)
	if err != nil {
		return 0, 0, err
	}
	if err := f.m.ReadBytes(f.ctx, f.ctxBuf); err != nil {
		return 0, 0, err
	}
	if *ctx, err = nicsdk.ParseFlowCtx(f.ctxBuf); err != nil {
		return 0, 0, err
	}
	return uint32(r.A0), r.Cycles, nil
}
