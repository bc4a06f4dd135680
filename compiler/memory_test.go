package compiler

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/distill"
	"github.com/nicc-dev/nicc/golden"
	"github.com/nicc-dev/nicc/memlimit"
)

// The limits sit exactly where the messages say.
func TestMemoryLimitEdges(t *testing.T) {
	m, _, err := golden.LoadModel(diffTeacher, nil)
	if err != nil {
		t.Fatal(err)
	}
	per := memlimit.CalibRowBytes(m)
	most := int(memlimit.Limit / per)
	if per != 200 || memlimit.Check(most, per, "x", "state") != nil {
		t.Errorf("%d bytes a row; %d rows refused: %v", per, most, memlimit.Check(most, per, "x", "state"))
	}
	err = memlimit.Check(most+1, per, "calibrating", "state")
	if want := fmt.Sprintf("samples %d: calibrating needs about 4.0 GiB (200 bytes a state), over nicc's 4 GiB memory limit: at most %d states", most+1, most); err == nil || err.Error() != want {
		t.Errorf("one over: %v, want %q", err, want)
	}
	// A count so large its bytes overflow int64 is refused, not wrapped.
	if memlimit.Check(1<<62, per, "x", "state") == nil {
		t.Error("2^62 rows accepted")
	}
	o := distill.Options{Trees: 10, Depth: 4}
	n := int(memlimit.MaxDistillStates(4, o))
	if n != 29821875 || memlimit.CheckDistill("s", n, 4, o) != nil || memlimit.CheckDistill("s", n+1, 4, o) == nil {
		t.Errorf("at most %d states: %v; one more: %v", n, memlimit.CheckDistill("s", n, 4, o), memlimit.CheckDistill("s", n+1, 4, o))
	}
	if err := memlimit.CheckDistill("s", 1, 4, distill.Options{Trees: 10_000, Depth: 12}); err != nil {
		t.Errorf("10000 trees on 1 state (3 nodes each): %v", err)
	}
}

// Sampled states compared with a file are streamed, and give what the same rows read from a
// CSV give.
func TestDiffStreamsSampledRows(t *testing.T) {
	dir := t.TempDir()
	student := filepath.Join(dir, "student.json")
	if _, err := Distill(DistillOptions{Teacher: diffTeacher, Samples: 3000, HeldOut: 0.1, Seed: 1,
		Train: distill.Options{Trees: 3, Depth: 3, LearningRate: 1, L2: 1}}, student); err != nil {
		t.Fatal(err)
	}
	const n, seed = 5000, 9
	d, err := distill.DefaultRLCC.Sample(n, seed)
	if err != nil {
		t.Fatal(err)
	}
	var csv strings.Builder
	for _, row := range d.RowMajor() {
		for i, v := range row {
			if i > 0 {
				csv.WriteByte(',')
			}
			csv.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		}
		csv.WriteByte('\n')
	}
	rows := filepath.Join(dir, "rows.csv")
	if err := os.WriteFile(rows, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	streamed, err := Diff(DiffOptions{Teacher: diffTeacher, Against: student, Samples: n, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	read, err := Diff(DiffOptions{Teacher: diffTeacher, Against: student, Calib: rows})
	if err != nil {
		t.Fatal(err)
	}
	if streamed.Stats.Rows != n || !reflect.DeepEqual(streamed.Stats, read.Stats) || !reflect.DeepEqual(streamed.Notes, read.Notes) {
		t.Errorf("streamed %+v %q\nread     %+v %q", streamed.Stats, streamed.Notes, read.Stats, read.Notes)
	}
	// Δy is kept sorted by |Δy|: the same values either way.
	if !slices.Equal(streamed.dy, read.dy) {
		t.Error("Δy differs")
	}
	if want := fmt.Sprintf("%d RL-CC states sampled with T = 0.768 (seed %d)", n, seed); streamed.Calib != want {
		t.Errorf("calib %q, want %q", streamed.Calib, want)
	}
}

// thinMeasured leaves up to measureCap calls as they are; beyond, it keeps the longest and
// every other one of the rest, by cycles.
func TestThinMeasured(t *testing.T) {
	cand := make([]measured, measureCap)
	for i := range cand {
		cand[i] = measured{cycles: uint64(i * 7919 % 1000), v: budget.Vector{Line: i}}
	}
	if got := thinMeasured(slices.Clone(cand)); !reflect.DeepEqual(got, cand) {
		t.Error("measureCap calls changed")
	}
	cand = append(cand, measured{cycles: 5000, v: budget.Vector{Line: -1}})
	sorted := slices.Clone(cand)
	slices.SortStableFunc(sorted, byCycles)
	got := thinMeasured(cand)
	if len(got) != longestN+(len(sorted)-longestN+1)/2 || got[0].v.Line != -1 {
		t.Fatalf("%d calls kept, first %+v", len(got), got[0])
	}
	for i, m := range got {
		j := i
		if i >= longestN {
			j = longestN + 2*(i-longestN)
		}
		if !reflect.DeepEqual(m, sorted[j]) {
			t.Fatalf("kept %d is %+v, want %+v", i, m, sorted[j])
		}
	}
}

// BenchmarkDiffRows reports the most live heap nicc diff holds per compared row (its Δy, 8
// bytes, for a streamed comparison): the figure does not grow with the rows.
func BenchmarkDiffRows(b *testing.B) {
	student := filepath.Join(b.TempDir(), "student.json")
	if _, err := Distill(DistillOptions{Teacher: diffTeacher, Samples: 3000, HeldOut: 0.1, Seed: 1,
		Train: distill.Options{Trees: 3, Depth: 3, LearningRate: 1, L2: 1}}, student); err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{100_000, 1_000_000} {
		for _, against := range []string{student, AgainstInt8} {
			name := "file"
			if against == AgainstInt8 {
				name = "int8"
			}
			b.Run(fmt.Sprintf("%s/rows=%d", name, n), func(b *testing.B) {
				var peak uint64
				for b.Loop() {
					runtime.GC()
					base := liveHeap()
					stop := watchLiveHeap(&peak)
					if _, err := Diff(DiffOptions{Teacher: diffTeacher, Against: against, Samples: n, Seed: 1}); err != nil {
						b.Fatal(err)
					}
					stop()
					peak -= min(peak, base)
				}
				b.ReportMetric(float64(peak)/float64(n), "live-B/row")
			})
		}
	}
}

var liveSample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}

// liveHeap is the heap the last collection found live.
func liveHeap() uint64 {
	metrics.Read(liveSample)
	return liveSample[0].Value.Uint64()
}

// watchLiveHeap records the largest live heap into peak until stop is called.
func watchLiveHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	*peak = 0
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			*peak = max(*peak, liveHeap())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		*peak = max(*peak, liveHeap())
	}
}
