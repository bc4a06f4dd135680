/* Runtime for the generated instruction-stream programs (see referee_test.go).
 *
 * uint64_t run_case(uint64_t i, uint8_t out[768]) runs program i of the table isa_progs
 * (pairs of .dword body, init) and copies its final context to out, returning out.
 *
 * The context isa_ctx is 768 bytes at a fixed address, so address-valued registers come
 * out the same under qemu and fwsim:
 *   [0, 256)    x0..x31 as 64-bit words: the initial values on entry, the final ones on exit
 *               (x0's slot keeps its initial 0)
 *   [256, 768)  scratch memory that the program loads from and stores to
 *
 * run_case saves the caller's ra, sp, gp, tp and s0-s11 in isa_save (no stack is used),
 * copies the program's 768-byte init block into isa_ctx, loads x1 and x3..x30 from it,
 * points sp at the scratch area and jumps to the body with t6 (x31) holding the body's
 * address. The body's first instruction reloads t6 from the context (-8(sp)). The body ends
 * with sp back at the scratch area and jumps to isa_exit, which stores all 31 registers,
 * copies the context out and returns to the caller with its registers restored.
 */
	.option norelax
	.text
	.balign 4
	.globl run_case
	.type run_case, @function
run_case:
	la	t0, isa_save
	sd	ra, 0(t0)
	sd	sp, 8(t0)
	sd	gp, 16(t0)
	sd	tp, 24(t0)
	sd	s0, 32(t0)
	sd	s1, 40(t0)
	sd	s2, 48(t0)
	sd	s3, 56(t0)
	sd	s4, 64(t0)
	sd	s5, 72(t0)
	sd	s6, 80(t0)
	sd	s7, 88(t0)
	sd	s8, 96(t0)
	sd	s9, 104(t0)
	sd	s10, 112(t0)
	sd	s11, 120(t0)
	sd	a1, 128(t0)
	la	t1, isa_progs
	slli	t2, a0, 4
	add	t1, t1, t2
	ld	t3, 0(t1)
	ld	t4, 8(t1)
	la	t5, isa_ctx
	li	t6, 96
1:	ld	t2, 0(t4)
	sd	t2, 0(t5)
	addi	t4, t4, 8
	addi	t5, t5, 8
	addi	t6, t6, -1
	bnez	t6, 1b
	la	sp, isa_ctx
	mv	t6, t3
	ld	x1, 8(sp)
	ld	x3, 24(sp)
	ld	x4, 32(sp)
	ld	x5, 40(sp)
	ld	x6, 48(sp)
	ld	x7, 56(sp)
	ld	x8, 64(sp)
	ld	x9, 72(sp)
	ld	x10, 80(sp)
	ld	x11, 88(sp)
	ld	x12, 96(sp)
	ld	x13, 104(sp)
	ld	x14, 112(sp)
	ld	x15, 120(sp)
	ld	x16, 128(sp)
	ld	x17, 136(sp)
	ld	x18, 144(sp)
	ld	x19, 152(sp)
	ld	x20, 160(sp)
	ld	x21, 168(sp)
	ld	x22, 176(sp)
	ld	x23, 184(sp)
	ld	x24, 192(sp)
	ld	x25, 200(sp)
	ld	x26, 208(sp)
	ld	x27, 216(sp)
	ld	x28, 224(sp)
	ld	x29, 232(sp)
	ld	x30, 240(sp)
	addi	sp, sp, 256
	jr	t6
	.size run_case, . - run_case

	.globl isa_exit
	.type isa_exit, @function
isa_exit:
	addi	sp, sp, -256
	sd	x1, 8(sp)
	sd	x2, 16(sp)
	sd	x3, 24(sp)
	sd	x4, 32(sp)
	sd	x5, 40(sp)
	sd	x6, 48(sp)
	sd	x7, 56(sp)
	sd	x8, 64(sp)
	sd	x9, 72(sp)
	sd	x10, 80(sp)
	sd	x11, 88(sp)
	sd	x12, 96(sp)
	sd	x13, 104(sp)
	sd	x14, 112(sp)
	sd	x15, 120(sp)
	sd	x16, 128(sp)
	sd	x17, 136(sp)
	sd	x18, 144(sp)
	sd	x19, 152(sp)
	sd	x20, 160(sp)
	sd	x21, 168(sp)
	sd	x22, 176(sp)
	sd	x23, 184(sp)
	sd	x24, 192(sp)
	sd	x25, 200(sp)
	sd	x26, 208(sp)
	sd	x27, 216(sp)
	sd	x28, 224(sp)
	sd	x29, 232(sp)
	sd	x30, 240(sp)
	sd	x31, 248(sp)
	la	t0, isa_save
	ld	a1, 128(t0)
	mv	t1, sp
	mv	t3, a1
	li	t2, 96
1:	ld	t4, 0(t1)
	sd	t4, 0(t3)
	addi	t1, t1, 8
	addi	t3, t3, 8
	addi	t2, t2, -1
	bnez	t2, 1b
	ld	ra, 0(t0)
	ld	sp, 8(t0)
	ld	gp, 16(t0)
	ld	tp, 24(t0)
	ld	s0, 32(t0)
	ld	s1, 40(t0)
	ld	s2, 48(t0)
	ld	s3, 56(t0)
	ld	s4, 64(t0)
	ld	s5, 72(t0)
	ld	s6, 80(t0)
	ld	s7, 88(t0)
	ld	s8, 96(t0)
	ld	s9, 104(t0)
	ld	s10, 112(t0)
	ld	s11, 120(t0)
	mv	a0, a1
	ret
	.size isa_exit, . - isa_exit

	.bss
	.balign 16
isa_ctx:
	.zero	768
isa_save:
	.zero	136
