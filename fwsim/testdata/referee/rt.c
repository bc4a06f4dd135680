/* The few library functions gcc may call even in freestanding code (struct copies, array
 * zeroing). Kept simple and byte-wise; no loop-idiom rewriting into calls to themselves. */
#include <stddef.h>

#define NODISTRIBUTE __attribute__((optimize("no-tree-loop-distribute-patterns")))

NODISTRIBUTE void *memcpy(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	while (n--)
		*d++ = *s++;
	return dst;
}

NODISTRIBUTE void *memmove(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	if (d < s) {
		while (n--)
			*d++ = *s++;
	} else {
		while (n--)
			d[n] = s[n];
	}
	return dst;
}

NODISTRIBUTE void *memset(void *dst, int c, size_t n)
{
	unsigned char *d = dst;
	while (n--)
		*d++ = (unsigned char)c;
	return dst;
}

NODISTRIBUTE int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x - *y;
	return 0;
}
