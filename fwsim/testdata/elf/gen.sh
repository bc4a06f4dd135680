#!/bin/sh
# Rebuilds the test ELFs (needs riscv64-unknown-elf-gcc; `go tool task setup` installs it):
# fw.elf (-O2) and fw_O0.elf (-O0) from fw.c, and rv32.elf, a 32-bit build LoadELF must reject.
set -eu
cd "$(dirname "$0")"
CC=riscv64-unknown-elf-gcc
FLAGS="-ffreestanding -nostdlib -static -Wl,-e,add -Wl,--build-id=none"
$CC -march=rv64imc_zbb -mabi=lp64 -O2 $FLAGS -o fw.elf fw.c
$CC -march=rv64imc_zbb -mabi=lp64 -O0 $FLAGS -o fw_O0.elf fw.c
echo 'long add(long a, long b) { return a + b; }' > rv32.c
$CC -march=rv32imc -mabi=ilp32 -O2 $FLAGS -o rv32.elf rv32.c
rm rv32.c
# Small seeds for FuzzLoadELF: tiny.elf with symbols, tiny_stripped.elf without.
echo 'long add(long a, long b) { return a + b; } long k = 3; long get(void) { return k; }' > tiny.c
$CC -march=rv64imc_zbb -mabi=lp64 -O2 $FLAGS -fno-ident -o tiny.elf tiny.c
riscv64-unknown-elf-strip --strip-unneeded -R .riscv.attributes -R .comment tiny.elf -o tiny_stripped.elf
rm tiny.c
# A small seed with calls, a counted loop and ra overwritten before a ret, for the Trace
# checks of FuzzLoadELF and the WCET and LoopRuns checks of fwsim/wcet's FuzzBound.
cat > ret.S <<'ASM'
	.text
	.globl saved
	.type saved, @function
saved:	addi sp, sp, -16
	sd ra, 8(sp)
	call count4
	ld ra, 8(sp)
	addi sp, sp, 16
	ret
	.size saved, . - saved
	.globl count4
	.type count4, @function
count4:	li t0, 4
1:	addi a0, a0, 1
	addiw t0, t0, -1
	bnez t0, 1b
	ret
	.size count4, . - count4
	.globl elsewhere
	.type elsewhere, @function
elsewhere:
	la ra, count4
	ret
	.size elsewhere, . - elsewhere
ASM
$CC -march=rv64imc_zbb -mabi=lp64 $FLAGS -Wl,-e,saved -Wl,--no-relax -o ret.elf ret.S
riscv64-unknown-elf-objcopy -R .riscv.attributes ret.elf
rm ret.S
