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
