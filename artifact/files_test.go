package artifact

import (
	"strings"
	"testing"

	"github.com/nicc-dev/nicc/nicsdk"
)

func TestHandlerNames(t *testing.T) {
	for h := Handler(0); h < handlerEnd; h++ {
		got, err := ParseHandler(h.String())
		if err != nil || got != h {
			t.Errorf("handler %d: name %q parses to %v, %v", int(h), h.String(), got, err)
		}
	}
	if EntryPolicy != nicsdk.PolicyEntry {
		t.Errorf("codegen names the policy %s, nicsdk's handler glue calls %s", EntryPolicy, nicsdk.PolicyEntry)
	}
	if _, err := ParseHandler("lstm"); err == nil {
		t.Error("ParseHandler(lstm) succeeded")
	}
	for k := VecKind(0); k < vecKindEnd; k++ {
		if strings.HasPrefix(k.String(), "veckind(") {
			t.Errorf("vector kind %d has no name", int(k))
		}
	}
}
