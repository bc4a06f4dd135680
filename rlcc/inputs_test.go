package rlcc

import "testing"

func TestLayout(t *testing.T) {
	for _, c := range []struct {
		names          []string
		inOrder, named bool
	}{
		{Names, true, true},
		{[]string{"a_prev", "obs", "a_prev2", "obs_prev"}, true, true},
		{[]string{" A_Prev", "O ", "a_prev2", "o_prev"}, true, true},
		{[]string{"o", "a_prev", "a_prev2", "o_prev"}, false, true},
		{[]string{"input[0]", "input[1]", "input[2]", "input[3]"}, false, false},
		{[]string{"a_prev", "o", "a_prev2", "x"}, false, false},
		{[]string{"a_prev", "o", "a_prev2"}, false, false},
	} {
		if inOrder, named := Layout(c.names); inOrder != c.inOrder || named != c.named {
			t.Errorf("Layout(%q) = %v, %v; want %v, %v", c.names, inOrder, named, c.inOrder, c.named)
		}
	}
	if NameList != "a_prev, o, a_prev2, o_prev" {
		t.Errorf("NameList = %q", NameList)
	}
}
