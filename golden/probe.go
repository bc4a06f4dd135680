package golden

import (
	"fmt"
	"strings"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/rlcc"
	"github.com/nicc-dev/nicc/termtext"
)

// probeSteps is how many decisions a stateful policy runs each probe row for, from its zero
// state: a short constant sequence, so its state reflects the situation.
const probeSteps = 8

// ProbeResult is the sanity probe of one policy: the rows where it moves the rate the wrong
// way.
type ProbeResult struct {
	Rows int        // probe rows run
	Bad  []ProbeBad // the rows it fails, in order
}

// ProbeBad is a probe row the policy fails and the multiplier it gave there.
type ProbeBad struct {
	rlcc.ProbeRow
	Multiplier float64
}

// probe runs rlcc.ProbeRows under p through the float model m (its inputs in the policy's
// order: their names are layout l's slots) and the handler's action map.
func probe(m *model.Model, p Params, l nicsdk.Layout) ProbeResult {
	rows := rlcc.ProbeRows(p, l)
	res := ProbeResult{Rows: len(rows)}
	for _, r := range rows {
		st := m.NewState()
		var y float64
		for range probeSteps {
			y = m.Eval(st, r.X)[0]
		}
		if mult := rlcc.HandlerMultiplier(y); !r.Passes(mult) {
			res.Bad = append(res.Bad, ProbeBad{r, mult})
		}
	}
	return res
}

// warning is the probe's one line when m fails it, naming the first row failed ("" when it
// passes).
func (r ProbeResult) warning(m *model.Model) string {
	if len(r.Bad) == 0 {
		return ""
	}
	b, want, does := r.Bad[0], "cuts", "holds"
	if !b.Cut {
		want = "raises"
	}
	switch {
	case b.Multiplier > 1+rlcc.HoldBand:
		does = "raises"
	case b.Multiplier < 1-rlcc.HoldBand:
		does = "cuts"
	}
	var x []string
	for i, name := range m.Inputs {
		x = append(x, name+" "+termtext.Num3(b.X[i]))
	}
	return fmt.Sprintf("sanity probe: model %q %s the rate where %s (x = %s gives multiplier %.4f), where a policy that controls congestion %s it; %d of %d probe rows disagree: are its inputs in the order the handler feeds them, %s (for a network trained oldest first, --inputs authors)?",
		m.Name, does, b.What, strings.Join(x, ", "), b.Multiplier, want, len(r.Bad), r.Rows, strings.Join(m.Inputs, ", "))
}

// probeWarnings are the sanity probe's warnings for the float model m under the RL-CC handler
// with parameters p: none or one.
func ProbeWarnings(m *model.Model, p Params) []string {
	// m is in the policy's order: its names are its layout's slots, in order.
	l, perm, err := rlcc.ParseLayout(m.Inputs)
	if m.NumOutputs() != 1 || err != nil || !artifact.IsIdentity(perm) {
		return nil
	}
	if w := probe(m, p, l).warning(m); w != "" {
		return []string{w}
	}
	return nil
}
