package lab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nicc-dev/nicc/netsim"
)

// ReferenceParams are a reference controller's parameters as a run used them, in order.
type ReferenceParams []ReferenceParam

// ReferenceParam is one of them.
type ReferenceParam struct {
	Name  string
	Value float64
}

// MarshalJSON writes them as an object, in order.
func (r ReferenceParams) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, p := range r {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(p.Name)
		v, err := json.Marshal(p.Value)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%s:%s", name, v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// UnmarshalJSON reads them back from their object, in its order (nicc sim merge).
func (r *ReferenceParams) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("reference_params: want an object of numbers")
	}
	*r = nil
	for dec.More() {
		t, err := dec.Token()
		name, ok := t.(string)
		if err != nil || !ok {
			return fmt.Errorf("reference_params: want an object of numbers")
		}
		var v float64
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("reference_params: %s: %v", name, err)
		}
		*r = append(*r, ReferenceParam{name, v})
	}
	_, err := dec.Token()
	return err
}

func (r ReferenceParams) text() string {
	parts := make([]string, len(r))
	for i, p := range r {
		parts[i] = p.Name + " " + strconv.FormatFloat(p.Value, 'f', -1, 64)
	}
	return strings.Join(parts, ", ")
}

// setReferenceParams sets params from spec, NAME=VALUE,... (flag names the flag in errors),
// and returns every parameter's value after.
func setReferenceParams(flag, spec string, params []netsim.Param) (ReferenceParams, error) {
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.Name
	}
	if spec != "" {
		seen := map[string]bool{}
		for _, item := range strings.Split(spec, ",") {
			name, val, ok := strings.Cut(strings.TrimSpace(item), "=")
			i := slices.Index(names, name)
			if !ok || i < 0 {
				return nil, fmt.Errorf("%s %q: want NAME=VALUE,... with NAME one of %s", flag, item, strings.Join(names, ", "))
			}
			if seen[name] {
				return nil, fmt.Errorf("%s: %s given twice", flag, name)
			}
			seen[name] = true
			p := params[i]
			v, err := strconv.ParseFloat(val, 64)
			if err != nil || !(v >= p.Min && v <= p.Max) || p.Integer && v != math.Trunc(v) {
				kind := "a number"
				if p.Integer {
					kind = "a whole number"
				}
				return nil, fmt.Errorf("%s %s=%q: want %s from %v to %v (%s)", flag, name, val, kind, p.Min, p.Max, p.Doc)
			}
			p.Set(v)
		}
	}
	out := make(ReferenceParams, len(params))
	for i, p := range params {
		out[i] = ReferenceParam{p.Name, p.Get()}
	}
	return out, nil
}

// ReferenceParamNames lists the parameters of reference (swift or dcqcn) with their defaults,
// for nicc sim's help.
func ReferenceParamNames(reference string) string {
	sw, dc := netsim.DefaultSwift, netsim.DefaultDCQCN
	params := map[string][]netsim.Param{"swift": sw.Params(), "dcqcn": dc.Params()}[reference]
	parts := make([]string, len(params))
	for i, p := range params {
		parts[i] = fmt.Sprintf("%s (%s; default %s)", p.Name, p.Doc, strconv.FormatFloat(p.Get(), 'f', -1, 64))
	}
	return strings.Join(parts, ", ")
}
