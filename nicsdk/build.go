// Package nicsdk is the NIC engine's side of nicc: its C ABI (nicsdk.h: the event, the
// 48-byte flow context, fxp20 rates, Q16 helpers), the RL-CC event-handler runtime in fixed
// point (rlcc.h) with bit-identical Go twins (OnEvent, SqrtRate, Multiplier, ...), the
// firmware linker script, and how firmware is built for the engine's RISC-V core (Build).
package nicsdk

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// CC is the cross compiler firmware is built with (Debian gcc-riscv64-unknown-elf;
// `go tool task setup` installs it).
const CC = "riscv64-unknown-elf-gcc"

// FirmwareFlags are the flags every firmware build uses, before the optimisation level: the
// engine's ISA (RV64IMC + Zbb, no FPU), freestanding, no libc, static, and no linker
// relaxation, so nothing is addressed through gp and calls stay auipc+jalr pairs.
var FirmwareFlags = []string{
	"-march=rv64imc_zbb", "-mabi=lp64",
	"-ffreestanding", "-nostdlib", "-static",
	"-Wl,--no-relax",
	"-fsched-pressure",
}

// Libgcc is the path of the rv64imac/lp64 libgcc. -march=rv64imc_zbb matches no multilib, so
// gcc's default libgcc would be the hard-float one; firmware links this one explicitly.
var Libgcc = sync.OnceValues(func() (string, error) {
	out, err := exec.Command(CC, "-march=rv64imac", "-mabi=lp64", "-print-libgcc-file-name").Output()
	if err != nil {
		return "", fmt.Errorf("%s is needed (run `go tool task setup`): %v", CC, err)
	}
	p := strings.TrimSpace(string(out))
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("libgcc for rv64imac/lp64: %v", err)
	}
	return p, nil
})

// Build compiles and links srcs (C sources or objects from Object) into the ELF out with
// FirmwareFlags, then extra (optimisation level, -D, warnings), the linker script ld, and
// Libgcc. The error shows the command and the compiler's output. Safe for concurrent use.
func Build(out, ld string, extra []string, srcs ...string) error {
	lib, err := Libgcc()
	if err != nil {
		return err
	}
	args := append(append([]string{}, FirmwareFlags...), extra...)
	args = append(append(args, "-T", ld, "-o", out), srcs...)
	return cc(append(args, lib))
}

// Object compiles srcs into the relocatable object out with FirmwareFlags and extra, for a
// caller that inspects it before Build links it.
func Object(out string, extra []string, srcs ...string) error {
	args := append(append([]string{}, FirmwareFlags...), extra...)
	return cc(append(append(args, "-c", "-o", out), srcs...))
}

func cc(args []string) error {
	if msg, err := exec.Command(CC, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", CC, strings.Join(args, " "), err, msg)
	}
	return nil
}
