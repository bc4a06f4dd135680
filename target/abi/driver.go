package abi

import (
	_ "embed"
	"strings"
	"text/template"

	"github.com/nicc-dev/nicc/nicsdk"
)

// The host driver verify builds beside the generated C: it reads calls from stdin (a policy
// call, or for RL-CC a flow context and events) and prints their results. driver.c.tmpl is
// its C, with the parts each kind of compile needs.

//go:embed driver.c.tmpl
var driverTemplate string

var driverTmpl = template.Must(template.New("driver.c").Parse(driverTemplate))

// DriverC is the host driver for a policy of nInputs inputs and stateWords state words, whose
// header is policyHeader; rlcc adds the event handler's calls.
func DriverC(nInputs int, policyHeader string, rlcc bool, stateWords int) string {
	var b strings.Builder
	err := driverTmpl.Execute(&b, struct {
		Inputs, LastInput, State, LastState int
		RLCC                                bool
		PolicyHeader, SDKHeader             string
		Policy, Handler                     string
	}{nInputs, nInputs - 1, stateWords, stateWords - 1, rlcc, policyHeader, nicsdk.HeaderName, EntryPolicy, EntryHandler})
	if err != nil {
		panic("abi: the driver template: " + err.Error()) // the template is ours and fixed
	}
	return b.String()
}
