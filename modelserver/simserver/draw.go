package simserver

import (
	"crypto/sha256"
	"encoding/binary"
	"strconv"

	"repot.dev/repot-operator/contract"
)

// drawer yields reproducible uniform numbers in [0,1) from a key, one
// independent stream per label. Nothing here depends on arrival order.
type drawer struct{ key [32]byte }

// promptKey hashes the seed and the whole prompt (roles and contents).
func promptKey(seed int64, msgs []contract.Message) drawer {
	h := sha256.New()
	h.Write([]byte("repot-simulation/v1\x00" + strconv.FormatInt(seed, 10) + "\x00"))
	for _, m := range msgs {
		h.Write([]byte(m.Role + "\x00" + m.Content + "\x00"))
	}
	var d drawer
	copy(d.key[:], h.Sum(nil))
	return d
}

// problemKey hashes the seed and the problem alone, shared by every attempt
// at it (for correlated retries).
func problemKey(seed int64, env string, initial, goal []byte) drawer {
	h := sha256.New()
	h.Write([]byte("repot-simulation/problem\x00" + strconv.FormatInt(seed, 10) + "\x00" + env + "\x00"))
	h.Write(initial)
	h.Write([]byte{0})
	h.Write(goal)
	var d drawer
	copy(d.key[:], h.Sum(nil))
	return d
}

// u is the draw for label, uniform in [0,1).
func (d drawer) u(label string) float64 {
	return float64(d.bits(label)>>11) / (1 << 53)
}

func (d drawer) bits(label string) uint64 {
	h := sha256.New()
	h.Write(d.key[:])
	h.Write([]byte(label))
	return binary.BigEndian.Uint64(h.Sum(nil)[:8])
}

// pick chooses an index with probability proportional to weights[i].
func pick(u float64, weights []float64) int {
	total := 0.0
	for _, w := range weights {
		if w > 0 {
			total += w
		}
	}
	if total <= 0 {
		return 0
	}
	x := u * total
	for i, w := range weights {
		if w <= 0 {
			continue
		}
		if x < w {
			return i
		}
		x -= w
	}
	return len(weights) - 1
}
