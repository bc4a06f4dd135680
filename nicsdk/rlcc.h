/* rlcc.h: the RL-CC event-handler runtime in fixed point: features (RTT inflation,
 * sqrt(rate), the observation o, the two-state history), the action -> multiplier map and the
 * rate update. Freestanding C99, header only (static inline), integer arithmetic only.
 *
 * Every function here has a bit-identical Go twin in github.com/nicc-dev/nicc/nicsdk
 * (rlcc.go), proven by its tests: exhaustively where the domain allows, else on millions of
 * random and edge inputs, on the host and in fwsim.
 *
 * Formats (nicsdk.h): rates are fxp20 (1<<20 = line rate), everything else Q16. Rounding is
 * floor everywhere: a product is shifted right (unsigned), a quotient is truncated (unsigned),
 * and a negative result is formed as minus the ceiling of a non-negative one.
 *
 * The model sees x[4] = (a_{t-1}, o_t, a_{t-2}, o_{t-1}), each int32 Q16, and returns y in Q16.
 * Declared ranges of x, which the quantizer relies on and the handler enforces by clamping
 * whatever the context holds:
 *   a_{t-1}, a_{t-2}  [RLCC_A_MIN, RLCC_A_MAX] = [54613, 78643] = [0.83333, 1.19999]
 *   o_t, o_{t-1}      [rlcc_obs_min(p), RLCC_O_MAX]; rlcc_obs_min(p) = -ceil(target*scale/2^16)
 *                     in Q16 (-50328 = -0.76794 with the defaults), RLCC_O_MAX = 128 - 2^-16.
 *
 * The engine entry the compiler emits is, with the generated int32_t nicc_policy(const
 * int32_t *x) and a const struct rlcc_params NAME in the same file (nicsdk.HandlerC prints
 * both lines of glue):
 *
 *     RLCC_DEFINE_HANDLER(NAME)
 *
 * which defines uint32_t nicc_on_event(const struct nicc_event *, struct nicc_flow_ctx *).
 * A static nicc_policy is inlined by gcc -O2, so x stays in registers.
 */
#ifndef NICC_RLCC_H
#define NICC_RLCC_H

#include <stdint.h>
#include "nicsdk.h"

/* Flow context words (struct nicc_flow_ctx.data[i]) used by RL-CC: words 0..5, 24 bytes.
 * Words 6..11 are left untouched for other runtimes (the LSTM state). */
#define RLCC_CTX_RATE 0     /* uint32 fxp20: the current rate, in [min_rate, 1<<20] */
#define RLCC_CTX_BASE_RTT 1 /* uint32 ns: the smallest nonzero RTT seen; 0 = none yet */
#define RLCC_CTX_A1 2       /* uint32 Q16: a_{t-1}, the last multiplier */
#define RLCC_CTX_A2 3       /* uint32 Q16: a_{t-2}, the one before */
#define RLCC_CTX_O1 4       /* int32 Q16 (two's complement): o_{t-1}, the last observation */
#define RLCC_CTX_FLAGS 5    /* bit 0: initialised (RLCC_FLAG_INIT); bits 1..31 reserved, kept */
#define RLCC_CTX_WORDS 6    /* words RL-CC uses: data[0..5] */
#define RLCC_FLAG_INIT 1u

/* The action -> multiplier map's constants. */
#define RLCC_Y_MIN (-65536)   /* model output clamp, Q16 -1.0 */
#define RLCC_Y_MAX 65536      /* Q16 1.0 */
#define RLCC_K_Q16 13107u     /* 0.2 in Q16: floor(0.2 * 2^16) = 13107 = 0.1999969 */
#define RLCC_A_MIN 54613u     /* floor(2^32 / (65536 + 13107)) = 0.83333 (~1/1.2) */
#define RLCC_A_MAX 78643u     /* 65536 + 13107 = 1.19999 (~1.2) */
#define RLCC_O_MAX 8388607    /* (128 << 16) - 1: the observation's upper clamp, 127.99998 */

/* Policy parameters. The arithmetic below is exact (no overflow) for parameters in these
 * ranges, which nicsdk.Params.Validate checks before the compiler emits them:
 *   target     Q16, [0, 16.0]       (0 <= target <= 1<<20)
 *   beta       Q16, [0, 256.0]      (0 <= beta <= 1<<24)
 *   scale      Q16, [2^-16, 256.0]  (1 <= scale <= 1<<24)
 *   min_rate   fxp20, [1, init_rate]
 *   init_rate  fxp20, [min_rate, 1<<20]: the rate of a new flow
 * Defaults (DESIGN.md: the NIC paper's target and beta, the published network's scale):
 *   { 4194 (0.064), 98304 (1.5), 786432 (12), 1049 (1/1000 of line rate), 1<<20 } */
struct rlcc_params {
	uint32_t target;
	uint32_t beta;
	uint32_t scale;
	uint32_t min_rate;
	uint32_t init_rate;
};

/* rlcc_u32_to_i32 reinterprets a stored word as two's complement without relying on
 * implementation-defined conversion (gcc compiles it to nothing). */
static inline int32_t rlcc_u32_to_i32(uint32_t v)
{
	return v <= (uint32_t)INT32_MAX ? (int32_t)v : -(int32_t)(~v) - 1;
}

/* rlcc_rtt_infl returns the RTT inflation rtt/base in Q16: floor(rtt * 2^16 / base),
 * saturated to 0xffffffff (65536.0); base == 0 (no baseline yet) gives 1.0. One 64-bit
 * division, skipped when the result saturates (rtt >= base * 2^16). */
static inline uint32_t rlcc_rtt_infl(uint32_t rtt_ns, uint32_t base_ns)
{
	if (base_ns == 0)
		return NICC_Q16_ONE;
	if ((rtt_ns >> 16) >= base_ns)
		return UINT32_MAX;
	return (uint32_t)(((uint64_t)rtt_ns << 16) / base_ns);
}

/* rlcc_clz32 counts the leading zeros of x != 0: one clzw on Zbb. A GCC builtin (gcc and
 * clang have it), the one thing here beyond C99. */
static inline unsigned rlcc_clz32(uint32_t x)
{
	return (unsigned)__builtin_clz(x);
}

/* rlcc_sqrt_rate returns sqrt(rate) in Q16 for a rate in fxp20: floor(sqrt(rate * 2^12)),
 * exact, with the rate first clamped to [1, 1<<20]. The result is in [64, 65536].
 *
 * How, without a loop or a division (the value is the exact floor; the tests prove it for
 * every rate): line rate is 1 + the result at 1<<20 - 1, so x = rate' << 12 is below 2^32.
 * x is shifted left by an even k so that y = x << k is in [2^30, 2^32); sqrt(y) is read off
 * a chord between two entries of tab[i] = floor(sqrt(64 + i) * 2^20) (sqrt(y) * 2^8 at
 * y = (64 + i) * 2^24), which lies less than 0.26 below sqrt(y), never above; one upward
 * step makes it floor(sqrt(y)), and floor(sqrt(x)) = floor(sqrt(y)) >> k/2. All in 32 bits. */
static inline uint32_t rlcc_sqrt_rate(uint32_t rate)
{
	static const uint32_t tab[193] = {
		8388608u, 8453889u, 8518671u, 8582964u, 8646779u, 8710126u, 8773016u, 8835458u,
		8897462u, 8959037u, 9020191u, 9080934u, 9141273u, 9201217u, 9260772u, 9319947u,
		9378748u, 9437184u, 9495259u, 9552982u, 9610357u, 9667393u, 9724093u, 9780465u,
		9836514u, 9892246u, 9947665u, 10002777u, 10057587u, 10112100u, 10166321u, 10220254u,
		10273904u, 10327275u, 10380372u, 10433199u, 10485760u, 10538058u, 10590098u, 10641884u,
		10693418u, 10744706u, 10795750u, 10846554u, 10897121u, 10947454u, 10997557u, 11047433u,
		11097085u, 11146515u, 11195728u, 11244724u, 11293509u, 11342083u, 11390450u, 11438613u,
		11486574u, 11534336u, 11581900u, 11629270u, 11676448u, 11723436u, 11770236u, 11816851u,
		11863283u, 11909533u, 11955605u, 12001500u, 12047221u, 12092768u, 12138144u, 12183352u,
		12228392u, 12273267u, 12317978u, 12362528u, 12406918u, 12451150u, 12495225u, 12539145u,
		12582912u, 12626527u, 12669992u, 12713308u, 12756477u, 12799501u, 12842380u, 12885117u,
		12927713u, 12970168u, 13012485u, 13054665u, 13096710u, 13138619u, 13180395u, 13222040u,
		13263553u, 13304937u, 13346193u, 13387322u, 13428324u, 13469202u, 13509956u, 13550588u,
		13591098u, 13631488u, 13671758u, 13711910u, 13751945u, 13791863u, 13831667u, 13871356u,
		13910932u, 13950396u, 13989748u, 14028990u, 14068123u, 14107147u, 14146063u, 14184873u,
		14223576u, 14262175u, 14300670u, 14339061u, 14377349u, 14415536u, 14453622u, 14491608u,
		14529495u, 14567283u, 14604973u, 14642566u, 14680064u, 14717465u, 14754772u, 14791984u,
		14829104u, 14866130u, 14903065u, 14939908u, 14976660u, 15013323u, 15049896u, 15086381u,
		15122778u, 15159087u, 15195309u, 15231446u, 15267497u, 15303462u, 15339344u, 15375142u,
		15410856u, 15446489u, 15482039u, 15517507u, 15552895u, 15588202u, 15623430u, 15658578u,
		15693648u, 15728640u, 15763553u, 15798390u, 15833150u, 15867834u, 15902442u, 15936975u,
		15971433u, 16005817u, 16040128u, 16074365u, 16108530u, 16142622u, 16176642u, 16210591u,
		16244469u, 16278277u, 16312014u, 16345682u, 16379280u, 16412810u, 16446271u, 16479665u,
		16512991u, 16546250u, 16579442u, 16612568u, 16645627u, 16678622u, 16711551u, 16744415u,
		16777216u,
	};
	uint32_t r = nicc_clamp_u32(rate, 1, NICC_LINE_RATE);
	uint32_t top = r >> NICC_FXP20_SHIFT; /* 1 at line rate */
	uint32_t x = (r - top) << 12;         /* in [2^12, 2^32 - 2^12] */
	unsigned k = rlcc_clz32(x) & ~1u;
	uint32_t y = x << k;                  /* in [2^30, 2^32) */
	const uint32_t *t = tab + ((y >> 24) - 64);
	/* The chord at y, in units of 2^-8: t[1] - t[0] < 2^16, the fraction is taken to 16 bits. */
	uint32_t s = (t[0] + (((t[1] - t[0]) * ((y >> 8) & 0xffff)) >> 16)) >> 8;
	s += s * (s + 2) < y; /* (s + 1)^2 <= y; s <= 65535, so s (s + 2) < 2^32 */
	return (s >> (k >> 1)) + top;
}

/* rlcc_obs_min returns the smallest observation, the one at zero excess inflation:
 * -ceil(target * scale / 2^16) in Q16. */
static inline int32_t rlcc_obs_min(const struct rlcc_params *p)
{
	uint64_t ts = (uint64_t)p->target * p->scale;
	return -(int32_t)((ts + 0xffff) >> 16);
}

/* rlcc_observation returns o = (max(infl - beta, 0) * sqrt_rate - target) * scale in Q16,
 * clamped to [rlcc_obs_min(p), RLCC_O_MAX]:
 *   e    = infl - beta if infl > beta, else 0                 (Q16, exact)
 *   prod = floor(e * sqrt_rate / 2^16)                         (Q16, first rounding)
 *   o    = floor((prod * scale - target * scale) / 2^16)       (Q16, second and last)
 *   o    = min(o, RLCC_O_MAX)
 * infl is rlcc_rtt_infl's result, sqrt_rate rlcc_sqrt_rate's (at most 65536; a larger value
 * is taken as 65536). */
static inline int32_t rlcc_observation(uint32_t infl, uint32_t sqrt_rate, const struct rlcc_params *p)
{
	uint64_t e = infl > p->beta ? (uint64_t)(infl - p->beta) : 0;
	uint64_t prod = (e * nicc_min_u32(sqrt_rate, NICC_Q16_ONE)) >> 16;
	uint64_t big = prod * p->scale;
	uint64_t ts = (uint64_t)p->target * p->scale;
	if (big >= ts) {
		uint64_t v = (big - ts) >> 16;
		return v > (uint64_t)RLCC_O_MAX ? RLCC_O_MAX : (int32_t)v;
	}
	return -(int32_t)((ts - big + 0xffff) >> 16);
}

/* rlcc_multiplier maps the model output y (Q16, clamped to [-1, 1]) to the rate multiplier in
 * Q16, in [RLCC_A_MIN, RLCC_A_MAX]:
 *   y >= 0:  m = 2^16 + floor(K * y / 2^16)                   (1 + 0.2 y)
 *   y <  0:  m = floor(2^32 / (2^16 + floor(K * -y / 2^16)))   (1 / (1 - 0.2 y))
 * with K = RLCC_K_Q16 (0.2).
 *
 * The reciprocal is exact without a division (the tests prove it for every y): with
 * d = 2^16 + u, u in [0, 13107], 2^32/d is read off a chord between two entries of
 * tab[j] = ceil(2^40 / (2^16 + 256 j)) (2^32/d * 2^8 at u = 256 j), which lies at most 0.25
 * above it, never below; one downward step makes it the floor. */
static inline uint32_t rlcc_multiplier(int32_t y)
{
	static const uint32_t tab[53] = {
		16777216u, 16711936u, 16647161u, 16582886u, 16519105u, 16455814u, 16393005u, 16330675u,
		16268816u, 16207424u, 16146494u, 16086020u, 16025998u, 15966422u, 15907287u, 15848588u,
		15790321u, 15732481u, 15675064u, 15618063u, 15561476u, 15505298u, 15449523u, 15394149u,
		15339169u, 15284582u, 15230381u, 15176563u, 15123125u, 15070061u, 15017369u, 14965043u,
		14913081u, 14861479u, 14810233u, 14759338u, 14708793u, 14658592u, 14608733u, 14559212u,
		14510025u, 14461170u, 14412642u, 14364440u, 14316558u, 14268995u, 14221747u, 14174810u,
		14128182u, 14081860u, 14035841u, 13990122u, 13944700u,
	};
	const uint32_t *t;
	uint32_t u, v, m;
	y = nicc_clamp_i32(y, RLCC_Y_MIN, RLCC_Y_MAX);
	if (y >= 0)
		return NICC_Q16_ONE + (((uint32_t)y * RLCC_K_Q16) >> 16);
	u = ((uint32_t)-y * RLCC_K_Q16) >> 16; /* in [0, 13107] */
	t = tab + (u >> 8);
	v = t[0] - (((t[0] - t[1]) * (u & 0xff)) >> 8); /* the chord, in units of 2^-8 */
	m = v >> 8;
	/* m d > 2^32 exactly when m d - 1 >= 2^32 (m d < 2^33) */
	return m - (uint32_t)(((uint64_t)m * (NICC_Q16_ONE + u) - 1) >> 32);
}

/* rlcc_update_rate returns the next rate, clamp(floor(rate * m / 2^16), min_rate, 1<<20), in
 * fxp20, for any rate and m. */
static inline uint32_t rlcc_update_rate(uint32_t rate, uint32_t m, const struct rlcc_params *p)
{
	uint64_t r = ((uint64_t)rate * m) >> 16;
	if (r > NICC_LINE_RATE)
		r = NICC_LINE_RATE;
	return nicc_max_u32((uint32_t)r, p->min_rate);
}

/* rlcc_init sets up a new flow's words: rate = init_rate, no base RTT, a_{t-1} = a_{t-2} = 1.0,
 * o_{t-1} = rlcc_obs_min(p) (an idle link), the init flag set (other flag bits kept). */
static inline void rlcc_init(struct nicc_flow_ctx *ctx, const struct rlcc_params *p)
{
	ctx->data[RLCC_CTX_RATE] = p->init_rate;
	ctx->data[RLCC_CTX_BASE_RTT] = 0;
	ctx->data[RLCC_CTX_A1] = NICC_Q16_ONE;
	ctx->data[RLCC_CTX_A2] = NICC_Q16_ONE;
	ctx->data[RLCC_CTX_O1] = (uint32_t)rlcc_obs_min(p);
	ctx->data[RLCC_CTX_FLAGS] |= RLCC_FLAG_INIT;
}

/* rlcc_on_event is the whole RL-CC decision for one event:
 *   1. A context without RLCC_FLAG_INIT is initialised (rlcc_init) first.
 *   2. The stored rate is clamped to [min_rate, 1<<20], as are a_{t-1}, a_{t-2} to
 *      [RLCC_A_MIN, RLCC_A_MAX] and o_{t-1} to [rlcc_obs_min(p), RLCC_O_MAX], so the model's
 *      inputs are in their declared ranges whatever the context held.
 *   3. Not an RTT event (CNP, NACK, TX, or an unknown type): the clamped rate is stored and
 *      returned; nothing else changes.
 *   4. RTT event: base_rtt = rtt_ns if rtt_ns != 0 and (base_rtt == 0 or rtt_ns < base_rtt);
 *      infl = rlcc_rtt_infl(rtt_ns, base_rtt); o_t = rlcc_observation(infl,
 *      rlcc_sqrt_rate(rate), p); y = policy(x) with x = (a_{t-1}, o_t, a_{t-2}, o_{t-1});
 *      m = rlcc_multiplier(y); rate = rlcc_update_rate(rate, m, p); then the history shifts
 *      (a_{t-2} = a_{t-1}, a_{t-1} = m, o_{t-1} = o_t) and the new rate is stored and
 *      returned. An RTT event with rtt_ns == 0 (no sample) leaves base_rtt alone and has
 *      inflation 0 (or 1.0 while there is no base yet): no congestion.
 * The result is in [min_rate, 1<<20]; words 6..11 of the context are never touched. */
static inline uint32_t rlcc_on_event(const struct nicc_event *ev, struct nicc_flow_ctx *ctx,
				     const struct rlcc_params *p, int32_t (*policy)(const int32_t *x))
{
	uint32_t *w = ctx->data;
	uint32_t rate, base, rtt, m, a1, a2;
	int32_t x[4], o, o1;

	/* A new flow takes its words from the parameters rather than reading them back, so the
	 * first event is no slower than any other. */
	if (w[RLCC_CTX_FLAGS] & RLCC_FLAG_INIT) {
		rate = w[RLCC_CTX_RATE];
		base = w[RLCC_CTX_BASE_RTT];
		a1 = w[RLCC_CTX_A1];
		a2 = w[RLCC_CTX_A2];
		o1 = rlcc_u32_to_i32(w[RLCC_CTX_O1]);
	} else {
		rlcc_init(ctx, p);
		rate = p->init_rate;
		base = 0;
		a1 = a2 = NICC_Q16_ONE;
		o1 = rlcc_obs_min(p);
	}
	rate = nicc_clamp_u32(rate, p->min_rate, NICC_LINE_RATE);
	if (ev->type != NICC_EV_RTT) {
		w[RLCC_CTX_RATE] = rate;
		return rate;
	}
	rtt = ev->rtt_ns;
	if (rtt != 0 && (base == 0 || rtt < base))
		base = rtt;
	o = rlcc_observation(rlcc_rtt_infl(rtt, base), rlcc_sqrt_rate(rate), p);
	x[0] = (int32_t)nicc_clamp_u32(a1, RLCC_A_MIN, RLCC_A_MAX);
	x[1] = o;
	x[2] = (int32_t)nicc_clamp_u32(a2, RLCC_A_MIN, RLCC_A_MAX);
	x[3] = nicc_clamp_i32(o1, rlcc_obs_min(p), RLCC_O_MAX);
	m = rlcc_multiplier(policy(x));
	rate = rlcc_update_rate(rate, m, p);
	w[RLCC_CTX_RATE] = rate;
	w[RLCC_CTX_BASE_RTT] = base;
	w[RLCC_CTX_A2] = (uint32_t)x[0];
	w[RLCC_CTX_A1] = m;
	w[RLCC_CTX_O1] = (uint32_t)o;
	return rate;
}

/* RLCC_DEFINE_HANDLER(PARAMS) defines the engine entry over the generated model
 * int32_t nicc_policy(const int32_t *x) and the const struct rlcc_params PARAMS. */
#define RLCC_DEFINE_HANDLER(PARAMS)                                                              \
	uint32_t nicc_on_event(const struct nicc_event *ev, struct nicc_flow_ctx *ctx);          \
	uint32_t nicc_on_event(const struct nicc_event *ev, struct nicc_flow_ctx *ctx)           \
	{                                                                                        \
		return rlcc_on_event(ev, ctx, &(PARAMS), nicc_policy);                           \
	}

#endif /* NICC_RLCC_H */
