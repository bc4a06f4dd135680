package ccsim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Decision is the agent's answer to a request: the multiplier CCsim applies to the flow's
// rate (unsigned Q16), and the fwsim cycles the decision ran (0 when nothing ran in fwsim).
type Decision struct {
	MultiplierQ16 uint32
	Cycles        uint64
}

// Decider answers one request. Serve calls it for one request at a time, in the order the
// requests were read.
type Decider func(Request) (Decision, error)

// ServeOptions bound a Serve.
type ServeOptions struct {
	// Idle stops the server when no request has come for this long after the first (CCsim
	// ended its run); 0 waits for ctx.
	Idle time.Duration
	// MaxRequests stops the server after this many decisions; 0 has no limit.
	MaxRequests int64
	// Timeout bounds each connection's reads and writes; 0 is DefaultTimeout.
	Timeout time.Duration
	// ReplyGap is the least time between the status and the multiplier, so that the two
	// reach CCsim as two reads: one read holding both takes the multiplier as 1.0.
	ReplyGap time.Duration
	// Decided, if set, hears of each decision, in decision order.
	Decided func(Request, Decision)
}

// DefaultTimeout bounds a connection's reads and writes.
const DefaultTimeout = 10 * time.Second

// ServeStats count what a Serve saw.
type ServeStats struct {
	Connections int64 `json:"connections"`
	Decisions   int64 `json:"decisions"`
	// Empty are connections closed before a byte of a request: CCsim's way to end.
	Empty int64 `json:"empty_connections"`
	// Stopped says why the server stopped.
	Stopped string `json:"stopped"`
}

// Serve answers CCsim's requests on ln with decide until ctx ends, opt's bounds are reached,
// or a decision fails (that error is returned). Each connection carries one request: it is
// read whole (RequestBytes), the status sent, the decision made, and after opt.ReplyGap the
// multiplier sent, as NVlabs/RLCC's server does. Connections are served concurrently,
// decisions one at a time. It closes ln.
func Serve(ctx context.Context, ln net.Listener, decide Decider, opt ServeOptions) (ServeStats, error) {
	s := &server{decide: decide, opt: opt, done: make(chan struct{}), last: time.Now()}
	if s.opt.Timeout <= 0 {
		s.opt.Timeout = DefaultTimeout
	}
	go s.watch(ctx, ln)
	var wg sync.WaitGroup
	for {
		c, err := ln.Accept()
		if err != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.serve(c)
		}()
	}
	s.stop("") // the listener failed on its own
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats, s.err
}

type server struct {
	decide Decider
	opt    ServeOptions
	done   chan struct{}
	once   sync.Once

	mu    sync.Mutex // guards what follows, and serialises decide
	stats ServeStats
	err   error
	last  time.Time // the last request's arrival
	seen  bool      // a request came
}

// stop ends the server, for the reason why (the first given is kept).
func (s *server) stop(why string) {
	s.once.Do(func() {
		s.mu.Lock()
		if s.stats.Stopped == "" {
			s.stats.Stopped = why
		}
		s.mu.Unlock()
		close(s.done)
	})
}

// watch closes ln when the server stops: ctx ended, the idle time passed, or stop was called.
func (s *server) watch(ctx context.Context, ln net.Listener) {
	defer ln.Close()
	var tick <-chan time.Time
	if s.opt.Idle > 0 {
		t := time.NewTicker(min(s.opt.Idle/4, time.Second))
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			s.stop("interrupted")
			return
		case <-s.done:
			return
		case <-tick:
			s.mu.Lock()
			idle := s.seen && time.Since(s.last) > s.opt.Idle
			s.mu.Unlock()
			if idle {
				s.stop(fmt.Sprintf("no request for %s", s.opt.Idle))
				return
			}
		}
	}
}

func (s *server) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
	s.stop("a decision failed")
}

// serve answers the one request c carries.
func (s *server) serve(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(s.opt.Timeout))
	s.mu.Lock()
	s.stats.Connections++
	s.mu.Unlock()
	buf := make([]byte, RequestBytes)
	n, err := io.ReadFull(c, buf)
	if n == 0 && (err == io.EOF || errors.Is(err, net.ErrClosed)) {
		s.mu.Lock()
		s.stats.Empty++
		s.mu.Unlock()
		return
	}
	if err != nil {
		s.fail(fmt.Errorf("connection from %s: read %d of a request's %d bytes: %w", c.RemoteAddr(), n, RequestBytes, err))
		return
	}
	req, _ := ParseRequest(buf)
	if _, err := io.WriteString(c, Status); err != nil {
		s.fail(fmt.Errorf("connection from %s: sending the status: %w", c.RemoteAddr(), err))
		return
	}
	sent := time.Now()
	d, ok, err := s.decideOne(req)
	if err != nil {
		s.fail(fmt.Errorf("%s: %w", req.Flow(), err))
		return
	}
	if !ok {
		return
	}
	if wait := s.opt.ReplyGap - time.Since(sent); wait > 0 {
		time.Sleep(wait)
	}
	if _, err := c.Write(MultiplierBytes(d.MultiplierQ16)); err != nil {
		s.fail(fmt.Errorf("connection from %s: sending %s's multiplier: %w", c.RemoteAddr(), req.Flow(), err))
	}
}

// decideOne decides req unless the server stopped or reached its bound (ok false), or the
// decision failed.
func (s *server) decideOne(req Request) (d Decision, ok bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.done:
		return Decision{}, false, nil
	default:
	}
	if s.opt.MaxRequests > 0 && s.stats.Decisions >= s.opt.MaxRequests {
		return Decision{}, false, nil
	}
	s.last, s.seen = time.Now(), true
	if d, err = s.decide(req); err != nil {
		return Decision{}, false, err
	}
	s.stats.Decisions++
	if s.opt.Decided != nil {
		s.opt.Decided(req, d)
	}
	if s.opt.MaxRequests > 0 && s.stats.Decisions >= s.opt.MaxRequests {
		go s.stop(fmt.Sprintf("%d requests answered", s.stats.Decisions))
	}
	return d, true, nil
}

// Ask sends req to the agent at addr as CCsim does, on a connection of its own, and returns
// the multiplier it answered. It checks the status.
func Ask(addr string, req Request, timeout time.Duration) (uint32, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write(req.Wire()); err != nil {
		return 0, err
	}
	reply := make([]byte, len(Status)+4)
	if _, err := io.ReadFull(c, reply); err != nil {
		return 0, fmt.Errorf("%s: reading the reply: %w", req.Flow(), err)
	}
	if string(reply[:len(Status)]) != Status {
		return 0, fmt.Errorf("%s: the status is %q, not %q", req.Flow(), reply[:len(Status)], Status)
	}
	return uint32(reply[len(Status)]) | uint32(reply[len(Status)+1])<<8 | uint32(reply[len(Status)+2])<<16 | uint32(reply[len(Status)+3])<<24, nil
}
