package envs

import "testing"

// BenchmarkHanoiReplay replays the 1,023-move optimal plan for 10 disks
// and reports the cost per move.
func BenchmarkHanoiReplay(b *testing.B) {
	e := mustEnv(b, HanoiName)
	start, goal, _ := InitialAndGoal(HanoiName, 10)
	plan, err := Solve(e, start, goal)
	if err != nil || len(plan) != 1023 {
		b.Fatalf("plan: %d moves, %v", len(plan), err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := start
		for _, a := range plan {
			st := e.Step(s, a)
			if !st.Valid {
				b.Fatal(st.Message)
			}
			s = st.Next
		}
		if !e.IsGoal(s, goal) {
			b.Fatal("not at goal")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(plan)), "ns/move")
}

func benchSolve(b *testing.B, env string, n int) {
	e := mustEnv(b, env)
	start, goal, _ := InitialAndGoal(env, n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Solve(e, start, goal); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSolveHanoi10(b *testing.B)  { benchSolve(b, HanoiName, 10) }
func BenchmarkSolveChecker9(b *testing.B) { benchSolve(b, CheckerName, 9) }
func BenchmarkSolveRiver4(b *testing.B)   { benchSolve(b, RiverName, 4) }
func BenchmarkSolveBlocks7(b *testing.B)  { benchSolve(b, BlocksName, 7) }
func BenchmarkSolveBlocks12(b *testing.B) { benchSolve(b, BlocksName, 12) }

func BenchmarkSolvePDDL12(b *testing.B) {
	e := mustEnv(b, PDDLName)
	from := mustState(b, e, `{"blocks":["a","b","c","d","e","f","g","h","i","j","k","l"],"clear":["a","e","i"],"holding":null,"on":{"a":"b","b":"c","c":"d","e":"f","f":"g","g":"h","i":"j","j":"k","k":"l"},"ontable":["d","h","l"]}`)
	goal := mustState(b, e, `{"blocks":["a","b","c","d","e","f","g","h","i","j","k","l"],"clear":[],"holding":null,"on":{"d":"c","c":"b","b":"a","h":"g","g":"f","f":"e","l":"k","k":"j","j":"i","a":"l"},"ontable":[]}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Solve(e, from, goal); err != nil {
			b.Fatal(err)
		}
	}
}
