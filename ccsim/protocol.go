// Package ccsim speaks NVIDIA's CC simulator's agent protocol (NVlabs/RLCC's CCsim, as its
// Python agent answers it): the requests it sends, one per completed RTT measurement, each
// on its own TCP connection; the reply it waits for; a server that answers them with a
// decision function; and the decision log that records a run's requests as they arrived, with
// the answers, so that a run can be replayed without the simulator.
package ccsim

import (
	"encoding/binary"
	"fmt"
)

// RequestBytes is a request's size on the wire: nine unsigned 32-bit little-endian fields.
const RequestBytes = 9 * 4

// Status is what the agent answers first, before the multiplier (a separate send).
const Status = "receive status: OK"

// Request is one report of a flow, the fields in the order CCsim sends them.
type Request struct {
	RTTNs      uint32 // the RTT measured, ns
	NACKs      uint32 // NACKs received since the last report
	CNPs       uint32 // CNPs received since the last report
	Bytes      uint32 // bytes sent since the last report
	RateFxp20  uint32 // the flow's current rate, 1<<20 = line rate
	IntervalNs uint32 // time since the flow's last report, ns
	TXEvents   uint32 // TX events since the last report
	FlowTag    uint32 // the flow within its host
	Host       uint32 // the sending host
}

// Fields is r's fields in wire order.
func (r Request) Fields() [9]uint32 {
	return [9]uint32{r.RTTNs, r.NACKs, r.CNPs, r.Bytes, r.RateFxp20, r.IntervalNs, r.TXEvents, r.FlowTag, r.Host}
}

// RequestOf is the request whose wire-order fields are f.
func RequestOf(f [9]uint32) Request {
	return Request{RTTNs: f[0], NACKs: f[1], CNPs: f[2], Bytes: f[3], RateFxp20: f[4], IntervalNs: f[5], TXEvents: f[6], FlowTag: f[7], Host: f[8]}
}

// Wire is r on the wire.
func (r Request) Wire() []byte {
	b := make([]byte, RequestBytes)
	for i, v := range r.Fields() {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return b
}

// ParseRequest reads a request from exactly RequestBytes bytes.
func ParseRequest(b []byte) (Request, error) {
	if len(b) != RequestBytes {
		return Request{}, fmt.Errorf("a request is %d bytes (nine uint32), got %d", RequestBytes, len(b))
	}
	var f [9]uint32
	for i := range f {
		f[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return RequestOf(f), nil
}

// MultiplierBytes is the reply's second send: the multiplier as an unsigned Q16.
func MultiplierBytes(q16 uint32) []byte { return binary.LittleEndian.AppendUint32(nil, q16) }

// Q16One is a multiplier of 1.0.
const Q16One = 1 << 16

// Flow is a flow as CCsim names it: its host and its tag within the host.
type Flow struct{ Host, Tag uint32 }

func (f Flow) String() string { return fmt.Sprintf("host %d flow %d", f.Host, f.Tag) }

// Flow is the flow r reports on.
func (r Request) Flow() Flow { return Flow{Host: r.Host, Tag: r.FlowTag} }
