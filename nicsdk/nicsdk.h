/* nicsdk.h: the C ABI of the NIC's programmable congestion-control engine, as nicc's firmware
 * sees it. Freestanding C99: only <stdint.h>. Compiles warning-free with
 * -std=c99 -Wall -Wextra -Werror -pedantic under host gcc and riscv64-unknown-elf-gcc.
 *
 * The engine calls one handler per event:
 *
 *     uint32_t nicc_on_event(const struct nicc_event *ev, struct nicc_flow_ctx *ctx);
 *
 * It receives the flow's context as the previous call left it (zeroed for a new flow) and
 * returns the flow's new rate in fxp20.
 *
 * Fixed-point formats:
 *   fxp20  uint32_t, 20 fractional bits, a fraction of line rate: 1<<20 is line rate.
 *          A rate the handler returns is in (0, 1<<20].
 *   Q16    16 fractional bits: uint32_t for values that are never negative, int32_t otherwise.
 *          1.0 is 1<<16.
 * Every fixed-point product and quotient here rounds toward minus infinity (floor), and no
 * helper relies on signed overflow or on right shifts of negative values.
 *
 * nicc's Go package github.com/nicc-dev/nicc/nicsdk mirrors every definition here bit for bit
 * (nicsdk.Event, nicsdk.FlowCtx, nicsdk.FxpMul16, ...); its tests prove it.
 */
#ifndef NICC_NICSDK_H
#define NICC_NICSDK_H

#include <stdint.h>

/* Event types (struct nicc_event.type). A handler must accept any other value too (rlcc.h
 * treats it like every event that is not NICC_EV_RTT). */
enum nicc_event_type {
	NICC_EV_RTT = 0,  /* an RTT probe came back: rtt_ns holds the sample */
	NICC_EV_CNP = 1,  /* a congestion notification packet arrived */
	NICC_EV_NACK = 2, /* a NACK (loss or out-of-sequence) arrived */
	NICC_EV_TX = 3    /* the flow transmitted: tx_bytes holds the bytes sent */
};

/* One event. Fixed layout, little endian, 24 bytes, 8-byte aligned:
 *   offset  0  uint32_t type          enum nicc_event_type
 *   offset  4  uint32_t rtt_ns        RTT sample in ns (NICC_EV_RTT), else 0
 *   offset  8  uint64_t timestamp_ns  when the event happened, ns
 *   offset 16  uint32_t flow_id       the flow the context belongs to
 *   offset 20  uint32_t tx_bytes      bytes sent (NICC_EV_TX), else 0 */
struct nicc_event {
	uint32_t type;
	uint32_t rtt_ns;
	uint64_t timestamp_ns;
	uint32_t flow_id;
	uint32_t tx_bytes;
};

#define NICC_EVENT_BYTES 24

/* The per-flow context the engine keeps between events: 12 words, 48 bytes. The engine
 * zeroes it for a new flow. Which words mean what is the runtime's business (rlcc.h
 * documents the RL-CC words). */
#define NICC_CTX_WORDS 12
#define NICC_CTX_BYTES 48

struct nicc_flow_ctx {
	uint32_t data[NICC_CTX_WORDS];
};

/* Compile-time layout checks (C99 has no _Static_assert: a negative array size fails). */
typedef char nicc_ctx_is_48_bytes[(sizeof(struct nicc_flow_ctx) == NICC_CTX_BYTES) ? 1 : -1];
typedef char nicc_event_is_24_bytes[(sizeof(struct nicc_event) == NICC_EVENT_BYTES) ? 1 : -1];

/* Results. */
#define NICC_LINE_RATE ((uint32_t)1 << 20) /* fxp20 1.0: the largest rate */
#define NICC_FXP20_SHIFT 20

/* Q16 helpers. */
#define NICC_Q16_SHIFT 16
#define NICC_Q16_ONE ((uint32_t)1 << 16)

/* nicc_fxp16_mul returns floor(a*b / 2^16), truncated to 32 bits (the caller keeps the
 * product below 2^48 when the result must be exact). Q16 x Q16 -> Q16, or fxp20 x Q16 ->
 * fxp20. */
static inline uint32_t nicc_fxp16_mul(uint32_t a, uint32_t b)
{
	return (uint32_t)(((uint64_t)a * b) >> 16);
}

/* nicc_fxp16_div returns floor(a * 2^16 / b), saturated to 0xffffffff; b == 0 gives
 * 0xffffffff. Q16 / Q16 -> Q16. One 64-bit division. */
static inline uint32_t nicc_fxp16_div(uint32_t a, uint32_t b)
{
	uint64_t q;
	if (b == 0)
		return UINT32_MAX;
	q = ((uint64_t)a << 16) / b;
	return q > UINT32_MAX ? UINT32_MAX : (uint32_t)q;
}

/* nicc_min_u32, nicc_max_u32, nicc_clamp_u32, nicc_clamp_i32: branch-free on Zbb (minu,
 * maxu, min, max). */
static inline uint32_t nicc_min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }
static inline uint32_t nicc_max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }
static inline uint32_t nicc_clamp_u32(uint32_t v, uint32_t lo, uint32_t hi)
{
	return nicc_min_u32(nicc_max_u32(v, lo), hi);
}
static inline int32_t nicc_clamp_i32(int32_t v, int32_t lo, int32_t hi)
{
	v = v < lo ? lo : v;
	return v > hi ? hi : v;
}

#endif /* NICC_NICSDK_H */
