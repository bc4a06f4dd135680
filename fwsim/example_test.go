package fwsim_test

import (
	"encoding/binary"
	"fmt"
	"os"

	"github.com/nicc-dev/nicc/fwsim"
)

// Load a firmware ELF, place a 48-byte flow context in emulator memory, and run the event
// handler on a few events: the context persists across calls, and each call reports its
// instructions and cycles under the default profile.
func ExampleMachine_Call() {
	data, err := os.ReadFile("testdata/elf/fw.elf")
	if err != nil {
		panic(err)
	}
	im, err := fwsim.LoadELF(data)
	if err != nil {
		panic(err)
	}
	m, err := fwsim.NewMachine(im, nil) // nil: the default profile, dpa
	if err != nil {
		panic(err)
	}
	ctx, _ := m.Alloc(48, 8) // uint32 data[12], zeroed
	for _, rtt := range []uint64{10000, 20000, 40000} {
		res, err := m.Call("decide", ctx, rtt, 10000)
		if err != nil {
			panic(err)
		}
		fmt.Printf("rtt %d: rate %d, %d instructions, %d cycles\n", rtt, res.A0, res.Insns, res.Cycles)
	}
	var w [48]byte
	m.ReadBytes(ctx, w[:])
	fmt.Println("events seen:", binary.LittleEndian.Uint32(w[16:]))
	// Output:
	// rtt 10000: rate 1048576, 169 instructions, 341 cycles
	// rtt 20000: rate 1045872, 173 instructions, 345 cycles
	// rtt 40000: rate 1043174, 194 instructions, 340 cycles
	// events seen: 3
}
