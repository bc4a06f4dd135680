package netsim

import "fmt"

// run fires events until the duration ends or a controller fails.
func (s *sim) run() error {
	end := s.cfg.DurationNs * 1000
	var e event
	for s.err == nil {
		var at int64
		wake := s.wakes.len() > 0 && (s.q.empty() || before(s.wakes.top(), s.q.next()))
		switch {
		case wake:
			at = s.wakes.top().at
		case !s.q.empty():
			at = s.q.next().at
		default:
			return s.err
		}
		if at > end {
			return s.err
		}
		if at < s.now || s.events&0xffff == 0xffff {
			if !s.advanceSlowly(at) {
				return s.err
			}
		} else {
			s.now, s.events = at, s.events+1
		}
		if !wake {
			s.q.pop(&e)
			s.fire(&e)
			continue
		}
		// The wake's key stays on top while the host sends; the wake it sets last
		// (wakeHost) then moves the key down in place, or the key is removed.
		hi := int(s.wakes.top().slot)
		h := &s.hosts[hi]
		h.sending = true
		s.hostSend(hi)
		h.sending = false
		if h.wake >= 0 {
			s.wakes.set(hi, h.wake, h.wakeSeq)
		} else {
			s.wakes.pop()
		}
	}
	return s.err
}

// advanceSlowly moves the clock to the next event's time at and reports the progress (every
// 65536 events), or says, with s.err set, that at is in the past.
func (s *sim) advanceSlowly(at int64) bool {
	if at < s.now {
		s.err = fmt.Errorf("netsim: internal error: an event at %d ps after time %d ps (please report it)", at, s.now)
		return false
	}
	s.now = at
	s.events++
	if s.cfg.Progress != nil {
		s.cfg.Progress(s.now/1000, s.cfg.DurationNs)
	}
	return true
}

func (s *sim) fire(e *event) {
	switch e.kind {
	case evFlowStart:
		s.startFlow(int(e.idx))
	case evSwitchArrive:
		s.switchArrive(&e.pkt)
	case evPortFree:
		s.portFree(int(e.idx))
	case evHostArrive:
		s.hostArrive(&e.pkt)
	case evDecisionDone:
		s.decisionDone(int(e.idx), e.rate, e.probe)
	case evTurnaround:
		s.turnaround(&e.pkt)
	case evTimer:
		s.timer(int(e.idx))
	case evSample:
		s.sample()
	case evRTO:
		s.rto(int(e.idx))
	case evAction:
		if err := s.cfg.Actions[e.idx].Do(); err != nil {
			s.err = fmt.Errorf("%w: the action at %.3f µs: %v", ErrStopped, float64(s.now)/1e6, err)
		}
	}
}
