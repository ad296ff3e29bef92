package envs

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// BlocksName is the stack-form Blocksworld environment's name.
const BlocksName = "blocksworld"

// BlocksState is a stack-form Blocksworld position: Stacks (three in
// PuzzleZoo) of block letters from bottom to top.
type BlocksState struct {
	Blocks []string   `json:"blocks"`
	Stacks [][]string `json:"stacks"`
}

// MarshalJSON encodes {"blocks":[...],"stacks":[[...],...]}.
func (s *BlocksState) MarshalJSON() ([]byte, error) {
	type plain BlocksState
	c := plain{Blocks: strList(s.Blocks), Stacks: make([][]string, len(s.Stacks))}
	for i, st := range s.Stacks {
		c.Stacks[i] = strList(st)
	}
	return json.Marshal(&c)
}

func (s *BlocksState) clone() *BlocksState {
	c := &BlocksState{Blocks: s.Blocks, Stacks: make([][]string, len(s.Stacks))}
	for i, st := range s.Stacks {
		c.Stacks[i] = append(make([]string, 0, len(st)+1), st...)
	}
	return c
}

// BlocksAction moves the top block of stack From onto stack To.
type BlocksAction struct {
	Block string `json:"block"`
	From  int    `json:"from"`
	To    int    `json:"to"`
	Type  string `json:"type"`
}

// MarshalJSON encodes {"block":"A","from":0,"to":2,"type":"move"}.
func (a *BlocksAction) MarshalJSON() ([]byte, error) {
	type plain BlocksAction
	return json.Marshal((*plain)(a))
}

type blocksEnv struct{}

func init() { registerEnv(blocksEnv{}) }

func (blocksEnv) Name() string { return BlocksName }

func (blocksEnv) DecodeState(data []byte) (State, error) {
	var s BlocksState
	if err := strictDecode(data, &s); err != nil {
		return nil, fmt.Errorf("blocksworld state: %v", err)
	}
	if len(s.Stacks) == 0 {
		return nil, fmt.Errorf("blocksworld state: no stacks")
	}
	seen := map[string]bool{}
	for _, st := range s.Stacks {
		for _, b := range st {
			if seen[b] {
				return nil, fmt.Errorf("blocksworld state: block %q appears twice", b)
			}
			seen[b] = true
		}
	}
	return s.clone(), nil
}

func (blocksEnv) DecodeAction(data []byte) (Action, error) {
	var a BlocksAction
	if err := strictDecode(data, &a); err != nil {
		return nil, fmt.Errorf("blocksworld action: %v", err)
	}
	if a.Type != "move" {
		return nil, fmt.Errorf("blocksworld action: type %q, want \"move\"", a.Type)
	}
	return &a, nil
}

// blocksStackIndex reads a stack index such as 1, "1" or "stack_1".
func blocksStackIndex(v any) (int, error) {
	if s, ok := v.(string); ok {
		t := strings.TrimSpace(s)
		for _, p := range []string{"stack_", "stack ", "stack", "Stack_", "Stack "} {
			if strings.HasPrefix(t, p) {
				t = strings.TrimPrefix(t, p)
				break
			}
		}
		v = t
	}
	return pyInt(v)
}

func (blocksEnv) Normalize(_ *Problem, _ State, raw json.RawMessage) (Action, error) {
	v, err := decodeRaw(raw)
	if err != nil {
		return nil, err
	}
	l, ok := asList(v)
	if !ok || len(l) != 3 {
		return nil, fmt.Errorf("BlocksWorld move must be [block, from_stack, to_stack].")
	}
	block, ok := l[0].(string)
	if !ok {
		return nil, fmt.Errorf("BlocksWorld move must be [block, from_stack, to_stack]: the block must be a letter such as \"A\", not %s.", pyRepr(l[0]))
	}
	from, err := blocksStackIndex(l[1])
	if err != nil {
		return nil, err
	}
	to, err := blocksStackIndex(l[2])
	if err != nil {
		return nil, err
	}
	return &BlocksAction{Block: block, From: from, To: to, Type: "move"}, nil
}

func (blocksEnv) Step(s State, a Action) Step {
	bs, ok1 := s.(*BlocksState)
	ba, ok2 := a.(*BlocksAction)
	if !ok1 || !ok2 || bs == nil || ba == nil {
		return Step{Kind: InvalidTransition, Message: "Malformed BlocksWorld move."}
	}
	n := len(bs.Stacks)
	if ba.From < 0 || ba.From >= n || ba.To < 0 || ba.To >= n || ba.From == ba.To {
		return Step{Kind: InvalidTransition, Message: fmt.Sprintf("Malformed BlocksWorld move: from_stack and to_stack must be two different stacks numbered 0 to %d.", n-1)}
	}
	src := bs.Stacks[ba.From]
	if len(src) == 0 || src[len(src)-1] != ba.Block {
		top := "nothing (it is empty)"
		if len(src) > 0 {
			top = src[len(src)-1]
		}
		return Step{Kind: InvalidTransition, Message: fmt.Sprintf("Block is not clear/on top of source stack: %s is not the top block of stack %d; the top there is %s.", ba.Block, ba.From, top)}
	}
	c := bs.clone()
	c.Stacks[ba.From] = c.Stacks[ba.From][:len(src)-1]
	c.Stacks[ba.To] = append(c.Stacks[ba.To], ba.Block)
	return Step{Next: c, Valid: true}
}

func (blocksEnv) IsGoal(s, goal State) bool {
	a, ok1 := s.(*BlocksState)
	b, ok2 := goal.(*BlocksState)
	if !ok1 || !ok2 || len(a.Stacks) != len(b.Stacks) {
		return false
	}
	for i := range a.Stacks {
		if !slices.Equal(a.Stacks[i], b.Stacks[i]) {
			return false
		}
	}
	return true
}

func (blocksEnv) Legal(s State) []Action {
	bs, ok := s.(*BlocksState)
	if !ok {
		return nil
	}
	var out []Action
	for f, st := range bs.Stacks {
		if len(st) == 0 {
			continue
		}
		for t := range bs.Stacks {
			if t != f {
				out = append(out, &BlocksAction{Block: st[len(st)-1], From: f, To: t, Type: "move"})
			}
		}
	}
	return out
}

// RawMove renders [block, from_stack, to_stack].
func (blocksEnv) RawMove(a Action) json.RawMessage {
	ba, ok := a.(*BlocksAction)
	if !ok {
		return json.RawMessage("null")
	}
	b, _ := json.Marshal([]any{ba.Block, ba.From, ba.To})
	return b
}
