/* doca_driver.c: written by nicc compile --sdk doca to verify the DOCA source on the host,
 * built with nicc's stand-in for DOCA's device API (NICC_DOCA_SHIM); not firmware.
 * Reads commands from stdin, one a line, and prints one line per command but C:
 *   I                     doca_pcc_dev_user_init(&mask): prints mask
 *   C w0 .. w11           sets the flow's algorithm context; prints nothing
 *   E slot overload type subtype port flags flowtag sn ts req_send req_recv resp_send
 *                         doca_pcc_dev_user_algo on the kept context: prints the results'
 *                         rate and rtt_req, the 12 context words and the event port's (and
 *                         slot's) counters 0 and 1
 *   S port slot base num v0 .. v{num-1}
 *                         doca_pcc_dev_user_set_algo_params(port, slot, base, num, v,
 *                         doca_pcc_dev_get_algo_params(port, slot) + base): prints its status
 *                         and the port's (and slot's) parameters 0, 1, 2
 * Exits 2 on malformed input. */
#include <stdint.h>
#include <stdio.h>
#include "nicc_doca_pcc_dev.h"

static int read_u32(uint32_t *v)
{
	unsigned long long t;
	if (scanf("%llu", &t) != 1 || t > UINT32_MAX)
		return 0;
	*v = (uint32_t)t;
	return 1;
}

static int read_u8(uint32_t *v)
{
	return read_u32(v) && *v <= 0xff;
}

static int event(doca_pcc_dev_algo_ctxt_t *ctx)
{
	doca_pcc_dev_event_t ev;
	doca_pcc_dev_attr_t attr = {0, 0, 0};
	doca_pcc_dev_results_t res = {0, 0, 0, 0, 0};
	uint32_t slot, overload, type, subtype, port, flags, *counters;
	int i;

	if (!read_u32(&slot) || slot > 0xf || !read_u32(&overload) || overload > 1 || !read_u8(&type) ||
	    !read_u8(&subtype) || !read_u8(&port) || !read_u8(&flags) || !read_u32(&ev.flow_tag) || !read_u32(&ev.sn) ||
	    !read_u32(&ev.timestamp) || !read_u32(&ev.rtt_req_send_timestamp) || !read_u32(&ev.rtt_req_recv_timestamp) ||
	    !read_u32(&ev.rtt_resp_send_timestamp))
		return 0;
	attr.algo_slot = slot & 0xf;
	attr.overload = overload & 1;
	ev.ev_attr = type | subtype << 8 | port << 16 | flags << 24;
	doca_pcc_dev_user_algo(ctx, &ev, &attr, &res);
	counters = doca_pcc_dev_get_counters(port, slot);
	printf("%lu %lu", (unsigned long)res.rate, (unsigned long)res.rtt_req);
	for (i = 0; i < 12; i++)
		printf(" %lu", (unsigned long)ctx->data[i]);
	printf(" %lu %lu\n", (unsigned long)counters[0], (unsigned long)counters[1]);
	return 1;
}

static int set_params(void)
{
	uint32_t port, slot, base, num, v[3], *params, status;
	uint32_t i;

	if (!read_u32(&port) || !read_u32(&slot) || !read_u32(&base) || base > 3 || !read_u32(&num) || num > 3)
		return 0;
	for (i = 0; i < num; i++)
		if (!read_u32(&v[i]))
			return 0;
	params = doca_pcc_dev_get_algo_params(port, slot);
	status = (uint32_t)doca_pcc_dev_user_set_algo_params(port, slot, base, num, v, params + base);
	printf("%lu %lu %lu %lu\n", (unsigned long)status, (unsigned long)params[0], (unsigned long)params[1],
	       (unsigned long)params[2]);
	return 1;
}

int main(void)
{
	static char out[1 << 16];
	doca_pcc_dev_algo_ctxt_t ctx = {{0}};
	uint32_t mask;
	char tag;
	int i;

	setvbuf(stdout, out, _IOFBF, sizeof out);
	while (scanf(" %c", &tag) == 1) {
		switch (tag) {
		case 'I':
			mask = 0;
			doca_pcc_dev_user_init(&mask);
			printf("%lu\n", (unsigned long)mask);
			break;
		case 'C':
			for (i = 0; i < 12; i++)
				if (!read_u32(&ctx.data[i]))
					return 2;
			break;
		case 'E':
			if (!event(&ctx))
				return 2;
			break;
		case 'S':
			if (!set_params())
				return 2;
			break;
		default:
			return 2;
		}
	}
	return fflush(stdout) == 0 ? 0 : 3;
}
