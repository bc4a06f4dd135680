package model

import (
	"fmt"
	"strconv"
)

func enumName(names []string, i int) string {
	if i >= 0 && i < len(names) && names[i] != "" {
		return names[i]
	}
	return "enum(" + strconv.Itoa(i) + ")"
}

func enumParse(what string, names []string, s string) (int, error) {
	for i, n := range names {
		if n == s {
			return i, nil
		}
	}
	return 0, fmt.Errorf("unknown %s %q (want one of %q)", what, s, names)
}

func (k Kind) MarshalText() ([]byte, error)       { return []byte(k.String()), nil }
func (o LayerOp) MarshalText() ([]byte, error)    { return []byte(o.String()), nil }
func (a Activation) MarshalText() ([]byte, error) { return []byte(a.String()), nil }
func (t Transform) MarshalText() ([]byte, error)  { return []byte(t.String()), nil }
func (c Cmp) MarshalText() ([]byte, error)        { return []byte(c.String()), nil }
func (m Missing) MarshalText() ([]byte, error)    { return []byte(m.String()), nil }

func (o *LayerOp) UnmarshalText(b []byte) error {
	i, err := enumParse("layer op", opNames[:], string(b))
	*o = LayerOp(i)
	return err
}

func (a *Activation) UnmarshalText(b []byte) error {
	i, err := enumParse("activation", actNames[:], string(b))
	*a = Activation(i)
	return err
}

func (t *Transform) UnmarshalText(b []byte) error {
	i, err := enumParse("transform", transformNames[:], string(b))
	*t = Transform(i)
	return err
}

func (c *Cmp) UnmarshalText(b []byte) error {
	i, err := enumParse("comparison", cmpNames[:], string(b))
	*c = Cmp(i)
	return err
}

func (m *Missing) UnmarshalText(b []byte) error {
	i, err := enumParse("missing type", missingNames[:], string(b))
	*m = Missing(i)
	return err
}
