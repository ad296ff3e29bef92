package repot

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"repot.dev/repot-operator/envs"
)

func init() { register(newVerifyCommand) }

// newVerifyCommand is `repot verify --conformance FILE`.
func newVerifyCommand() *cobra.Command {
	var conformance, planbench string
	var problems []string
	cmd := &cobra.Command{
		Use:   "verify --conformance FILE",
		Short: "Replay recorded verifier transitions and report agreement",
		Long: "Replays every line of a verifier conformance JSONL file through the Go environments and\n" +
			"compares validity, error kind, normalized action, next state, goal check and the number of\n" +
			"legal moves (messages are not compared). Prints `agree N/M`, lists the first disagreements\n" +
			"and exits non-zero if any line disagrees. Goals come from the generated PuzzleZoo suite, the\n" +
			"PlanBench file (--planbench, default planbench_blocksworld.jsonl beside the conformance file)\n" +
			"and any --problems files.",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if conformance == "" {
				return fmt.Errorf("--conformance FILE is required")
			}
			lists, err := verifyProblems(conformance, planbench, problems)
			if err != nil {
				return err
			}
			f, err := os.Open(conformance)
			if err != nil {
				return err
			}
			defer f.Close()
			rep, err := envs.CheckConformance(f, envs.IndexProblems(lists...))
			if err != nil {
				return err
			}
			out := c.OutOrStdout()
			fmt.Fprintf(out, "agree %d/%d\n", rep.Agree, rep.Total)
			if rep.Total == 0 {
				return fmt.Errorf("%s holds no transitions", conformance)
			}
			if rep.Agree != rep.Total {
				fmt.Fprintf(out, "first disagreements:\n")
				for _, d := range rep.First {
					fmt.Fprintf(out, "  %s\n", d)
				}
				return fmt.Errorf("%d of %d transitions disagree", rep.Total-rep.Agree, rep.Total)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&conformance, "conformance", "", "verifier conformance JSONL file")
	cmd.Flags().StringVar(&planbench, "planbench", "", "PlanBench JSONL for the blocksworld_pddl goals (default: planbench_blocksworld.jsonl beside the conformance file, if present)")
	cmd.Flags().StringArrayVar(&problems, "problems", nil, "extra problems JSONL files for goals (repeatable)")
	return cmd
}

// verifyProblems gathers the problems whose goals the conformance lines
// refer to: the generated PuzzleZoo suite, the PlanBench file (given, or
// found beside the conformance file) and the extra files.
func verifyProblems(conformance, planbench string, extra []string) ([][]envs.Problem, error) {
	pz, err := envs.Suite(envs.SuitePuzzleZoo)
	if err != nil {
		return nil, err
	}
	lists := [][]envs.Problem{pz}
	if planbench == "" {
		def := filepath.Join(filepath.Dir(conformance), "planbench_blocksworld.jsonl")
		if _, err := os.Stat(def); err == nil {
			planbench = def
		}
	}
	if planbench != "" {
		pb, err := envs.LoadPlanBench(planbench)
		if err != nil {
			return nil, err
		}
		lists = append(lists, pb)
	}
	for _, f := range extra {
		ps, err := envs.LoadProblemsFile(f)
		if err != nil {
			return nil, err
		}
		lists = append(lists, ps)
	}
	return lists, nil
}
