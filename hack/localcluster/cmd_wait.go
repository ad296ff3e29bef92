package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"repot.dev/repot-operator/hack/localcluster/cluster"
)

func init() {
	register(newWaitCommand)
	register(newDownCommand)
	register(newEnvCommand)
}

func layoutFlag(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, "dir", defaultDir, "state dir of the local cluster")
}

func layoutOf(dir string) (cluster.Layout, error) {
	abs, err := filepath.Abs(dir)
	return cluster.Layout{Dir: abs}, err
}

func newWaitCommand() *cobra.Command {
	var dir string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "wait",
		Short: "Wait until a local cluster started with `up` is ready; prints the kubeconfig path",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			l, err := layoutOf(dir)
			if err != nil {
				return err
			}
			deadline := time.Now().Add(timeout)
			for {
				if _, err := os.Stat(l.ReadyFile()); err == nil {
					fmt.Println(l.Kubeconfig())
					return nil
				}
				if _, alive := runningPID(l); !alive && time.Since(deadline.Add(-timeout)) > 5*time.Second {
					return fmt.Errorf("no local cluster is running with state dir %s (see its log)", l.Dir)
				}
				if time.Now().After(deadline) {
					return fmt.Errorf("local cluster in %s not ready after %v", l.Dir, timeout)
				}
				time.Sleep(200 * time.Millisecond)
			}
		},
	}
	layoutFlag(cmd, &dir)
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "how long to wait")
	return cmd
}

func newDownCommand() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop the local cluster that `up` runs with this state dir",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			l, err := layoutOf(dir)
			if err != nil {
				return err
			}
			pid, alive := runningPID(l)
			if !alive {
				fmt.Println("no local cluster running in", l.Dir)
				return nil
			}
			_ = syscall.Kill(pid, syscall.SIGTERM)
			for i := 0; i < 600; i++ {
				if syscall.Kill(pid, 0) != nil {
					fmt.Println("local cluster stopped")
					return nil
				}
				time.Sleep(100 * time.Millisecond)
			}
			_ = syscall.Kill(pid, syscall.SIGKILL)
			return fmt.Errorf("local cluster (pid %d) did not stop within 60s; killed it", pid)
		},
	}
	layoutFlag(cmd, &dir)
	return cmd
}

func newEnvCommand() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "env",
		Short: "Print the shell line that points kubectl at the local cluster",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			l, err := layoutOf(dir)
			if err != nil {
				return err
			}
			fmt.Printf("export KUBECONFIG=%s\n", l.Kubeconfig())
			return nil
		},
	}
	layoutFlag(cmd, &dir)
	return cmd
}
