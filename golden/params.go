package golden

import (
	"fmt"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/nicsdk"
	"github.com/nicc-dev/nicc/rlcc"
)

// FlagSources are the sources of the RL-CC flags a command line set, by flag name: each
// SourceFlag; flags that are not RL-CC parameters are ignored.
func FlagSources(set []string) artifact.ParamSources {
	src := artifact.ParamSources{}
	for _, f := range rlcc.ParamFields {
		for _, s := range set {
			if s == f.Flag {
				src[f.Key] = artifact.SourceFlag
			}
		}
	}
	return src
}

// sourcesAll is every parameter from source.
func SourcesAll(source string) artifact.ParamSources {
	src := artifact.ParamSources{}
	for _, f := range rlcc.ParamFields {
		src[f.Key] = source
	}
	return src
}

// fixedFields are p's words in rlcc.ParamFields' order.
func fixedFields(p *Params) []*uint32 {
	return []*uint32{&p.Target, &p.Beta, &p.Scale, &p.MinRate, &p.InitRate, &p.BaseRTT}
}

// resolveParams are a command's RL-CC parameters: given's fields named in src (the flags
// set, or a compile's), over the model file's (model.Model.RLCC; m may be nil), over nicc's
// defaults, with where each came from. Given without sources is used whole (an API caller's
// set; the zero value is the defaults). A model's value out of the handler's range is an
// error naming the file and the parameter.
func ResolveParams(path string, m *model.Model, given Params, src artifact.ParamSources) (Params, artifact.ParamSources, error) {
	if src == nil && given != (Params{}) {
		return given, SourcesAll(artifact.SourceGiven), given.Validate()
	}
	real, out := rlcc.Defaults(), artifact.ParamSources{}
	for _, f := range rlcc.ParamFields {
		out[f.Key] = artifact.SourceDefault
		if m == nil {
			continue
		}
		if v, ok := m.RLCC[f.Key]; ok {
			f.Set(&real, v)
			out[f.Key] = artifact.SourceModel
		}
	}
	p, err := real.FixedAs(func(f rlcc.ParamField) string {
		if out[f.Key] == artifact.SourceModel {
			return fmt.Sprintf("%s: rlcc parameter %s", path, f.Key)
		}
		return "--" + f.Flag
	})
	if err != nil {
		return Params{}, nil, err
	}
	dst, from := fixedFields(&p), fixedFields(&given)
	for i, f := range rlcc.ParamFields {
		if s, ok := src[f.Key]; ok {
			*dst[i], out[f.Key] = *from[i], s
		}
	}
	if err := p.Validate(); err != nil {
		return Params{}, nil, fmt.Errorf("%s with the --rlcc-* flags: %w", path, err)
	}
	return p, out, nil
}

// modelParams are p in a policy file's form (model.Model.RLCC): real numbers, the base RTT
// in µs (0, learned, is left out).
func ModelParams(p Params) map[string]float64 {
	r := artifact.NewRLCCParams(p)
	mp := map[string]float64{"target": r.TargetReal, "beta": r.BetaReal, "scale": r.ScaleReal,
		"min_rate": r.MinRateReal, "init_rate": r.InitRateReal}
	if p.BaseRTT != 0 {
		mp["base_rtt_us"] = float64(p.BaseRTT) / 1000
	}
	return mp
}

// paramsOrDefault is p, or nicsdk.DefaultParams for the zero value, validated.
func ParamsOrDefault(p nicsdk.Params) (nicsdk.Params, error) {
	if p == (nicsdk.Params{}) {
		return nicsdk.DefaultParams(), nil
	}
	return p, p.Validate()
}
