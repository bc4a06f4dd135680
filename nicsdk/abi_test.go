package nicsdk

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestEventTypeNames(t *testing.T) {
	t.Parallel()
	for k := EventType(0); k < EventTypeEnd; k++ {
		if s := k.String(); s == "" || strings.HasPrefix(s, "EventType(") {
			t.Errorf("event type %d has no name", k)
		}
	}
	if s := EventTypeEnd.String(); s != "EventType(4)" {
		t.Errorf("EventTypeEnd.String() = %q", s)
	}
}

func TestEventAndCtxRoundTrip(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		ev := Event{Type: EventType(r.Uint32()), RTTNs: r.Uint32(), TimestampNs: r.Uint64(), FlowID: r.Uint32(), TxBytes: r.Uint32()}
		got, err := ParseEvent(ev.Bytes())
		if err != nil || got != ev {
			t.Fatalf("ParseEvent(%+v.Bytes()) = %+v, %v", ev, got, err)
		}
		var c FlowCtx
		for i := range c {
			c[i] = r.Uint32()
		}
		gc, err := ParseFlowCtx(c.Bytes())
		if err != nil || gc != c {
			t.Fatalf("ParseFlowCtx round trip: %v, %v", gc, err)
		}
	}
	b := Event{Type: EvTX, RTTNs: 0x01020304, TimestampNs: 0x1122334455667788, FlowID: 7, TxBytes: 9}.Bytes()
	want := []byte{3, 0, 0, 0, 4, 3, 2, 1, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 7, 0, 0, 0, 9, 0, 0, 0}
	if string(b) != string(want) {
		t.Errorf("Event.Bytes() = % x, want % x", b, want)
	}
	if _, err := ParseEvent(make([]byte, EventBytes-1)); err == nil {
		t.Error("ParseEvent accepted 23 bytes")
	}
	if _, err := ParseFlowCtx(make([]byte, CtxBytes-1)); err == nil {
		t.Error("ParseFlowCtx accepted 47 bytes")
	}
}
