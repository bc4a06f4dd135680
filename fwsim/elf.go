package fwsim

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
)

// Memory layout of an Image. The window starts at the lowest PT_LOAD address (rounded down to
// 16) and holds, in order: the loaded segments, the scratch arena for Machine.Alloc, and the
// stack. Anything outside the window is out of range.
const (
	ArenaSize = 256 << 10 // bytes of scratch arena above the highest segment
	StackSize = 128 << 10 // bytes of stack above the arena; sp starts at its top
	MaxMemory = 64 << 20  // cap on the whole window: segments + arena + stack
	MaxText   = 4 << 20   // cap on the executable bytes, which are decoded up front
	// MaxFile caps an ELF file: no bigger than the memory it is loaded into. Only symbols
	// and debug sections could make a loadable firmware file larger; strip them.
	MaxFile = MaxMemory
)

// ELFError is a fault in an ELF file given to LoadELF (or in raw code given to RawImage).
// Off is the file offset the fault is at, or -1 if it has none. Err, if set, is the
// underlying error (e.g. a *elf.FormatError or io.ErrUnexpectedEOF).
type ELFError struct {
	Off int64
	Msg string
	Val any // the offending value, if any
	Err error
}

func (e *ELFError) Error() string {
	s := "fwsim: elf: " + e.Msg
	if e.Val != nil {
		s += fmt.Sprintf(" (%v)", e.Val)
	}
	if e.Off >= 0 {
		s += fmt.Sprintf(" at offset 0x%x", e.Off)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *ELFError) Unwrap() error { return e.Err }

// ErrNoSymbol is wrapped by the error of a lookup of a symbol the image does not have.
var ErrNoSymbol = errors.New("no such symbol")

// Symbol is a named address in an Image (functions and data objects).
type Symbol struct {
	Name string
	Addr uint64
	Size uint64
	Func bool // STT_FUNC
}

// Segment is one loaded region of an Image.
type Segment struct {
	Addr  uint64 // virtual address
	Size  uint64 // bytes in memory (file bytes, then zeros)
	Exec  bool   // PF_X: decoded as code
	Write bool   // PF_W
}

// Image is a loaded firmware binary: the initial contents of the memory window, its
// segments and its symbols. It is read-only once built; a Machine copies its memory.
type Image struct {
	base    uint64 // address of mem[0]
	mem     []byte // the file-backed bytes of the segments at their addresses; zeros beyond
	segEnd  uint64 // offset of the end of the segments (16-aligned): the arena starts there
	memSize uint64 // the whole window: segments + arena + stack
	segs    []Segment
	syms    map[string]Symbol
	sorted  []Symbol // by address
	entry   uint64
	gp      uint64
	hasGP   bool
	// codeMarks are the addresses of "$x" mapping symbols: where the assembler says code starts.
	codeMarks []uint64
}

// Base is the lowest address of the memory window.
func (im *Image) Base() uint64 { return im.base }

// MemSize is the size in bytes of the memory window (segments, arena and stack).
func (im *Image) MemSize() uint64 { return im.memSize }

// Entry is the ELF entry point (e_entry).
func (im *Image) Entry() uint64 { return im.entry }

// GlobalPointer is the value of __global_pointer$, if the ELF defines it. The harness loads
// it into gp before every call, because ld relaxes small-data accesses against gp.
func (im *Image) GlobalPointer() (uint64, bool) { return im.gp, im.hasGP }

// Segments returns the loaded segments in address order.
func (im *Image) Segments() []Segment { return append([]Segment(nil), im.segs...) }

// Symbol returns the address and size of the named symbol.
func (im *Image) Symbol(name string) (addr, size uint64, ok bool) {
	s, ok := im.syms[name]
	return s.Addr, s.Size, ok
}

// Symbols returns every named symbol, by address (ties by name).
func (im *Image) Symbols() []Symbol { return append([]Symbol(nil), im.sorted...) }

// SymbolAt returns the function or object symbol whose [Addr, Addr+Size) holds addr, or
// whose address is addr exactly.
func (im *Image) SymbolAt(addr uint64) (Symbol, bool) {
	i := sort.Search(len(im.sorted), func(i int) bool { return im.sorted[i].Addr > addr })
	for j := i - 1; j >= 0; j-- {
		s := im.sorted[j]
		if s.Addr == addr || addr-s.Addr < s.Size {
			return s, true
		}
		if s.Size > 0 {
			break
		}
	}
	return Symbol{}, false
}

// IsCode reports whether addr lies in an executable segment.
func (im *Image) IsCode(addr uint64) bool {
	for _, s := range im.segs {
		if s.Exec && addr >= s.Addr && addr-s.Addr < s.Size {
			return true
		}
	}
	return false
}

// Fetch returns the raw bits of the instruction at addr: 16 bits if compressed, else 32.
// addr must be in an executable segment and the whole instruction must lie in it.
func (im *Image) Fetch(addr uint64) (uint32, error) {
	for _, s := range im.segs {
		if !s.Exec || addr < s.Addr || addr-s.Addr >= s.Size {
			continue
		}
		end := s.Addr + s.Size
		off := addr - im.base
		if end-addr < 2 {
			return 0, errTruncated(addr, 0)
		}
		lo := uint32(im.byteAt(off)) | uint32(im.byteAt(off+1))<<8
		if lo&3 != 3 {
			return lo, nil
		}
		if end-addr < 4 {
			return 0, errTruncated(addr, lo)
		}
		return lo | uint32(im.byteAt(off+2))<<16 | uint32(im.byteAt(off+3))<<24, nil
	}
	return 0, illegalAt(addr, 0, "not in an executable segment")
}

// byteAt is the initial byte at window offset off.
func (im *Image) byteAt(off uint64) byte {
	if off < uint64(len(im.mem)) {
		return im.mem[off]
	}
	return 0
}

// InstAt decodes the instruction at addr, which must lie in an executable segment.
func (im *Image) InstAt(addr uint64) (Inst, error) {
	raw, err := im.Fetch(addr)
	if err != nil {
		return Inst{PC: addr}, err
	}
	return Decode(raw, addr)
}

// Disassemble decodes the instructions in [addr, addr+size) one after another, as a linear
// sweep. addr must be the start of an instruction in an executable segment. It stops with
// the decoded prefix and an error (a *trap.Trap wrapping trap.ErrIllegal) at the first
// address that is not a valid instruction.
func (im *Image) Disassemble(addr, size uint64) ([]Inst, error) {
	var out []Inst
	for pc := addr; pc-addr < size; {
		in, err := im.InstAt(pc)
		if err != nil {
			return out, err
		}
		out = append(out, in)
		pc += uint64(in.Size)
	}
	return out, nil
}

// Function disassembles the named function symbol: Disassemble(addr, size).
func (im *Image) Function(name string) ([]Inst, error) {
	s, ok := im.syms[name]
	if !ok {
		return nil, fmt.Errorf("fwsim: %q: %w", name, ErrNoSymbol)
	}
	return im.Disassemble(s.Addr, s.Size)
}

// LoadELF loads a statically linked RISC-V firmware executable: ELF64, little endian,
// EM_RISCV, ET_EXEC. Its PT_LOAD segments are copied into one flat memory window (see
// ArenaSize, StackSize, MaxMemory); segments that overlap or do not fit are errors, and so is
// an image with no executable bytes. Symbols come from .symtab (a stripped file loads, but
// has no symbols to call by name).
//
// Every fault in the input is returned as an *ELFError; LoadELF never panics.
func LoadELF(data []byte) (im *Image, err error) {
	defer func() {
		if r := recover(); r != nil {
			im, err = nil, &ELFError{Off: -1, Msg: "corrupt file", Val: r}
		}
	}()
	return loadELF(data)
}

// ReadELF reads the file at path and loads it with LoadELF. It reads the 64-byte ELF header
// first and refuses a file that is not a regular file (a device, a pipe, a directory), whose
// header is not a little-endian ELF64 one, or that is larger than MaxFile, before reading
// the rest; the rest is read through a limit too, in case the file grows meanwhile. Errors
// name path.
func ReadELF(path string) (*Image, error) {
	data, err := readELFFile(path)
	if err == nil {
		var im *Image
		if im, err = LoadELF(data); err == nil {
			return im, nil
		}
	}
	if errors.As(err, new(*ELFError)) {
		err = fmt.Errorf("%s: %w", path, err)
	}
	return nil, err
}

func readELFFile(path string) ([]byte, error) {
	// Stat before opening: opening a FIFO would block until a writer comes.
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, &ELFError{Off: -1, Msg: "not a regular file", Val: fileKind(st.Mode())}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &ELFError{Off: -1, Msg: "not a regular file", Val: fileKind(st.Mode())}
	}
	head := make([]byte, elfHeaderSize)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	if err := checkIdent(head[:n]); err != nil {
		return nil, err
	}
	if st.Size() > MaxFile {
		return nil, errTooBig(st.Size())
	}
	var buf bytes.Buffer
	buf.Grow(int(st.Size()) + bytes.MinRead) // one allocation unless the file grows
	buf.Write(head)
	if _, err := buf.ReadFrom(io.LimitReader(f, MaxFile+1-elfHeaderSize)); err != nil {
		return nil, err
	}
	if buf.Len() > MaxFile {
		return nil, errTooBig(int64(buf.Len()))
	}
	return buf.Bytes(), nil
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return m.Type().String()
}

func errTooBig(size int64) error {
	return &ELFError{Off: -1, Msg: fmt.Sprintf("file of %d bytes is larger than fwsim's %d MiB memory (MaxFile); strip its debug sections (riscv64-unknown-elf-strip -g)", size, MaxFile>>20)}
}

// elfHeaderSize is the size of an ELF64 file header.
const elfHeaderSize = 64

// checkIdent checks the identification bytes and the length of an ELF64 header ourselves,
// for clear messages.
func checkIdent(data []byte) error {
	if len(data) < elf.EI_NIDENT {
		return &ELFError{Off: 0, Msg: "truncated file: no ELF header", Val: fmt.Sprintf("%d bytes", len(data))}
	}
	if !bytes.Equal(data[:4], []byte(elf.ELFMAG)) {
		return &ELFError{Off: 0, Msg: "not an ELF file: bad magic", Val: fmt.Sprintf("% x", data[:4])}
	}
	if c := elf.Class(data[elf.EI_CLASS]); c != elf.ELFCLASS64 {
		return &ELFError{Off: elf.EI_CLASS, Msg: fmt.Sprintf("class %v, want ELFCLASS64", c)}
	}
	if d := elf.Data(data[elf.EI_DATA]); d != elf.ELFDATA2LSB {
		return &ELFError{Off: elf.EI_DATA, Msg: fmt.Sprintf("data encoding %v, want ELFDATA2LSB (little endian)", d)}
	}
	if len(data) < elfHeaderSize {
		return &ELFError{Off: 0, Msg: "truncated file: short ELF64 header", Val: fmt.Sprintf("%d bytes", len(data))}
	}
	return nil
}

func loadELF(data []byte) (*Image, error) {
	if err := checkIdent(data); err != nil {
		return nil, err
	}
	if len(data) > MaxFile {
		return nil, errTooBig(int64(len(data)))
	}
	if err := checkTables(data); err != nil {
		return nil, err
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, &ELFError{Off: -1, Msg: "truncated file: headers or tables past the end", Val: fmt.Sprintf("%d bytes", len(data)), Err: err}
	}
	if err != nil {
		return nil, &ELFError{Off: -1, Msg: "bad ELF file", Err: err}
	}
	if f.Machine != elf.EM_RISCV {
		return nil, &ELFError{Off: 18, Msg: fmt.Sprintf("machine %v, want EM_RISCV", f.Machine)}
	}
	if f.Type != elf.ET_EXEC {
		return nil, &ELFError{Off: 16, Msg: fmt.Sprintf("type %v, want ET_EXEC (a linked executable)", f.Type)}
	}

	var segs []Segment
	var loads []*elf.Prog
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || p.Memsz == 0 {
			continue
		}
		if p.Filesz > p.Memsz {
			return nil, &ELFError{Off: int64(p.Off), Msg: "PT_LOAD segment has filesz > memsz", Val: fmt.Sprintf("0x%x > 0x%x", p.Filesz, p.Memsz)}
		}
		if p.Off > uint64(len(data)) || p.Filesz > uint64(len(data))-p.Off {
			return nil, &ELFError{Off: int64(min(p.Off, 1<<62)), Msg: "truncated file: segment data past end of file",
				Val: fmt.Sprintf("segment at 0x%x: file bytes [0x%x, 0x%x+0x%x), file is 0x%x bytes", p.Vaddr, p.Off, p.Off, p.Filesz, len(data))}
		}
		if p.Vaddr+p.Memsz < p.Vaddr {
			return nil, &ELFError{Off: -1, Msg: "segment outside memory: wraps the address space", Val: fmt.Sprintf("vaddr 0x%x memsz 0x%x", p.Vaddr, p.Memsz)}
		}
		loads = append(loads, p)
		segs = append(segs, Segment{Addr: p.Vaddr, Size: p.Memsz, Exec: p.Flags&elf.PF_X != 0, Write: p.Flags&elf.PF_W != 0})
	}
	if len(loads) == 0 {
		return nil, &ELFError{Off: -1, Msg: "no PT_LOAD segments"}
	}
	var entry uint64 = f.Entry
	var gp uint64
	var hasGP bool
	var codeMarks []uint64
	syms := map[string]Symbol{}
	if ss, err := f.Symbols(); err == nil {
		for _, s := range ss {
			if s.Name == "" || s.Section == elf.SHN_UNDEF {
				continue
			}
			t := elf.ST_TYPE(s.Info)
			if t == elf.STT_SECTION || t == elf.STT_FILE {
				continue
			}
			// RISC-V mapping symbols: "$x" (or "$x<isa>") marks the start of code, "$d" data.
			// They are not names to call; code marks are extra decoding starts.
			if strings.HasPrefix(s.Name, "$x") {
				codeMarks = append(codeMarks, s.Value)
				continue
			}
			if strings.HasPrefix(s.Name, "$d") {
				continue
			}
			if s.Name == "__global_pointer$" {
				gp, hasGP = s.Value, true
			}
			old, dup := syms[s.Name]
			// Prefer a global definition over a local one of the same name.
			if dup && elf.ST_BIND(s.Info) == elf.STB_LOCAL && old.Size > 0 {
				continue
			}
			syms[s.Name] = Symbol{Name: s.Name, Addr: s.Value, Size: s.Size, Func: t == elf.STT_FUNC}
		}
	} else if !errors.Is(err, elf.ErrNoSymbols) {
		return nil, &ELFError{Off: -1, Msg: "bad symbol table", Err: err}
	}

	im, err := buildImage(segs, func(i int) []byte {
		p := loads[i]
		return data[p.Off : p.Off+p.Filesz]
	})
	if err != nil {
		return nil, err
	}
	im.entry, im.gp, im.hasGP = entry, gp, hasGP
	im.codeMarks = codeMarks
	im.setSymbols(syms)
	return im, nil
}

// checkTables checks, before debug/elf reads anything, that the program and section header
// tables and every section's file bytes lie inside data, so that a corrupt size cannot make
// the parser allocate for bytes that are not there.
func checkTables(data []byte) error {
	le := binary.LittleEndian
	n := uint64(len(data))
	inFile := func(off, size uint64) bool { return off <= n && size <= n-off }
	phoff, phent, phnum := le.Uint64(data[0x20:]), uint64(le.Uint16(data[0x36:])), uint64(le.Uint16(data[0x38:]))
	if phnum > 0 {
		if phent != 56 {
			return &ELFError{Off: 0x36, Msg: "bad program header entry size", Val: phent}
		}
		if !inFile(phoff, phnum*phent) {
			return &ELFError{Off: 0x20, Msg: "truncated file: program headers past the end", Val: fmt.Sprintf("%d headers at 0x%x, file is %d bytes", phnum, phoff, n)}
		}
	}
	shoff, shent, shnum := le.Uint64(data[0x28:]), uint64(le.Uint16(data[0x3a:])), uint64(le.Uint16(data[0x3c:]))
	if shoff == 0 {
		return nil
	}
	if shent != 64 {
		return &ELFError{Off: 0x3a, Msg: "bad section header entry size", Val: shent}
	}
	if shnum == 0 { // extended numbering: the count is in section 0's sh_size
		if !inFile(shoff, shent) {
			return &ELFError{Off: 0x28, Msg: "truncated file: section headers past the end"}
		}
		shnum = le.Uint64(data[shoff+0x20:])
	}
	if shnum > n/shent || !inFile(shoff, shnum*shent) {
		return &ELFError{Off: 0x28, Msg: "truncated file: section headers past the end", Val: fmt.Sprintf("%d headers at 0x%x, file is %d bytes", shnum, shoff, n)}
	}
	for i := uint64(0); i < shnum; i++ {
		h := shoff + i*shent
		typ := elf.SectionType(le.Uint32(data[h+4:]))
		if typ == elf.SHT_NULL || typ == elf.SHT_NOBITS {
			continue
		}
		off, size := le.Uint64(data[h+0x18:]), le.Uint64(data[h+0x20:])
		if !inFile(off, size) {
			return &ELFError{Off: int64(h), Msg: "truncated file: section data past the end",
				Val: fmt.Sprintf("section %d: 0x%x bytes at 0x%x, file is %d bytes", i, size, off, n)}
		}
	}
	return nil
}

// buildImage lays segs out in one window; segment i starts with the bytes file(i), then zeros.
func buildImage(segs []Segment, file func(i int) []byte) (*Image, error) {
	order := make([]int, len(segs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return segs[order[a]].Addr < segs[order[b]].Addr })
	lo := segs[order[0]].Addr &^ 15
	var hi uint64
	hasText := false
	var text uint64
	for n, i := range order {
		s := segs[i]
		if n > 0 {
			prev := segs[order[n-1]]
			if s.Addr < prev.Addr+prev.Size {
				return nil, &ELFError{Off: -1, Msg: "segments overlap",
					Val: fmt.Sprintf("[0x%x, 0x%x) and [0x%x, 0x%x)", prev.Addr, prev.Addr+prev.Size, s.Addr, s.Addr+s.Size)}
			}
		}
		if s.Size > MaxMemory || s.Addr+s.Size-lo > MaxMemory-ArenaSize-StackSize {
			return nil, &ELFError{Off: -1, Msg: "segment outside memory",
				Val: fmt.Sprintf("[0x%x, 0x%x) does not fit a %d MiB window from 0x%x with arena and stack", s.Addr, s.Addr+s.Size, MaxMemory>>20, lo)}
		}
		hi = s.Addr + s.Size
		if s.Exec {
			hasText = true
			text += s.Size
		}
	}
	if text > MaxText {
		return nil, &ELFError{Off: -1, Msg: fmt.Sprintf("executable segments hold %d bytes, more than the %d MiB fwsim decodes", text, MaxText>>20)}
	}
	if !hasText {
		return nil, &ELFError{Off: -1, Msg: "no executable text (no PT_LOAD segment with PF_X and nonzero size)"}
	}
	if lo <= ReturnAddress && ReturnAddress-lo < MaxMemory {
		return nil, &ELFError{Off: -1, Msg: "segment outside memory: window holds the harness return address", Val: fmt.Sprintf("0x%x", uint64(ReturnAddress))}
	}
	segEnd := (hi - lo + 15) &^ 15
	if lo > ^uint64(0)-(segEnd+ArenaSize+StackSize) {
		return nil, &ELFError{Off: -1, Msg: "segment outside memory: the window would wrap the address space", Val: fmt.Sprintf("0x%x", lo)}
	}
	var fileEnd uint64
	for i, s := range segs {
		fileEnd = max(fileEnd, s.Addr-lo+uint64(len(file(i))))
	}
	im := &Image{
		base:    lo,
		mem:     make([]byte, fileEnd),
		segEnd:  segEnd,
		memSize: segEnd + ArenaSize + StackSize,
	}
	for _, i := range order {
		s := segs[i]
		copy(im.mem[s.Addr-lo:], file(i))
		im.segs = append(im.segs, s)
	}
	return im, nil
}

func (im *Image) setSymbols(syms map[string]Symbol) {
	im.syms = syms
	im.sorted = im.sorted[:0]
	for _, s := range syms {
		im.sorted = append(im.sorted, s)
	}
	sort.Slice(im.sorted, func(i, j int) bool {
		a, b := im.sorted[i], im.sorted[j]
		if a.Addr != b.Addr {
			return a.Addr < b.Addr
		}
		return a.Name < b.Name
	})
}

// RawImage builds an Image without an ELF file: code is loaded at base as one executable
// (and read-only) segment, and the symbol "_start" names all of it. Tests and differential
// checks use it to run hand-assembled instruction streams.
func RawImage(base uint64, code []byte) (*Image, error) {
	if len(code) == 0 {
		return nil, &ELFError{Off: -1, Msg: "no executable text (empty code)"}
	}
	if base+uint64(len(code)) < base {
		return nil, &ELFError{Off: -1, Msg: "segment outside memory: code wraps the address space", Val: fmt.Sprintf("0x%x", base)}
	}
	segs := []Segment{{Addr: base, Size: uint64(len(code)), Exec: true}}
	im, err := buildImage(segs, func(int) []byte { return code })
	if err != nil {
		return nil, err
	}
	im.entry = base
	im.setSymbols(map[string]Symbol{"_start": {Name: "_start", Addr: base, Size: uint64(len(code)), Func: true}})
	return im, nil
}
