package fwsim

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readTestELF(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/elf/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestLoadELF(t *testing.T) {
	for _, name := range []string{"tiny.elf", "tiny_stripped.elf"} {
		im, err := LoadELF(readTestELF(t, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		m, err := NewMachine(im, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res, err := m.CallAddr(im.Entry(), 2, 3); err != nil || res.A0 != 5 {
			t.Errorf("%s: add(2, 3) at the entry = %d, %v", name, res.A0, err)
		}
	}
	for _, name := range []string{"fw.elf", "fw_O0.elf"} {
		t.Run(name, func(t *testing.T) {
			im, err := LoadELF(readTestELF(t, name))
			if err != nil {
				t.Fatal(err)
			}
			for _, sym := range []string{"add", "bump", "decide", "counter", "fib"} {
				if addr, _, ok := im.Symbol(sym); !ok || addr == 0 {
					t.Errorf("symbol %s: %#x, %v", sym, addr, ok)
				}
			}
			for _, s := range im.Symbols() {
				if strings.HasPrefix(s.Name, "$x") || strings.HasPrefix(s.Name, "$d") {
					t.Errorf("mapping symbol %q listed", s.Name)
				}
			}
			if _, _, ok := im.Symbol("no_such_function"); ok {
				t.Error("found a symbol that does not exist")
			}
			add, size, _ := im.Symbol("add")
			if im.Entry() != add {
				t.Errorf("entry %#x, want add at %#x", im.Entry(), add)
			}
			if gp, ok := im.GlobalPointer(); !ok || gp == 0 {
				t.Errorf("no __global_pointer$: %#x %v", gp, ok)
			}
			if s, ok := im.SymbolAt(add + 2); !ok || s.Name != "add" || !s.Func {
				t.Errorf("SymbolAt(add+2) = %+v, %v", s, ok)
			}
			ins, err := im.Function("add")
			if err != nil {
				t.Fatal(err)
			}
			var n uint64
			for _, in := range ins {
				n += uint64(in.Size)
			}
			if n != size || ins[len(ins)-1].Kind != JALR {
				t.Errorf("add disassembles to %v (%d bytes, symbol size %d)", ins, n, size)
			}
			if in, err := im.InstAt(add); err != nil || in != ins[0] {
				t.Errorf("InstAt(add) = %v, %v; want %v", in, err, ins[0])
			}
			if _, err := im.InstAt(im.Base() + im.MemSize() - 4); err == nil {
				t.Error("InstAt outside code succeeded")
			}
			if _, err := im.Function("nope"); !errors.Is(err, ErrNoSymbol) {
				t.Errorf("Function(nope) error = %v, want ErrNoSymbol", err)
			}
			var text, data bool
			for _, s := range im.Segments() {
				text = text || s.Exec
				data = data || s.Write
			}
			if !text || !data {
				t.Errorf("segments %+v", im.Segments())
			}
			if im.MemSize() > MaxMemory || im.MemSize() < ArenaSize+StackSize {
				t.Errorf("memory window %d bytes", im.MemSize())
			}
		})
	}
}

// elfPatch returns a copy of data with fn applied.
func elfPatch(data []byte, fn func(b []byte)) []byte {
	b := append([]byte(nil), data...)
	fn(b)
	return b
}

// phdr returns the offset of program header i of a little-endian ELF64 file.
func phdr(b []byte, i int) int {
	phoff := binary.LittleEndian.Uint64(b[0x20:])
	size := binary.LittleEndian.Uint16(b[0x36:])
	return int(phoff) + i*int(size)
}

// loadIndex returns the index of the n-th PT_LOAD program header (exec: the one with PF_X).
func loadIndex(b []byte, exec bool) int {
	n := int(binary.LittleEndian.Uint16(b[0x38:]))
	for i := 0; i < n; i++ {
		o := phdr(b, i)
		if elf.ProgType(binary.LittleEndian.Uint32(b[o:])) != elf.PT_LOAD {
			continue
		}
		x := elf.ProgFlag(binary.LittleEndian.Uint32(b[o+4:]))&elf.PF_X != 0
		if x == exec {
			return i
		}
	}
	panic("no such PT_LOAD")
}

func TestLoadELFErrors(t *testing.T) {
	good := readTestELF(t, "fw.elf")
	le := binary.LittleEndian
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "truncated"},
		{"truncated-ident", good[:10], "truncated"},
		{"truncated-header", good[:40], "truncated"},
		{"truncated-phdrs", good[:100], ""},
		{"truncated-segment", good[:0x200], "truncated"},
		{"not-elf", []byte("#!/bin/sh\necho hello world, this is not an ELF file at all....................."), "bad magic"},
		{"wrong-machine", elfPatch(good, func(b []byte) { le.PutUint16(b[18:], uint16(elf.EM_X86_64)) }), "EM_X86_64, want EM_RISCV"},
		{"wrong-class", readTestELF(t, "rv32.elf"), "ELFCLASS32, want ELFCLASS64"},
		{"big-endian", elfPatch(good, func(b []byte) { b[elf.EI_DATA] = byte(elf.ELFDATA2MSB) }), "ELFDATA2MSB"},
		{"relocatable", elfPatch(good, func(b []byte) { le.PutUint16(b[16:], uint16(elf.ET_REL)) }), "ET_REL, want ET_EXEC"},
		{"shared", elfPatch(good, func(b []byte) { le.PutUint16(b[16:], uint16(elf.ET_DYN)) }), "want ET_EXEC"},
		{"segment-outside-memory", elfPatch(good, func(b []byte) {
			o := phdr(b, loadIndex(b, false))
			le.PutUint64(b[o+16:], 0x8000_0000)
		}), "segment outside memory"},
		{"segment-wraps", elfPatch(good, func(b []byte) {
			o := phdr(b, loadIndex(b, false))
			le.PutUint64(b[o+16:], ^uint64(0)-4)
		}), "segment outside memory"},
		{"segment-huge", elfPatch(good, func(b []byte) {
			o := phdr(b, loadIndex(b, false))
			le.PutUint64(b[o+40:], 1<<40)
		}), "segment outside memory"},
		{"segments-overlap", elfPatch(good, func(b []byte) {
			x := phdr(b, loadIndex(b, true))
			o := phdr(b, loadIndex(b, false))
			le.PutUint64(b[o+16:], le.Uint64(b[x+16:])+8)
		}), "overlap"},
		{"zero-length-text", elfPatch(good, func(b []byte) {
			x := phdr(b, loadIndex(b, true))
			le.PutUint64(b[x+32:], 0)
			le.PutUint64(b[x+40:], 0)
		}), "no executable text"},
		{"text-not-executable", elfPatch(good, func(b []byte) {
			x := phdr(b, loadIndex(b, true))
			le.PutUint32(b[x+4:], uint32(elf.PF_R))
		}), "no executable text"},
		{"filesz-over-memsz", elfPatch(good, func(b []byte) {
			x := phdr(b, loadIndex(b, true))
			le.PutUint64(b[x+32:], le.Uint64(b[x+40:])+1)
		}), "filesz > memsz"},
		{"section-past-eof", elfPatch(good, func(b []byte) {
			shoff := le.Uint64(b[0x28:])
			le.PutUint64(b[shoff+64+0x20:], 1<<40) // section 1's size
		}), "section data past the end"},
		{"section-headers-past-eof", elfPatch(good, func(b []byte) { le.PutUint16(b[0x3c:], 0xffff) }), "section headers past the end"},
		{"program-headers-past-eof", elfPatch(good, func(b []byte) { le.PutUint64(b[0x20:], uint64(len(b))) }), "program headers past the end"},
		{"bad-phentsize", elfPatch(good, func(b []byte) { le.PutUint16(b[0x36:], 12) }), "program header entry size"},
		{"segment-past-eof", elfPatch(good, func(b []byte) {
			x := phdr(b, loadIndex(b, true))
			le.PutUint64(b[x+8:], 1<<20)
		}), "past end of file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			im, err := LoadELF(tc.data)
			if err == nil {
				t.Fatalf("loaded %+v, want an error", im)
			}
			var ee *ELFError
			if !errors.As(err, &ee) {
				t.Fatalf("error %v (%T) is not an *ELFError", err, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

// TestReadELF: a firmware file loads; a device, a directory, a file without the ELF magic
// and one larger than MaxFile are refused from their header and size, before the rest is read.
func TestReadELF(t *testing.T) {
	t.Parallel()
	good := filepath.Join("testdata", "elf", "fw.elf")
	if _, err := ReadELF(good); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := func(name string, head []byte, size int64) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, head, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, size); err != nil {
			t.Fatal(err)
		}
		return p
	}
	head := readTestELF(t, "fw.elf")[:64]
	for _, c := range []struct{ path, want string }{
		{"/dev/zero", "/dev/zero: fwsim: elf: not a regular file (a character device)"},
		{dir, dir + ": fwsim: elf: not a regular file (a directory)"},
		{file("zeros", nil, 3<<30), "zeros: fwsim: elf: not an ELF file: bad magic (00 00 00 00) at offset 0x0"},
		{file("short", head[:20], 20), "short: fwsim: elf: truncated file: short ELF64 header (20 bytes)"},
		{file("huge", head, MaxFile+1), fmt.Sprintf("huge: fwsim: elf: file of %d bytes is larger than fwsim's 64 MiB memory (MaxFile)", MaxFile+1)},
		{file("max", head, MaxFile), "max: fwsim: elf: bad ELF file"}, // read and parsed: MaxFile is allowed
		{filepath.Join(dir, "none"), "no such file"},
	} {
		_, err := ReadELF(c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadELF(%s): %v, want %q", c.path, err, c.want)
		}
	}
}

func TestRawImage(t *testing.T) {
	if _, err := RawImage(0x1000, nil); err == nil || !strings.Contains(err.Error(), "no executable text") {
		t.Errorf("empty code: %v", err)
	}
	if _, err := RawImage(^uint64(0)-8, make([]byte, 64)); err == nil {
		t.Error("code wrapping the address space loaded")
	}
	if _, err := RawImage(0x1000, make([]byte, MaxText+2)); err == nil || !strings.Contains(err.Error(), "MiB") {
		t.Errorf("oversized text: %v", err)
	}
	im, err := RawImage(0x1000, code(ret))
	if err != nil {
		t.Fatal(err)
	}
	if a, n, ok := im.Symbol("_start"); !ok || a != 0x1000 || n != 4 {
		t.Errorf("_start = %#x %d %v", a, n, ok)
	}
}

// FuzzLoadELF: any bytes give an image or an *ELFError, never a panic; an image runs
// without panicking either, and Trace makes the same run as Call, visiting each instruction
// it counts from the entry on (fwsim/wcet's FuzzBound analyses the same inputs).
func FuzzLoadELF(f *testing.F) {
	// Small seeds: the engine minimizes every new input, which takes long for big ones.
	for _, name := range []string{"tiny.elf", "tiny_stripped.elf", "rv32.elf", "ret.elf"} {
		f.Add(readTestELF(f, name))
	}
	good := readTestELF(f, "tiny.elf")
	f.Add(good[:64])
	f.Add(good[:300])
	f.Fuzz(func(t *testing.T, data []byte) {
		im, err := LoadELF(data)
		if err != nil {
			var ee *ELFError
			if !errors.As(err, &ee) {
				t.Fatalf("error %v (%T) is not an *ELFError", err, err)
			}
			return
		}
		if im.MemSize() > MaxMemory {
			t.Fatalf("window of %d bytes", im.MemSize())
		}
		if im.MemSize() > ArenaSize+StackSize+1<<20 {
			return // valid but large: too slow to run on every fuzz input
		}
		m, err := NewMachine(im, nil)
		if err != nil {
			t.Fatal(err)
		}
		m.StepLimit = 1000
		m.CallAddr(im.Entry(), 1, 2)
		for _, s := range im.Symbols() {
			if s.Func {
				m.CallAddr(s.Addr, 3, 4)
				im.Disassemble(s.Addr, min(s.Size, 4096))
				fuzzTrace(t, im, s.Name)
			}
		}
	})
}

func fuzzTrace(t *testing.T, im *Image, name string) {
	m1, err := NewMachine(im, nil)
	if err != nil {
		t.Fatal(err)
	}
	m2, _ := NewMachine(im, nil)
	m1.StepLimit, m2.StepLimit = 1000, 1000
	want, err1 := m1.Call(name, 5, 6)
	var visits, first uint64
	got, err2 := m2.Trace(name, func(in Inst) {
		if visits == 0 {
			first = in.PC
		}
		visits++
	}, 5, 6)
	addr, _, _ := im.Symbol(name)
	if got != want || (err1 == nil) != (err2 == nil) || err1 == nil && (visits != got.Insns || first != addr) || m2.StepLimit != 1000 {
		t.Fatalf("%s: Trace %+v, %v after %d visits; Call %+v, %v", name, got, err2, visits, want, err1)
	}
}
