package sandbox_test

import (
	"context"
	"fmt"
	"log"

	"repot.dev/repot-operator/contract/program"
	"repot.dev/repot-operator/runner/sandbox"
)

// Example shows the program-execution step of every method: extract the
// code from the reply, run it, parse the plan. An error from Run is an
// infrastructure failure (retry or record as infra); Failure and a
// ParseMoves error are model failures.
func Example() {
	sb, err := sandbox.NewPython(sandbox.Options{}) // once per process
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Close()
	log.Printf("sandbox isolation: %s", sb.Mode())

	reply := "Here you go:\n```python\nprint('moves =', [(0, 2), (0, 1)])\n```"
	code := program.Extract(reply)
	res, err := sb.Run(context.Background(), code)
	if err != nil {
		log.Fatalf("infrastructure: %v", err)
	}
	if res.Failure != "" {
		fmt.Println("model failure:", res.Failure)
		return
	}
	moves, err := program.ParseMoves(res.Stdout, code)
	if err != nil {
		fmt.Println("model failure:", err)
		return
	}
	fmt.Println(len(moves), string(moves[0]))
}
