package wcet

import "github.com/nicc-dev/nicc/fwsim"

// LoopRuns is m.Call(entry, args...) made one instruction at a time (fwsim.Machine.Trace),
// counting the runs of loop heads: runs[i] is the most times loops[i].Head ran in one entry
// into the loop. A run of the head right after one of the loop's Latches, in the same call of
// its function, is another iteration; any other run starts a new entry. A call made inside
// the loop stays in it until it returns (to the address in its link register, with sp as it
// was). Result and error are those of Call.
//
// It is slow: a diagnostic, e.g. to name the loop bound that a run above its WCET exceeded.
func LoopRuns(m *fwsim.Machine, loops []Loop, entry string, args ...uint64) (runs []int, res fwsim.Result, err error) {
	heads := map[uint64][]int{}
	latch := make([]map[uint64]bool, len(loops))
	for i, l := range loops {
		heads[l.Head] = append(heads[l.Head], i)
		latch[i] = map[uint64]bool{}
		for _, a := range l.Latches {
			latch[i][a] = true
		}
	}
	runs = make([]int, len(loops))
	cur := make([]int, len(loops))
	// A frame is one call in progress: where it returns to, sp at the call, and the last
	// instruction it ran.
	type frame struct {
		ret, sp uint64
		prev    uint64
		ran     bool
	}
	frames := []frame{{ret: fwsim.ReturnAddress, sp: m.StackTop()}}
	var last fwsim.Inst // the instruction that ran last, and sp before it
	var lastSP uint64
	started := false
	res, err = m.Trace(entry, func(in fwsim.Inst) {
		n := len(frames)
		switch {
		case !started:
			started = true
		case (last.Kind == fwsim.JAL || last.Kind == fwsim.JALR) && last.Rd != 0:
			frames = append(frames, frame{ret: m.Reg(int(last.Rd)), sp: lastSP})
		case n > 1 && in.PC == frames[n-1].ret && m.Reg(2) == frames[n-1].sp:
			frames = frames[:n-1]
		}
		f := &frames[len(frames)-1]
		for _, i := range heads[in.PC] {
			if f.ran && latch[i][f.prev] {
				cur[i]++
			} else {
				cur[i] = 1
			}
			runs[i] = max(runs[i], cur[i])
		}
		f.prev, f.ran = in.PC, true
		last, lastSP = in, m.Reg(2)
	}, args...)
	return runs, res, err
}
