package rlcc

import (
	"fmt"
	"math"

	"github.com/nicc-dev/nicc/nicsdk"
)

// Params are the RL-CC handler's parameters in real numbers, rates as fractions of line
// rate. The handler computes with their fixed-point form (Fixed, nicsdk.Params).
type Params struct {
	Target   float64 // target queueing: inflation over Beta, 0 to 16
	Beta     float64 // the RTT inflation taken as no queue, 0 to 256
	Scale    float64 // the observation's scale, above 0 up to 256
	MinRate  float64 // the lowest rate, above 0
	InitRate float64 // a new flow's rate, from MinRate to 1
	BaseRTT  float64 // the path's RTT in an empty system in µs; 0 learns it per flow
}

// Defaults are the paper's parameters (nicsdk's defaults): target 0.064 and beta 1.5 (the NIC
// paper), scale 12 (the published network's), a minimum rate of 1/1000 of line rate, and new
// flows at line rate.
func Defaults() Params {
	return Params{Target: nicsdk.DefaultTarget, Beta: nicsdk.DefaultBeta, Scale: nicsdk.DefaultScale,
		MinRate: nicsdk.DefaultMinRate, InitRate: nicsdk.DefaultInitRate}
}

// ParamField is one parameter as the CLI sets it: its flag, its default, what it means.
type ParamField struct {
	Flag    string
	Key     string // its name in a policy file's parameters (model.RLCCKeys) and in report.json's sources
	Default float64
	Usage   string
	field   func(*Params) *float64
}

// ParamFields are the parameters, in Params' order.
var ParamFields = []ParamField{
	{"rlcc-target", "target", nicsdk.DefaultTarget, "RL-CC target queueing (inflation over beta), 0 to 16", func(p *Params) *float64 { return &p.Target }},
	{"rlcc-beta", "beta", nicsdk.DefaultBeta, "RL-CC RTT inflation taken as no queue, 0 to 256", func(p *Params) *float64 { return &p.Beta }},
	{"rlcc-scale", "scale", nicsdk.DefaultScale, "RL-CC observation scale, above 0 up to 256 (the sampler's o spans [-T, 100T], T = target·scale). nicc's default is 12, the scale of the published trained network nicc's distillation and tests are built on (o on [-0.768, 76.8]); the authors' public config (NVlabs/RLCC config/rlcc.yaml) trains with 12.5, so a network trained with it wants --rlcc-scale 12.5 unless its file carries the scale", func(p *Params) *float64 { return &p.Scale }},
	{"rlcc-min-rate", "min_rate", nicsdk.DefaultMinRate, "RL-CC lowest rate, a fraction of line rate above 0", func(p *Params) *float64 { return &p.MinRate }},
	{"rlcc-init-rate", "init_rate", nicsdk.DefaultInitRate, "RL-CC rate of a new flow, a fraction of line rate from the min rate to 1", func(p *Params) *float64 { return &p.InitRate }},
	{"rlcc-base-rtt", "base_rtt_us", 0, "RL-CC base RTT in µs, the path's RTT in an empty system (the papers' base-RTT), up to 1e6; 0: the host provisions it in each flow's context at flow start (nicc sim gives every RL-CC policy, teacher and firmware alike, the scenario's path RTT), else the flow learns it as the smallest RTT seen, which incast inflates", func(p *Params) *float64 { return &p.BaseRTT }},
}

// Set sets the parameter f.
func (f ParamField) Set(p *Params, v float64) { *f.field(p) = v }

// Get is the parameter f of p.
func (f ParamField) Get(p Params) float64 { return *f.field(&p) }

// Fixed is p in the handler's fixed point, validated. An error names the flag of the
// parameter at fault, or both rate flags when the rates only clash together.
func (p Params) Fixed() (nicsdk.Params, error) {
	return p.FixedAs(func(f ParamField) string { return "--" + f.Flag })
}

// FixedAs is Fixed, an error naming the parameter at fault as name gives it (its flag, or
// the file it came from).
func (p Params) FixedAs(name func(ParamField) string) (nicsdk.Params, error) {
	fp, err := nicsdk.NewParams(p.Target, p.Beta, p.Scale, p.MinRate, p.InitRate)
	if err == nil {
		ns := math.Round(p.BaseRTT * 1000)
		if !(ns >= 0 && ns <= nicsdk.MaxBaseRTT) {
			return nicsdk.Params{}, fmt.Errorf("%s %v: want 0 (learned) to 1e6 µs", name(ParamFields[5]), p.BaseRTT)
		}
		fp.BaseRTT = uint32(ns)
		return fp, nil
	}
	for _, f := range ParamFields {
		alone := Defaults()
		f.Set(&alone, f.Get(p))
		if _, e := nicsdk.NewParams(alone.Target, alone.Beta, alone.Scale, alone.MinRate, alone.InitRate); e != nil {
			return nicsdk.Params{}, fmt.Errorf("%s %v: %v", name(f), f.Get(p), e)
		}
	}
	return nicsdk.Params{}, fmt.Errorf("%s %v %s %v: %v", name(ParamFields[3]), p.MinRate, name(ParamFields[4]), p.InitRate, err)
}
