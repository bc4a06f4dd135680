// Package targets lists the firmware targets a compile can write for, by their --sdk names.
package targets

import (
	"fmt"
	"strings"

	"github.com/nicc-dev/nicc/target"
	"github.com/nicc-dev/nicc/target/abi"
	"github.com/nicc-dev/nicc/target/doca"
)

// All are the targets, nicc's own ABI (the default) first.
var All = []target.Target{abi.Target, doca.Target}

// Names are All's --sdk names, in order.
func Names() []string {
	var n []string
	for _, t := range All {
		n = append(n, t.Name())
	}
	return n
}

// Parse is the target an --sdk value names.
func Parse(name string) (target.Target, error) {
	for _, t := range All {
		if t.Name() == name {
			return t, nil
		}
	}
	return nil, fmt.Errorf("sdk %q: want one of %s", name, strings.Join(Names(), ", "))
}
