package rlcc

import "testing"

func TestNameList(t *testing.T) {
	if NameList != "a_prev, o, a_prev2, o_prev" {
		t.Errorf("NameList = %q", NameList)
	}
}
