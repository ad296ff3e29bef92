// Command repot is the one binary of repot-operator: the operator, the runner,
// the simulated model server and the tools around them (cmd/repot).
package main

import "repot.dev/repot-operator/cmd/repot"

func main() { repot.Main() }
