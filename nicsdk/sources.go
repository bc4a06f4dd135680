package nicsdk

import (
	"embed"
	"os"
	"path/filepath"
)

//go:embed nicsdk.h rlcc.h link.ld
var files embed.FS

// Names of the files Sources holds.
const (
	HeaderName       = "nicsdk.h" // the engine's C ABI
	RLCCHeaderName   = "rlcc.h"   // the RL-CC runtime; includes nicsdk.h
	LinkerScriptName = "link.ld"  // the firmware linker script
)

// LinkerScript is nicsdk/link.ld, the linker script for firmware ELFs (Build's ld argument,
// once written to a file): text, rodata, then data and bss on their own page,
// __global_pointer$ defined, no start-up code (the handler is called by name).
var LinkerScript = mustRead(LinkerScriptName)

// LinkerSymbols are the symbols LinkerScript defines.
var LinkerSymbols = []string{"__text_start", "__global_pointer$", "_end"}

// Sources returns the files generated firmware compiles against, by name: nicsdk.h, rlcc.h
// and link.ld. The compiler writes them next to the generated policy C (WriteSources), which
// then #include "rlcc.h". The map is a fresh copy.
func Sources() map[string][]byte {
	m := map[string][]byte{}
	for _, n := range []string{HeaderName, RLCCHeaderName, LinkerScriptName} {
		m[n] = mustRead(n)
	}
	return m
}

// WriteSources writes Sources into dir (which must exist), overwriting files of the same
// names.
func WriteSources(dir string) error {
	for n, b := range Sources() {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func mustRead(name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return b
}
