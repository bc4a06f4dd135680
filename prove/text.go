package prove

import (
	"fmt"
	"io"
	"strings"

	"github.com/nicc-dev/nicc/termtext"
)

// WriteText prints the report: a line a property with its verdict, then how it was decided,
// what it assumes and, when refuted, the counterexample as nicc eval DIR --input rows.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	termtext.Printf(&b, "policy   %s under %s\n", r.Policy, r.Params)
	termtext.Printf(&b, "domain   %s\n", r.Domain)
	for _, res := range r.Results {
		share := ""
		switch {
		case res.Verdict == Unknown && res.Domain > 0:
			share = fmt.Sprintf(": %s of the region's %.3g states proven", pct(res.ProvenShare), res.Domain)
		case res.Verdict == Refuted && res.Exact:
			share = fmt.Sprintf(": it holds on %s of the region's %.3g states", pct(res.ProvenShare), res.Domain)
		}
		termtext.Printf(&b, "\n%s  %s%s (%s s)\n", res.Property, strings.ToUpper(string(res.Verdict)), share, termtext.Num3(res.Seconds))
		termtext.Printf(&b, "  how: %s\n", res.Method)
		if res.Assumes != "" && res.Assumes != boxAssumes {
			termtext.Printf(&b, "  assumes: %s\n", res.Assumes)
		}
		if ce := res.Counterexample; ce != nil {
			termtext.Printf(&b, "  counterexample: %s\n", ce.Why)
			switch {
			case ce.Sequence:
				termtext.Printf(&b, "    (the rows are one flow's consecutive decisions from a new flow's memory; it breaks at the last)\n")
			case ce.Separate:
				termtext.Printf(&b, "    (each row is a decision of its own from a new flow's memory)\n")
			}
			if ce.Context != nil {
				termtext.Printf(&b, "    context %v, event %+v: new rate %d\n", *ce.Context, *ce.Event, ce.NewRate)
			}
			for k, row := range ce.Rows {
				if n := len(ce.Rows); n > 6 && k >= 2 && k < n-3 {
					if k == 2 {
						termtext.Printf(&b, "    ... (%d rows in all: --out writes them)\n", n)
					}
					continue
				}
				fw := "not run"
				if k < len(ce.Firmware) {
					fw = termtext.Num(float64(ce.Firmware[k]) / 65536)
				}
				termtext.Printf(&b, "    %s = %s: multiplier %s (golden), %s (firmware in fwsim)\n", strings.Join(ce.Names, ","), joinFloats(row), termtext.Num(float64(ce.Golden[k])/65536), fw)
			}
		}
	}
	termtext.Printf(&b, "\nassumes  %s\n", boxAssumes)
	_, err := io.WriteString(w, b.String())
	return err
}

func joinFloats(row []float64) string {
	s := make([]string, len(row))
	for i, v := range row {
		s[i] = termtext.Num(v)
	}
	return strings.Join(s, ",")
}

func pct(f float64) string { return fmt.Sprintf("%.4g%%", 100*f) }
