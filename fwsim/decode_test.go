package fwsim

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// objdumpBase maps binutils' compressed mnemonics (objdump -M no-aliases) to the base
// instruction fwsim expands them to.
var objdumpBase = map[string]string{
	"c.addi4spn": "addi", "c.lw": "lw", "c.ld": "ld", "c.sw": "sw", "c.sd": "sd",
	"c.addi": "addi", "c.addiw": "addiw", "c.li": "addi", "c.addi16sp": "addi", "c.lui": "lui",
	"c.srli": "srli", "c.srli64": "srli", "c.srai": "srai", "c.srai64": "srai", "c.andi": "andi",
	"c.sub": "sub", "c.xor": "xor", "c.or": "or", "c.and": "and", "c.subw": "subw", "c.addw": "addw",
	"c.j": "jal", "c.beqz": "beq", "c.bnez": "bne", "c.slli": "slli", "c.slli64": "slli",
	"c.lwsp": "lw", "c.ldsp": "ld", "c.jr": "jalr", "c.mv": "add", "c.ebreak": "ebreak",
	"c.jalr": "jalr", "c.add": "add", "c.swsp": "sw", "c.sdsp": "sd",
}

// TestDecodeAgreesWithObjdump compares the decoder with binutils, an independent decoder: every
// 16-bit encoding, and a sample of 32-bit ones biased towards the opcodes and function codes
// fwsim implements, must be legal for both or neither, and name the same (base) instruction.
// Known, deliberate differences: C.ADDI16SP with a zero immediate is reserved by the RVC spec
// (binutils prints it); FENCE with nonzero reserved fields and FENCE.I are accepted as no-ops
// (as qemu does), while objdump for rv64imc_zbb prints them as data.
func TestDecodeAgreesWithObjdump(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("riscv64-unknown-elf-as"); err != nil {
		t.Fatalf("riscv64-unknown-elf-as is not on PATH (%v): run `go tool task setup`", err)
	}
	var words []uint32
	for x := uint32(0); x < 1<<16; x++ {
		if x&3 != 3 {
			words = append(words, x)
		}
	}
	rng := rand.New(rand.NewPCG(3, 5))
	opcodes := []uint32{opLOAD, opSTORE, opIMM, opIMM32, opOP, opOP32, opBRANCH, opJALR, opJAL, opLUI, opAUIPC, opSYSTEM}
	f7s := []uint32{0, 0x20, 1, 5, 0x30, 4, 0x24, 0x14, 0x34, 0x10, 0x35, 0x05, 0x21}
	imm12s := []uint32{0x600, 0x601, 0x602, 0x603, 0x604, 0x605, 0x606, 0x287, 0x6b8, 0x698, 0x080, 0x081, 0x001, 0x000}
	for range 30000 {
		w := rng.Uint32()&^0x7f | opcodes[rng.IntN(len(opcodes))]
		switch r := rng.IntN(10); {
		case r < 5:
			w = w&0x01ffffff | f7s[rng.IntN(len(f7s))]<<25
		case r < 7:
			w = w&0x000fffff | imm12s[rng.IntN(len(imm12s))]<<20
		}
		words = append(words, w)
	}
	got := objdumpDecode(t, words)
	mismatches := 0
	for i, w := range words {
		want := got[i]
		if base, ok := objdumpBase[want]; ok {
			want = base
		}
		if want == "c.unimp" || strings.HasPrefix(want, ".") {
			want = "illegal"
		}
		if w == 0x6101 { // c.addi16sp sp, 0: reserved
			want = "illegal"
		}
		mine := "illegal"
		if in, err := Decode(w, 0); err == nil {
			mine = in.Kind.String()
		}
		if mine != want {
			if mismatches++; mismatches <= 20 {
				t.Errorf("%#08x: fwsim %s, objdump %s", w, mine, got[i])
			}
		}
	}
	if mismatches > 0 {
		t.Errorf("%d of %d encodings disagree", mismatches, len(words))
	}
}

// objdumpDecode assembles each word with .insn and returns objdump's mnemonic for each.
func objdumpDecode(t *testing.T, words []uint32) []string {
	t.Helper()
	dir := t.TempDir()
	var src bytes.Buffer
	src.WriteString(".option rvc\n")
	for _, w := range words {
		if w&3 == 3 {
			fmt.Fprintf(&src, ".insn 0x%08x\n", w)
		} else {
			fmt.Fprintf(&src, ".insn 0x%04x\n", w)
		}
	}
	s, o := filepath.Join(dir, "a.s"), filepath.Join(dir, "a.o")
	if err := os.WriteFile(s, src.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("riscv64-unknown-elf-as", "-march=rv64imc_zbb", "-mabi=lp64", "-o", o, s).CombinedOutput(); err != nil {
		t.Fatalf("as: %v\n%s", err, out)
	}
	out, err := exec.Command("riscv64-unknown-elf-objdump", "-d", "-M", "no-aliases,numeric", o).Output()
	if err != nil {
		t.Fatalf("objdump: %v", err)
	}
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 3 || !strings.HasSuffix(strings.TrimSpace(f[0]), ":") {
			continue
		}
		hex := strings.Fields(f[1])
		if len(hex) == 0 {
			continue
		}
		if _, err := strconv.ParseUint(hex[0], 16, 32); err != nil {
			continue
		}
		names = append(names, strings.Fields(f[2])[0])
	}
	if len(names) != len(words) {
		t.Fatalf("objdump listed %d instructions for %d words", len(names), len(words))
	}
	return names
}
