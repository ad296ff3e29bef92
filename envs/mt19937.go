package envs

// pyRandom is a port of CPython's random.Random (the Mersenne Twister
// MT19937 with init_by_array seeding), enough of it to reproduce
// random.Random(seed).shuffle exactly.
type pyRandom struct {
	mt  [624]uint32
	idx int
}

// newPyRandom returns the generator of Python's random.Random(seed) for a
// non-negative int seed that fits in 32 bits (CPython seeds through
// init_by_array with the seed's 32-bit words; 0 gives init_by_array([0])).
func newPyRandom(seed uint32) *pyRandom {
	r := &pyRandom{}
	r.initByArray([]uint32{seed})
	return r
}

func (r *pyRandom) initGenrand(s uint32) {
	r.mt[0] = s
	for i := 1; i < 624; i++ {
		r.mt[i] = 1812433253*(r.mt[i-1]^(r.mt[i-1]>>30)) + uint32(i)
	}
	r.idx = 624
}

func (r *pyRandom) initByArray(key []uint32) {
	r.initGenrand(19650218)
	i, j := 1, 0
	k := 624
	if len(key) > k {
		k = len(key)
	}
	for ; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= 624 {
			r.mt[0] = r.mt[623]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k = 623; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= 624 {
			r.mt[0] = r.mt[623]
			i = 1
		}
	}
	r.mt[0] = 0x80000000
	r.idx = 624
}

func (r *pyRandom) genrandUint32() uint32 {
	const upper, lower, matrixA = 0x80000000, 0x7fffffff, 0x9908b0df
	if r.idx >= 624 {
		for kk := 0; kk < 624; kk++ {
			y := (r.mt[kk] & upper) | (r.mt[(kk+1)%624] & lower)
			v := r.mt[(kk+397)%624] ^ (y >> 1)
			if y&1 != 0 {
				v ^= matrixA
			}
			r.mt[kk] = v
		}
		r.idx = 0
	}
	y := r.mt[r.idx]
	r.idx++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// getrandbits returns k random bits (1 <= k <= 64), as CPython does: whole
// 32-bit words from least significant up, the last word's top bits.
func (r *pyRandom) getrandbits(k int) uint64 {
	if k <= 32 {
		return uint64(r.genrandUint32() >> (32 - k))
	}
	lo := uint64(r.genrandUint32())
	hi := uint64(r.genrandUint32() >> (64 - k))
	return lo | hi<<32
}

// randbelow is CPython's _randbelow_with_getrandbits: draw bit_length(n)
// bits until the value is below n.
func (r *pyRandom) randbelow(n int) int {
	if n <= 0 {
		return 0
	}
	k := bitLength(uint64(n))
	v := r.getrandbits(k)
	for v >= uint64(n) {
		v = r.getrandbits(k)
	}
	return int(v)
}

func bitLength(x uint64) int {
	n := 0
	for ; x != 0; x >>= 1 {
		n++
	}
	return n
}

// shuffle permutes n items in place like random.shuffle: for i from n-1
// down to 1, swap i with randbelow(i+1).
func (r *pyRandom) shuffle(n int, swap func(i, j int)) {
	for i := n - 1; i > 0; i-- {
		swap(i, r.randbelow(i+1))
	}
}
