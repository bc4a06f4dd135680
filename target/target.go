// Package target holds what every firmware target shares: loading a firmware ELF into fwsim
// under a core's cost profile, and moving little-endian words between Go and the emulator's
// memory. Each target's own entries, wrapper and harness live in a sub-package: target/abi
// (nicc's own ABI: nicc_policy and nicc_on_event) and target/doca (DOCA PCC's entry points).
package target

import (
	"encoding/binary"

	"github.com/nicc-dev/nicc/fwsim"
)

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
