/* Hand-written control flow for the WCET analysis: shapes gcc does not make on demand. */
	.text

/* Tail calls: `tail` (auipc t1 + jr t1, kept by -Wl,--no-relax) and a plain `j` to the
   start of another function. Branch-only: the WCET must be tight. */
	.globl	tailer
	.type	tailer, @function
tailer:
	bltz	a0, 1f
	addi	a0, a0, 1
	tail	square
1:	j	negdiv
	.size	tailer, . - tailer

	.globl	square
	.type	square, @function
square:
	mul	a0, a0, a0
	ret
	.size	square, . - square

	.type	negdiv, @function
negdiv:
	neg	a0, a0
	divu	a0, a0, a1
	ret
	.size	negdiv, . - negdiv

/* A cycle entered at two places: irreducible. */
	.globl	irreducible
	.type	irreducible, @function
irreducible:
	beqz	a0, 2f
1:	addi	a1, a1, 1
2:	addi	a1, a1, -2
	bgtz	a1, 1b
	ret
	.size	irreducible, . - irreducible

/* Never returns: every path ends in ebreak. */
	.globl	never
	.type	never, @function
never:
	beqz	a0, 1f
	ebreak
1:	ebreak
	.size	never, . - never

/* Calls a function that never returns on one side: that side adds nothing. */
	.globl	maybe_trap
	.type	maybe_trap, @function
maybe_trap:
	addi	sp, sp, -16
	sd	ra, 8(sp)
	bnez	a0, 1f
	call	never
1:	addi	a0, a0, 3
	ld	ra, 8(sp)
	addi	sp, sp, 16
	ret
	.size	maybe_trap, . - maybe_trap

/* Control reaches bytes that do not decode (c.unimp, the all-zero halfword). */
	.globl	badcode
	.type	badcode, @function
badcode:
	beqz	a0, 1f
	ret
1:	.2byte	0
	.size	badcode, . - badcode

/* A jump through a register that holds an argument. */
	.globl	jump_arg
	.type	jump_arg, @function
jump_arg:
	jr	a0
	.size	jump_arg, . - jump_arg

/* A counted loop whose counter another path into the run changes: the jalr-style
   resolution and the counted-loop recogniser must both refuse to trust the constant. */
	.globl	joined
	.type	joined, @function
joined:
	li	t0, 4
	beqz	a0, 1f
	li	t0, 1000
1:	addi	a1, a1, 3
	addi	t0, t0, -1
	bnez	t0, 1b
	mv	a0, a1
	ret
	.size	joined, . - joined

/* The return address. `ret` and tail calls return to the caller only if ra still holds the
   address the function was called with; the analysis must prove it or refuse. */

/* Sets ra to another function and returns: a jump to square that returns to square, for
   ever. Refused at the ret, naming the instruction that set ra. */
	.globl	ret_elsewhere
	.type	ret_elsewhere, @function
ret_elsewhere:
	la	ra, square
	ret
	.size	ret_elsewhere, . - ret_elsewhere

/* ra from an argument, then ret (or a tail call): refused. */
	.globl	clobber_ret
	.type	clobber_ret, @function
clobber_ret:
	mv	ra, a1
	ret
	.size	clobber_ret, . - clobber_ret

	.globl	clobber_tail
	.type	clobber_tail, @function
clobber_tail:
	mv	ra, a1
	j	square
	.size	clobber_tail, . - clobber_tail

/* ra saved on the stack around calls and restored, then a call and a tail call: accepted. */
	.globl	saved_call
	.type	saved_call, @function
saved_call:
	addi	sp, sp, -16
	sd	ra, 8(sp)
	call	square
	bltz	a0, 1f
	call	negdiv
1:	ld	ra, 8(sp)
	addi	sp, sp, 16
	tail	square
	.size	saved_call, . - saved_call

/* ra kept in another register while it is used as a scratch one: accepted. */
	.globl	ra_in_t0
	.type	ra_in_t0, @function
ra_in_t0:
	mv	t0, ra
	li	ra, 7
	add	a0, a0, ra
	mv	ra, t0
	ret
	.size	ra_in_t0, . - ra_in_t0

/* The saved slot overwritten before it is restored: refused. */
	.globl	slot_overwritten
	.type	slot_overwritten, @function
slot_overwritten:
	addi	sp, sp, -16
	sd	ra, 8(sp)
	call	square
	sd	a0, 8(sp)
	ld	ra, 8(sp)
	addi	sp, sp, 16
	ret
	.size	slot_overwritten, . - slot_overwritten

/* Calls a function that clobbers its own ra: refused in the callee, at its ret. */
	.globl	bad_callee
	.type	bad_callee, @function
bad_callee:
	addi	sp, sp, -16
	sd	ra, 8(sp)
	call	clobber_ret
	ld	ra, 8(sp)
	addi	sp, sp, 16
	ret
	.size	bad_callee, . - bad_callee

/* Calls a function that returns with sp moved: the caller's saved ra is no longer at
   8(sp), so its ret is refused (the callee on its own is fine). */
	.globl	leaky
	.type	leaky, @function
leaky:
	addi	sp, sp, -16
	ret
	.size	leaky, . - leaky

	.globl	calls_leaky
	.type	calls_leaky, @function
calls_leaky:
	addi	sp, sp, -16
	sd	ra, 8(sp)
	call	leaky
	ld	ra, 8(sp)
	addi	sp, sp, 16
	ret
	.size	calls_leaky, . - calls_leaky

/* A loop reached by a jump into the middle of another function: its head is named by the
   function that holds it, count_up+0x2. count_up(n) runs its head n times (n >= 1). */
	.globl	count_up
	.type	count_up, @function
count_up:
	li	t0, 0
1:	addi	t0, t0, 1
	blt	t0, a0, 1b
	ret
	.size	count_up, . - count_up

	.globl	tail_into
	.type	tail_into, @function
tail_into:
	addi	a0, a0, 1
	li	t0, 0
	j	1b
	.size	tail_into, . - tail_into

/* A loop that calls count_up(3) on each of its n >= 1 iterations: per entry, its head runs
   n times and count_up's 3 times, whatever the nesting of calls. */
	.globl	calls_count
	.type	calls_count, @function
calls_count:
	addi	sp, sp, -16
	sd	ra, 8(sp)
	sd	s0, 0(sp)
	mv	s0, a0
1:	li	a0, 3
	call	count_up
	addi	s0, s0, -1
	bnez	s0, 1b
	ld	s0, 0(sp)
	ld	ra, 8(sp)
	addi	sp, sp, 16
	ret
	.size	calls_count, . - calls_count
