package memlimit

import (
	"fmt"
	"testing"

	"github.com/nicc-dev/nicc/distill"
	"github.com/nicc-dev/nicc/model/formats"
)

// The limits sit exactly where the messages say.
func TestMemoryLimitEdges(t *testing.T) {
	m, _, err := formats.Load("../testdata/models/rlcc_teacher.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	per := CalibRowBytes(m)
	most := int(Limit / per)
	if per != 200 || Check(most, per, "x", "state") != nil {
		t.Errorf("%d bytes a row; %d rows refused: %v", per, most, Check(most, per, "x", "state"))
	}
	err = Check(most+1, per, "calibrating", "state")
	if want := fmt.Sprintf("samples %d: calibrating needs about 4.0 GiB (200 bytes a state), over nicc's 4 GiB memory limit: at most %d states", most+1, most); err == nil || err.Error() != want {
		t.Errorf("one over: %v, want %q", err, want)
	}
	// A count so large its bytes overflow int64 is refused, not wrapped.
	if Check(1<<62, per, "x", "state") == nil {
		t.Error("2^62 rows accepted")
	}
	o := distill.Options{Trees: 10, Depth: 4}
	n := int(MaxDistillStates(4, o))
	if n != 29821875 || CheckDistill("s", n, 4, o) != nil || CheckDistill("s", n+1, 4, o) == nil {
		t.Errorf("at most %d states: %v; one more: %v", n, CheckDistill("s", n, 4, o), CheckDistill("s", n+1, 4, o))
	}
	if err := CheckDistill("s", 1, 4, distill.Options{Trees: 10_000, Depth: 12}); err != nil {
		t.Errorf("10000 trees on 1 state (3 nodes each): %v", err)
	}
}
