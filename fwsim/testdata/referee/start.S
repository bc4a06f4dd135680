/* Linux user-mode start-up for the referee ELFs (qemu-riscv64 only; fwsim never runs it).
 *
 * For i in [0, NCASES): run_case(i, referee_results + i*CASE_SIZE). Then write the whole
 * result buffer to stdout with write(2) (syscall 64), looping on short writes, and exit(2)
 * (syscall 93) with status 0, or 2 when write fails.
 *
 * fwsim calls run_case itself with a buffer of its own and reads the same CASE_SIZE bytes
 * back, so both sides compare the same bytes produced by the same machine code.
 *
 * Build with -DNCASES=... -DCASE_SIZE=... (CASE_SIZE a multiple of 8).
 */
#if !defined(NCASES) || !defined(CASE_SIZE)
#error "build with -DNCASES=n -DCASE_SIZE=bytes"
#endif

	.section .text.start, "ax", @progbits
	.globl _start
	.type _start, @function
_start:
	.option push
	.option norelax
	la	gp, __global_pointer$
	.option pop
	li	s0, 0
	la	s1, referee_results
	li	s2, NCASES
	li	s4, CASE_SIZE
1:	bgeu	s0, s2, 2f
	mv	a0, s0
	mv	a1, s1
	call	run_case
	addi	s0, s0, 1
	add	s1, s1, s4
	j	1b

2:	la	s1, referee_results
	li	s3, NCASES * CASE_SIZE
3:	beqz	s3, 4f
	li	a0, 1
	mv	a1, s1
	mv	a2, s3
	li	a7, 64
	ecall
	blez	a0, 5f
	add	s1, s1, a0
	sub	s3, s3, a0
	j	3b
4:	li	a0, 0
	li	a7, 93
	ecall
5:	li	a0, 2
	li	a7, 93
	ecall
	.size _start, . - _start

	.bss
	.balign 16
	.globl referee_results
referee_results:
	.zero	NCASES * CASE_SIZE
