package envs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Reference values from CPython: random.Random(0).getrandbits(32) x3,
// and random.Random(0) shuffling list(range(10)).
func TestPyRandom(t *testing.T) {
	r := newPyRandom(0)
	got := []uint64{r.getrandbits(32), r.getrandbits(32), r.getrandbits(32)}
	want := []uint64{3626764237, 1654615998, 3255389356}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("getrandbits (-want +got):\n%s", d)
	}
	xs := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	newPyRandom(0).shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
	if d := cmp.Diff([]int{7, 8, 1, 5, 3, 4, 2, 0, 9, 6}, xs); d != "" {
		t.Errorf("shuffle (-want +got):\n%s", d)
	}
}

// TestPyRandomWideBitsAndSeeds checks getrandbits above 32 bits (two words,
// least significant first) and a non-zero seed against CPython:
// r = random.Random(0); [r.getrandbits(40), r.getrandbits(64), r.getrandbits(1)]
// and random.Random(12345).getrandbits(32).
func TestPyRandomWideBitsAndSeeds(t *testing.T) {
	r := newPyRandom(0)
	got := []uint64{r.getrandbits(40), r.getrandbits(64), r.getrandbits(1), newPyRandom(12345).getrandbits(32)}
	want := []uint64{424533559245, 16422101724900707500, 0, 1789368711}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("getrandbits (-want +got):\n%s", d)
	}
}
