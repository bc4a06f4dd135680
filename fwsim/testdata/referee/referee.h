/* Shared by the compiled-C referee programs (fwsim's referee_test.go).
 *
 * Each program defines run_case(i, out): case i writes 64-bit results into out, which is
 * CASE_SIZE bytes. Word 0 is reserved: finish() stores there how many results the case
 * produced (the test checks they all fit). qemu runs every case from start.S and prints the
 * buffers; fwsim calls run_case itself; the bytes must agree.
 *
 * Inputs come from the case number at run time, so nothing folds at compile time. The
 * functions under test are noinline where the shape of the call matters, so -O2 and -Os keep
 * them as the code generator would emit them.
 */
#ifndef REFEREE_H
#define REFEREE_H

#include <stdint.h>
#include <stddef.h>

#if !defined(CASE_SIZE) || !defined(NCASES)
#error "build with -DNCASES=n -DCASE_SIZE=bytes"
#endif

#define NOINLINE __attribute__((noinline))
#define NWORDS (CASE_SIZE / 8)

typedef struct {
	uint64_t *w;
	uint64_t n; /* results put so far, counting word 0 */
} results;

static inline results begin(uint64_t *out) { return (results){out, 1}; }

static inline void put(results *r, uint64_t v)
{
	if (r->n < NWORDS)
		r->w[r->n] = v;
	r->n++;
}

static inline void finish(results *r) { r->w[0] = r->n; }

/* splitmix64: the inputs of case i. */
static inline uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

void run_case(uint64_t i, uint64_t *out);

#endif
