package codegen

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nicc-dev/nicc/quantize"
)

// FormRank (see Form) prints a quantize.RankLayout: per feature a bucket of the input's raw
// value, its few thresholds compared without a branch, and the lane word of the rank they
// give; the words of all features summed; then one table load per group of trees. No branch
// and no loop: every input runs the same instructions.

// rankStruct is the bucket struct with m thresholds.
func (g *gen) rankStruct(m int) string { return fmt.Sprintf("struct %s_rank%d", g.fn, m) }

// lowerRank is the .c of FormRank.
func (g *gen) lowerRank() []*node {
	l := g.opt.Rank
	ns := g.preamble()
	var decls, body []*node
	declared := map[int]bool{}
	buckets := false
	for k, f := range l.Features {
		p := fmt.Sprintf("p%d", f.Fixups)
		if !declared[f.Fixups] {
			declared[f.Fixups] = true
			ns = append(ns, line(""),
				line(g.rankStruct(f.Fixups)+" {"),
				line(fmt.Sprintf("\tint32_t t[%d];", f.Fixups)),
				line(fmt.Sprintf("\tuint64_t w[%d];", f.Fixups+1)))
			if pad := quantize.RankPadWords(f.Fixups); pad > 0 {
				ns = append(ns, line(fmt.Sprintf("\tuint64_t pad[%d]; /* to a power of two: b * size is a shift */", pad)))
			}
			ns = append(ns, line("};"))
			decls = append(decls, stmt("const %s *%s;", g.rankStruct(f.Fixups), p))
		}
		name := fmt.Sprintf("%s_rank_x%d", g.fn, f.Feature)
		ns = append(ns, line(""), &node{Kind: kindTable, Name: name, Type: g.rankStruct(f.Fixups), Values: rankEntries(f)})
		x := fmt.Sprintf("x[%d]", f.Feature)
		var cmp []string
		for k := range f.Fixups {
			cmp = append(cmp, fmt.Sprintf("(%s > %s->t[%d])", x, p, k))
		}
		body = append(body, line(""), &node{Kind: kindComment, Lines: []string{
			fmt.Sprintf("x[%d]: %d bucket(s) of 2^%d, at most %d threshold(s) in one", f.Feature, len(f.Words), f.Shift, f.Fixups)}})
		if nb := len(f.Words); nb > 1 {
			buckets = true
			body = append(body,
				stmt("b = (uint64_t)((int64_t)(%s >> %d) - %s);", x, f.Shift, lit(int64(f.Origin), 32)),
				stmt("%s = &%s[b < %du ? b : %du];", p, name, nb-1, nb-1))
		} else {
			body = append(body, stmt("%s = &%s[0];", p, name))
		}
		op := "+="
		if k == 0 {
			op = "="
		}
		body = append(body, stmt("w %s %s->w[%s];", op, p, strings.Join(cmp, " + ")))
	}
	if buckets {
		decls = append(decls, stmt("uint64_t b;"))
	}
	decls = append(decls, stmt("uint64_t w;"))
	sums := g.fn + "_sums"
	sumT := "int64_t"
	if l.SumBits == 32 {
		sumT = "int32_t"
	}
	vals := make([]string, len(l.Sums))
	for i, v := range l.Sums {
		vals[i] = lit(v, l.SumBits)
	}
	ns = append(ns, line(""),
		&node{Kind: kindComment, Lines: []string{
			fmt.Sprintf("the sums of the leaves of %d group(s) of trees, one table after another; acc is", len(l.Groups)),
			fmt.Sprintf("proven in [%d, %d] after each group's add, in group order", l.Acc.Lo, l.Acc.Hi)}},
		&node{Kind: kindTable, Name: sums, Type: sumT, Values: vals})
	body = append(append(decls, g.accInit()...), body...)
	body = append(body, line(""))
	for k, trees := range l.Groups {
		lane := "w"
		if k > 0 {
			lane = fmt.Sprintf("(w >> %d)", quantize.RankLaneBits*k)
		}
		body = append(body,
			&node{Kind: kindComment, Lines: []string{"trees " + TreeList(trees)}},
			g.rankLookup(sums, sumT, lane))
	}
	body = append(append(body, line("")), g.finish()...)
	return append(ns, entry(g.macro, g.fn, "const int32_t *x", "x", body, g.opt.Inline)...)
}

// rankLookup adds the entry of sums a lane selects: the lane is an index, or a byte offset
// when the layout is Scaled.
func (g *gen) rankLookup(sums, sumT, lane string) *node {
	if g.opt.Rank.Scaled {
		return stmt("acc += *(const %s *)((const char *)%s + (uint16_t)%s);", sumT, sums, lane)
	}
	return stmt("acc += %s[(uint16_t)%s];", sums, lane)
}

// rankEntries are a feature's bucket structs as C initializers.
func rankEntries(f quantize.RankFeature) []string {
	vals := make([]string, len(f.Words))
	for b := range f.Words {
		ts := make([]string, len(f.Thresholds[b]))
		for k, t := range f.Thresholds[b] {
			ts[k] = lit(int64(t), 32)
		}
		ws := make([]string, len(f.Words[b]))
		for k, w := range f.Words[b] {
			ws[k] = "UINT64_C(0x" + strconv.FormatUint(w, 16) + ")"
		}
		vals[b] = "{{" + strings.Join(ts, ", ") + "}, {" + strings.Join(ws, ", ") + "}"
		if quantize.RankPadWords(f.Fixups) > 0 {
			vals[b] += ", {0}"
		}
		vals[b] += "}"
	}
	return vals
}

// TreeList is a short list of tree indices: 0, 2-5, 7.
func TreeList(ts []int) string {
	var parts []string
	for i := 0; i < len(ts); {
		j := i
		for j+1 < len(ts) && ts[j+1] == ts[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", ts[i], ts[j]))
		} else {
			parts = append(parts, strconv.Itoa(ts[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
