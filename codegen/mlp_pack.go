package codegen

import (
	"fmt"
	"slices"

	"github.com/nicc-dev/nicc/quantize"
)

// packedPairs reports whether every channel of hidden layer l can take a packed lane
// (quantize.MLPLayer.Packable): then its channels are computed two to a uint64, one multiply
// per input and pair.
func packedPairs(l *quantize.MLPLayer) bool {
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

// packedLayer prints hidden layer k's used channels (use) in pairs, low lane and high lane of
// one uint64 (quantize.PairZ is the Go twin): the packed words' table (each pair's bias word,
// then input by input the pairs' weight words), the statements of the sums, per channel j
// the statements that compute v<k+1>_<j>, of C type next, for the next layer to place (nil
// for an unused channel), and the name of the last sum. The sums run input by input, so only
// the pairs' accumulators and one input are live; pre[i], if any, computes input i before its
// first use. A pair's sum starts at its first weight, its bias word added there, and the
// weights' pointer is kept with each of pins (the last sum of the layer before) and with
// every step of a sum, so that gcc loads each word where it is used. They wrap mod 2^64 in
// unsigned arithmetic; the lane proof makes the lanes exact.
func (g *mlpGen) packedLayer(k int, use []bool, next string, pre [][]*node, pins []string) (*node, []*node, [][]*node, []string) {
	l := &g.ir.Layers[k]
	var chans []int
	for j := range l.Out {
		if use[j] {
			chans = append(chans, j)
		}
	}
	type pair struct {
		a, b    int
		w       []uint64
		started bool
	}
	var pairs []pair
	var vals []string
	body := []*node{
		&node{Kind: kindComment, Lines: []string{
			fmt.Sprintf("channels in pairs, two %d-bit lanes of a uint64, the low lane biased by 2^31; each", quantize.PairLaneBits),
			"lane's sum, rounding half included, proven in [-2^31, 2^31); z = lane >> n, arithmetic"}},
		stmt("const uint64_t *pw%d = %s_pw%d;", k, g.fn, k),
	}
	if len(pins) == 0 {
		body = append(body, stmt("%s(pw%d);", g.keep(), k))
	}
	for _, p := range pins {
		body = append(body, stmt("%s(pw%d, %s);", g.keepStep(), k, p))
	}
	for p := 0; p < len(chans); p += 2 {
		a, b := chans[p], -1
		if p+1 < len(chans) {
			b = chans[p+1]
		}
		bias, w := l.PackPair(a, b)
		vals = append(vals, fmt.Sprintf("UINT64_C(%d)", bias))
		pairs = append(pairs, pair{a: a, b: b, w: w})
	}
	for i := range l.In {
		if i < len(pre) {
			body = append(body, pre[i]...)
		}
		for pi := range pairs {
			pr := &pairs[pi]
			if pr.w[i] == 0 {
				continue
			}
			sum := fmt.Sprintf("p%d_%d +=", k, pi)
			if !pr.started {
				sum = fmt.Sprintf("uint64_t p%d_%d = pw%d[%d] +", k, pi, k, pi)
				pr.started = true
			}
			body = append(body, stmt("%s (uint64_t)v%d_%d * pw%d[%d];", sum, k, i, k, len(vals)),
				stmt("%s(p%d_%d, pw%d);", g.keepStep(), k, pi, k))
			vals = append(vals, fmt.Sprintf("UINT64_C(%d)", pr.w[i]))
		}
	}
	outs := make([][]*node, l.Out)
	for pi, pr := range pairs {
		if !pr.started { // no nonzero weight: the sum is its bias word
			body = append(body, stmt("const uint64_t p%d_%d = pw%d[%d];", k, pi, k, pi))
		}
		outs[pr.a] = []*node{
			stmt("const int32_t z%d_%d = (int32_t)(uint32_t)(p%d_%d - 0x80000000u) >> %d;", k, pr.a, k, pi, l.Shift[pr.a]),
			g.activate(k, pr.a, next)}
		if pr.b >= 0 {
			outs[pr.b] = []*node{
				stmt("const int64_t z%d_%d = (int64_t)p%d_%d >> %d;", k, pr.b, k, pi, quantize.PairLaneBits+l.Shift[pr.b]),
				g.activate(k, pr.b, next)}
		}
	}
	return &node{Kind: kindTable, Name: fmt.Sprintf("%s_pw%d", g.fn, k), Type: "uint64_t", Values: vals}, body, outs,
		[]string{fmt.Sprintf("p%d_%d", k, len(pairs)-1)}
}

// packed reports whether a layer is packed (packedPairs): the C then defines the keep macro.
func (g *mlpGen) packed() bool {
	return slices.ContainsFunc(g.ir.Layers, func(l quantize.MLPLayer) bool { return packedPairs(&l) })
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
