package nicsdk_test

import (
	"fmt"

	"github.com/nicc-dev/nicc/nicsdk"
)

// The RL-CC handler's Go twin on a new flow: the first RTT sets the base, inflation grows,
// the policy (here: back off when the observation is positive) cuts the rate, a CNP leaves it.
func ExampleOnEvent() {
	p := nicsdk.DefaultParams()
	policy := func(x [4]int32) int32 { // y = -1 when o_t > 0, else +0.5
		if x[1] > 0 {
			return -nicsdk.Q16One
		}
		return nicsdk.Q16One / 2
	}
	var ctx nicsdk.FlowCtx // a new flow: zeroed
	for _, ev := range []nicsdk.Event{
		{Type: nicsdk.EvRTT, RTTNs: 10_000},
		{Type: nicsdk.EvRTT, RTTNs: 12_000},
		{Type: nicsdk.EvRTT, RTTNs: 30_000},
		{Type: nicsdk.EvRTT, RTTNs: 40_000},
		{Type: nicsdk.EvCNP},
	} {
		rate := nicsdk.OnEvent(ev, &ctx, p, policy)
		fmt.Printf("%-4v %5d ns: o_t %8.5f  a_t %.5f  rate %.5f\n", ev.Type, ev.RTTNs,
			float64(int32(ctx[nicsdk.CtxO1]))/nicsdk.Q16One, float64(ctx[nicsdk.CtxA1])/nicsdk.Q16One,
			float64(rate)/nicsdk.LineRate)
	}
	// Output:
	// rtt  10000 ns: o_t -0.76794  a_t 1.09999  rate 1.00000
	// rtt  12000 ns: o_t -0.76794  a_t 1.09999  rate 1.00000
	// rtt  30000 ns: o_t 17.23187  a_t 0.83333  rate 0.83333
	// rtt  40000 ns: o_t 26.61749  a_t 0.83333  rate 0.69444
	// cnp      0 ns: o_t 26.61749  a_t 0.83333  rate 0.69444
}
