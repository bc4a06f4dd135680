// Package prove decides behavioural properties of a compiled RL-CC policy over the handler's
// whole input domain, on the integer semantics the firmware runs (the golden model verify
// holds it to): exactly for tree ensembles, by enumerating the cells of their partition; by
// interval propagation with branch and bound for integer MLPs; by search for counterexamples
// where no proof method applies. A property is proven, refuted with a concrete input that the
// firmware is run on before it is reported, or left unknown with the share of the domain
// proven.
package prove

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/quantize"
	"github.com/nicc-dev/nicc/target/abi"
)

// Kind is a property.
type Kind string

const (
	// CutsWhenCongested: for every state whose o is at least K·T (T = target·scale, o's
	// value at twice the target), the multiplier is at most 1.
	CutsWhenCongested Kind = "cuts-when-congested"
	// RaisesWhenIdle: for every state whose o is at most −K·T (o's floor, −T, is an RTT
	// inflation at or below beta), the multiplier is at least 1: the policy never cuts there.
	RaisesWhenIdle Kind = "raises-when-idle"
	// MonotoneInO: with the other inputs fixed, the multiplier never increases as o does.
	MonotoneInO Kind = "monotone-in-o"
	// BoundedStep: the multiplier stays within [Lo, Hi].
	BoundedStep Kind = "bounded-step"
	// RateInRange: the handler's new rate stays within [min rate, line rate] for every
	// context, corrupted ones included, and every event.
	RateInRange Kind = "rate-in-range"
)

// Kinds are the properties, in the order a report lists them.
var Kinds = []Kind{CutsWhenCongested, RaisesWhenIdle, MonotoneInO, BoundedStep, RateInRange}

// Defaults of the properties' arguments: o ≥ 1·T is a congestion signal of twice the target;
// o ≤ −1·T is o's floor; the multiplier's bounds are the action map's, [1/1.2, 1.2].
const (
	DefaultCongestedK = 1.0
	DefaultIdleK      = 1.0
)

// bounded-step's default bounds: the action map's, AMin and AMax.
const (
	defaultStepLo = float64(nicsdk.AMin) / nicsdk.Q16One
	defaultStepHi = float64(nicsdk.AMax) / nicsdk.Q16One
)

// Property is a property with its arguments.
type Property struct {
	Kind Kind
	K    float64 // CutsWhenCongested, RaisesWhenIdle: the o threshold in units of T
	// Lo and Hi bound BoundedStep's multiplier, real numbers.
	Lo, Hi float64
}

func (p Property) String() string {
	switch p.Kind {
	case CutsWhenCongested, RaisesWhenIdle:
		return fmt.Sprintf("%s:%s", p.Kind, strconv.FormatFloat(p.K, 'g', -1, 64))
	case BoundedStep:
		if p.Lo == defaultStepLo && p.Hi == defaultStepHi {
			return string(p.Kind)
		}
		return fmt.Sprintf("%s:%s..%s", p.Kind, strconv.FormatFloat(p.Lo, 'g', -1, 64), strconv.FormatFloat(p.Hi, 'g', -1, 64))
	}
	return string(p.Kind)
}

// ParseProperty reads NAME[:ARGS]: cuts-when-congested[:k], raises-when-idle[:k] (k in
// (0, 1]), monotone-in-o, bounded-step[:lo..hi], rate-in-range.
func ParseProperty(s string) (Property, error) {
	name, args, hasArgs := strings.Cut(strings.TrimSpace(s), ":")
	p := Property{Kind: Kind(name)}
	bad := func(want string) (Property, error) {
		return Property{}, fmt.Errorf("property %q: %s", s, want)
	}
	switch p.Kind {
	case CutsWhenCongested, RaisesWhenIdle:
		p.K = DefaultCongestedK
		if p.Kind == RaisesWhenIdle {
			p.K = DefaultIdleK
		}
		if hasArgs {
			k, err := strconv.ParseFloat(args, 64)
			if err != nil || !(k > 0) || k > 127 || p.Kind == RaisesWhenIdle && k > 1 {
				if p.Kind == RaisesWhenIdle {
					return bad("want k in (0, 1]: o ≤ −k·T, and o is never below −T")
				}
				return bad("want k in (0, 127]: o ≥ k·T (T = target·scale)")
			}
			p.K = k
		}
	case BoundedStep:
		p.Lo, p.Hi = defaultStepLo, defaultStepHi
		if hasArgs {
			lo, hi, ok := strings.Cut(args, "..")
			l, err1 := strconv.ParseFloat(lo, 64)
			h, err2 := strconv.ParseFloat(hi, 64)
			if !ok || err1 != nil || err2 != nil || !(l >= 0) || !(h >= l) || h > 2 {
				return bad("want bounded-step:LO..HI, multipliers with 0 ≤ LO ≤ HI ≤ 2")
			}
			p.Lo, p.Hi = l, h
		}
	case MonotoneInO, RateInRange:
		if hasArgs {
			return bad("takes no arguments")
		}
	default:
		var names []string
		for _, k := range Kinds {
			names = append(names, string(k))
		}
		return bad("want one of " + strings.Join(names, ", "))
	}
	return p, nil
}

// Input is what a proof reads: the compile's golden model and parameters, and its firmware.
type Input struct {
	Policy quantize.Policy
	Params nicsdk.Params
	Layout nicsdk.Layout
	// Names are the policy's inputs, in order, as nicc eval DIR --input reads them.
	Names []string
	// Firmware runs the compile's nicc_policy in fwsim (a counterexample is run on it before
	// it is reported); Handler its nicc_on_event. Either may be nil: not run.
	Firmware func(x []int32, state []uint32) (int32, error)
	Handler  func(ev nicsdk.Event, ctx *nicsdk.FlowCtx) (uint32, error)
	// Budget bounds each property's branch and bound or search (0: DefaultBudget).
	Budget time.Duration
}

// LoadFirmware loads the compile's firmware ELF at path in fwsim, on core, as in's Firmware
// (its nicc_policy) and Handler (its nicc_on_event).
func (in *Input) LoadFirmware(path, core string) error {
	fw, err := abi.Load(path, core, abi.Shape{Inputs: len(in.Policy.InputFormats()), StateWords: in.Policy.StateWords(), Handler: true})
	if err != nil {
		return err
	}
	in.Firmware = func(x []int32, state []uint32) (int32, error) {
		v, _, err := fw.Policy(x, state)
		return v, err
	}
	in.Handler = func(ev nicsdk.Event, ctx *nicsdk.FlowCtx) (uint32, error) {
		rate, _, err := fw.Decide(ev, ctx)
		return rate, err
	}
	return nil
}

// DefaultBudget is how long a property may search when it cannot be decided exactly.
const DefaultBudget = 60 * time.Second

// Verdict is what a proof concluded.
type Verdict string

const (
	Proven  Verdict = "proven"
	Refuted Verdict = "refuted"
	Unknown Verdict = "unknown"
)

// Result is one property's outcome.
type Result struct {
	Property string  `json:"property"`
	Verdict  Verdict `json:"verdict"`
	// Method says how it was decided; Assumes what the proof takes as given.
	Method  string `json:"method"`
	Assumes string `json:"assumes"`
	// Domain is how many states the property ranges over (input grid points), and
	// ProvenShare the share of them proven to hold it: 1 when proven; when unknown, the
	// boxes branch and bound closed; when refuted, exact for a tree ensemble (Exact), 0
	// otherwise (a counterexample ends the search).
	Domain      float64 `json:"domain_states"`
	ProvenShare float64 `json:"proven_share"`
	Exact       bool    `json:"exact"`
	// Counterexample, when refuted: the states that break it.
	Counterexample *Counterexample `json:"counterexample,omitempty"`
	Seconds        float64         `json:"seconds"`
}

// Counterexample is one or two states (two for monotone-in-o: o and the next o), each
// evaluated by the golden model and by the firmware in fwsim.
type Counterexample struct {
	// Rows are the policy's inputs as real numbers, exactly (raw / 2^frac), in Names' order:
	// each a row of nicc eval DIR --input.
	Names []string    `json:"names"`
	Rows  [][]float64 `json:"rows"`
	Raw   [][]int32   `json:"raw"`
	// Sequence says the rows are one flow's consecutive decisions from a new flow's memory
	// (a recurrent policy), the property broken at the last; Separate that each row is a
	// decision of its own from a new flow's memory (a recurrent policy's monotone-in-o: run
	// each as its own file). Neither: rows of a stateless policy.
	Sequence bool `json:"sequence,omitempty"`
	Separate bool `json:"separate,omitempty"`
	// Golden and Firmware are each row's multiplier in Q16 (the handler's m).
	Golden   []uint32 `json:"golden_m_q16"`
	Firmware []uint32 `json:"firmware_m_q16,omitempty"`
	// Rate, for rate-in-range: the context and event that broke it, and the new rate.
	Context *nicsdk.FlowCtx `json:"context,omitempty"`
	Event   *nicsdk.Event   `json:"event,omitempty"`
	NewRate uint32          `json:"new_rate_fxp20,omitempty"`
	Why     string          `json:"why"`
}

// CSVs are the counterexample's rows as files nicc eval DIR --input reads: one, or one a row
// when they are Separate.
func (c *Counterexample) CSVs() []string {
	if !c.Separate {
		return []string{c.csv(c.Rows)}
	}
	var files []string
	for _, r := range c.Rows {
		files = append(files, c.csv([][]float64{r}))
	}
	return files
}

func (c *Counterexample) csv(rows [][]float64) string {
	var b strings.Builder
	b.WriteString(strings.Join(c.Names, ",") + "\n")
	for _, r := range rows {
		for i, v := range r {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Report is a proof of one compile's properties.
type Report struct {
	Policy string `json:"policy"` // the golden model ("TreeIR.Eval", ...)
	Params string `json:"params"`
	// Domain is what every property ranges over; a result's Assumes adds to it.
	Domain  string   `json:"domain"`
	Results []Result `json:"results"`
}

// Holds says whether every property was proven.
func (r *Report) Holds() bool {
	for _, res := range r.Results {
		if res.Verdict != Proven {
			return false
		}
	}
	return true
}

// NotProvenError is a property a gate required that r did not prove.
type NotProvenError struct{ Result Result }

func (e *NotProvenError) Error() string {
	return fmt.Sprintf("%s is %s: %s", e.Result.Property, e.Result.Verdict, e.Result.Method)
}

// Gate is the first property r did not prove, as a *NotProvenError; nil when all are proven.
func (r *Report) Gate() error {
	for _, res := range r.Results {
		if res.Verdict != Proven {
			return &NotProvenError{Result: res}
		}
	}
	return nil
}

// Run decides each property on in.
func Run(in Input, props []Property) (*Report, error) {
	if in.Policy == nil {
		return nil, fmt.Errorf("prove: no policy")
	}
	if len(in.Names) != len(in.Policy.InputFormats()) {
		return nil, fmt.Errorf("prove: %d input names for %d inputs", len(in.Names), len(in.Policy.InputFormats()))
	}
	d, err := newDomain(in)
	if err != nil {
		return nil, err
	}
	rep := &Report{Policy: in.Policy.Golden(), Params: paramsText(in.Params), Domain: d.text()}
	for _, p := range props {
		start := time.Now()
		res, err := d.decide(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		res.Property = p.String()
		res.Seconds = math.Round(time.Since(start).Seconds()*1000) / 1000
		rep.Results = append(rep.Results, *res)
	}
	return rep, nil
}

func paramsText(p nicsdk.Params) string {
	q := func(v uint32) string { return strconv.FormatFloat(float64(v)/nicsdk.Q16One, 'g', 6, 64) }
	return fmt.Sprintf("target %s, beta %s, scale %s, min rate %s of line rate", q(p.Target), q(p.Beta), q(p.Scale),
		strconv.FormatFloat(float64(p.MinRate)/nicsdk.LineRate, 'g', 6, 64))
}
