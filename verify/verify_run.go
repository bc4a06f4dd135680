package verify

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"github.com/nicc-dev/nicc/artifact"
	"github.com/nicc-dev/nicc/nicsdk"
)

// Verify's runs: the host driver builds over a batch of calls (runDriver) and fwsim over the
// same calls (verifier.fwsim), and the byte encodings both read.

// eventResult is what one handler call produced.
type eventResult struct {
	rate uint32
	ctx  nicsdk.FlowCtx
}

func (r eventResult) output() artifact.CallOutput {
	return artifact.CallOutput{Return: int64(r.rate), StateAfter: r.ctx[:]}
}

// WriteWords appends ws to a driver's input line, each after a space.
func WriteWords(b *bytes.Buffer, ws []uint32) {
	for _, w := range ws {
		b.WriteByte(' ')
		b.WriteString(strconv.FormatUint(uint64(w), 10))
	}
}

// SampleIdx is the indices in first, then every stride-th index, up to limit in all.
func SampleIdx(n int, first []int, limit int) []int {
	seen := map[int]bool{}
	var out []int
	for _, i := range first {
		if !seen[i] && len(out) < limit {
			seen[i] = true
			out = append(out, i)
		}
	}
	stride := max(1, n/max(1, limit-len(out)))
	for i := 0; i < n && len(out) < limit; i += stride {
		if !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out
}

// RunHost runs a host build of a verification driver over in and returns its output. Any
// output on stderr (a UBSan report) or a non-zero exit is an error naming bin and the first
// line of the message.
func RunHost(bin string, in []byte) (*bytes.Buffer, error) {
	cmd := exec.Command(bin)
	cmd.Stdin = bytes.NewReader(in)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if msg := strings.TrimSpace(errOut.String()); err != nil || msg != "" {
		if msg == "" {
			msg = "no message"
		}
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i] + " ..."
		}
		return nil, fmt.Errorf("%s: %v: %s", bin, err, msg)
	}
	return &out, nil
}

// runDriver runs a host build once over a batch and parses its output: one y (and
// stateWords words of new state) per policy vector, then a rate and a context per event. Any
// output on stderr (a UBSan report) or a non-zero exit is an error.
func runDriver(bin string, in []byte, nPolicy, stateWords, nEvents int) ([]int32, [][]uint32, []uint32, []nicsdk.FlowCtx, error) {
	out, err := RunHost(bin, in)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	ys := make([]int32, 0, nPolicy)
	var sts [][]uint32
	rates := make([]uint32, 0, nEvents)
	ctxs := make([]nicsdk.FlowCtx, 0, nEvents)
	w := make([]int64, max(1+stateWords, 1+nicsdk.CtxWords))
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Bytes()
		n, err := lineWords(text, w)
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("%s: output line %d: %v", bin, line, err)
		}
		if line <= nPolicy {
			if n != 1+stateWords {
				return nil, nil, nil, nil, fmt.Errorf("%s: output line %d: %q, want %d values", bin, line, text, 1+stateWords)
			}
			if w[0] < math.MinInt32 || w[0] > math.MaxInt32 {
				return nil, nil, nil, nil, fmt.Errorf("%s: output line %d: %d is not an int32", bin, line, w[0])
			}
			ys = append(ys, int32(w[0]))
			var st []uint32
			for _, v := range w[1:n] {
				if v < 0 || v > math.MaxUint32 {
					return nil, nil, nil, nil, fmt.Errorf("%s: output line %d: %d is not a uint32", bin, line, v)
				}
				st = append(st, uint32(v))
			}
			sts = append(sts, st)
			continue
		}
		if n != 1+nicsdk.CtxWords {
			return nil, nil, nil, nil, fmt.Errorf("%s: output line %d: %q, want a rate and %d context words", bin, line, text, nicsdk.CtxWords)
		}
		var u [1 + nicsdk.CtxWords]uint32
		for i, v := range w[:n] {
			if v < 0 || v > math.MaxUint32 {
				return nil, nil, nil, nil, fmt.Errorf("%s: output line %d: %d is not a uint32", bin, line, v)
			}
			u[i] = uint32(v)
		}
		rates = append(rates, u[0])
		ctxs = append(ctxs, nicsdk.FlowCtx(u[1:]))
	}
	if err := sc.Err(); err != nil {
		return nil, nil, nil, nil, err
	}
	if len(ys) != nPolicy || len(rates) != nEvents {
		return nil, nil, nil, nil, fmt.Errorf("%s: %d output lines, want %d", bin, line, nPolicy+nEvents)
	}
	return ys, sts, rates, ctxs, nil
}

// lineWords parses a driver's output line, decimal integers (at most 12 digits, a minus sign
// allowed) separated by spaces, into w: how many the line holds (those past len(w) are
// checked and counted, not kept), or an error naming the first word that is not one.
func lineWords(line []byte, w []int64) (int, error) {
	n := 0
	for i := 0; i < len(line); {
		if line[i] == ' ' {
			i++
			continue
		}
		j := i
		if line[j] == '-' {
			j++
		}
		digits := j
		var v int64
		for ; j < len(line) && j-digits < 12 && line[j] >= '0' && line[j] <= '9'; j++ {
			v = v*10 + int64(line[j]-'0')
		}
		if j == digits || j < len(line) && line[j] != ' ' {
			end := bytes.IndexByte(line[i:], ' ')
			if end < 0 {
				end = len(line) - i
			}
			return n, fmt.Errorf("%q is not a number", line[i:i+end])
		}
		if line[i] == '-' {
			v = -v
		}
		if n < len(w) {
			w[n] = v
		}
		n++
		i = j
	}
	return n, nil
}

type fwOut struct {
	ys                          []int32
	sts                         [][]uint32
	rates                       []uint32
	ctxs                        []nicsdk.FlowCtx
	policyCycles, eventCycles   []uint64
	longestPolicy, longestEvent []int // indices of the longest calls
}

// fwsim runs a batch on the firmware in the emulator: the policy vectors through
// nicc_policy, or each sequence through nicc_on_event, its flow context carried from call to
// call as the engine keeps it.
func (v *verifier) fwsim(pvs []policyVec, seqs []sequence) (fwOut, error) {
	var o fwOut
	vr := v.vr
	tick := func() {
		v.done++
		if v.done%4096 == 0 {
			v.in.Progress(v.done, v.total)
		}
	}
	for i, p := range pvs {
		st := slices.Clone(p.state)
		y, cycles, err := v.fw.Policy(p.x, st)
		if err != nil {
			return o, fmt.Errorf("%s faulted on vector %d (%s), x = %v, state %v: %w", artifact.EntryPolicy, v.nPolicy+i+1, p.kind, p.x, p.state, err)
		}
		o.sts = append(o.sts, st)
		o.ys = append(o.ys, y)
		o.policyCycles = append(o.policyCycles, cycles)
		vr.MaxPolicyCycles = max(vr.MaxPolicyCycles, cycles)
		tick()
	}
	o.longestPolicy = Longest(o.policyCycles, 64)
	for si, s := range seqs {
		ctx := s.start
		for ei, e := range s.events {
			rate, cycles, err := v.fw.Decide(e.ev, &ctx)
			if err != nil {
				return o, fmt.Errorf("%s faulted on event %d of sequence %d (%+v, context before %v): %w",
					artifact.EntryHandler, ei+1, v.nSeqs+si+1, e.ev, e.before, err)
			}
			o.rates = append(o.rates, rate)
			o.ctxs = append(o.ctxs, ctx)
			o.eventCycles = append(o.eventCycles, cycles)
			vr.MaxCycles = max(vr.MaxCycles, cycles)
			tick()
		}
	}
	o.longestEvent = Longest(o.eventCycles, 64)
	return o, nil
}

// Longest is the indices of the k largest values.
func Longest(v []uint64, k int) []int {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case v[a] > v[b]:
			return -1
		case v[a] < v[b]:
			return 1
		}
		return 0
	})
	return idx[:min(k, len(idx))]
}
