package codegen

import (
	"fmt"
	"slices"

	"github.com/nicc-dev/nicc/quantize"
)

// isPacked reports whether every channel of hidden layer l can take a packed lane
// (quantize.MLPLayer.Packable): then its channels are computed l.Lanes() to a uint64, one
// multiply per input and group.
func isPacked(l *quantize.MLPLayer) bool {
	if l.Final {
		return false
	}
	for j := range l.Out {
		if l.Packable(j) != nil {
			return false
		}
	}
	return true
}

// packedLayer prints hidden layer k's used channels (use) in groups, l.Lanes() lanes of one
// uint64 (quantize.MLPLayer.GroupZ is the Go twin): the packed words' table (each group's
// bias word, then input by input the groups' weight words), the statements of the sums, per
// channel j the statements that compute v<k+1>_<j>, of C type next, for the next layer to
// place (nil for an unused channel), and the name of the last sum. The sums run input by
// input, so only the groups' accumulators and one input are live; pre[i], if any, computes
// input i before its first use. A group's sum starts at its first weight, its bias word added
// there, and the weights' pointer is kept with each of pins (the last sum of the layer
// before) and with every step of a sum, so that gcc loads each word where it is used. They
// wrap mod 2^64 in unsigned arithmetic; the lane proof makes the lanes exact.
func (g *mlpGen) packedLayer(k int, use []bool, next string, pre [][]*node, pins []string) (*node, []*node, [][]*node, []string) {
	l := &g.ir.Layers[k]
	var chans []int
	for j := range l.Out {
		if use[j] {
			chans = append(chans, j)
		}
	}
	type group struct {
		chans   []int
		w       []uint64
		started bool
	}
	var groups []group
	var vals []string
	comment := []string{
		fmt.Sprintf("channels in pairs, two %d-bit lanes of a uint64, the low lane biased by 2^31; each", quantize.PairLaneBits),
		"lane's sum, rounding half included, proven in [-2^31, 2^31); z = lane >> n, arithmetic"}
	if l.LaneBits != quantize.PairLaneBits {
		b := l.LaneBits
		comment = []string{
			fmt.Sprintf("channels in threes, %d-bit lanes of a uint64, the lower two biased by 2^%d; each lane's", b, b-1),
			fmt.Sprintf("sum, rounding half included, proven in [-2^%d, 2^%d); z = lane >> n, arithmetic", b-1, b-1)}
	}
	body := []*node{
		&node{Kind: kindComment, Lines: comment},
		stmt("const uint64_t *pw%d = %s_pw%d;", k, g.fn, k),
	}
	if len(pins) == 0 {
		body = append(body, stmt("%s(pw%d);", g.keep(), k))
	}
	for _, p := range pins {
		body = append(body, stmt("%s(pw%d, %s);", g.keepStep(), k, p))
	}
	for p := 0; p < len(chans); p += l.Lanes() {
		gr := group{chans: chans[p:min(p+l.Lanes(), len(chans))]}
		var bias uint64
		bias, gr.w = l.PackGroup(gr.chans)
		vals = append(vals, fmt.Sprintf("UINT64_C(%d)", bias))
		groups = append(groups, gr)
	}
	// word is the C of the table's word idx. A load reaches 2 KiB either side of pw: beyond,
	// pw moves to the word first (else gcc adds the offset to the kept pw before each load).
	base := 0
	word := func(idx int) string {
		if d := idx - base; d < -256 || d > 255 {
			body = append(body, stmt("pw%d += %d;", k, d))
			base = idx
		}
		return fmt.Sprintf("pw%d[%d]", k, idx-base)
	}
	for i := range l.In {
		if i < len(pre) {
			body = append(body, pre[i]...)
		}
		for gi := range groups {
			gr := &groups[gi]
			if gr.w[i] == 0 {
				continue
			}
			sum := fmt.Sprintf("p%d_%d +=", k, gi)
			if !gr.started {
				sum = fmt.Sprintf("uint64_t p%d_%d = %s +", k, gi, word(gi))
				gr.started = true
			}
			body = append(body, stmt("%s (uint64_t)v%d_%d * %s;", sum, k, i, word(len(vals))),
				stmt("%s(p%d_%d, pw%d);", g.keepStep(), k, gi, k))
			vals = append(vals, fmt.Sprintf("UINT64_C(%d)", gr.w[i]))
		}
	}
	outs := make([][]*node, l.Out)
	for gi, gr := range groups {
		if !gr.started { // no nonzero weight: the sum is its bias word
			body = append(body, stmt("const uint64_t p%d_%d = %s;", k, gi, word(gi)))
		}
		for m, j := range gr.chans {
			outs[j] = []*node{g.laneZ(k, j, gi, m), g.activate(k, j, next)}
		}
	}
	return &node{Kind: kindTable, Name: fmt.Sprintf("%s_pw%d", g.fn, k), Type: "uint64_t", Values: vals}, body, outs,
		[]string{fmt.Sprintf("p%d_%d", k, len(groups)-1)}
}

// laneZ computes z<k>_<j>, channel j of layer k in lane m of group gi's sum: the top lane
// by an arithmetic shift, a lower one (biased by 2^(b-1)) by its bits less the bias.
func (g *mlpGen) laneZ(k, j, gi, m int) *node {
	l := &g.ir.Layers[k]
	b, n := l.LaneBits, l.Shift[j]
	switch {
	case m == l.Lanes()-1:
		return stmt("const int64_t z%d_%d = (int64_t)p%d_%d >> %d;", k, j, k, gi, b*m+n)
	case b == quantize.PairLaneBits:
		return stmt("const int32_t z%d_%d = (int32_t)(uint32_t)(p%d_%d - 0x80000000u) >> %d;", k, j, k, gi, n)
	}
	return stmt("const int64_t z%d_%d = (int64_t)((p%d_%d >> %d) & %d) - %d;", k, j, k, gi, b*m+n, int64(1)<<(b-n)-1, int64(1)<<(b-1-n))
}

// packed reports whether a layer is packed (isPacked): the C then defines the keep macro.
func (g *mlpGen) packed() bool {
	return slices.ContainsFunc(g.ir.Layers, func(l quantize.MLPLayer) bool { return isPacked(&l) })
}

// keep is the name of the macro that hides a value from gcc's optimiser (keepDefine).
func (g *mlpGen) keep() string { return keepName(g.macro) }

// keepStep is the name of the macro that hides a sum and its weights' pointer at once.
func (g *mlpGen) keepStep() string { return g.keep() + "_STEP" }

// keepName is the keep macro's name for a generated file whose macros start with macro.
func keepName(macro string) string { return macro + "_KEEP" }

// keepDefine defines the keep macro name(v), an empty asm that tells gcc the value may have
// changed, at no cost, after a comment saying why the code uses it.
func keepDefine(name string, why ...string) []*node {
	return gnuMacro(name, "v", `__asm__("" : "+r"(v))`, why)
}

// gnuMacro defines name(param) as body for gcc and as nothing for other compilers, after a
// comment.
func gnuMacro(name, param, body string, comment []string) []*node {
	return []*node{
		&node{Kind: kindComment, Lines: comment},
		line("#ifdef __GNUC__"),
		line("#define " + name + "(" + param + ") " + body),
		line("#else"),
		line("#define " + name + "(" + param + ") ((void)0)"),
		line("#endif"),
	}
}
