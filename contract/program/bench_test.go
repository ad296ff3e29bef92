package program

import (
	"fmt"
	"strings"
	"testing"
)

// hanoiReply is a typical model reply: reasoning, a fenced program, prose.
func hanoiReply() (reply, stdout string) {
	code := `def hanoi(n, a, b, c, out):
    if n == 0:
        return
    hanoi(n - 1, a, c, b, out)
    out.append((a, c))
    hanoi(n - 1, b, a, c, out)

moves = []
hanoi(10, 0, 1, 2, moves)
print("moves =", moves)
`
	reply = "<think>Let me think about the recursion.</think>\nHere is the program:\n```python\n" +
		code + "```\nIt prints 1023 moves."
	var b strings.Builder
	b.WriteString("moves = [")
	for i := 0; i < 1023; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%d, %d)", i%3, (i+1)%3)
	}
	b.WriteString("]\n")
	return reply, b.String()
}

func BenchmarkExtract(b *testing.B) {
	reply, _ := hanoiReply()
	b.SetBytes(int64(len(reply)))
	for b.Loop() {
		if Extract(reply) == "" {
			b.Fatal("empty")
		}
	}
}

func BenchmarkParseMoves1023(b *testing.B) {
	reply, stdout := hanoiReply()
	code := Extract(reply)
	b.SetBytes(int64(len(stdout)))
	for b.Loop() {
		m, err := ParseMoves(stdout, code)
		if err != nil || len(m) != 1023 {
			b.Fatal(len(m), err)
		}
	}
}

func BenchmarkExtractAndParse(b *testing.B) {
	reply, stdout := hanoiReply()
	for b.Loop() {
		code := Extract(reply)
		if _, err := ParseMoves(stdout, code); err != nil {
			b.Fatal(err)
		}
	}
}
