package artifact

// The compile report's text summary (nicc compile without --json).

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nicc-dev/nicc/budget"
	"github.com/nicc-dev/nicc/termtext"
)

// DurationUs is budgetUs of a time.Duration.
func DurationUs(d time.Duration) string {
	return budget.MicrosAsWritten(float64(d.Nanoseconds()) / 1e3)
}

func fmtErr(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }

func (e ErrStats) String() string {
	return "max |err| " + fmtErr(e.MaxAbs) + ", RMSE " + fmtErr(e.RMSE)
}

// WriteText prints the report's short human summary.
func (r *CompileReport) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	switch {
	case r.LSTM != nil:
		termtext.Printf(tw, "model\t%s (%s, %s), LSTM network, model IR sha256 %.12s\n", r.Model.Name, r.Model.Format, r.Model.File, r.Model.Hash)
	case r.Int8 != nil:
		termtext.Printf(tw, "model\t%s (%s, %s), dense network, model IR sha256 %.12s\n", r.Model.Name, r.Model.Format, r.Model.File, r.Model.Hash)
	default:
		termtext.Printf(tw, "model\t%s (%s, %s), %d trees, model IR sha256 %.12s\n", r.Model.Name, r.Model.Format, r.Model.File, r.Model.Trees, r.Model.Hash)
	}
	if r.Handler == HandlerRLCC.String() {
		if r.LSTM != nil {
			termtext.Printf(tw, "handler\trlcc: %s(event, flow context) around %s(x, state)\n", EntryHandler, EntryPolicy)
		} else {
			termtext.Printf(tw, "handler\trlcc: %s(event, flow context) around %s(x)\n", EntryHandler, EntryPolicy)
		}
	} else {
		if l := r.LSTM; l != nil {
			termtext.Printf(tw, "handler\tnone: %s(x, state), x = %d raw int32 inputs, state = the flow's %d words, zeroed for a new flow\n", EntryPolicy, len(r.Inputs), l.StateWords)
		} else {
			termtext.Printf(tw, "handler\tnone: %s(x), x = %d raw int32 inputs\n", EntryPolicy, len(r.Inputs))
		}
	}
	r.writeRLCC(tw)
	for _, n := range r.Notes {
		termtext.Printf(tw, "note\t%s\n", n)
	}
	var ins []string
	for _, in := range r.Inputs {
		ins = append(ins, fmt.Sprintf("%s Q%d", in.Name, in.Frac))
	}
	termtext.Printf(tw, "inputs\t%s\n", shorten(strings.Join(ins, ", "), 100))
	q := r.Quant
	if l := r.LSTM; l != nil {
		fold := ""
		if l.Folded {
			fold = "; the output table holds the rate multiplier (action map folded in)"
		}
		termtext.Printf(tw, "quantized\tint LSTM: %d-bit packed lanes, x_t grid [0, %d], table gates, h and c int8 (%d bytes, %s)%s; calibration %s\n",
			l.LaneBits, l.PreMax, l.StateBytes, l.StateLayout, fold, l.Calibration)
		termtext.Printf(tw, "\tvs float teacher over %d calibration rows (sequences of %d from the zero state): max |dy| %s (%s/128), direction flips %s%%\n",
			l.CalibRows, l.SeqLen, fmtErr(l.MaxAbsDy), strconv.FormatFloat(l.MaxAbsDy*128, 'f', 2, 64), strconv.FormatFloat(100*l.FlipRate, 'f', 3, 64))
	} else if i := r.Int8; i != nil {
		termtext.Printf(tw, "quantized\tint MLP %s: weights int%d, hidden activations int%d, tanh grid int%d, output Q%d; calibration %s\n",
			MLPWidths(i.WeightBits, i.ActBits, i.ChannelScales, i.Packed, i.UnitOutput), i.WeightBits, i.ActBits, i.TanhBits, i.OutFrac, i.Calibration)
		termtext.Printf(tw, "\tvs float teacher on %d calibration rows: max |dy| %s (%s/128), direction flips %s%%\n",
			i.CalibRows, fmtErr(i.MaxAbsDy), strconv.FormatFloat(i.MaxAbsDy*128, 'f', 2, 64), strconv.FormatFloat(100*i.FlipRate, 'f', 3, 64))
		if len(i.Trials) > 0 {
			var tries []string
			for _, t := range i.Trials {
				s := t.widths() + " "
				switch {
				case t.Refused != "":
					s += "refused"
				default:
					s += fmt.Sprintf("max |dy| %s, flips %s%%", fmtErr(t.MaxAbsDy), strconv.FormatFloat(100*t.FlipRate, 'f', 3, 64))
					if t.MeetsTargets {
						s += " (meets the targets)"
					}
				}
				tries = append(tries, s)
			}
			termtext.Printf(tw, "\tchosen by measured error, cheapest first: %s\n", strings.Join(tries, "; "))
		}
	} else {
		termtext.Printf(tw, "quantized\t%d splits (%d folded), %d leaves, int%d accumulator Q%d, output Q%d rounded once\n",
			q.Splits, q.Folded, q.Leaves, q.AccBits, q.AccFrac, q.OutFrac)
	}
	v := r.Verify
	what := fmt.Sprintf("%d vectors", v.Vectors)
	if v.Events > 0 {
		what = fmt.Sprintf("%d vectors (%d policy calls, %d events in %d sequences)", v.Vectors, v.Vectors-v.Events, v.Events, v.Sequences)
	}
	switch {
	case v.Vectors == 0: // the build failed
	case v.Mismatches > 0:
		termtext.Printf(tw, "verified\t%s: golden, host C and fwsim DIFFER on %d; UBSan %s\n", what, v.Mismatches, v.UBSan)
	case v.UBSan != "clean":
		termtext.Printf(tw, "verified\t%s: UBSan %s\n", what, v.UBSan)
	default:
		termtext.Printf(tw, "verified\t%s: golden == host C == fwsim, %d mismatches; UBSan %s\n", what, v.Mismatches, v.UBSan)
	}
	states := "sampled states"
	if n := r.Verify.Kinds[VecRow.String()]; n > 0 {
		states = fmt.Sprintf("states (%d of them sample rows)", n)
	}
	leaves := "leaves"
	if r.Int8 != nil {
		leaves = "integer network"
	}
	r.Teacher.writeText(tw)
	if f := r.Fidelity; f != nil {
		termtext.Printf(tw, "fidelity\t%s%s over %d %s: %s (inputs: %s; %s: %s)\n",
			r.Teacher.vsTrees(), shortWhat(f.What), f.Vectors, states, f.Total, f.Inputs.short(), leaves, f.Leaves.short())
	}
	if h := r.HandlerFidelity; h != nil && r.LSTM != nil {
		termtext.Printf(tw, "fidelity\tover %d RL-CC decisions along the event sequences of new flows (the float LSTM with its own state on the same inputs): %s\n", h.Vectors, h.Total)
	} else if h != nil {
		termtext.Printf(tw, "\tover %d RL-CC decisions: %s (inputs: %s; %s: %s)\n", h.Vectors, h.Total, h.Inputs.short(), leaves, h.Leaves.short())
	}
	if t := r.Tool; t != nil {
		skipped := ""
		if t.SkippedMissing > 0 {
			skipped = fmt.Sprintf(" (%d with missing values left out)", t.SkippedMissing)
		}
		termtext.Printf(tw, "vs tool\t%d rows of %s%s: firmware %s (nicc's float import: %s)\n",
			t.Rows, filepath.Base(t.File), skipped, t.Firmware, t.Float.short())
	}
	if r.Budget != nil {
		r.writeBudget(tw)
	}
	r.writeProve(tw)
	if r.Firmware != "" {
		termtext.Printf(tw, "size\t%d bytes of code (.text), %d of .rodata; flow state %d of %d bytes\n", r.CodeBytes, r.RodataBytes, r.StateBytes, r.StateLimit)
		termtext.Printf(tw, "built\t%s\n", r.Build)
		r.Build.writeCandidates(tw)
	}
	var times []string
	var total float64
	for _, t := range r.Times {
		times = append(times, t.Stage+" "+secondsText(t.Seconds))
		total += t.Seconds
	}
	termtext.Printf(tw, "times\t%s; total %s\n", strings.Join(times, ", "), secondsText(total))
	wrote := slices.Clone(r.Files)
	for _, v := range r.VectorFiles {
		wrote = append(wrote, v.File)
	}
	if r.Firmware != "" {
		wrote = append(wrote, r.Firmware)
	}
	wrote = append(wrote, ReportFile)
	termtext.Printf(tw, "wrote\t%s: %s\n", r.Out, strings.Join(wrote, ", "))
	if len(r.Host) > 0 {
		var host []string
		for _, h := range r.Host {
			host = append(host, strings.TrimPrefix(h, HostDir+"/"))
		}
		what := "the verification driver"
		if len(host) > 1 {
			what += " and its strict and UBSan host builds"
		}
		termtext.Printf(tw, "\t%s/: %s (%s)\n", filepath.Join(r.Out, HostDir), strings.Join(host, ", "), what)
	}
	if f := r.Failure; f != nil {
		termtext.Printf(tw, "FAILED\t%s (%s): %s\n", f.Stage, f.Kind, f.Message)
	}
	return tw.Flush()
}

// writeProve prints what --require proved, a line a property.
func (r *CompileReport) writeProve(tw io.Writer) {
	if r.Prove == nil {
		return
	}
	for _, res := range r.Prove.Results {
		termtext.Printf(tw, "prove\t%s: %s (%s)\n", res.Property, res.Verdict, res.Method)
	}
}

// writeBudget prints the WCET and budget lines, and the DOCA target's.
func (r *CompileReport) writeBudget(tw io.Writer) {
	b := r.Budget
	clock := hzText(b.Core.ClockHz)
	if slices.Contains(b.Core.Assumed, "clock_hz") {
		clock += ", assumed"
	}
	if n := b.Core.ThreadsSharing; n > 1 {
		clock += fmt.Sprintf(", %d threads sharing the pipeline", n)
	}
	var measured uint64
	if b.Measured != nil {
		measured = b.Measured.MaxCycles
	}
	termtext.Printf(tw, "WCET\t%s %d cycles = %s µs on %s (%s); measured max %d over the verify vectors\n",
		b.Entry, b.WCETCycles, budget.Micros(b.WCETMicros), b.Core.Name, clock, max(measured, r.Verify.MaxCycles))
	if p := r.PolicyAlone; p != nil {
		termtext.Printf(tw, "\t%s alone %d cycles = %s µs; measured max %d\n", EntryPolicy, p.WCETCycles, budget.Micros(p.WCETMicros), p.MaxCycles)
	}
	if lb := r.LowerBound; lb != nil {
		termtext.Printf(tw, "\tany code form's lower bound %d cycles (%s)\n", lb.Cycles, lb.CyclesFrom)
	}
	termtext.Printf(tw, "budget\t%s µs: headroom %s µs (%s%%), %s; %s\n", budget.MicrosAsWritten(b.BudgetMicros), budget.Micros(b.HeadroomMicro),
		strconv.FormatFloat(b.HeadroomPct, 'f', 1, 64), b.Verdict, b.LoadText())
	if r.DOCA != nil {
		r.DOCA.writeText(tw)
	}
}

// secondsText is a duration for the times line: milliseconds below a second.
func secondsText(s float64) string {
	if s < 0.01 {
		return strconv.FormatFloat(s*1000, 'f', 1, 64) + " ms"
	}
	if s < 1 {
		return strconv.FormatFloat(s*1000, 'f', 0, 64) + " ms"
	}
	return strconv.FormatFloat(s, 'f', 2, 64) + " s"
}

func (e ErrStats) short() string { return "max " + fmtErr(e.MaxAbs) }

func shortWhat(s string) string {
	if i := strings.IndexByte(s, '('); i > 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + " ..."
}

func hzText(v float64) string {
	if v >= 1e9 {
		return strconv.FormatFloat(v/1e9, 'g', 4, 64) + " GHz"
	}
	return strconv.FormatFloat(v/1e6, 'g', 4, 64) + " MHz"
}

// writeRLCC prints the RL-CC parameters and, when load reordered the model, its layout.
func (r *CompileReport) writeRLCC(tw io.Writer) {
	if r.Params != nil {
		termtext.Printf(tw, "rl-cc\t%s\n", r.Params)
	}
	if l := r.Layout; l != nil && !l.ByPosition && !IsIdentity(l.Permutation) {
		termtext.Printf(tw, "layout\t%s\n", l)
	}
}

// writeText prints the trees' fidelity against the network they were distilled from (none
// for a compile of a model as it is).
func (t *DistilledFrom) writeText(tw io.Writer) {
	if t == nil {
		return
	}
	termtext.Printf(tw, "vs network\tthe trees against the network teacher %s (%s), on the distillation's states from the %s:\n", t.Teacher, t.TeacherKind, t.States)
	termtext.Printf(tw, "\theld-out %d states: max |err| %s, RMSE %s, direction disagreement %.3f%%; train %d states: max |err| %s, RMSE %s\n",
		t.HeldOut.Rows, termtext.Num3(t.HeldOut.MaxAbs), termtext.Num3(t.HeldOut.RMSE), 100*t.HeldOut.Disagree, t.Train.Rows, termtext.Num3(t.Train.MaxAbs), termtext.Num3(t.Train.RMSE))
}

// vsTrees labels the firmware's fidelity when the model it was measured against is the
// trees distilled from t.
func (t *DistilledFrom) vsTrees() string {
	if t == nil {
		return ""
	}
	return "vs the trees: "
}

// SourceShort is a limit's source for the summary: the flag, or the profile and whether its
// number is an assumption (report.json has the whole source).
func SourceShort(src string) string {
	name, what, ok := strings.Cut(src, ": ")
	if !ok {
		return src
	}
	if strings.HasPrefix(what, "assumption") {
		return name + ", assumed"
	}
	return name
}
