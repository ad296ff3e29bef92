package repot

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"repot.dev/repot-operator/envs"
)

func init() { register(newSuiteCommand) }

// newSuiteCommand is `repot suite list|export NAME [--problems FILE]`.
func newSuiteCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "suite",
		Short: "List or export the problems of an evaluation suite",
	}
	var listFile, exportFile string
	list := &cobra.Command{
		Use:   "list NAME",
		Short: "Print one problem id per line, in suite order",
		Long: "Print one problem id per line, in suite order. Built-in suites: " +
			fmt.Sprint(envs.SuiteNames()[:2]) + "; planbench-378 and derail-550 need --problems FILE (path or URL).",
		Args: cobra.RangeArgs(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			ids, err := suiteIDs(args, listFile)
			if err != nil {
				return err
			}
			w := bufio.NewWriter(c.OutOrStdout())
			for _, id := range ids {
				fmt.Fprintln(w, id)
			}
			return w.Flush()
		},
	}
	list.Flags().StringVar(&listFile, "problems", "", "JSONL file (path or URL) to read the suite from: PuzzleZoo schema, PlanBench, or Derail cases")
	export := &cobra.Command{
		Use:   "export NAME",
		Short: "Write the problems as JSONL in the PuzzleZoo schema",
		Args:  cobra.RangeArgs(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 && args[0] == envs.SuiteDerail {
				return fmt.Errorf("suite %s holds recovery cases, not problems in the PuzzleZoo schema: list their ids with `repot suite list %s --problems FILE`", envs.SuiteDerail, envs.SuiteDerail)
			}
			ps, err := suiteProblems(args, exportFile)
			if err != nil {
				return err
			}
			return writeProblems(c.OutOrStdout(), ps)
		},
	}
	export.Flags().StringVar(&exportFile, "problems", "", "JSONL file (path or URL) in the PuzzleZoo schema to export instead of a built-in suite")
	cmd.AddCommand(list, export)
	return cmd
}

// suiteProblems returns a built-in suite, or the problems of --problems
// (checked as PlanBench records when the suite named is planbench-378).
func suiteProblems(args []string, file string) ([]envs.Problem, error) {
	if file != "" {
		if len(args) == 1 && args[0] == envs.SuitePlanBench {
			return envs.LoadPlanBench(file)
		}
		return envs.LoadProblemsFile(file)
	}
	if len(args) != 1 {
		return nil, fmt.Errorf("give a suite name (%v) or --problems FILE", envs.SuiteNames())
	}
	return envs.Suite(args[0])
}

// suiteIDs returns the ids of a suite in order: problem ids, or case ids
// for derail-550 read from --problems.
func suiteIDs(args []string, file string) ([]string, error) {
	if file != "" && len(args) == 1 && args[0] == envs.SuiteDerail {
		cases, err := envs.LoadDerail(file)
		if err != nil {
			return nil, err
		}
		ids := make([]string, len(cases))
		for i, c := range cases {
			ids[i] = c.CaseID
		}
		return ids, nil
	}
	ps, err := suiteProblems(args, file)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.ProblemID
	}
	return ids, nil
}

// writeProblems writes one problem per line, keys sorted.
func writeProblems(out io.Writer, ps []envs.Problem) error {
	w := bufio.NewWriter(out)
	for i := range ps {
		b, err := json.Marshal(&ps[i])
		if err != nil {
			return fmt.Errorf("problem %s: %v", ps[i].ProblemID, err)
		}
		// A bufio.Writer keeps its first error and Flush returns it.
		_, _ = w.Write(b)
		_ = w.WriteByte('\n')
	}
	return w.Flush()
}
