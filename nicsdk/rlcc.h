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
 * The model sees a window of states (an input layout, "Input layouts" below: history and
 * features, nicsdk.Layout); by default x[4] = (a_{t-1}, o_t, a_{t-2}, o_{t-1}), each int32 Q16,
 * and returns y in Q16. Declared ranges of the default x, which the quantizer relies on and the
 * handler enforces by clamping whatever the context holds (other features' below):
 *   a_{t-1}, a_{t-2}  [RLCC_A_MIN, RLCC_A_MAX] = [54613, 78643] = [0.83333, 1.19999]
 *   o_t, o_{t-1}      [rlcc_obs_min(p), RLCC_O_MAX]; rlcc_obs_min(p) = -ceil(target*scale/2^16)
 *                     in Q16 (-50328 = -0.76794 with the defaults), RLCC_O_MAX = 128 - 2^-16.
 *
 * The engine entry the compiler emits is, with a generated int32_t POLICY(const int32_t *x)
 * and a const struct rlcc_params NAME in the same file (nicsdk.HandlerC prints both lines of
 * glue):
 *
 *     RLCC_DEFINE_HANDLER(NAME, POLICY)
 *
 * which defines uint32_t nicc_on_event(const struct nicc_event *, struct nicc_flow_ctx *).
 * A POLICY defined static inline with always_inline in the same file is inlined, so x stays
 * in registers and the call costs nothing (a plain or static policy of ten trees is called).
 *
 * A stateful policy, int32_t POLICY(const int32_t *x, uint32_t *state), keeps WORDS (0..6)
 * words of its own in the flow context, data[6 .. 6+WORDS-1]; a policy may also return the
 * multiplier m in Q16 itself (the action -> multiplier map folded into its output table)
 * instead of y. nicsdk.HandlerExC prints the glue:
 *
 *     RLCC_DEFINE_HANDLER_EX(NAME, POLICY, WORDS, RLCC_OUT_Y or RLCC_OUT_M)
 *
 * and a stateless policy that returns m, int32_t POLICY(const int32_t *x), is
 * RLCC_DEFINE_HANDLER_M(NAME, POLICY) (nicsdk.HandlerMC).
 *
 * The macros expand to the one handler body, rlcc_on_event_window (through
 * rlcc_on_event_core and rlcc_on_event_terms, with the compiled parameters' terms), with the
 * word count, the output kind and the layout as constants gcc folds: RLCC_DEFINE_HANDLER's
 * machine code is what it was before the stateful form and the layouts existed. Another
 * layout is RLCC_DEFINE_HANDLER_L(NAME, POLICY, OUT, HIST, FEATS) (stateless: nicsdk.HandlerC,
 * HandlerMC) or RLCC_DEFINE_HANDLER_EX_L(NAME, POLICY, WORDS, OUT, HIST, FEATS) (HandlerExC).
 */
#ifndef NICC_RLCC_H
#define NICC_RLCC_H

#include <stdint.h>
#include "nicsdk.h"

/* Flow context words (struct nicc_flow_ctx.data[i]) used by RL-CC, for every layout: words
 * 0..5, 24 bytes. Words 6..11 are left untouched, except the first WORDS of them, which a
 * stateful policy keeps (RLCC_DEFINE_HANDLER_EX: data[6 .. 6+WORDS-1]), and the last
 * RLCC_LAYOUT_WORDS(HIST, FEATS) of them, which a layout longer than the default keeps
 * (data[11] down: rlcc_hist_word); the two together are at most 6 words:
 *   data[0]             rate                   data[6 ..]   the policy's WORDS, upward
 *   data[1]             base RTT               ...
 *   data[2..4]          a_{t-1}, a_{t-2}, o_{t-1}
 *   data[5]             flags                  data[.. 11]  the layout's older states, downward
 * The default layout (history 2, action + obs) keeps nothing in data[6..11]. */
#define RLCC_CTX_RATE 0     /* uint32 fxp20: the current rate, in [min_rate, 1<<20] */
#define RLCC_CTX_BASE_RTT 1 /* uint32 ns: base_rtt_ns or the smallest nonzero RTT seen; 0 = none yet */
#define RLCC_CTX_A1 2       /* uint32 Q16: a_{t-1}, the last multiplier */
#define RLCC_CTX_A2 3       /* uint32 Q16: a_{t-2}, the one before */
#define RLCC_CTX_O1 4       /* int32 Q16 (two's complement): o_{t-1}, the last observation */
#define RLCC_CTX_FLAGS 5    /* bit 0: initialised (RLCC_FLAG_INIT); bits 1..31 reserved, kept */
#define RLCC_CTX_WORDS 6    /* words RL-CC uses: data[0..5] */
#define RLCC_FLAG_INIT 1u
#define RLCC_STATE_WORDS_MAX 6 /* a stateful policy's words: data[6 .. 6+WORDS-1], WORDS <= 6 */

/* What a policy returns (RLCC_DEFINE_HANDLER_EX's OUT): */
#define RLCC_OUT_Y 0 /* y in Q16, mapped to the multiplier by rlcc_multiplier */
#define RLCC_OUT_M 1 /* the multiplier m in Q16 itself, clamped to [RLCC_A_MIN, RLCC_A_MAX] */

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
 *   base_rtt_ns  ns, [0, 10^9]: the path's RTT in an empty system; 0 learns it as the
 *              smallest RTT the flow sees
 * Defaults (DESIGN.md: the NIC paper's target and beta, the published network's scale):
 *   { 4194 (0.064), 98304 (1.5), 786432 (12), 1049 (1/1000 of line rate), 1<<20 } */
struct rlcc_params {
	uint32_t target;
	uint32_t beta;
	uint32_t scale;
	uint32_t min_rate;
	uint32_t init_rate;
	uint32_t base_rtt_ns;
};

/* rlcc_u32_to_i32 reinterprets a stored word as two's complement without relying on
 * implementation-defined conversion (gcc compiles it to nothing). */
static inline int32_t rlcc_u32_to_i32(uint32_t v)
{
	return v <= (uint32_t)INT32_MAX ? (int32_t)v : -(int32_t)(~v) - 1;
}

/* rlcc_clz32 counts the leading zeros of x != 0: one clzw on Zbb. GCC builtins (gcc and
 * clang have them) are the one thing here beyond C99: __builtin_clz, and
 * __builtin_expect behind RLCC_LIKELY and the always_inline attribute behind
 * RLCC_ALWAYS_INLINE (hints, left out for other compilers). */
static inline unsigned rlcc_clz32(uint32_t x)
{
	return (unsigned)__builtin_clz(x);
}

/* RLCC_LIKELY and RLCC_UNLIKELY tell gcc which side of a branch to lay out as the fall-through:
 * the handler's longest path, so its branches are the cheap not-taken ones. Hints only. */
#if defined(__GNUC__)
#define RLCC_LIKELY(c) __builtin_expect(!!(c), 1)
#define RLCC_UNLIKELY(c) __builtin_expect(!!(c), 0)
#else
#define RLCC_LIKELY(c) (c)
#define RLCC_UNLIKELY(c) (c)
#endif

/* RLCC_ALWAYS_INLINE makes gcc inline the handler body into each entry (at -O0 too), so the
 * constants an entry passes (the policy, the word count, the output kind) fold away. */
#if defined(__GNUC__)
#define RLCC_ALWAYS_INLINE __attribute__((always_inline))
#else
#define RLCC_ALWAYS_INLINE
#endif

static inline uint64_t rlcc_min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static inline uint64_t rlcc_max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* rlcc_div_q16 returns a * 2^16 / d for a, d below 2^32, d != 0 and a < d * 2^16, from below,
 * without a division: a reciprocal of d off a chord of a table, and one multiplication (no
 * correction step, so not the exact floor): with q = floor(a * 2^16 / d),
 *     q - (q * 8322 >> 30) - 2 <= rlcc_div_q16(a, d) <= q,
 * i.e. at most 7.8e-6 of q plus 2 units of 2^-16 below the floor. Its twin (nicsdk.DivQ16)
 * defines it; the tests check the bound for every d in [1, 2^22] and for millions of random
 * d, each at the largest dividend and at random ones, and C == Go on the host and in fwsim.
 *
 * Why. Let N = a * 2^16, s = clz(d), dn = d * 2^s in [2^31, 2^32), and g = 2^62 / dn (a real
 * in (2^30, 2^31]).
 *  1. Reciprocal. tab[j] = floor(2^62 / (2^31 + j * 2^23)) - 8321, j in [0, 256]. With
 *     j = bits 30..23 of dn and f = bits 22..7 (so x' = 2^31 + j 2^23 + f 2^7 <= dn < x' +
 *     2^7), r = tab[j] - floor((tab[j] - tab[j+1]) * f / 2^16) is the chord between the
 *     nodes, less 8321. For the convex 2^62 / x the chord lies above the curve by at most
 *     H^2/8 * max g'' = 2^46/8 * 2^63/2^93 = 2^13 (H = 2^23, x >= 2^31); it is evaluated at
 *     x' instead of dn, at most 2^7 higher (its slope is below 1: tab[0] - tab[1] < 2^23);
 *     the floors of the nodes lower it by less than 1 and the floor of the product raises it
 *     by less than 1. So r + 8321 is in (g - 1, g + 2^13 + 2^7 + 1), i.e.
 *         g - 8322 < r < g:  r underestimates g by a factor of at most 1 - e, e = 8322 / 2^30.
 *  2. q1 = floor(floor(N * 2^s / 2^31) * r / 2^31). N * 2^s < dn * 2^32 < 2^64, so the inner
 *     value is below 2^33 and the product below 2^33 * 2^31. From r < g, q1 <= N * 2^s / 2^31
 *     * g / 2^31 = N / d, so q1 <= q. The factor loses less than q e, the inner floor less
 *     than r / 2^31 <= 1 unit, the outer one less than 1: q - q1 < q e + 2.
 * Cycles (dpa): about 25 for the 66 of one divu. */
static inline uint64_t rlcc_div_q16(uint64_t a, uint64_t d)
{
	static const uint32_t tab[257] = {
		2147475327u, 2139119359u, 2130828166u, 2122600999u, 2114437117u, 2106335793u, 2098296312u, 2090317967u,
		2082400064u, 2074541920u, 2066742859u, 2059002217u, 2051319342u, 2043693589u, 2036124323u, 2028610918u,
		2021152759u, 2013749239u, 2006399758u, 1999103729u, 1991860569u, 1984669707u, 1977530577u, 1970442624u,
		1963405300u, 1956418062u, 1949480380u, 1942591728u, 1935751587u, 1928959447u, 1922214804u, 1915517162u,
		1908866032u, 1902260931u, 1895701382u, 1889186915u, 1882717069u, 1876291385u, 1869909413u, 1863570709u,
		1857274834u, 1851021355u, 1844809846u, 1838639885u, 1832511058u, 1826422954u, 1820375168u, 1814367302u,
		1808398961u, 1802469757u, 1796579306u, 1790727229u, 1784913152u, 1779136707u, 1773397530u, 1767695260u,
		1762029544u, 1756400030u, 1750806372u, 1745248231u, 1739725267u, 1734237148u, 1728783546u, 1723364136u,
		1717978597u, 1712626613u, 1707307871u, 1702022062u, 1696768882u, 1691548029u, 1686359206u, 1681202119u,
		1676076477u, 1670981994u, 1665918387u, 1660885376u, 1655882684u, 1650910039u, 1645967169u, 1641053810u,
		1636169696u, 1631314568u, 1626488169u, 1621690245u, 1616920543u, 1612178816u, 1607464819u, 1602778308u,
		1598119044u, 1593486791u, 1588881314u, 1584302381u, 1579749764u, 1575223237u, 1570722575u, 1566247559u,
		1561797968u, 1557373588u, 1552974204u, 1548599605u, 1544249583u, 1539923930u, 1535622444u, 1531344921u,
		1527091162u, 1522860969u, 1518654148u, 1514470505u, 1510309849u, 1506171991u, 1502056744u, 1497963923u,
		1493893347u, 1489844833u, 1485818203u, 1481813279u, 1477829888u, 1473867855u, 1469927010u, 1466007182u,
		1462108205u, 1458229912u, 1454372139u, 1450534723u, 1446717505u, 1442920324u, 1439143024u, 1435385448u,
		1431647444u, 1427928857u, 1424229538u, 1420549337u, 1416888106u, 1413245699u, 1409621971u, 1406016778u,
		1402429979u, 1398861434u, 1395311003u, 1391778549u, 1388263936u, 1384767028u, 1381287693u, 1377825799u,
		1374381213u, 1370953808u, 1367543454u, 1364150026u, 1360773396u, 1357413441u, 1354070038u, 1350743064u,
		1347432399u, 1344137923u, 1340859517u, 1337597065u, 1334350450u, 1331119557u, 1327904272u, 1324704483u,
		1321520077u, 1318350944u, 1315196975u, 1312058060u, 1308934093u, 1305824966u, 1302730574u, 1299650813u,
		1296585579u, 1293534770u, 1290498284u, 1287476020u, 1284467879u, 1281473762u, 1278493571u, 1275527210u,
		1272574581u, 1269635590u, 1266710144u, 1263798147u, 1260899509u, 1258014136u, 1255141939u, 1252282826u,
		1249436710u, 1246603501u, 1243783113u, 1240975457u, 1238180449u, 1235398002u, 1232628033u, 1229870457u,
		1227125192u, 1224392155u, 1221671265u, 1218962441u, 1216265603u, 1213580672u, 1210907568u, 1208246215u,
		1205596534u, 1202958448u, 1200331883u, 1197716763u, 1195113013u, 1192520559u, 1189939328u, 1187369246u,
		1184810243u, 1182262246u, 1179725185u, 1177198989u, 1174683589u, 1172178915u, 1169684900u, 1167201474u,
		1164728572u, 1162266126u, 1159814071u, 1157372339u, 1154940867u, 1152519590u, 1150108444u, 1147707365u,
		1145316291u, 1142935159u, 1140563906u, 1138202473u, 1135850798u, 1133508821u, 1131176481u, 1128853719u,
		1126540477u, 1124236697u, 1121942319u, 1119657287u, 1117381544u, 1115115033u, 1112857699u, 1110609484u,
		1108370336u, 1106140197u, 1103919016u, 1101706736u, 1099503306u, 1097308672u, 1095122782u, 1092945583u,
		1090777024u, 1088617053u, 1086465619u, 1084322672u, 1082188163u, 1080062040u, 1077944255u, 1075834759u,
		1073733503u,
	};
	unsigned s = rlcc_clz32((uint32_t)d);
	uint64_t dn = d << s;
	const uint32_t *t = tab + ((dn >> 23) & 0xff);
	uint64_t t0 = t[0], t1 = t[1];
	uint64_t r = t0 - (((t0 - t1) * ((dn >> 7) & 0xffff)) >> 16);
	return (((a << s) >> 15) * r) >> 31; /* floor(N * 2^s / 2^31) = floor(a * 2^s / 2^15) */
}

/* rlcc_rtt_infl returns the RTT inflation rtt/base in Q16: rlcc_div_q16(rtt, base) (at most
 * 7.8e-6 of the quotient plus 2 units below floor(rtt * 2^16 / base)), saturated to
 * 0xffffffff (65536.0) when rtt >= base * 2^16; base == 0 (no baseline yet) gives 1.0. */
static inline uint32_t rlcc_rtt_infl(uint32_t rtt_ns, uint32_t base_ns)
{
	if (base_ns == 0)
		return NICC_Q16_ONE;
	if ((rtt_ns >> 16) >= base_ns)
		return UINT32_MAX;
	return (uint32_t)rlcc_div_q16(rtt_ns, base_ns);
}

/* rlcc_sqrt_rate returns sqrt(rate) in Q16 for a rate in fxp20: floor(sqrt(rate * 2^12)) or
 * one less (a chord, no correction step), with the rate first clamped to [1, 1<<20]. The
 * result is in [64, 65536]. Its twin (nicsdk.SqrtRate) defines it; the tests check the bound
 * and C == Go for every rate.
 *
 * How, without a loop or a division: line rate is 1 + the result at 1<<20 - 1, so
 * x = rate' << 12 is below 2^32. x is shifted left by an even k so that y = x << k is in
 * [2^30, 2^32); sqrt(y) is read off a chord between two entries of tab[i] =
 * floor(sqrt(64 + i) * 2^20) (sqrt(y) * 2^8 at y = (64 + i) * 2^24), which lies less than
 * 0.26 below sqrt(y), never above: its floor is floor(sqrt(y)) or one less, and so is the
 * result, shifted right by k/2, of floor(sqrt(x)). Every value is below 2^32.
 * rlcc_sqrt_fxp20 is the same for a rate already in [1, 1<<20], in 64-bit registers (the
 * handler's form: no 32-bit extensions). */
static inline uint64_t rlcc_sqrt_fxp20(uint64_t r)
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
	uint64_t top = r >> NICC_FXP20_SHIFT; /* 1 at line rate */
	uint64_t x = (r - top) << 12;         /* in [2^12, 2^32 - 2^12] */
	unsigned k = rlcc_clz32((uint32_t)x) & ~1u;
	uint64_t y = x << k;                  /* in [2^30, 2^32) */
	const uint32_t *t = tab + ((y >> 24) - 64);
	uint64_t t0 = t[0], t1 = t[1];
	/* The chord at y, in units of 2^-8: t[1] - t[0] < 2^16, the fraction is taken to 16 bits. */
	uint64_t s = (t0 + (((t1 - t0) * ((y >> 8) & 0xffff)) >> 16)) >> 8;
	return (s >> (k >> 1)) + top;
}

static inline uint32_t rlcc_sqrt_rate(uint32_t rate)
{
	return (uint32_t)rlcc_sqrt_fxp20(nicc_clamp_u32(rate, 1, NICC_LINE_RATE));
}

/* rlcc_obs_c returns c = ceil(target * scale / 2^16), at most 2^28 (target * scale <= 2^44). */
static inline uint64_t rlcc_obs_c(const struct rlcc_params *p)
{
	return ((uint64_t)p->target * p->scale + 0xffff) >> 16;
}

/* rlcc_obs_min returns the smallest observation, the one at zero excess inflation: -c =
 * -ceil(target * scale / 2^16) in Q16. */
static inline int32_t rlcc_obs_min(const struct rlcc_params *p)
{
	return -(int32_t)rlcc_obs_c(p);
}

/* rlcc_observation returns o = (max(infl - beta, 0) * sqrt_rate - target) * scale in Q16,
 * clamped to [rlcc_obs_min(p), RLCC_O_MAX]:
 *   e    = infl - beta if infl > beta, else 0                 (Q16, exact)
 *   prod = floor(e * sqrt_rate / 2^16)                         (Q16, first rounding)
 *   o    = floor((prod * scale - target * scale) / 2^16)       (Q16, second and last)
 *   o    = min(o, RLCC_O_MAX)
 * infl is rlcc_rtt_infl's result, sqrt_rate rlcc_sqrt_rate's (at most 65536; a larger value
 * is taken as 65536).
 *
 * How, without a branch (rlcc_obs_u64, for infl < 2^32 and sqrt_rate <= 2^16): e < 2^32, the
 * product e * sqrt_rate < 2^48, big = prod * scale < 2^56, ts = target * scale <= 2^44. For any
 * c_max >= c = ceil(ts / 2^16) = -rlcc_obs_min(p), k = c_max 2^16 - ts >= 0 and
 * floor((big - ts) / 2^16) = v - c_max where v = floor((big + k) / 2^16), all unsigned; so
 * o = min(v - c_max, RLCC_O_MAX) = min(v, RLCC_O_MAX + c_max) - c_max, which is at least -c
 * since big >= 0: the lower clamp holds by itself. RLCC_O_MAX + c_max < 2^29 fits int32 for
 * c_max up to 2^28, c's largest. The parameters enter only as struct rlcc_obs_terms: beta, scale
 * and k, for a c_max that rlcc_on_event_core takes from the compiled parameters; so a runtime
 * whose target, beta and scale change at run time (rlcc_doca.h), within c <= the compiled c,
 * can keep the terms worked out when they change, and c_max stays a constant. */
struct rlcc_obs_terms {
	uint64_t k; /* c_max * 2^16 - target * scale, in [0, c_max * 2^16] */
	uint32_t beta;
	uint32_t scale;
};

/* rlcc_obs_terms_of returns p's terms for c_max (at least rlcc_obs_c(p)). */
static inline struct rlcc_obs_terms rlcc_obs_terms_of(const struct rlcc_params *p, uint64_t c_max)
{
	struct rlcc_obs_terms t;
	t.k = (c_max << 16) - (uint64_t)p->target * p->scale;
	t.beta = p->beta;
	t.scale = p->scale;
	return t;
}

/* rlcc_obs_min_terms is rlcc_obs_min of the parameters of t: floor(k / 2^16) - c_max =
 * c_max - c - c_max = -c. */
static inline int32_t rlcc_obs_min_terms(const struct rlcc_obs_terms *t, uint64_t c_max)
{
	return (int32_t)(t->k >> 16) - (int32_t)c_max;
}

static inline int32_t rlcc_obs_u64(uint64_t infl, uint64_t sqrt_rate, const struct rlcc_obs_terms *t, uint64_t c_max)
{
	uint64_t beta = t->beta;
	uint64_t e = (infl > beta ? infl : beta) - beta;
	uint64_t big = ((e * sqrt_rate) >> 16) * t->scale;
	uint64_t v = (big + t->k) >> 16;
	return (int32_t)rlcc_min_u64(v, RLCC_O_MAX + c_max) - (int32_t)c_max;
}

static inline int32_t rlcc_observation(uint32_t infl, uint32_t sqrt_rate, const struct rlcc_params *p)
{
	struct rlcc_obs_terms t = rlcc_obs_terms_of(p, rlcc_obs_c(p));
	return rlcc_obs_u64(infl, nicc_min_u32(sqrt_rate, NICC_Q16_ONE), &t, rlcc_obs_c(p));
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
 * above it, never below; one downward step makes it the floor. rlcc_recip_q16 is that
 * reciprocal, floor(2^32 / (2^16 + u)) for u in [0, 13107]. */
static inline uint64_t rlcc_recip_q16(uint64_t u)
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
	const uint32_t *t = tab + (u >> 8);
	uint64_t t0 = t[0], t1 = t[1];
	uint64_t m = (t0 - (((t0 - t1) * (u & 0xff)) >> 8)) >> 8; /* the chord, in units of 2^-8 */
	/* m d > 2^32 exactly when m d - 1 >= 2^32 (m d < 2^33) */
	return m - ((m * (NICC_Q16_ONE + u) - 1) >> 32);
}

static inline uint32_t rlcc_multiplier(int32_t y)
{
	y = nicc_clamp_i32(y, RLCC_Y_MIN, RLCC_Y_MAX);
	if (y >= 0)
		return NICC_Q16_ONE + (((uint32_t)y * RLCC_K_Q16) >> 16);
	return (uint32_t)rlcc_recip_q16(((uint64_t)(uint32_t)-y * RLCC_K_Q16) >> 16);
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

/* rlcc_init sets up a new flow's words: rate = init_rate, base RTT = base_rtt_ns (0: learned),
 * a_{t-1} = a_{t-2} = 1.0, o_{t-1} = rlcc_obs_min(p) (an idle link), the init flag set (other
 * flag bits kept). */
static inline void rlcc_init(struct nicc_flow_ctx *ctx, const struct rlcc_params *p)
{
	ctx->data[RLCC_CTX_RATE] = p->init_rate;
	ctx->data[RLCC_CTX_BASE_RTT] = p->base_rtt_ns;
	ctx->data[RLCC_CTX_A1] = NICC_Q16_ONE;
	ctx->data[RLCC_CTX_A2] = NICC_Q16_ONE;
	ctx->data[RLCC_CTX_O1] = (uint32_t)rlcc_obs_min(p);
	ctx->data[RLCC_CTX_FLAGS] |= RLCC_FLAG_INIT;
}

/* Input layouts (nicsdk.Layout): the window the handler feeds the policy is HIST states (1 to
 * RLCC_HISTORY_MAX), newest first, each the features of the mask FEATS in this order:
 *   RLCC_FEAT_ACTION  the multiplier the decision before that state applied (a_{t-1} for the
 *                     newest), [RLCC_A_MIN, RLCC_A_MAX]
 *   RLCC_FEAT_OBS     the observation o, [rlcc_obs_min(p), RLCC_O_MAX]
 *   RLCC_FEAT_INFL    the RTT inflation rlcc_rtt_infl, [0, RLCC_INFL_MAX]: an upper clamp (the
 *                     value saturates at 65536.0); 128 times the base RTT is far past any queue
 *                     a policy is trained on (o saturates at the same RLCC_O_MAX sooner), and
 *                     keeps the input an int32 Q16 the quantizer's grid spans
 *   RLCC_FEAT_RATE    the rate in force when the RTT arrives (before this decision), a fraction
 *                     of line rate in Q16, rate >> 4 (floor), [min_rate >> 4, 65536]: the
 *                     rate is in [min_rate, 1<<20], so the bounds hold without a clamp
 * x[lag * nfeats + rank of the feature] (nicsdk.Layout.Slots). The default, history 2 and
 * action + obs, is x = (a_{t-1}, o_t, a_{t-2}, o_{t-1}), with words 2..4 its whole history.
 * Words 0..5 are the same for every layout; the older states and every past inflation and
 * rate live in the top words, data[11], data[10], ... (rlcc_hist_word), feature by feature,
 * lag by lag from the first kept there (2 for action and obs, 1 for infl and rate), so a
 * layout takes RLCC_LAYOUT_WORDS(HIST, FEATS) words and a stateful policy's WORDS (from data[6]
 * up) must fit beside them: RLCC_LAYOUT_WORDS + WORDS <= RLCC_STATE_WORDS_MAX. A new flow's
 * kept values are an idle link's (rlcc_hist_init): action 1.0, o = rlcc_obs_min(p), inflation
 * 1.0, rate init_rate >> 4. */
#define RLCC_FEAT_ACTION 1u
#define RLCC_FEAT_OBS 2u
#define RLCC_FEAT_INFL 4u
#define RLCC_FEAT_RATE 8u
#define RLCC_FEAT_ALL 15u
#define RLCC_HISTORY_DEFAULT 2u
#define RLCC_FEATS_DEFAULT (RLCC_FEAT_ACTION | RLCC_FEAT_OBS)
#define RLCC_HISTORY_MAX 8u
#define RLCC_INPUTS_MAX 12 /* the most inputs a layout that fits has (history 3, all four) */
#define RLCC_INFL_MAX RLCC_O_MAX
/* The top words feature f takes for a window of H states, FIRST its first lag kept there. */
#define RLCC_HIST_KEEP(H, FIRST) ((unsigned)(H) > (FIRST) ? (unsigned)(H) - (FIRST) : 0u)
#define RLCC_LAYOUT_WORDS(H, F)                                                                   \
	(((F)&RLCC_FEAT_ACTION ? RLCC_HIST_KEEP(H, 2u) : 0u) + ((F)&RLCC_FEAT_OBS ? RLCC_HIST_KEEP(H, 2u) : 0u) + \
	 ((F)&RLCC_FEAT_INFL ? RLCC_HIST_KEEP(H, 1u) : 0u) + ((F)&RLCC_FEAT_RATE ? RLCC_HIST_KEEP(H, 1u) : 0u))
#define RLCC_NFEATS(F) (((F)&1u) + ((F) >> 1 & 1u) + ((F) >> 2 & 1u) + ((F) >> 3 & 1u))
#define RLCC_INPUTS(H, F) ((unsigned)(H)*RLCC_NFEATS(F))
/* RLCC_LAYOUT_OK: a layout the handler can feed beside WORDS words of policy state. */
#define RLCC_LAYOUT_OK(H, F, WORDS)                                                               \
	((unsigned)(H) >= 1u && (unsigned)(H) <= RLCC_HISTORY_MAX && (unsigned)(F) >= 1u &&           \
	 (unsigned)(F) <= RLCC_FEAT_ALL && (unsigned)(WORDS) <= RLCC_STATE_WORDS_MAX &&               \
	 RLCC_LAYOUT_WORDS(H, F) + (unsigned)(WORDS) <= RLCC_STATE_WORDS_MAX)

/* rlcc_hist_first is the first lag of feature f (0..3, the RLCC_FEAT_* bit) kept in the top
 * words; rlcc_hist_word the word holding f at lag (lag >= rlcc_hist_first(f), lag < hist). */
static inline unsigned rlcc_hist_first(unsigned f) { return f < 2u ? 2u : 1u; }

static inline unsigned rlcc_hist_word(unsigned hist, unsigned feats, unsigned f, unsigned lag)
{
	unsigned n = (f > 0u && (feats & RLCC_FEAT_ACTION) ? RLCC_HIST_KEEP(hist, 2u) : 0u) +
		     (f > 1u && (feats & RLCC_FEAT_OBS) ? RLCC_HIST_KEEP(hist, 2u) : 0u) +
		     (f > 2u && (feats & RLCC_FEAT_INFL) ? RLCC_HIST_KEEP(hist, 1u) : 0u);
	return NICC_CTX_WORDS - 1u - n - (lag - rlcc_hist_first(f));
}

/* rlcc_hist_kept: whether the top words keep feature f at lag. */
static inline int rlcc_hist_kept(unsigned hist, unsigned feats, unsigned f, unsigned lag)
{
	return (feats >> f & 1u) && lag < hist && lag >= rlcc_hist_first(f);
}

/* rlcc_hist_clamp clamps a kept word of feature f to the feature's range (the action, the
 * inflation and the rate as unsigned words, the observation as int32). */
static inline int32_t rlcc_hist_clamp(unsigned f, uint32_t v, int32_t obs_min, uint32_t rate_lo)
{
	if (f == 0u)
		return (int32_t)nicc_clamp_u32(v, RLCC_A_MIN, RLCC_A_MAX);
	if (f == 1u)
		return nicc_clamp_i32(rlcc_u32_to_i32(v), obs_min, RLCC_O_MAX);
	if (f == 2u)
		return (int32_t)nicc_min_u32(v, RLCC_INFL_MAX);
	return (int32_t)nicc_clamp_u32(v, rate_lo, NICC_Q16_ONE);
}

/* rlcc_hist_init_f sets feature f's top words to v (a new flow's), one statement a lag. */
static inline RLCC_ALWAYS_INLINE void rlcc_hist_init_f(uint32_t *w, unsigned hist, unsigned feats, unsigned f, uint32_t v)
{
	if (rlcc_hist_kept(hist, feats, f, 1u)) w[rlcc_hist_word(hist, feats, f, 1u)] = v;
	if (rlcc_hist_kept(hist, feats, f, 2u)) w[rlcc_hist_word(hist, feats, f, 2u)] = v;
	if (rlcc_hist_kept(hist, feats, f, 3u)) w[rlcc_hist_word(hist, feats, f, 3u)] = v;
	if (rlcc_hist_kept(hist, feats, f, 4u)) w[rlcc_hist_word(hist, feats, f, 4u)] = v;
	if (rlcc_hist_kept(hist, feats, f, 5u)) w[rlcc_hist_word(hist, feats, f, 5u)] = v;
	if (rlcc_hist_kept(hist, feats, f, 6u)) w[rlcc_hist_word(hist, feats, f, 6u)] = v;
	if (rlcc_hist_kept(hist, feats, f, 7u)) w[rlcc_hist_word(hist, feats, f, 7u)] = v;
}

/* rlcc_hist_init sets a new flow's top words: an idle link's values (see above). Nothing for
 * the default layout. */
static inline RLCC_ALWAYS_INLINE void rlcc_hist_init(uint32_t *w, unsigned hist, unsigned feats, int32_t obs_min,
						       const struct rlcc_params *p)
{
	rlcc_hist_init_f(w, hist, feats, 0u, NICC_Q16_ONE);
	rlcc_hist_init_f(w, hist, feats, 1u, (uint32_t)obs_min);
	rlcc_hist_init_f(w, hist, feats, 2u, NICC_Q16_ONE);
	rlcc_hist_init_f(w, hist, feats, 3u, p->init_rate >> 4);
}

/* rlcc_window_put writes feature f at lag into x, if the layout has it: lag 0 from now[f], the
 * action and obs at lag 1 from prev[f] (words 3 and 4, read and clamped already), the others
 * from their top word, clamped. */
static inline RLCC_ALWAYS_INLINE void rlcc_window_put(int32_t *x, const uint32_t *w, unsigned hist, unsigned feats,
							unsigned f, unsigned lag, const int32_t *now,
							const int32_t *prev, int32_t obs_min, uint32_t rate_lo)
{
	int32_t v;
	if (lag >= hist || !(feats >> f & 1u))
		return;
	if (lag == 0u)
		v = now[f];
	else if (lag == 1u && f < 2u)
		v = prev[f];
	else
		v = rlcc_hist_clamp(f, w[rlcc_hist_word(hist, feats, f, lag)], obs_min, rate_lo);
	x[lag * RLCC_NFEATS(feats) + RLCC_NFEATS(feats & ((1u << f) - 1u))] = v;
}

static inline RLCC_ALWAYS_INLINE void rlcc_window_lag(int32_t *x, const uint32_t *w, unsigned hist, unsigned feats,
							unsigned lag, const int32_t *now, const int32_t *prev,
							int32_t obs_min, uint32_t rate_lo)
{
	rlcc_window_put(x, w, hist, feats, 0u, lag, now, prev, obs_min, rate_lo);
	rlcc_window_put(x, w, hist, feats, 1u, lag, now, prev, obs_min, rate_lo);
	rlcc_window_put(x, w, hist, feats, 2u, lag, now, prev, obs_min, rate_lo);
	rlcc_window_put(x, w, hist, feats, 3u, lag, now, prev, obs_min, rate_lo);
}

/* rlcc_window_shift moves the window's value of feature f at lag into its top word of lag + 1,
 * if kept; rlcc_window_shift_lag does it for each feature. */
static inline RLCC_ALWAYS_INLINE void rlcc_window_shift(uint32_t *w, const int32_t *x, unsigned hist, unsigned feats,
							  unsigned f, unsigned lag)
{
	if (rlcc_hist_kept(hist, feats, f, lag + 1u))
		w[rlcc_hist_word(hist, feats, f, lag + 1u)] =
			(uint32_t)x[lag * RLCC_NFEATS(feats) + RLCC_NFEATS(feats & ((1u << f) - 1u))];
}

static inline RLCC_ALWAYS_INLINE void rlcc_window_shift_lag(uint32_t *w, const int32_t *x, unsigned hist,
							      unsigned feats, unsigned lag)
{
	rlcc_window_shift(w, x, hist, feats, 0u, lag);
	rlcc_window_shift(w, x, hist, feats, 1u, lag);
	rlcc_window_shift(w, x, hist, feats, 2u, lag);
	rlcc_window_shift(w, x, hist, feats, 3u, lag);
}

/* Policies as the handler calls them: stateless, y or m from x; stateful, from x and its
 * words of the flow context (state[0 .. WORDS-1] = ctx->data[6 .. 6+WORDS-1]). */
typedef int32_t (*rlcc_policy_fn)(const int32_t *x);
typedef int32_t (*rlcc_policy_state_fn)(const int32_t *x, uint32_t *state);

/* rlcc_on_event_core is the whole RL-CC decision for one event, behind rlcc_on_event,
 * rlcc_on_event_ex and the handler macros; its body is rlcc_on_event_terms, defined first. Exactly one of policy (stateless)
 * and policy_st (stateful) is non-null; words (0..RLCC_STATE_WORDS_MAX) is the number of
 * context words policy_st keeps, out what the policy returns (RLCC_OUT_Y or RLCC_OUT_M).
 *   1. A context without RLCC_FLAG_INIT is initialised (rlcc_init) first, and the policy's
 *      words data[6 .. 6+words-1] are zeroed, whatever the event.
 *   2. The stored rate is clamped to [min_rate, 1<<20], as are a_{t-1}, a_{t-2} to
 *      [RLCC_A_MIN, RLCC_A_MAX] and o_{t-1} to [rlcc_obs_min(p), RLCC_O_MAX], so the model's
 *      inputs are in their declared ranges whatever the context held.
 *   3. Not an RTT event (CNP, NACK, TX, or an unknown type): the clamped rate is stored and
 *      returned; nothing else changes (an initialised flow's state words are untouched).
 *   4. RTT event: base_rtt = rtt_ns if rtt_ns != 0 and (base_rtt == 0 or rtt_ns < base_rtt);
 *      infl = rlcc_rtt_infl(rtt_ns, base_rtt); o_t = rlcc_observation(infl,
 *      rlcc_sqrt_rate(rate), p); x = (a_{t-1}, o_t, a_{t-2}, o_{t-1}) (the default layout;
 *      rlcc_on_event_window's x is the window hist x feats, its older states read from the
 *      layout's top words, clamped, and shifted one state back before the policy runs; a new
 *      flow's top words are set by rlcc_hist_init); the policy runs,
 *      policy(x) or policy_st(x, ctx->data + 6), which may rewrite its words (and no
 *      others). RLCC_OUT_Y: m = rlcc_multiplier(result); RLCC_OUT_M: m = the result clamped
 *      to [RLCC_A_MIN, RLCC_A_MAX] (any int32 is safe). rate = rlcc_update_rate(rate, m, p);
 *      then the history shifts (a_{t-2} = a_{t-1}, a_{t-1} = m, o_{t-1} = o_t) and the new
 *      rate is stored and returned. An RTT event with rtt_ns == 0 (no sample) leaves
 *      base_rtt alone and has inflation 0 (or 1.0 while there is no base yet): no congestion.
 * The result is in [min_rate, 1<<20]; words 6+words..11 of the context are never touched.
 * Inlined always, so constant arguments fold: with policy_st null, words 0 and RLCC_OUT_Y
 * the code is the stateless handler's alone.
 *
 * rlcc_on_event_terms is the same with target, beta and scale taken from terms instead of p
 * (rlcc_obs_terms_of(q, rlcc_obs_c(p)) of parameters q whose c = rlcc_obs_c(q) is at most
 * p's), for a runtime whose parameters change at run time: the code reads terms where it
 * uses them, and rlcc_obs_c(p), the compiled one, stays a constant. */
static inline RLCC_ALWAYS_INLINE uint32_t rlcc_on_event_window(const struct nicc_event *ev,
							       struct nicc_flow_ctx *ctx,
							       const struct rlcc_params *p,
							       const struct rlcc_obs_terms *terms,
							       rlcc_policy_fn policy,
							       rlcc_policy_state_fn policy_st,
							       unsigned words, int out, unsigned hist,
							       unsigned feats, int32_t *x)
{
	uint32_t *w = ctx->data, *st = ctx->data + RLCC_CTX_WORDS;
	uint32_t flags = w[RLCC_CTX_FLAGS];
	uint64_t rtt, rate, base, a1, a2, infl, sq, m;
	int32_t o1, o, y, now[4], prev[2];
	const uint64_t c_max = rlcc_obs_c(p);

	/* Values are held in 64-bit registers, zero-extended, so nothing is extended twice. A new
	 * flow takes its words from the parameters rather than reading them back; every path
	 * stores all of words 0..4 at its end (an unchanged word gets its own value back), and
	 * the flags word only changes, so is only stored, on a new flow. */
	if (RLCC_LIKELY(flags & RLCC_FLAG_INIT)) {
		rate = w[RLCC_CTX_RATE];
		base = w[RLCC_CTX_BASE_RTT];
		a1 = w[RLCC_CTX_A1];
		a2 = w[RLCC_CTX_A2];
		o1 = rlcc_u32_to_i32(w[RLCC_CTX_O1]);
	} else {
		rate = p->init_rate;
		base = p->base_rtt_ns;
		a1 = a2 = NICC_Q16_ONE;
		/* o_{t-1} = rlcc_obs_min of the terms. An RTT event stores o_t over it and clamps it
		 * into x[3] with that lower bound, so -c_max (at most that) does as well there and
		 * spares reading the terms before the decision needs them; with the terms
		 * constants (c == c_max) the two are one constant. */
		o1 = ev->type == NICC_EV_RTT ? -(int32_t)c_max : rlcc_obs_min_terms(terms, c_max);
		/* The policy's words, without a loop (words is a constant in a handler). */
		if (words > 0) st[0] = 0;
		if (words > 1) st[1] = 0;
		if (words > 2) st[2] = 0;
		if (words > 3) st[3] = 0;
		if (words > 4) st[4] = 0;
		if (words > 5) st[5] = 0;
		/* The layout's top words (none for the default), read back below. */
		rlcc_hist_init(w, hist, feats, rlcc_obs_min_terms(terms, c_max), p);
		w[RLCC_CTX_FLAGS] = flags | RLCC_FLAG_INIT;
	}
	rate = rlcc_min_u64(rlcc_max_u64(rate, p->min_rate), NICC_LINE_RATE);
	if (RLCC_UNLIKELY(ev->type != NICC_EV_RTT)) {
		w[RLCC_CTX_RATE] = (uint32_t)rate;
		w[RLCC_CTX_BASE_RTT] = (uint32_t)base;
		w[RLCC_CTX_A1] = (uint32_t)a1;
		w[RLCC_CTX_A2] = (uint32_t)a2;
		w[RLCC_CTX_O1] = (uint32_t)o1;
		return (uint32_t)rate;
	}
	/* base = rtt if rtt != 0 and (base == 0 or rtt < base): min(base - 1, rtt - 1) + 1 with
	 * 0 - 1 wrapping to 2^64 - 1, which loses every min and wraps back to 0. */
	rtt = ev->rtt_ns;
	base = rlcc_min_u64(base - 1, rtt - 1) + 1;
	w[RLCC_CTX_BASE_RTT] = (uint32_t)base;
	if (RLCC_UNLIKELY(base == 0))
		infl = NICC_Q16_ONE;
	else if (RLCC_UNLIKELY((rtt >> 16) >= base))
		infl = UINT32_MAX;
	else
		infl = rlcc_div_q16(rtt, base);
	/* rate is in [min_rate, 1<<20] with min_rate >= 1: rlcc_sqrt_rate's clamp is a no-op, and
	 * its result is at most 65536: rlcc_observation's min is one too. */
	sq = rlcc_sqrt_fxp20(rate);
	o = rlcc_obs_u64(infl, sq, terms, c_max);
	/* The window, state by state (the layout is a constant in a handler: one store an input,
	 * no loop), then the history's shift into the top words (before the policy, which
	 * touches only its own words). */
	now[0] = (int32_t)rlcc_min_u64(rlcc_max_u64(a1, RLCC_A_MIN), RLCC_A_MAX);
	now[1] = o;
	now[2] = (int32_t)rlcc_min_u64(infl, RLCC_INFL_MAX);
	now[3] = (int32_t)(rate >> 4);
	prev[0] = (int32_t)rlcc_min_u64(rlcc_max_u64(a2, RLCC_A_MIN), RLCC_A_MAX);
	prev[1] = nicc_clamp_i32(o1, rlcc_obs_min_terms(terms, c_max), RLCC_O_MAX);
	{
		const int32_t om = rlcc_obs_min_terms(terms, c_max);
		const uint32_t rl = p->min_rate >> 4;
		rlcc_window_lag(x, w, hist, feats, 0u, now, prev, om, rl);
		rlcc_window_lag(x, w, hist, feats, 1u, now, prev, om, rl);
		rlcc_window_lag(x, w, hist, feats, 2u, now, prev, om, rl);
		rlcc_window_lag(x, w, hist, feats, 3u, now, prev, om, rl);
		rlcc_window_lag(x, w, hist, feats, 4u, now, prev, om, rl);
		rlcc_window_lag(x, w, hist, feats, 5u, now, prev, om, rl);
		rlcc_window_lag(x, w, hist, feats, 6u, now, prev, om, rl);
		rlcc_window_lag(x, w, hist, feats, 7u, now, prev, om, rl);
		rlcc_window_shift_lag(w, x, hist, feats, 6u);
		rlcc_window_shift_lag(w, x, hist, feats, 5u);
		rlcc_window_shift_lag(w, x, hist, feats, 4u);
		rlcc_window_shift_lag(w, x, hist, feats, 3u);
		rlcc_window_shift_lag(w, x, hist, feats, 2u);
		rlcc_window_shift_lag(w, x, hist, feats, 1u);
		rlcc_window_shift_lag(w, x, hist, feats, 0u);
	}
	w[RLCC_CTX_A2] = (uint32_t)now[0];
	w[RLCC_CTX_O1] = (uint32_t)o;
	y = policy_st ? policy_st(x, st) : policy(x);
	if (out == RLCC_OUT_M) {
		/* m clamped to [RLCC_A_MIN, RLCC_A_MAX] in 64 bits (y is sign-extended already);
		 * then rlcc_update_rate without a branch: for m >= 1.0 the product is at least
		 * rate >= min_rate, for m < 1.0 at most rate <= 1<<20, so of the two clamps only the
		 * one rlcc_update_rate needs can bite. */
		int64_t ms = y;
		ms = ms > (int64_t)RLCC_A_MIN ? ms : (int64_t)RLCC_A_MIN;
		ms = ms < (int64_t)RLCC_A_MAX ? ms : (int64_t)RLCC_A_MAX;
		m = (uint64_t)ms;
		rate = rlcc_min_u64(rlcc_max_u64((rate * m) >> 16, p->min_rate), NICC_LINE_RATE);
	} else if (RLCC_UNLIKELY(y >= 0)) {
		/* rlcc_multiplier and rlcc_update_rate, each clamp on its side only: for y >= 0,
		 * m >= 1.0, so the new rate is at least rate >= min_rate; for y < 0, m <= 1.0
		 * (2^32 / (2^16 + u) with u >= 0), so it is at most rate <= 1<<20. */
		y = y < RLCC_Y_MAX ? y : RLCC_Y_MAX;
		m = NICC_Q16_ONE + (((uint64_t)y * RLCC_K_Q16) >> 16);
		rate = (rate * m) >> 16;
		rate = rlcc_min_u64(rate, NICC_LINE_RATE);
	} else {
		y = y > RLCC_Y_MIN ? y : RLCC_Y_MIN;
		m = rlcc_recip_q16((uint64_t)((int64_t)y * -(int64_t)RLCC_K_Q16) >> 16);
		rate = (rate * m) >> 16;
		rate = rlcc_max_u64(rate, p->min_rate);
	}
	w[RLCC_CTX_RATE] = (uint32_t)rate;
	w[RLCC_CTX_A1] = (uint32_t)m;
	return (uint32_t)rate;
}

/* rlcc_on_event_terms is rlcc_on_event_window with the default layout, x = (a_{t-1}, o_t,
 * a_{t-2}, o_{t-1}). */
static inline RLCC_ALWAYS_INLINE uint32_t rlcc_on_event_terms(const struct nicc_event *ev,
							      struct nicc_flow_ctx *ctx,
							      const struct rlcc_params *p,
							      const struct rlcc_obs_terms *terms,
							      rlcc_policy_fn policy,
							      rlcc_policy_state_fn policy_st,
							      unsigned words, int out)
{
	int32_t x[4];
	return rlcc_on_event_window(ev, ctx, p, terms, policy, policy_st, words, out, RLCC_HISTORY_DEFAULT,
				    RLCC_FEATS_DEFAULT, x);
}

/* rlcc_on_event_core (above) takes its terms from p: with p a constant, they fold. */
static inline RLCC_ALWAYS_INLINE uint32_t rlcc_on_event_core(const struct nicc_event *ev,
							     struct nicc_flow_ctx *ctx,
							     const struct rlcc_params *p,
							     rlcc_policy_fn policy,
							     rlcc_policy_state_fn policy_st,
							     unsigned words, int out)
{
	struct rlcc_obs_terms terms = rlcc_obs_terms_of(p, rlcc_obs_c(p));
	return rlcc_on_event_terms(ev, ctx, p, &terms, policy, policy_st, words, out);
}

/* rlcc_on_event is rlcc_on_event_core for a stateless policy returning y in Q16: words 6..11
 * of the context are never touched. */
static inline uint32_t rlcc_on_event(const struct nicc_event *ev, struct nicc_flow_ctx *ctx,
				     const struct rlcc_params *p, int32_t (*policy)(const int32_t *x))
{
	return rlcc_on_event_core(ev, ctx, p, policy, (rlcc_policy_state_fn)0, 0, RLCC_OUT_Y);
}

/* rlcc_on_event_ex is rlcc_on_event_core for a stateful policy that keeps words (0..6)
 * context words, data[6 .. 6+words-1], and returns y (out = RLCC_OUT_Y) or the multiplier m
 * (RLCC_OUT_M), both in Q16. On a new flow (no RLCC_FLAG_INIT) the words are zeroed, whatever
 * the event; on an RTT event the policy gets x and ctx->data + 6 and may rewrite them; other
 * events leave them alone; words beyond the policy's are never touched. */
static inline uint32_t rlcc_on_event_ex(const struct nicc_event *ev, struct nicc_flow_ctx *ctx,
					const struct rlcc_params *p,
					int32_t (*policy)(const int32_t *x, uint32_t *state), unsigned words,
					int out)
{
	return rlcc_on_event_core(ev, ctx, p, (rlcc_policy_fn)0, policy, words, out);
}

/* rlcc_on_event_layout is rlcc_on_event_ex fed the window of hist states of the features
 * feats (RLCC_FEAT_*), the layout a run-time value here (tests, runtimes; the handler macros
 * below fold it as a constant). The layout and words must satisfy RLCC_LAYOUT_OK (the caller's
 * duty: nicsdk.Layout.Check): its top words and the policy's are then disjoint. */
static inline uint32_t rlcc_on_event_layout(const struct nicc_event *ev, struct nicc_flow_ctx *ctx,
					    const struct rlcc_params *p,
					    int32_t (*policy)(const int32_t *x, uint32_t *state), unsigned words,
					    int out, unsigned hist, unsigned feats)
{
	int32_t x[RLCC_INPUTS_MAX];
	struct rlcc_obs_terms terms = rlcc_obs_terms_of(p, rlcc_obs_c(p));
	return rlcc_on_event_window(ev, ctx, p, &terms, (rlcc_policy_fn)0, policy, words, out, hist, feats, x);
}

/* RLCC_DEFINE_HANDLER(PARAMS, POLICY) defines the engine entry over the generated model
 * int32_t POLICY(const int32_t *x), which returns y in Q16, and the const struct rlcc_params
 * PARAMS. Words 6..11 of the context are never touched. */
#define RLCC_DEFINE_HANDLER(PARAMS, POLICY)                                                      \
	uint32_t nicc_on_event(const struct nicc_event *ev, struct nicc_flow_ctx *ctx);          \
	uint32_t nicc_on_event(const struct nicc_event *ev, struct nicc_flow_ctx *ctx)           \
	{                                                                                        \
		return rlcc_on_event(ev, ctx, &(PARAMS), POLICY);                                \
	}

/* RLCC_DEFINE_HANDLER_M(PARAMS, POLICY) is RLCC_DEFINE_HANDLER for a stateless model that
 * returns the multiplier m in Q16 (RLCC_OUT_M: clamped by the handler to
 * [RLCC_A_MIN, RLCC_A_MAX] before the rate update). Words 6..11 are never touched. */
#define RLCC_DEFINE_HANDLER_M(PARAMS, POLICY)                                                    \
	uint32_t nicc_on_event(const struct nicc_event *ev, struct nicc_flow_ctx *ctx);          \
	uint32_t nicc_on_event(const struct nicc_event *ev, struct nicc_flow_ctx *ctx)           \
	{                                                                                        \
		return rlcc_on_event_core(ev, ctx, &(PARAMS), POLICY, (rlcc_policy_state_fn)0, 0, \
					  RLCC_OUT_M);                                            \
	}

/* RLCC_DEFINE_HANDLER_EX(PARAMS, POLICY, WORDS, OUT) defines the engine entry over a stateful
 * model int32_t POLICY(const int32_t *x, uint32_t *state) and the const struct rlcc_params
 * PARAMS. WORDS, a constant in 0..6, is the number of context words the policy keeps:
 * state[i] = ctx->data[6 + i], zeroed when a new flow (no RLCC_FLAG_INIT) sees its first
 * event, passed to the policy on every RTT event (it may rewrite them, and must write no
 * other memory), untouched by other events; words 6+WORDS..11 are never touched. OUT is RLCC_OUT_Y (the policy returns y in Q16,
 * mapped by rlcc_multiplier) or RLCC_OUT_M (it returns the multiplier m in Q16, which the
 * handler clamps to [RLCC_A_MIN, RLCC_A_MAX] before the rate update, so any int32 is safe).
 * Out-of-range WORDS or OUT fail to compile (a negative array size). */
#define RLCC_DEFINE_HANDLER_EX(PARAMS, POLICY, WORDS, OUT)                                       \
	typedef char rlcc_check_handler_ex[(unsigned)(WORDS) <= RLCC_STATE_WORDS_MAX &&         \
					   ((OUT) == RLCC_OUT_Y || (OUT) == RLCC_OUT_M) ? 1 : -1];    \
	uint32_t nicc_on_event(const struct nicc_event *ev, struct nicc_flow_ctx *ctx);          \
	uint32_t nicc_on_event(const struct nicc_event *ev, struct nicc_flow_ctx *ctx)           \
	{                                                                                        \
		return rlcc_on_event_core(ev, ctx, &(PARAMS), (rlcc_policy_fn)0, POLICY, (WORDS), (OUT)); \
	}

/* RLCC_DEFINE_HANDLER_L(PARAMS, POLICY, OUT, HIST, FEATS) is RLCC_DEFINE_HANDLER (OUT
 * RLCC_OUT_Y) or RLCC_DEFINE_HANDLER_M (RLCC_OUT_M) for a stateless model fed the window of
 * HIST states of the features FEATS (RLCC_FEAT_* ORed), both constants, x[RLCC_INPUTS(HIST,
 * FEATS)]. Words 6..11 beyond the layout's top words (RLCC_LAYOUT_WORDS) are never touched. A
 * layout that does not fit, or another OUT, fails to compile (a negative array size). */
#define RLCC_DEFINE_HANDLER_L(PARAMS, POLICY, OUT, HIST, FEATS)                                  \
	typedef char rlcc_check_handler_l[RLCC_LAYOUT_OK(HIST, FEATS, 0) &&                         \
					  ((OUT) == RLCC_OUT_Y || (OUT) == RLCC_OUT_M) ? 1 : -1];     \
	uint32_t nicc_on_event(const struct nicc_event *ev, struct nicc_flow_ctx *ctx);          \
	uint32_t nicc_on_event(const struct nicc_event *ev, struct nicc_flow_ctx *ctx)           \
	{                                                                                        \
		int32_t x[RLCC_INPUTS(HIST, FEATS)];                                              \
		struct rlcc_obs_terms terms = rlcc_obs_terms_of(&(PARAMS), rlcc_obs_c(&(PARAMS))); \
		return rlcc_on_event_window(ev, ctx, &(PARAMS), &terms, POLICY, (rlcc_policy_state_fn)0, \
					    0, (OUT), (HIST), (FEATS), x);                        \
	}

/* RLCC_DEFINE_HANDLER_EX_L(PARAMS, POLICY, WORDS, OUT, HIST, FEATS) is RLCC_DEFINE_HANDLER_EX
 * fed the window of HIST states of the features FEATS, constants: the policy's WORDS (from
 * data[6] up) and the layout's top words (from data[11] down) must fit the six words together,
 * RLCC_LAYOUT_WORDS(HIST, FEATS) + WORDS <= RLCC_STATE_WORDS_MAX, or it fails to compile (a
 * negative array size), as does another OUT. */
#define RLCC_DEFINE_HANDLER_EX_L(PARAMS, POLICY, WORDS, OUT, HIST, FEATS)                        \
	typedef char rlcc_check_handler_ex_l[RLCC_LAYOUT_OK(HIST, FEATS, WORDS) &&                  \
					     ((OUT) == RLCC_OUT_Y || (OUT) == RLCC_OUT_M) ? 1 : -1];  \
	uint32_t nicc_on_event(const struct nicc_event *ev, struct nicc_flow_ctx *ctx);          \
	uint32_t nicc_on_event(const struct nicc_event *ev, struct nicc_flow_ctx *ctx)           \
	{                                                                                        \
		int32_t x[RLCC_INPUTS(HIST, FEATS)];                                              \
		struct rlcc_obs_terms terms = rlcc_obs_terms_of(&(PARAMS), rlcc_obs_c(&(PARAMS))); \
		return rlcc_on_event_window(ev, ctx, &(PARAMS), &terms, (rlcc_policy_fn)0, POLICY, \
					    (WORDS), (OUT), (HIST), (FEATS), x);                  \
	}

#endif /* NICC_RLCC_H */
