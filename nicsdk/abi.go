package nicsdk

import (
	"encoding/binary"
	"fmt"
)

// The engine's C ABI (nicsdk.h), mirrored in Go.

// Fixed-point and layout constants of nicsdk.h.
const (
	LineRate   = 1 << 20 // fxp20 1.0, NICC_LINE_RATE: the largest rate
	Q16One     = 1 << 16 // Q16 1.0, NICC_Q16_ONE
	CtxWords   = 12      // NICC_CTX_WORDS
	CtxBytes   = 48      // NICC_CTX_BYTES: sizeof(struct nicc_flow_ctx)
	EventBytes = 24      // NICC_EVENT_BYTES: sizeof(struct nicc_event)
	EventAlign = 8       // alignof(struct nicc_event)
)

// EventType is enum nicc_event_type.
type EventType uint32

const (
	EvRTT  EventType = iota // NICC_EV_RTT: an RTT probe came back; Event.RTTNs holds the sample
	EvCNP                   // NICC_EV_CNP: a congestion notification packet arrived
	EvNACK                  // NICC_EV_NACK: a NACK arrived
	EvTX                    // NICC_EV_TX: the flow transmitted; Event.TxBytes holds the bytes sent
	EventTypeEnd
)

var eventTypeNames = [...]string{EvRTT: "rtt", EvCNP: "cnp", EvNACK: "nack", EvTX: "tx"}

func (t EventType) String() string {
	if t < EventTypeEnd {
		return eventTypeNames[t]
	}
	return fmt.Sprintf("EventType(%d)", uint32(t))
}

// Event is struct nicc_event. Its C layout (little endian, 24 bytes, 8-byte aligned) is
// given by the Off* constants; Bytes encodes it.
type Event struct {
	Type        EventType
	RTTNs       uint32 // RTT sample in ns (EvRTT), else 0
	TimestampNs uint64 // when the event happened
	FlowID      uint32
	TxBytes     uint32 // bytes sent (EvTX), else 0
}

// Byte offsets of struct nicc_event's fields.
const (
	OffEventType      = 0
	OffEventRTTNs     = 4
	OffEventTimestamp = 8
	OffEventFlowID    = 16
	OffEventTxBytes   = 20
)

// Bytes is the event as the handler reads it from memory.
func (e Event) Bytes() []byte {
	b := make([]byte, EventBytes)
	binary.LittleEndian.PutUint32(b[OffEventType:], uint32(e.Type))
	binary.LittleEndian.PutUint32(b[OffEventRTTNs:], e.RTTNs)
	binary.LittleEndian.PutUint64(b[OffEventTimestamp:], e.TimestampNs)
	binary.LittleEndian.PutUint32(b[OffEventFlowID:], e.FlowID)
	binary.LittleEndian.PutUint32(b[OffEventTxBytes:], e.TxBytes)
	return b
}

// ParseEvent decodes the first EventBytes bytes of b.
func ParseEvent(b []byte) (Event, error) {
	if len(b) < EventBytes {
		return Event{}, fmt.Errorf("nicsdk: event: %d bytes, want %d", len(b), EventBytes)
	}
	return Event{
		Type:        EventType(binary.LittleEndian.Uint32(b[OffEventType:])),
		RTTNs:       binary.LittleEndian.Uint32(b[OffEventRTTNs:]),
		TimestampNs: binary.LittleEndian.Uint64(b[OffEventTimestamp:]),
		FlowID:      binary.LittleEndian.Uint32(b[OffEventFlowID:]),
		TxBytes:     binary.LittleEndian.Uint32(b[OffEventTxBytes:]),
	}, nil
}

// FlowCtx is struct nicc_flow_ctx: uint32_t data[12], 48 bytes, little endian in memory.
// The zero value is a new flow's context.
type FlowCtx [CtxWords]uint32

// Bytes is the context as it lies in memory.
func (c FlowCtx) Bytes() []byte {
	b := make([]byte, CtxBytes)
	for i, w := range c {
		binary.LittleEndian.PutUint32(b[4*i:], w)
	}
	return b
}

// ParseFlowCtx decodes the first CtxBytes bytes of b.
func ParseFlowCtx(b []byte) (FlowCtx, error) {
	var c FlowCtx
	if len(b) < CtxBytes {
		return c, fmt.Errorf("nicsdk: flow context: %d bytes, want %d", len(b), CtxBytes)
	}
	for i := range c {
		c[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return c, nil
}

// FxpMul16 is nicc_fxp16_mul: floor(a*b / 2^16), truncated to 32 bits.
func FxpMul16(a, b uint32) uint32 { return uint32(uint64(a) * uint64(b) >> 16) }

// FxpDiv16 is nicc_fxp16_div: floor(a * 2^16 / b), saturated to 0xffffffff; b == 0 gives
// 0xffffffff.
func FxpDiv16(a, b uint32) uint32 {
	if b == 0 {
		return 0xffffffff
	}
	return uint32(min(uint64(a)<<16/uint64(b), 0xffffffff))
}
