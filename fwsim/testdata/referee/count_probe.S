/* Zbb count instructions on a table of register values, for TestQemuCtzwBug.
 *
 * uint64_t run_case(uint64_t i, uint64_t out[8]): v = count_values[i]; out = {v, clz v,
 * ctz v, cpop v, clzw v, ctzw v, cpopw v, 0}. The value goes straight from a 64-bit load
 * into the instruction, upper word and all. */
	.option norelax
	.text
	.globl run_case
	.type run_case, @function
run_case:
	la	t0, count_values
	slli	a0, a0, 3
	add	t0, t0, a0
	ld	t1, 0(t0)
	sd	t1, 0(a1)
	clz	t2, t1
	sd	t2, 8(a1)
	ctz	t2, t1
	sd	t2, 16(a1)
	cpop	t2, t1
	sd	t2, 24(a1)
	clzw	t2, t1
	sd	t2, 32(a1)
	ctzw	t2, t1
	sd	t2, 40(a1)
	cpopw	t2, t1
	sd	t2, 48(a1)
	sd	zero, 56(a1)
	mv	a0, a1
	ret
	.size run_case, . - run_case

	.section .rodata
	.balign 8
	.globl count_values
count_values:
	.dword 0, 1, 0xffffffffffffffff, 0x8000000000000000, 0x4000000000000000
	.dword 0x100000000, 0xffffffff00000000, 0x0000000100000000, 0x8000000080000000
	.dword 0xffffffff80000000, 0x80000000, 0x7fffffff, 0xffffffff, 0x1234567800000000
	.dword 0x0000000000010000, 0xf0f0f0f000000000, 0x00000000f0f0f0f0, 0x8000000100000000
	.size count_values, . - count_values
