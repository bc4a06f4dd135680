package netsim

// evKind is what an event does when it fires.
type evKind uint8

const (
	evHostSend     evKind = iota // a host's uplink is free: send the next ready burst (a wake, from sim.wakes)
	evSwitchArrive               // a packet reaches the switch
	evPortFree                   // a switch port finished serializing its head packet
	evHostArrive                 // a packet reaches its destination host
	evDecisionDone               // a CC decision finished: its rate takes effect
	evTurnaround                 // a probe's reply reaches its sender's CC engine (Config.TurnaroundNs)
	evTimer                      // a flow's CC timer fired (controllers with a period)
	evFlowStart                  // a flow starts sending
	evSample                     // Config.TraceNs: a trace sample
	evAction                     // Config.Actions[idx] runs
	evRTO                        // a flow's retransmission timer (go-back-N)
)

// event is one scheduled happening. Events fire in (at, seq) order: seq is the order of
// scheduling, so ties break the same way on every run.
type event struct {
	at   int64 // ps
	kind evKind
	// probe, on an evDecisionDone, sends the flow's next RTT probe (Config.Probe ProbeAtOnce).
	probe bool
	idx   int32 // host, port or flow, by kind
	pkt   packet
	rate  uint32 // evDecisionDone: the new rate
}

// eventQueue is the simulation's clock: a binary min-heap of events by (at, seq). The heap
// orders small keys; the events themselves stay put in slots, reused once popped. (The
// hosts' wakes and their schedulers' ready flows are keyHeaps.)
type eventQueue struct {
	keys  []evKey
	slots []event
	free  []int32
	seq   uint64
}

type evKey struct {
	at   int64
	seq  uint64
	slot int32
}

func (q *eventQueue) less(i, j int) bool {
	return before(&q.keys[i], &q.keys[j])
}

func (q *eventQueue) push(e event) {
	var slot int32
	if n := len(q.free); n > 0 {
		slot = q.free[n-1]
		q.free = q.free[:n-1]
		q.slots[slot] = e
	} else {
		slot = int32(len(q.slots))
		q.slots = append(q.slots, e)
	}
	q.keys = append(q.keys, evKey{at: e.at, seq: q.seq, slot: slot})
	q.seq++
	i := len(q.keys) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q.keys[i], q.keys[p] = q.keys[p], q.keys[i]
		i = p
	}
}

func (q *eventQueue) pop() event {
	top := q.keys[0]
	e := q.slots[top.slot]
	q.free = append(q.free, top.slot)
	n := len(q.keys) - 1
	q.keys[0] = q.keys[n]
	q.keys = q.keys[:n]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && q.less(l, m) {
			m = l
		}
		if r < n && q.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		q.keys[i], q.keys[m] = q.keys[m], q.keys[i]
		i = m
	}
	return e
}

func (q *eventQueue) len() int { return len(q.keys) }

func (q *eventQueue) top() *event { return &q.slots[q.keys[0].slot] }
