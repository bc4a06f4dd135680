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
