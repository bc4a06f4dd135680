package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// Native JSON: Model's own tags, plus these shapes for layers and nodes so that each
// carries only the fields its kind uses. Go's float64 encoding is the shortest text that
// parses back to the same bits, so a write and a read round-trip exactly.

type layerJSON struct {
	Op    LayerOp     `json:"op"`
	In    int         `json:"in"`
	Out   int         `json:"out"`
	W     [][]float64 `json:"w"`
	B     []float64   `json:"b,omitempty"`
	R     [][]float64 `json:"r,omitempty"`
	RB    []float64   `json:"rb,omitempty"`
	Act   *Activation `json:"act,omitempty"`
	Alpha *float64    `json:"alpha,omitempty"`
	Lo    *float64    `json:"lo,omitempty"`
	Hi    *float64    `json:"hi,omitempty"`
}

func (l Layer) MarshalJSON() ([]byte, error) {
	j := layerJSON{Op: l.Op, In: l.In, Out: l.Out, W: l.W, B: l.B, R: l.R, RB: l.RB}
	if l.Op == OpDense {
		j.Act = &l.Act
	}
	switch l.Act {
	case ActLeakyReLU:
		j.Alpha = &l.Alpha
	case ActClip:
		j.Lo, j.Hi = &l.Lo, &l.Hi
	}
	return json.Marshal(j)
}

func (l *Layer) UnmarshalJSON(b []byte) error {
	var j layerJSON
	if err := strictUnmarshal(b, &j); err != nil {
		return err
	}
	*l = Layer{Op: j.Op, In: j.In, Out: j.Out, W: j.W, B: j.B, R: j.R, RB: j.RB}
	if j.Act != nil {
		l.Act = *j.Act
	}
	if j.Alpha != nil {
		l.Alpha = *j.Alpha
	}
	if j.Lo != nil {
		l.Lo = *j.Lo
	}
	if j.Hi != nil {
		l.Hi = *j.Hi
	}
	return nil
}

type nodeJSON struct {
	Leaf        *float64 `json:"leaf,omitempty"`
	Feature     *int     `json:"feature,omitempty"`
	Threshold   *float64 `json:"threshold,omitempty"`
	Cmp         *Cmp     `json:"cmp,omitempty"`
	Left        *int     `json:"left,omitempty"`
	Right       *int     `json:"right,omitempty"`
	DefaultLeft *bool    `json:"default_left,omitempty"`
	Missing     *Missing `json:"missing,omitempty"`
}

func (n Node) MarshalJSON() ([]byte, error) {
	if n.Leaf {
		return json.Marshal(nodeJSON{Leaf: &n.Value})
	}
	return json.Marshal(nodeJSON{
		Feature: &n.Feature, Threshold: &n.Threshold, Cmp: &n.Cmp,
		Left: &n.Left, Right: &n.Right, DefaultLeft: &n.DefaultLeft, Missing: &n.Missing,
	})
}

func (n *Node) UnmarshalJSON(b []byte) error {
	var j nodeJSON
	if err := strictUnmarshal(b, &j); err != nil {
		return err
	}
	if j.Leaf != nil {
		if j.Feature != nil || j.Threshold != nil || j.Left != nil || j.Right != nil {
			return fmt.Errorf("node has both a leaf value and a split")
		}
		*n = Node{Leaf: true, Value: *j.Leaf}
		return nil
	}
	if j.Feature == nil || j.Threshold == nil || j.Cmp == nil || j.Left == nil || j.Right == nil {
		return fmt.Errorf("split node needs feature, threshold, cmp, left and right")
	}
	*n = Node{Feature: *j.Feature, Threshold: *j.Threshold, Cmp: *j.Cmp, Left: *j.Left, Right: *j.Right}
	if j.DefaultLeft != nil {
		n.DefaultLeft = *j.DefaultLeft
	}
	if j.Missing != nil {
		n.Missing = *j.Missing
	}
	return nil
}

func strictUnmarshal(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// Marshal writes m in the native form, indented, with a trailing newline.
func Marshal(m *Model) ([]byte, error) {
	c := *m
	c.Version = NativeVersion
	if err := c.Validate(); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(&c, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Hash is the hex SHA-256 of m's canonical native JSON (Marshal): a model's identity, which
// every integer IR built from it records.
func Hash(m *Model) (string, error) {
	b, err := Marshal(m)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:]), nil
}

// nativeLists are the caps on the lists of the native form (CheckLists).
var nativeLists = ListCaps{
	"inputs": MaxInputs, "layers": MaxWidth, "layers[].w": MaxNodes, "layers[].r": MaxNodes,
	"ensemble.trees": MaxTrees, "ensemble.trees[].nodes": MaxNodes,
}

// DecodeJSON decodes data, one JSON value and nothing after it but white space, into v,
// refusing fields v does not have. An error is a *ParseError at the offset it was found.
func DecodeJSON(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return &ParseError{Off: se.Offset, Msg: se.Error()}
		case errors.As(err, &te):
			return &ParseError{Off: te.Offset, Msg: te.Error()}
		}
		return &ParseError{Off: d.InputOffset(), Msg: err.Error()}
	}
	if off := d.InputOffset(); len(bytes.TrimSpace(data[off:])) > 0 {
		return &ParseError{Off: off, Msg: "trailing data after the JSON value"}
	}
	return nil
}

// Unmarshal reads the native JSON form and validates it.
func Unmarshal(data []byte) (*Model, error) {
	if err := CheckLists(data, nativeLists); err != nil {
		return nil, err
	}
	var m Model
	if err := DecodeJSON(data, &m); err != nil {
		return nil, err
	}
	if m.Version != NativeVersion {
		return nil, &ParseError{Off: -1, Msg: fmt.Sprintf("format is %q, want %q", m.Version, NativeVersion)}
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &m, nil
}
