package envs

import (
	"fmt"
	"strings"
)

var outputFormat = map[string]string{
	HanoiName:   "moves = [[disk, from_peg, to_peg], ...]",
	CheckerName: "moves = [[color, from_position, to_position], ...]",
	RiverName:   "moves = [[person, ...], ...]",
	BlocksName:  "moves = [[block, from_stack, to_stack], ...]",
}

// Prompt is the natural-language statement of a PuzzleZoo problem in this
// project's own words: the rules, the start and the goal, the 0-based
// numbering and the exact answer format.
func Prompt(env string, n int, start, goal State) string {
	js := func(s State) string { return string(mustJSON(s)) }
	var b strings.Builder
	switch env {
	case HanoiName:
		fmt.Fprintf(&b, "Puzzle: Tower of Hanoi with %d disks, sized 1 (smallest) to %d (largest).\n", n, n)
		b.WriteString("There are three pegs. Refer to them by 0-based index: 0 is peg A, 1 is peg B, 2 is peg C. Each peg is listed from bottom to top.\n")
		fmt.Fprintf(&b, "Start: every disk is on peg 0, largest at the bottom. State: %s\n", js(start))
		fmt.Fprintf(&b, "Goal: every disk on peg 2 in the same order. State: %s\n", js(goal))
		b.WriteString("Rules: each move takes the top disk of one peg and puts it on another peg; a disk may only be put on an empty peg or on a larger disk.\n")
		b.WriteString("Answer format: a Python list named moves, one [disk, from_peg, to_peg] triple per move, pegs as 0-based indices. Example of the format only:\n")
		b.WriteString("moves = [[1, 0, 2], [2, 0, 1]]")
	case CheckerName:
		fmt.Fprintf(&b, "Puzzle: Checker Jumping with %d red checkers (R) and %d blue checkers (B) on a row of %d cells; _ is the one empty cell.\n", n, n, 2*n+1)
		fmt.Fprintf(&b, "Cells are numbered with 0-based positions, 0 at the far left up to %d at the far right.\n", 2*n)
		fmt.Fprintf(&b, "Start board: %s   State: %s\n", start.(*CheckerState).Board, js(start))
		fmt.Fprintf(&b, "Goal board: %s   State: %s\n", goal.(*CheckerState).Board, js(goal))
		b.WriteString("Rules: R checkers move only to the right and B checkers only to the left, never backwards. A move either slides a checker into the neighbouring empty cell, or jumps it over exactly one checker of the other colour into the empty cell just beyond.\n")
		b.WriteString("Answer format: a Python list named moves, one [color, from_position, to_position] per move with 0-based positions. Example of the format only:\n")
		b.WriteString(`moves = [["R", 0, 1], ["B", 2, 0]]`)
	case RiverName:
		cap := start.(*RiverState).BoatCapacity
		fmt.Fprintf(&b, "Puzzle: River crossing with %d actor/agent pairs (actorK belongs with agentK).\n", n)
		fmt.Fprintf(&b, "Start: everyone and the boat on the left bank. State: %s\n", js(start))
		fmt.Fprintf(&b, "Goal: everyone on the right bank. State: %s\n", js(goal))
		fmt.Fprintf(&b, "Rules: the boat carries between 1 and %d people and never crosses empty; it always leaves from the bank where it is, with people from that bank. After every crossing, on each bank, an actor may not be with another actor's agent unless the actor's own agent is there too.\n", cap)
		b.WriteString("Answer format: a Python list named moves, one list of the people in the boat per crossing (names as strings; the direction alternates, starting left to right). Example of the format only:\n")
		b.WriteString(`moves = [["actor1", "agent1"], ["agent1"]]`)
	case BlocksName:
		fmt.Fprintf(&b, "Puzzle: Blocksworld with %d lettered blocks on three stacks.\n", n)
		b.WriteString("Stacks are referred to by 0-based index (0, 1, 2) and listed from bottom to top.\n")
		fmt.Fprintf(&b, "Start: %s\n", js(start))
		fmt.Fprintf(&b, "Goal: %s\n", js(goal))
		b.WriteString("Rules: one block moves at a time; only the top block of a stack can move, and it goes on top of another stack (which may be empty).\n")
		b.WriteString("Answer format: a Python list named moves, one [block, from_stack, to_stack] per move with 0-based stack indices. Example of the format only:\n")
		b.WriteString(`moves = [["B", 0, 1], ["A", 0, 2]]`)
	default:
		fmt.Fprintf(&b, "Environment %s. Start: %s\nGoal: %s\nAnswer as moves = [...].", env, js(start), js(goal))
	}
	return b.String()
}
