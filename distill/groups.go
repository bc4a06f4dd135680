package distill

import "math/bits"

// rowGroups are the refit's row groups: rows reaching the same leaf in every tree so far form a
// group (there are few: a few thousand for 20 trees of depth 4 on millions of rows). Each
// kept tree splits them (finish); the refit (solve) works on the groups, not the rows.
type rowGroups struct {
	gid     []int32 // per row: its group, or renumber's key while keyed
	keyed   bool    // gid holds renumber's keys, not groups yet
	ngroups int
	splits  []groupSplit // per tree: how it split the groups
	// renumber's key ranks: the keys met, as a bitset, and per word the keys met below it
	rankBits []uint64
	rankBase []int32
	// seen is, per half, the keys finish's fused split met, as a bitset.
	seen [histParts][]uint64
}

// newRowGroups is n rows in one group.
func newRowGroups(n int) *rowGroups {
	return &rowGroups{gid: make([]int32, n), ngroups: 1}
}

// groupSplit is how one tree split the row groups: new group g came from old group from[g]
// and reaches leaf leafOf[g].
type groupSplit struct {
	from   []int32
	leafOf []uint16
}

// maxGroupKeys bounds (old groups × leaves) for finish's fused group split; beyond it refine
// splits the groups with a map.
var maxGroupKeys = 1 << 24

// startSeen is half p's bitset of keys, for keys keys, cleared: finish's fused split marks
// the keys its rows meet.
func (g *rowGroups) startSeen(p, keys int) []uint64 {
	g.seen[p] = resize(g.seen[p], (keys+63)/64)
	clear(g.seen[p])
	return g.seen[p]
}

// splitRows is finish's fused split of some rows' groups: gid (holding renumber's keys when
// keyed) gets each row's key, its group·nl + the number of its leaf (nid, leafNum; nl
// leaves), marked in seen.
func (g *rowGroups) splitRows(nid []uint16, gid []int32, leafNum []int32, nl int32, keyed bool, seen []uint64) {
	gid = gid[:len(nid)]
	for i, n := range nid {
		k := gid[i]
		if keyed {
			k = g.rankOf(k)
		}
		k = k*nl + leafNum[n]
		gid[i] = k
		seen[k>>6] |= 1 << (k & 63)
	}
}

// renumber finishes the group split finish fused into its pass: gid holds each row's key
// old group·len(leaves) + the number of its leaf (leaves[number] is its node), and each half
// marked the keys it met. The new groups are the keys met, numbered in ascending order (a
// key's rank among them: rankOf); gid keeps the keys until settle or the next finish ranks
// them. solve numbers the groups in order of first appearance, as refine does.
func (g *rowGroups) renumber(leaves []uint16) {
	met := g.seen[0]
	for p := 1; p < histParts; p++ {
		for w, b := range g.seen[p] {
			met[w] |= b
		}
	}
	g.rankBits = append(g.rankBits[:0], met...)
	g.rankBase = resize(g.rankBase, len(met))
	var from []int32
	var leafOf []uint16
	nl := int32(len(leaves))
	for w, b := range met {
		g.rankBase[w] = int32(len(from))
		for ; b != 0; b &= b - 1 {
			k := int32(w*64 + bits.TrailingZeros64(b))
			from, leafOf = append(from, k/nl), append(leafOf, leaves[k%nl])
		}
	}
	g.keyed = true
	g.add(from, leafOf)
}

// rankOf is key k's group after renumber: its rank among the keys met.
func (g *rowGroups) rankOf(k int32) int32 {
	w := k >> 6
	return g.rankBase[w] + int32(bits.OnesCount64(g.rankBits[w]&(1<<(k&63)-1)))
}

// settle makes gid the rows' groups when it holds renumber's keys (finish's next pass ranks
// them itself).
func (g *rowGroups) settle(pl pool) {
	if !g.keyed {
		return
	}
	gid := g.gid
	pl.forRows(len(gid), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			gid[r] = g.rankOf(gid[r])
		}
	})
	g.keyed = false
}

// refine splits the row groups by the rows' leaves nid (nodes tree nodes) in the tree just
// grown, when there are too many (old group, leaf) keys for renumber's tables.
func (g *rowGroups) refine(nid []uint16, nodes int) {
	var from []int32 // per new group: its old group
	var leafOf []uint16
	table := make(map[uint64]int32)
	for r, old := range g.gid {
		l := nid[r]
		k := uint64(old)*uint64(nodes) + uint64(l)
		id, ok := table[k]
		if !ok {
			id = int32(len(from))
			from = append(from, old)
			leafOf = append(leafOf, l)
			table[k] = id
		}
		g.gid[r] = id
	}
	g.add(from, leafOf)
}

// add makes the new groups the groups: from[g] is new group g's old group, leafOf[g] its leaf
// in the tree just grown.
func (g *rowGroups) add(from []int32, leafOf []uint16) {
	g.splits = append(g.splits, groupSplit{from, leafOf})
	g.ngroups = len(from)
}

// groupSums are the groups' row counts, and sums of targets and of their squares: all the
// refit reads of the rows.
type groupSums struct{ cnt, sy, sy2 []float64 }

// order renumbers the groups in order of first appearance in the rows (refine's order, which
// fixes the order of solve's sums) and returns each group's sums of the targets y (in row
// order).
func (g *rowGroups) order(pl pool, y []float64) groupSums {
	g.settle(pl)
	G := g.ngroups
	perm := make([]int32, G)
	seen := make([]bool, G)
	sums := make([][3]float64, G) // count, Σy, Σy²: one cache line, not three, per row
	next := int32(0)
	for r, gr := range g.gid {
		if !seen[gr] {
			seen[gr] = true
			perm[gr] = next
			next++
		}
		s, v := &sums[perm[gr]], y[r]
		s[0]++
		s[1] += v
		s[2] += v * v
	}
	gs := groupSums{make([]float64, G), make([]float64, G), make([]float64, G)}
	for i, s := range sums {
		gs.cnt[i], gs.sy[i], gs.sy2[i] = s[0], s[1], s[2]
	}
	gid := g.gid
	pl.forRows(len(gid), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			gid[r] = perm[gid[r]]
		}
	})
	last := &g.splits[len(g.splits)-1]
	from, leafOf := make([]int32, G), make([]uint16, G)
	for i, p := range perm {
		from[p], leafOf[p] = last.from[i], last.leafOf[i]
	}
	last.from, last.leafOf = from, leafOf
	return gs
}

// leaves is every group's leaf in every tree, [tree][group], worked out from the splits, the
// last first.
func (g *rowGroups) leaves(pl pool) [][]uint16 {
	groupLeaf := make([][]uint16, len(g.splits))
	for ti := range groupLeaf {
		groupLeaf[ti] = make([]uint16, g.ngroups)
	}
	// Each group's ancestors are its own: the groups are split among the threads.
	pl.forEach(histParts, func(p int) {
		lo, hi := p*g.ngroups/histParts, (p+1)*g.ngroups/histParts
		anc := make([]int32, hi-lo) // each group's ancestor after tree ti
		for i := range anc {
			anc[i] = int32(lo + i)
		}
		for ti := len(g.splits) - 1; ti >= 0; ti-- {
			sp, gl := g.splits[ti], groupLeaf[ti][lo:hi]
			for i, a := range anc {
				gl[i] = sp.leafOf[a]
				anc[i] = sp.from[a]
			}
		}
	})
	return groupLeaf
}
