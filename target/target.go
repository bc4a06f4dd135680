// Package target is what a firmware target is: the Target interface, the Engine it runs flows'
// events on in fwsim, and what every target's harness shares (loading an ELF under a core's
// cost profile, moving little-endian words between Go and the emulator's memory). Each target
// is a sub-package: target/abi (nicc's own ABI: nicc_policy and nicc_on_event) and target/doca
// (DOCA PCC's entry points); target/targets lists them.
package target

import (
	"encoding/binary"

	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/nicsdk"
)

// Target is a device API a compile writes firmware for (nicc compile --sdk NAME): the ELF a
// compile directory holds for it, its event entry, and its harness in fwsim. Whatever reads a
// compile's firmware back to run flows through it (nicc sim, an agent) opens it through its
// Target, so a new target is a new sub-package implementing this.
type Target interface {
	Name() string  // its --sdk value
	ELF() string   // its firmware's file in a compile directory
	Entry() string // the entry Engine.Decide calls
	// Open loads the ELF at path into fwsim under core's profile, booted as the device boots
	// it (Engine.Boot not yet run).
	Open(path, core string) (Engine, error)
}

// Engine is a target's firmware in fwsim as one NIC's congestion-control engine: flows'
// events in, their rates out, each flow's 48-byte context kept by the caller. Its memory (the
// firmware's data) persists across calls, as on the engine.
type Engine interface {
	// Boot runs what the device runs once before the first event (nothing for nicc's ABI;
	// DOCA's doca_pcc_dev_user_init), and refuses firmware that would not take the events
	// nicsdk delivers.
	Boot() error
	// Start is a new flow's context as the target hands it over, under the compiled
	// parameters p and the window layout l, and the rate the flow starts at.
	Start(ctx *nicsdk.FlowCtx, p nicsdk.Params, l nicsdk.Layout) uint32
	// Decide runs ev through the firmware on the flow's context ctx, which it updates: the
	// rate the firmware set (fxp20) and the call's cycles.
	Decide(ev nicsdk.Event, ctx *nicsdk.FlowCtx) (rate uint32, cycles uint64, err error)
	Profile() *fwsim.Profile
	Machine() *fwsim.Machine
}

// Load loads the firmware ELF at path into an emulator with the named core profile's costs.
func Load(path, core string) (*fwsim.Machine, *fwsim.Profile, error) {
	im, err := fwsim.ReadELF(path)
	if err != nil {
		return nil, nil, err
	}
	p, err := fwsim.LookupProfile(core)
	if err != nil {
		return nil, nil, err
	}
	m, err := fwsim.NewMachine(im, p)
	if err != nil {
		return nil, nil, err
	}
	return m, p, nil
}

// WordBytes is w as little-endian bytes.
func WordBytes(w []uint32) []byte {
	b := make([]byte, 4*len(w))
	for i, v := range w {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return b
}

// Int32Bytes is x as little-endian bytes.
func Int32Bytes(x []int32) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	return b
}

// ReadWords reads n little-endian 32-bit words from the emulator's memory at addr.
func ReadWords(m *fwsim.Machine, addr uint64, n int) ([]uint32, error) {
	b := make([]byte, 4*n)
	if err := m.ReadBytes(addr, b); err != nil {
		return nil, err
	}
	w := make([]uint32, n)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return w, nil
}
