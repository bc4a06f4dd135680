package ccsim

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRequestWire(t *testing.T) {
	r := Request{RTTNs: 8264, NACKs: 1, CNPs: 2, Bytes: 118784, RateFxp20: 1 << 20, IntervalNs: 9800, TXEvents: 13, FlowTag: 7, Host: 3}
	b := r.Wire()
	if len(b) != RequestBytes || b[0] != 8264&0xff || b[1] != 8264>>8 || b[32] != 3 {
		t.Fatalf("wire % x: want nine little-endian uint32, RTT first, host last", b)
	}
	got, err := ParseRequest(b)
	if err != nil || got != r {
		t.Fatalf("ParseRequest(Wire) = %+v, %v; want %+v", got, err, r)
	}
	if _, err := ParseRequest(b[:35]); err == nil {
		t.Fatal("a 35-byte request parsed")
	}
}

// serve starts Serve on a loopback port with decide and opt; stop ends it and returns what it
// returned.
func serve(t *testing.T, decide Decider, opt ServeOptions) (addr string, stop func() (ServeStats, error)) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		st  ServeStats
		err error
	}
	done := make(chan result, 1)
	go func() {
		st, err := Serve(ctx, ln, decide, opt)
		done <- result{st, err}
	}()
	return ln.Addr().String(), func() (ServeStats, error) {
		cancel()
		r := <-done
		return r.st, r.err
	}
}

// TestServeAnswersEachConnection: every connection gets the status and its own decision,
// decisions one at a time in arrival order, as CCsim's client reads them.
func TestServeAnswersEachConnection(t *testing.T) {
	var mu sync.Mutex
	var seen []Request
	busy := false
	decide := func(r Request) (Decision, error) {
		if busy {
			t.Error("two decisions at once")
		}
		busy = true
		defer func() { busy = false }()
		mu.Lock()
		seen = append(seen, r)
		mu.Unlock()
		return Decision{MultiplierQ16: r.RTTNs * 2}, nil
	}
	var logged int
	addr, stop := serve(t, decide, ServeOptions{ReplyGap: 50 * time.Microsecond, Decided: func(Request, Decision) { logged++ }})
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := Ask(addr, Request{RTTNs: uint32(1000 + i), Host: uint32(i % 4), FlowTag: uint32(i)}, 5*time.Second)
			if err != nil || m != uint32(2*(1000+i)) {
				t.Errorf("request %d: multiplier %d, %v; want %d", i, m, err, 2*(1000+i))
			}
		}()
	}
	wg.Wait()
	// A connection closed before a byte of a request is CCsim ending, not an error.
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
	}
	time.Sleep(50 * time.Millisecond)
	st, err := stop()
	if err != nil {
		t.Fatal(err)
	}
	if st.Decisions != 40 || logged != 40 || len(seen) != 40 || st.Empty != 1 || st.Connections != 41 || st.Stopped != "interrupted" {
		t.Fatalf("stats %+v, logged %d, seen %d; want 40 decisions and logs, 41 connections, 1 empty, interrupted", st, logged, len(seen))
	}
}

// TestServeStops: the bounds stop the server, and a failed decision or a truncated request
// stops it with an error naming what failed.
func TestServeStops(t *testing.T) {
	one := func(Request) (Decision, error) { return Decision{MultiplierQ16: Q16One}, nil }
	t.Run("max requests", func(t *testing.T) {
		addr, stop := serve(t, one, ServeOptions{MaxRequests: 3})
		for i := range 3 {
			if _, err := Ask(addr, Request{FlowTag: uint32(i)}, 5*time.Second); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := Ask(addr, Request{}, time.Second); err == nil {
			t.Error("a fourth request was answered past --max-requests 3")
		}
		st, err := stop()
		if err != nil || st.Decisions != 3 || st.Stopped != "3 requests answered" {
			t.Fatalf("%+v, %v", st, err)
		}
	})
	t.Run("idle", func(t *testing.T) {
		addr, stop := serve(t, one, ServeOptions{Idle: 100 * time.Millisecond})
		if _, err := Ask(addr, Request{}, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		time.Sleep(600 * time.Millisecond)
		if _, err := net.Dial("tcp", addr); err == nil {
			t.Error("still listening after the idle time")
		}
		st, err := stop()
		if err != nil || st.Stopped != "no request for 100ms" {
			t.Fatalf("%+v, %v", st, err)
		}
	})
	t.Run("decision fails", func(t *testing.T) {
		addr, stop := serve(t, func(Request) (Decision, error) { return Decision{}, errors.New("trap at pc 0x40") }, ServeOptions{})
		if _, err := Ask(addr, Request{Host: 2, FlowTag: 5}, 5*time.Second); err == nil {
			t.Error("a failed decision was answered")
		}
		_, err := stop()
		if err == nil || err.Error() != "host 2 flow 5: trap at pc 0x40" {
			t.Fatalf("error %v; want the flow and the decision's error", err)
		}
	})
	t.Run("truncated request", func(t *testing.T) {
		addr, stop := serve(t, one, ServeOptions{})
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write(make([]byte, 20))
		c.Close()
		time.Sleep(100 * time.Millisecond)
		_, err = stop()
		if err == nil || !strings.Contains(err.Error(), "read 20 of a request's 36 bytes") {
			t.Fatalf("error %v; want the truncated read named", err)
		}
	})
}

func TestLogRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	lw, err := NewLogWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Seq: 0, Request: Request{RTTNs: 8264, Bytes: 118784, RateFxp20: 1 << 20, IntervalNs: 9800, TXEvents: 13, FlowTag: 0, Host: 1}, Decision: Decision{MultiplierQ16: 70200, Cycles: 269}},
		{Seq: 1, Request: Request{RTTNs: 1<<32 - 1, NACKs: 3, CNPs: 4, Host: 2}, Decision: Decision{MultiplierQ16: 54613}},
	}
	for _, e := range want {
		if err := lw.Write(e.Request, e.Decision); err != nil {
			t.Fatal(err)
		}
	}
	if err := lw.Flush(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadLog(bytes.NewReader(buf.Bytes()), 0)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("read back (-want +got):\n%s", d)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(buf.Bytes())
	zw.Close()
	if got, err := ReadLog(&gz, 0); err != nil || len(got) != 2 {
		t.Fatalf("gzipped: %d entries, %v", len(got), err)
	}
	if _, err := ReadLog(bytes.NewReader(buf.Bytes()), 1); err == nil || !strings.Contains(err.Error(), "more than 1 decisions") {
		t.Fatalf("over the bound: %v", err)
	}
}

func TestReadLogRefuses(t *testing.T) {
	head := strings.Join(logHeader, ",") + "\n"
	for name, c := range map[string]struct{ in, want string }{
		"empty":        {"", "header: empty file"},
		"other header": {"a,b\n", "is not a decision log's"},
		"fields":       {head + "0,1,2\n", "line 2: 3 fields, want 12"},
		"not a number": {head + "0,x,0,0,0,0,0,0,0,0,0,0\n", "line 2: rtt_ns"},
		"over 32 bits": {head + "0,4294967296,0,0,0,0,0,0,0,0,0,0\n", "line 2: rtt_ns"},
		"negative":     {head + "0,0,0,0,0,0,0,0,0,0,-1,0\n", "line 2: multiplier_q16"},
		"seq":          {head + "1,0,0,0,0,0,0,0,0,0,0,0\n", "line 2: seq 1, want 0"},
		"long line":    {head + strings.Repeat("9", 300) + "\n", "a line over 256 bytes"},
		"bad gzip":     {"\x1f\x8b\x08junk", "gzip:"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ReadLog(strings.NewReader(c.in), 0)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v; want %q", err, c.want)
			}
		})
	}
}

func FuzzReadLog(f *testing.F) {
	head := strings.Join(logHeader, ",") + "\n"
	f.Add([]byte(head + "0,8264,0,0,118784,1048576,9800,13,0,1,70200,269\n"))
	f.Add([]byte(head + "0,1,2\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := ReadLog(bytes.NewReader(b), 1000)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		lw, _ := NewLogWriter(&buf)
		for _, e := range es {
			lw.Write(e.Request, e.Decision)
		}
		lw.Flush()
		again, err := ReadLog(&buf, 1000)
		if err != nil || !cmp.Equal(es, again) {
			t.Fatalf("a log read back differently after writing it: %v", err)
		}
	})
}

func FuzzParseRequest(f *testing.F) {
	f.Add(Request{RTTNs: 8264, Host: 1}.Wire())
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseRequest(b)
		if err != nil {
			return
		}
		if !bytes.Equal(r.Wire(), b) {
			t.Fatalf("% x parsed to %+v, which is % x on the wire", b, r, r.Wire())
		}
	})
}
