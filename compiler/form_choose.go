package compiler

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/codegen"
	"github.com/nicc-dev/nicc/fwsim"
	"github.com/nicc-dev/nicc/fwsim/wcet"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
)

// A tree ensemble's code form is chosen by cost: each candidate is printed, built for the
// core and bounded (fwsim's static WCET of the entry: the handler under RL-CC, else
// nicc_policy), and the least WCET within the memory budget (the profile's text_bytes and
// rodata_bytes, or --max-text and --max-rodata) wins; a tie goes to the smaller firmware.
// Today's form (nested if/else, or the walk above BranchMaxSplits) is always a candidate; beside
// nested if/else, an ensemble with oblivious trees (CatBoost's, or distilled with --oblivious)
// has the table form (codegen.FormTable) too. The
// rank form (codegen.FormRank) is one only up to RankMaxSplits and RankMaxTrees, where its
// layouts are cheap to build: for 1 to quantize.RankLanes groups of trees (merged greedily,
// smallest table first) and at most 1, 2 or 3 thresholds in one bucket.
const (
	RankMaxSplits = O2MaxSplits
	RankMaxTrees  = 64
)

// candidate is a form to build: the form, its rank layout or an LSTM's plan of product
// tables, and its description.
type candidate struct {
	form     codegen.Form
	rank     *quantize.RankLayout
	products codegen.Products
	detail   string
}

// memoryBudget is the profile's limits, or the options' overrides.
func (f *fitter) memoryBudget(p *fwsim.Profile) artifact.MemoryBudget {
	m := artifact.MemoryBudget{TextBytes: p.TextBytes, TextSource: "profile " + p.Name + ": " + p.Sources["text_bytes"],
		RodataBytes: p.RodataBytes, RodataSource: "profile " + p.Name + ": " + p.Sources["rodata_bytes"]}
	if f.in.maxText > 0 {
		m.TextBytes, m.TextSource = f.in.maxText, "--max-text"
	}
	if f.in.maxRodata > 0 {
		m.RodataBytes, m.RodataSource = f.in.maxRodata, "--max-rodata"
	}
	return m
}

// candidates are the forms worth building for the ensemble (see RankMaxSplits), restricted
// to opt.Form when it is set.
func (f *fitter) candidates(ir *quantize.TreeIR, limit artifact.MemoryBudget) ([]candidate, error) {
	var cs []candidate
	switch asked, _ := codegen.ParseForm(f.in.form); {
	case f.in.form == "":
		cs = append(cs, candidate{form: f.form, detail: f.plan.Why})
		if f.form == codegen.FormBranch && ir.Stats.Oblivious > 0 {
			cs = append(cs, candidate{form: codegen.FormTable, detail: fmt.Sprintf(
				"%d of %d trees oblivious: comparison bits → index → leaf table, the others nested if/else", ir.Stats.Oblivious, len(ir.Trees))})
		}
	case asked != codegen.FormRank:
		cs = append(cs, candidate{form: asked, detail: "--form " + f.in.form})
	}
	if (f.in.form == "" || f.in.form == codegen.FormRank.String()) && len(f.rankGroups) > 0 {
		// Each feature's bucket shifts for a table budget of 1/2, 1/4 and 1/8 of .rodata: the
		// same for every grouping.
		var shifts [][]int
		for _, share := range []uint64{2, 4, 8} {
			shifts = append(shifts, rankShifts(ir, limit.RodataBytes/share))
		}
		seen := map[string]bool{}
		for _, groups := range f.rankGroups {
			for _, shift := range shifts {
				l, err := ir.BuildRank(quantize.RankPlan{Groups: groups, Shift: shift})
				if err != nil || uint64(l.Bytes()) > limit.RodataBytes {
					continue
				}
				d := rankDetail(l)
				if !seen[d] {
					seen[d] = true
					cs = append(cs, candidate{form: codegen.FormRank, rank: l, detail: d})
				}
			}
		}
	}
	if len(cs) == 0 {
		return nil, fmt.Errorf("%s: form %q is not one this ensemble can take (%d splits, %d trees; the rank form needs at most %d and %d, and tables within %d bytes)",
			f.in.modelPath, f.in.form, ir.Stats.Splits, len(ir.Trees), RankMaxSplits, RankMaxTrees, limit.RodataBytes)
	}
	return cs, nil
}

// rankDetail describes a rank layout: its groups and each feature's buckets.
func rankDetail(l *quantize.RankLayout) string {
	var gs, fs []string
	for _, g := range l.Groups {
		gs = append(gs, "{"+codegen.TreeList(g)+"}")
	}
	for _, f := range l.Features {
		fs = append(fs, fmt.Sprintf("x%d %d×2^%d/%d", f.Feature, len(f.Words), f.Shift, f.Fixups))
	}
	return fmt.Sprintf("groups %s, %d sums; buckets %s", strings.Join(gs, " "), len(l.Sums), strings.Join(fs, ", "))
}

// rankShifts is, per feature, the bucket shift with the fewest thresholds in one bucket
// (the fewest compares) whose table takes at most maxBytes, the coarsest such shift.
func rankShifts(ir *quantize.TreeIR, maxBytes uint64) []int {
	shifts := make([]int, len(ir.Inputs))
	for f := range ir.Inputs {
		best := -1
		for s := 31; s >= 0; s-- {
			n, nb := ir.RankFixups(f, s)
			if uint64(nb*quantize.RankEntryBytes(n)) > maxBytes {
				break
			}
			if best < 0 || n < best {
				shifts[f], best = s, n
			}
		}
	}
	return shifts
}

// rankGroupings are the ensemble's trees merged greedily into fewer groups, each step the
// pair whose merged table is smallest, for every count from quantize.RankLanes down to 1
// that stays within quantize.RankMaxEntries; none for an ensemble over RankMaxSplits splits or
// RankMaxTrees trees.
func rankGroupings(ir *quantize.TreeIR) [][][]int {
	if ir.Stats.Splits > RankMaxSplits || len(ir.Trees) > RankMaxTrees {
		return nil
	}
	type group struct {
		trees []int
		ts    [][]int32 // thresholds per feature
	}
	size := func(ts [][]int32) int {
		n := 1
		for _, t := range ts {
			n *= len(t) + 1
			if n > quantize.RankMaxEntries {
				return n
			}
		}
		return n
	}
	merge := func(a, b group) group {
		g := group{trees: slices.Sorted(slices.Values(slices.Concat(a.trees, b.trees)))}
		for f := range a.ts {
			t := slices.Concat(a.ts[f], b.ts[f])
			slices.Sort(t)
			g.ts = append(g.ts, slices.Compact(t))
		}
		return g
	}
	var gs []group
	for t := range ir.Trees {
		g := group{trees: []int{t}}
		for f := range ir.Inputs {
			g.ts = append(g.ts, ir.FeatureThresholds(g.trees, f))
		}
		gs = append(gs, g)
	}
	var out [][][]int
	for len(gs) > 0 {
		if len(gs) <= quantize.RankLanes {
			total := 0
			var cut [][]int
			for _, g := range gs {
				total += size(g.ts)
				cut = append(cut, g.trees)
			}
			if total <= quantize.RankMaxEntries {
				out = append(out, cut)
			}
		}
		if len(gs) == 1 {
			break
		}
		bi, bj, best := -1, -1, 0
		for i := range gs {
			for j := i + 1; j < len(gs); j++ {
				if n := size(merge(gs[i], gs[j]).ts); bi < 0 || n < best {
					bi, bj, best = i, j, n
				}
			}
		}
		if best > quantize.RankMaxEntries {
			break
		}
		gs[bi] = merge(gs[bi], gs[bj])
		gs = slices.Delete(gs, bj, bj+1)
	}
	return out
}

// lstmCandidates are an LSTM's two forms, restricted to opt.Form when it is set: the
// recurrent products read from tables (codegen.FormTable: an add a packed word instead of a
// multiply, 256 rows of each h's words), and every product multiplied (FormBranch). Once
// both are built, chooseForm adds the table form as planProducts plans it within the budget
// (plannedTables).
func (f *fitter) lstmCandidates() ([]candidate, error) {
	cs := []candidate{
		{form: codegen.FormTable, detail: "each h's partial products read from a table of 256 rows: an add a packed word"},
		{form: codegen.FormBranch, detail: "every packed word multiplied"},
	}
	if f.in.form == "" {
		return cs, nil
	}
	for _, cand := range cs {
		if cand.form.String() == f.in.form {
			return []candidate{{form: cand.form, detail: "--form " + f.in.form}}, nil
		}
	}
	return nil, fmt.Errorf("%s: --form %s: an LSTM is built in the table or branch form", f.in.modelPath, f.in.form)
}

// formBuild is a candidate form as fit built it: its rendered C, the files it was built from
// (by name, in dir), the firmware object and the ELF. The build stage uses the chosen form's
// firmware instead of building it again when the sources emit wrote are these.
type formBuild struct {
	rendered *rendered
	files    map[string][]byte
	dir      string
	obj, elf string
	wcet     artifact.FormCandidate
	// bounds are the static WCET reports of the entry and of EntryPolicy on elf.
	bounds map[string]*wcet.Report
}

// chooseForm builds every candidate and keeps the least WCET within the memory budget, and
// the chosen form's build (planned.chosenBuild) in a directory the compile removes when it ends.
// The candidates given are built at once, as many at a time as there are CPUs (each is a gcc
// run and a bound of its ELF, independent of the others); an LSTM's planned table form, which
// needs the first two costs, is built after them.
func (f *fitter) chooseForm(cs []candidate, limit artifact.MemoryBudget, p *fwsim.Profile) error {
	f.plan.Memory = &limit
	if len(cs) == 1 { // nothing to choose: the build stage builds it once
		f.form, f.rank, f.products = cs[0].form, cs[0].rank, cs[0].products
		f.plan.Form = f.form.String()
		return nil
	}
	tmp, err := os.MkdirTemp("", "nicc-forms-")
	if err != nil {
		return err
	}
	f.formsDir = tmp
	fits := func(fb *formBuild) artifact.FormCandidate {
		fc := fb.wcet
		fc.Fits = fc.TextBytes <= limit.TextBytes && fc.RodataBytes <= limit.RodataBytes
		return fc
	}
	// With a host compiler to run, the host drivers of the best candidate so far are built
	// ahead (speculator); what is left running of another's is stopped.
	var spec *speculator
	if f.in.hostCC != "" {
		ctx := f.in.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		spec = &speculator{ctx: ctx, f: f, slots: make(chan struct{}, runtime.NumCPU()), fits: fits}
		defer func() {
			if f.speculation = spec.spec; spec.spec != nil && spec.spec.fb != f.chosenBuild {
				spec.spec.stop()
				f.speculation = nil
			}
		}()
	}
	builds := make([]*formBuild, len(cs))
	costs := make([]artifact.FormCandidate, len(cs))
	// First every candidate no other dominates (rankDominates), then each dominated one whose
	// every dominator is over the memory budget.
	var first, second []int
	for i := range cs {
		if slices.ContainsFunc(cs, func(c candidate) bool { return rankDominates(c.rank, cs[i].rank) }) {
			second = append(second, i)
		} else {
			first = append(first, i)
		}
	}
	build := func(idx []int, spec *speculator) error {
		if len(idx) == 0 {
			return nil
		}
		bs, err := f.costCandidates(cs, p, tmp, idx, spec)
		for k, i := range idx {
			if err == nil {
				builds[i], costs[i] = bs[k], fits(bs[k])
			}
		}
		return err
	}
	// An LSTM's first two forms are built to plan the third, which mostly beats them: nothing
	// is built ahead of them.
	firstSpec := spec
	if _, lstm := f.in.model.Policy.(*quantize.LSTMIR); lstm {
		firstSpec = nil
	}
	if err := build(first, firstSpec); err != nil {
		return err
	}
	var rest []int
	for _, i := range second {
		d := slices.IndexFunc(first, func(j int) bool { return costs[j].Fits && rankDominates(cs[j].rank, cs[i].rank) })
		if d < 0 {
			rest = append(rest, i)
			continue
		}
		costs[i] = artifact.FormCandidate{Form: cs[i].form.String(), Detail: cs[i].detail,
			NotBuilt: fmt.Sprintf("candidate %d, the same groups with fewer thresholds in a bucket, fits and runs fewer instructions", first[d]+1)}
	}
	if err := build(rest, spec); err != nil {
		return err
	}
	// An LSTM's table form as planned within the room the branch form leaves; once more, that
	// much smaller, when the plan's estimate of its bytes missed (alignment).
	var shrink uint64
	for range 2 {
		cand, ok := f.plannedTables(cs, costs, limit, p, shrink)
		if !ok {
			break
		}
		cs, builds, costs = append(cs, cand), append(builds, nil), append(costs, artifact.FormCandidate{})
		if err := build([]int{len(cs) - 1}, spec); err != nil {
			return err
		}
		if got := costs[len(cs)-1].RodataBytes; got > limit.RodataBytes {
			shrink = got - limit.RodataBytes
			continue
		}
		break
	}
	best := -1
	for i := range costs {
		if builds[i] != nil && (best < 0 || better(costs[i], costs[best])) {
			best = i
		}
	}
	costs[best].Chosen = true
	for i, b := range builds {
		if i != best && b != nil {
			os.RemoveAll(b.dir)
		}
	}
	f.chosenBuild = builds[best]
	f.form, f.rank, f.products = cs[best].form, cs[best].rank, cs[best].products
	f.plan.Form, f.plan.Candidates = f.form.String(), costs
	f.plan.Why = cs[best].detail
	if !costs[best].Fits {
		msg, _ := limit.Over(costs[best].TextBytes, costs[best].RodataBytes)
		if !f.in.force {
			return &budget.CheckError{Err: &artifact.OverMemoryError{Msg: fmt.Sprintf("%s: no code form fits the memory budget: the least WCET's, the %s form, has %s; --force builds, verifies and bounds it anyway",
				f.in.modelPath, f.plan.Form, msg)}}
		}
		f.notes = append(f.notes, fmt.Sprintf("built with --force: no code form fits the memory budget; the %s form has %s", f.plan.Form, msg))
	}
	return nil
}

// costCandidates builds and bounds the candidates cs[i] for i in idx (costCandidate), each in
// its own directory of tmp, one in each of spec's slots (runtime.NumCPU() of them when spec is
// nil) at once, telling progress and spec of each as it finishes: their builds, in idx's order.
// The first error, in that order, is returned.
func (f *fitter) costCandidates(cs []candidate, p *fwsim.Profile, tmp string, idx []int, spec *speculator) ([]*formBuild, error) {
	builds := make([]*formBuild, len(idx))
	errs := make([]error, len(idx))
	var mu sync.Mutex
	done, started := 0, 0
	f.in.progress("choose form", done, len(idx))
	slots := make(chan struct{}, runtime.NumCPU())
	if spec != nil {
		slots = spec.slots
	}
	var wg sync.WaitGroup
	for k, i := range idx {
		wg.Go(func() {
			slots <- struct{}{}
			mu.Lock()
			started++
			mu.Unlock()
			builds[k], errs[k] = f.costCandidate(cs[i], p, filepath.Join(tmp, fmt.Sprint(i)))
			mu.Lock() // progress and spec are told of each build as it finishes, one at a time
			done++
			f.in.progress("choose form", done, len(idx))
			if spec != nil && errs[k] == nil {
				// before the slot is free, so that a speculation this build overtakes never takes it
				spec.finished(builds[k], started == len(idx))
			}
			mu.Unlock()
			<-slots
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return builds, nil
}

// rankDominates reports whether the rank layout a costs fewer cycles than b wherever a fits,
// so that b need not be built while a fits: the same groups of trees (the same sums tables
// and lookups), and feature by feature either the same bucket code (shift, thresholds in a
// bucket) or fewer thresholds in a bucket, fewer somewhere. The rank form has no branch or
// loop, so its WCET is its one path; each threshold fewer removes a load, a compare and an
// add from it (a finer shift may lengthen its bucket's origin constant by one instruction
// at most). TestRankDominanceHolds builds the dominated layouts too and checks each costs
// more than its dominator.
func rankDominates(a, b *quantize.RankLayout) bool {
	if a == nil || b == nil || a == b || !slices.EqualFunc(a.Groups, b.Groups, slices.Equal) ||
		a.Scaled != b.Scaled || a.SumBits != b.SumBits || a.AccBits != b.AccBits || len(a.Features) != len(b.Features) {
		return false
	}
	fewer := false
	for k, fa := range a.Features {
		fb := b.Features[k]
		bucketed := len(fa.Words) > 1 && len(fb.Words) > 1
		switch {
		case fa.Feature != fb.Feature:
			return false
		case fa.Shift == fb.Shift && fa.Fixups == fb.Fixups && (len(fa.Words) > 1) == (len(fb.Words) > 1):
		case bucketed && fa.Fixups < fb.Fixups:
			fewer = true
		default:
			return false
		}
	}
	return fewer
}

// better reports whether a beats b: fitting the budget first, then the lower WCET, then the
// smaller firmware.
func better(a, b artifact.FormCandidate) bool {
	if a.Fits != b.Fits {
		return a.Fits
	}
	if a.WCETCycles != b.WCETCycles {
		return a.WCETCycles < b.WCETCycles
	}
	return a.TextBytes+a.RodataBytes < b.TextBytes+b.RodataBytes
}

// costCandidate prints cand as emit would, builds the firmware in dir as the build stage
// would (an object, then the ELF) and bounds it.
func (f *fitter) costCandidate(cand candidate, p *fwsim.Profile, dir string) (*formBuild, error) {
	fb := &formBuild{dir: dir, wcet: artifact.FormCandidate{Form: cand.form.String(), Detail: cand.detail}, bounds: map[string]*wcet.Report{}}
	fc := &fb.wcet
	plan, err := newCodePlan(f.in.model, cand)
	if err != nil {
		return nil, err
	}
	if fb.rendered, err = render(f.in.model.Policy, plan, fileNames); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	fb.files = fb.rendered.sources()
	for n, b := range nicsdk.Sources() {
		fb.files[n] = b
	}
	for n, b := range fb.files {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			return nil, err
		}
	}
	entry, file := entryOf(f.in.model.Handler)
	fb.obj, fb.elf = filepath.Join(dir, "firmware.o"), filepath.Join(dir, artifact.FirmwareFile)
	extra := append(withOpt(FirmwareWarnFlags, f.plan.Opt), "-I", dir)
	if _, err := buildFirmware(fb.obj, fb.elf, extra, dir, []string{filepath.Join(dir, file)}, fb.files, func() error { return nil }); err != nil {
		return nil, &budget.CheckError{Err: fmt.Errorf("building the %s form failed (an internal error; please report it): %w", fc.Form, err)}
	}
	im, err := fwsim.ReadELF(fb.elf)
	if err != nil {
		return nil, err
	}
	for _, e := range []struct {
		name string
		to   *uint64
	}{{entry, &fc.WCETCycles}, {artifact.EntryPolicy, &fc.PolicyWCET}} {
		w, err := wcet.Bound(im, e.name, p, wcet.Options{})
		if err != nil {
			return nil, &budget.CheckError{Err: fmt.Errorf("%s form: cannot bound %s: %w", fc.Form, e.name, err)}
		}
		*e.to = w.Cycles
		fb.bounds[e.name] = w
	}
	fc.TextBytes, fc.RodataBytes, err = textBytes(fb.elf)
	return fb, err
}

// builtAs reports whether the sources emit wrote into dir (files) are, byte for byte, those
// fb was built from.
func (fb *formBuild) builtAs(dir string, files []string) bool {
	for _, n := range files {
		want, ok := fb.files[n]
		got, err := os.ReadFile(filepath.Join(dir, n))
		if !ok || err != nil || !bytes.Equal(got, want) {
			return false
		}
	}
	return true
}
