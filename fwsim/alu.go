package fwsim

import (
	"math"
	"math/bits"
)

func sx32(v uint64) uint64 { return uint64(int64(int32(uint32(v)))) }

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func mulh(a, b uint64) uint64 {
	hi, _ := bits.Mul64(a, b)
	if int64(a) < 0 {
		hi -= b
	}
	if int64(b) < 0 {
		hi -= a
	}
	return hi
}

func mulhsu(a, b uint64) uint64 {
	hi, _ := bits.Mul64(a, b)
	if int64(a) < 0 {
		hi -= b
	}
	return hi
}

// RISC-V division never traps: x/0 is all ones (unsigned) or -1 (signed), x%0 is x, and the
// signed overflow MIN/-1 gives MIN with remainder 0.
func div(a, b uint64) uint64 {
	switch {
	case b == 0:
		return math.MaxUint64
	case int64(a) == math.MinInt64 && int64(b) == -1:
		return a
	}
	return uint64(int64(a) / int64(b))
}

func divu(a, b uint64) uint64 {
	if b == 0 {
		return math.MaxUint64
	}
	return a / b
}

func rem(a, b uint64) uint64 {
	switch {
	case b == 0:
		return a
	case int64(a) == math.MinInt64 && int64(b) == -1:
		return 0
	}
	return uint64(int64(a) % int64(b))
}

func remu(a, b uint64) uint64 {
	if b == 0 {
		return a
	}
	return a % b
}

func divw(a, b uint64) uint64 {
	x, y := int32(a), int32(b)
	switch {
	case y == 0:
		return math.MaxUint64
	case x == math.MinInt32 && y == -1:
		return uint64(int64(x))
	}
	return uint64(int64(x / y))
}

func divuw(a, b uint64) uint64 {
	x, y := uint32(a), uint32(b)
	if y == 0 {
		return math.MaxUint64
	}
	return sx32(uint64(x / y))
}

func remw(a, b uint64) uint64 {
	x, y := int32(a), int32(b)
	switch {
	case y == 0:
		return uint64(int64(x))
	case x == math.MinInt32 && y == -1:
		return 0
	}
	return uint64(int64(x % y))
}

func remuw(a, b uint64) uint64 {
	x, y := uint32(a), uint32(b)
	if y == 0 {
		return sx32(uint64(x))
	}
	return sx32(uint64(x % y))
}

// cpop is bits.OnesCount64 without its CPU feature check, which would hold a register in
// exec's loop.
func cpop(v uint64) uint64 {
	v -= v >> 1 & 0x5555555555555555
	v = v&0x3333333333333333 + v>>2&0x3333333333333333
	v = (v + v>>4) & 0x0f0f0f0f0f0f0f0f
	return v * 0x0101010101010101 >> 56
}

func orcb(v uint64) uint64 {
	var out uint64
	for i := 0; i < 64; i += 8 {
		if v>>i&0xff != 0 {
			out |= 0xff << i
		}
	}
	return out
}
