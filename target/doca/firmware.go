// Package doca is the DOCA PCC target's harness: a DOCA program's ELF, built against nicc's
// stand-in for DOCA's device library, called through its entry points inside fwsim, its
// tables (the stand-in's parameters and counters) kept across calls as on the engine.
package doca

import (
	"fmt"
	"slices"

	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/target"
)

// ELFFile is the DOCA program's file in a compile directory, built for fwsim against nicc's
// stand-in for DOCA's device library.
const ELFFile = "doca_firmware.elf"

// Target is DOCA PCC as a target.Target: a compile's doca_firmware.elf, its entry
// doca_pcc_dev_user_algo on algorithm slot nicsdk.DOCASlot of port 0.
var Target target.Target = docaTarget{}

type docaTarget struct{}

func (docaTarget) Name() string  { return "doca" }
func (docaTarget) ELF() string   { return ELFFile }
func (docaTarget) Entry() string { return nicsdk.DOCAEntryAlgo }

func (docaTarget) Open(path, core string) (target.Engine, error) { return Load(path, core) }

// Firmware is a DOCA program's ELF in the emulator, with the arguments' memory.
type Firmware struct {
	m                              *fwsim.Machine
	prof                           *fwsim.Profile
	ctx, ev, attr, res, mask, vals uint64
	params, counters               uint64 // the stand-in's tables
}

// Load loads the DOCA ELF at path under core's profile and finds the stand-in's tables.
func Load(path, core string) (*Firmware, error) {
	m, prof, err := target.Load(path, core)
	if err != nil {
		return nil, err
	}
	f := &Firmware{m: m, prof: prof}
	for _, t := range []struct {
		dst  *uint64
		name string
	}{{&f.params, nicsdk.DOCAParamsTable}, {&f.counters, nicsdk.DOCACountersTable}} {
		addr, size, ok := m.Image().Symbol(t.name)
		if !ok || size != nicsdk.DOCAPorts*nicsdk.DOCASlots*nicsdk.DOCATableRow(0, 1) {
			return nil, fmt.Errorf("%s: no table %s of the expected size", path, t.name)
		}
		*t.dst = addr
	}
	for _, a := range []struct {
		dst         *uint64
		size, align uint64
	}{{&f.ctx, nicsdk.CtxBytes, 16}, {&f.ev, nicsdk.DOCAEventBytes, 8}, {&f.attr, 4, 4},
		{&f.res, nicsdk.DOCAResultsBytes, 8}, {&f.mask, 4, 4}, {&f.vals, 4 * nicsdk.DOCAParams, 8}} {
		if *a.dst, err = m.Alloc(a.size, a.align); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// Profile is the core profile the program runs under.
func (f *Firmware) Profile() *fwsim.Profile { return f.prof }

// Machine is the emulator, for a caller that measures beyond the entries.
func (f *Firmware) Machine() *fwsim.Machine { return f.m }

// Init calls doca_pcc_dev_user_init: the disabled-event bitmask it wrote.
func (f *Firmware) Init() (uint32, error) {
	if err := f.m.WriteBytes(f.mask, make([]byte, 4)); err != nil {
		return 0, err
	}
	if _, err := f.m.Call(nicsdk.DOCAEntryInit, f.mask); err != nil {
		return 0, err
	}
	w, err := target.ReadWords(f.m, f.mask, 1)
	if err != nil {
		return 0, err
	}
	return w[0], nil
}

// Boot calls doca_pcc_dev_user_init, and refuses a program that disables an event type nicsdk
// delivers: DOCA would not deliver a disabled type, so a program that disables one cannot be
// judged on them.
func (f *Firmware) Boot() error {
	mask, err := f.Init()
	if err != nil {
		return fmt.Errorf("%s: %w", nicsdk.DOCAEntryInit, err)
	}
	for _, t := range []nicsdk.EventType{nicsdk.EvRTT, nicsdk.EvCNP, nicsdk.EvNACK, nicsdk.EvTX} {
		if dt, _ := nicsdk.DOCAEventType(t); mask&(1<<dt) != 0 {
			return fmt.Errorf("%s disables DOCA event type %d, which nicc delivers (disable_event_bitmask %#x)", nicsdk.DOCAEntryInit, dt, mask)
		}
	}
	return nil
}

// Start is a new flow's context as DOCA hands it over, zeroed: the program's first event of
// the flow initialises it. Until then the flow sends at the compiled init rate.
func (f *Firmware) Start(ctx *nicsdk.FlowCtx, p nicsdk.Params, _ nicsdk.Layout) uint32 {
	*ctx = nicsdk.FlowCtx{}
	return p.InitRate
}

// Decide hands ev to the program as a DOCA event of algorithm slot nicsdk.DOCASlot on port 0
// at the event's time (an RTT event's request sent its RTT before), on the flow's context
// ctx, which it updates: the results' rate and the call's cycles.
func (f *Firmware) Decide(ev nicsdk.Event, ctx *nicsdk.FlowCtx) (uint32, uint64, error) {
	t, ok := nicsdk.DOCAEventType(ev.Type)
	if !ok {
		return 0, 0, fmt.Errorf("%s event: DOCA has no event type for it", ev.Type)
	}
	now := uint32(ev.TimestampNs)
	dev := nicsdk.DOCAEvent{Type: t, FlowTag: ev.FlowID, Timestamp: now}
	if ev.Type == nicsdk.EvRTT {
		dev.ReqSend = now - ev.RTTNs
	}
	if err := f.SetContext(*ctx); err != nil {
		return 0, 0, err
	}
	r, err := f.Algo(dev, nicsdk.DOCASlot, false)
	if err != nil {
		return 0, 0, err
	}
	res, err := f.Results()
	if err != nil {
		return 0, 0, err
	}
	if *ctx, err = f.Context(); err != nil {
		return 0, 0, err
	}
	return res[0], r.Cycles, nil
}

// SetParams calls doca_pcc_dev_user_set_algo_params as DOCA does: values for the parameters
// from base on of port's and slot's algorithm, params pointing at the first of them in the
// stand-in's table. It returns the status and the row's parameters after the call.
func (f *Firmware) SetParams(port, slot, base uint32, values []uint32) (uint32, []uint32, error) {
	row := f.params + nicsdk.DOCATableRow(port, slot)
	if err := f.m.WriteBytes(f.vals, target.WordBytes(append(slices.Clone(values), 0, 0, 0)[:nicsdk.DOCAParams])); err != nil {
		return 0, nil, err
	}
	// RISC-V's calling convention passes a uint32_t sign-extended to 64 bits.
	arg := func(w uint32) uint64 { return uint64(int64(int32(w))) }
	r, err := f.m.Call(nicsdk.DOCAEntrySetParams, arg(port), arg(slot), arg(base),
		uint64(len(values)), f.vals, row+4*uint64(base))
	if err != nil {
		return 0, nil, err
	}
	p, err := target.ReadWords(f.m, row, nicsdk.DOCAParams)
	return uint32(r.A0), p, err
}

// SetContext writes the flow context the next Algo call runs on.
func (f *Firmware) SetContext(ctx nicsdk.FlowCtx) error { return f.m.WriteBytes(f.ctx, ctx.Bytes()) }

// Context reads the flow context back.
func (f *Firmware) Context() (nicsdk.FlowCtx, error) {
	w, err := target.ReadWords(f.m, f.ctx, nicsdk.CtxWords)
	if err != nil {
		return nicsdk.FlowCtx{}, err
	}
	return nicsdk.FlowCtx(w), nil
}

// Algo calls doca_pcc_dev_user_algo for ev, of algorithm slot slot, on the context in the
// emulator's memory (SetContext), with zeroed results: the call's counts.
func (f *Firmware) Algo(ev nicsdk.DOCAEvent, slot uint32, overload bool) (fwsim.Result, error) {
	err := f.m.WriteBytes(f.ev, ev.Bytes())
	if err == nil {
		err = f.m.WriteBytes(f.attr, nicsdk.DOCAAttrBytes(slot, overload))
	}
	if err == nil {
		err = f.m.WriteBytes(f.res, make([]byte, nicsdk.DOCAResultsBytes))
	}
	if err != nil {
		return fwsim.Result{}, err
	}
	return f.m.Call(nicsdk.DOCAEntryAlgo, f.ctx, f.ev, f.attr, f.res)
}

// Results reads the results the last Algo call wrote: the rate and the RTT request.
func (f *Firmware) Results() ([]uint32, error) { return target.ReadWords(f.m, f.res, 2) }

// Counters reads port's and slot's first nicsdk.DOCACounters counters.
func (f *Firmware) Counters(port, slot uint32) ([]uint32, error) {
	return target.ReadWords(f.m, f.counters+nicsdk.DOCATableRow(port, slot), nicsdk.DOCACounters)
}

// Params reads port's and slot's parameters from the stand-in's table.
func (f *Firmware) Params(port, slot uint32) ([]uint32, error) {
	return target.ReadWords(f.m, f.params+nicsdk.DOCATableRow(port, slot), nicsdk.DOCAParams)
}
