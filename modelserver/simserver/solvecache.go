package simserver

import (
	"encoding/json"
	"sync"

	"repot.dev/repot-operator/envs"
)

// solveCacheSize bounds the plan cache (entries).
const solveCacheSize = 8192

// solveCache remembers plans by (environment, start, goal): the same
// problem is asked by several methods, and a repair's state recurs.
var solveCache = struct {
	sync.Mutex
	m map[string][]envs.Action
}{m: map[string][]envs.Action{}}

// solve is envs.Solve with a bounded cache. The plan returned is shared:
// callers must not modify it.
func solve(e envs.Env, from, goal envs.State) ([]envs.Action, error) {
	fj, err1 := json.Marshal(from)
	gj, err2 := json.Marshal(goal)
	if err1 != nil || err2 != nil {
		return envs.Solve(e, from, goal)
	}
	key := e.Name() + "\x00" + string(fj) + "\x00" + string(gj)
	solveCache.Lock()
	plan, ok := solveCache.m[key]
	solveCache.Unlock()
	if ok {
		return plan, nil
	}
	plan, err := envs.Solve(e, from, goal)
	if err != nil {
		return nil, err
	}
	solveCache.Lock()
	if len(solveCache.m) >= solveCacheSize {
		clear(solveCache.m)
	}
	solveCache.m[key] = plan
	solveCache.Unlock()
	return plan, nil
}
