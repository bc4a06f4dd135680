/* Linux user-mode start-up for the benchmark ELF under qemu-riscv64: exit(bench_main(argc,
 * argv)). fwsim never runs it; it calls decide, bench_loop and the other functions directly. */
	.section .text.start, "ax", @progbits
	.globl _start
	.type _start, @function
_start:
	.option push
	.option norelax
	la	gp, __global_pointer$
	.option pop
	ld	a0, 0(sp)
	addi	a1, sp, 8
	call	bench_main
	li	a7, 93
	ecall
	.size _start, . - _start
