package onnx

import (
	"strconv"
	"strings"

	"github.com/nicc-dev/nicc/model"
)

// RLCCPrefix names the metadata_props that carry a policy's RL-CC parameters
// (model.Model.RLCC): RLCCPrefix + one of model.RLCCKeys, the value a decimal number.
const RLCCPrefix = "nicc.rlcc."

// rlccMetadata are the RL-CC parameters among a model's metadata_props (others are not
// nicc's and are ignored); a property under RLCCPrefix given twice or whose value is not a
// number is an error, and model.Validate refuses a key that is not a parameter.
func rlccMetadata(props [][2]string) (map[string]float64, error) {
	var p map[string]float64
	for _, kv := range props {
		k, ok := strings.CutPrefix(kv[0], RLCCPrefix)
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(kv[1]), 64)
		if err != nil {
			return nil, model.Errorf("metadata_props %q is %q, want a number", kv[0], kv[1])
		}
		if _, dup := p[k]; dup {
			return nil, model.Errorf("metadata_props %q is given twice", kv[0])
		}
		if p == nil {
			p = map[string]float64{}
		}
		p[k] = v
	}
	return p, nil
}

// rlccProps are p as metadata_props, in model.RLCCKeys' order.
func rlccProps(p map[string]float64) [][2]string {
	var props [][2]string
	for _, k := range model.RLCCKeys {
		if v, ok := p[k]; ok {
			props = append(props, [2]string{RLCCPrefix + k, strconv.FormatFloat(v, 'g', -1, 64)})
		}
	}
	return props
}
