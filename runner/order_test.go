package runner

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/envs"
)

func TestExpectedReplyTokens(t *testing.T) {
	tests := []struct {
		name string
		p    envs.Problem
		want int
	}{
		{"hanoi from min_steps", envs.Problem{Environment: "tower_of_hanoi", Complexity: 10, MinSteps: 1023}, 60 + (1023*51+3)/4},
		{"hanoi from complexity", envs.Problem{Environment: "tower_of_hanoi", Complexity: 10}, 60 + (1023*51+3)/4},
		{"river moves are longer", envs.Problem{Environment: "river_crossing", Complexity: 4, MinSteps: 9}, 60 + (9*84+3)/4},
		{"checker from complexity", envs.Problem{Environment: "checker_jumping", Complexity: 3}, 60 + (15*51+3)/4},
		{"blocksworld from complexity", envs.Problem{Environment: "blocksworld", Complexity: 5}, 60 + (11*50+3)/4},
		{"unknown environment", envs.Problem{Environment: "sokoban", Complexity: 4}, 60 + (4*50+3)/4},
		{"no complexity", envs.Problem{Environment: "blocksworld"}, 60 + (1*50+3)/4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExpectedReplyTokens(&tt.p); got != tt.want {
				t.Errorf("ExpectedReplyTokens = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestOrderJobs(t *testing.T) {
	problems := []envs.Problem{
		{ProblemID: "bw5", Environment: "blocksworld", Complexity: 5, MinSteps: 11},
		{ProblemID: "hanoi8", Environment: "tower_of_hanoi", Complexity: 8, MinSteps: 255},
		{ProblemID: "river2", Environment: "river_crossing", Complexity: 2, MinSteps: 3},
		{ProblemID: "hanoi3", Environment: "tower_of_hanoi", Complexity: 3, MinSteps: 7},
	}
	ids := func(order Order) []string {
		cfg := Config{Problems: problems, Methods: []string{"pot", "repot"}}
		jobs, _ := cfg.jobs()
		orderJobs(jobs, order)
		var out []string
		for _, j := range jobs {
			out = append(out, j.id+"/"+j.method)
		}
		return out
	}
	tests := []struct {
		order Order
		want  []string
	}{
		{OrderSuite, []string{"bw5/pot", "bw5/repot", "hanoi8/pot", "hanoi8/repot", "river2/pot", "river2/repot", "hanoi3/pot", "hanoi3/repot"}},
		{OrderLongestFirst, []string{"hanoi8/pot", "hanoi8/repot", "bw5/pot", "bw5/repot", "hanoi3/pot", "hanoi3/repot", "river2/pot", "river2/repot"}},
		{"", []string{"hanoi8/pot", "hanoi8/repot", "bw5/pot", "bw5/repot", "hanoi3/pot", "hanoi3/repot", "river2/pot", "river2/repot"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.order), func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ids(tt.order)); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
}
