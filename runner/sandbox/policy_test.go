package sandbox

import (
	"context"
	"testing"
)

// TestAllowedPrograms guards against false rejections: idioms that planning
// programs written by models commonly use must pass the static check and
// run.
func TestAllowedPrograms(t *testing.T) {
	f := newFixture(t, testOptions)
	tests := []struct{ name, code, stdout string }{
		{"typing and dataclasses", `from typing import List, Tuple, Dict, Optional, Set, Deque
from dataclasses import dataclass, field

@dataclass(frozen=True)
class State:
    pegs: Tuple[Tuple[int, ...], ...]
    extra: List[int] = field(default_factory=list)

print(State(((1,), ())).pegs)
`, "((1,), ())\n"},
		{"classes with super and slots", `class Base:
    __slots__ = ("x",)
    def __init__(self, x):
        self.x = x
    def __repr__(self):
        return f"Base({self.x})"
    def __lt__(self, other):
        return self.x < other.x

class Child(Base):
    __slots__ = ()
    def __init__(self, x):
        super().__init__(x + 1)

print(sorted([Child(3), Child(1)]), type(Child(1)).__name__)
`, "[Base(2), Base(4)] Child\n"},
		{"search with heapq and deque", `import heapq
from collections import deque, defaultdict, Counter, namedtuple
import itertools, functools, math, bisect, copy

P = namedtuple("P", "a b")
q = deque([P(1, 2)])
h = []
heapq.heappush(h, (2, "b")); heapq.heappush(h, (1, "a"))

@functools.lru_cache(maxsize=None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

print(heapq.heappop(h), q.popleft().b, fib(30), math.gcd(12, 18), list(itertools.permutations([1, 2]))[1],
      bisect.bisect([1, 3], 2), copy.deepcopy({"a": [1]}), Counter("aab")["a"], defaultdict(int)[5])
`, "(1, 'a') 2 832040 6 (2, 1) 1 {'a': [1]} 2 0\n"},
		{"json re enum random", `import json, re, random, enum
from fractions import Fraction
from decimal import Decimal
from collections.abc import Iterable

class Dir(enum.Enum):
    UP = 1
    DOWN = 2

random.seed(1)
r = random.Random(2)
print(json.dumps({"m": [1, 2]}), re.findall(r"\d", "a1b2"), Dir.UP.name, Dir(2),
      Fraction(1, 3) + Fraction(1, 6), Decimal("0.1") + Decimal("0.2"), isinstance([], Iterable), r.random() < 1)
`, "{\"m\": [1, 2]} ['1', '2'] UP Dir.DOWN 1/2 0.3 True True\n"},
		{"sys, main guard, exit", `import sys
sys.setrecursionlimit(5000)

def main():
    print("moves =", [(0, 1)], file=sys.stdout)
    sys.stdout.flush()

if __name__ == "__main__":
    main()
    sys.exit(0)
`, "moves = [(0, 1)]\n"},
		{"getattr with a plain name", `class A:
    x = 5
print(getattr(A, "x"), hasattr(A, "y"), getattr(A, "y", 7))
`, "5 False 7\n"},
		{"queue and time", `import queue, time
q = queue.Queue()
q.put(1)
start = time.time()
print(q.get(), time.time() >= start)
`, "1 True\n"},
		{"docstrings may mention dunders", `class P:
    """Implements __eq__ and __hash__ so states can go in sets: {x.__class__}."""
    def __init__(self, v):
        self.v = v
    def __eq__(self, o):
        return self.v == o.v
    def __hash__(self):
        return hash(self.v)

print(len({P(1), P(1), P(2)}))
`, "2\n"},
		{"string module and format", `import string
print(string.ascii_lowercase[:3], "{} {:>3}".format(1, 2), f"{3:02d}", "%d" % 4)
`, "abc 1   2 03 4\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := f.sb.Run(context.Background(), tt.code)
			if err != nil {
				t.Fatal(err)
			}
			if r.Failure != "" || r.Stdout != tt.stdout {
				t.Errorf("Failure %q stdout %q, want \"\" and %q\nstderr %s", r.Failure, r.Stdout, tt.stdout, r.Stderr)
			}
		})
	}
}
