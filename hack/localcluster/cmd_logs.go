package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

func init() { register(newLogsCommand) }

func newLogsCommand() *cobra.Command {
	var dir, container string
	cmd := &cobra.Command{
		Use:   "logs NAMESPACE/POD",
		Short: "Print a pod's container logs from the process node (DIR/pods/NS/POD-UID/logs)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			l, err := layoutOf(dir)
			if err != nil {
				return err
			}
			ns, pod, ok := strings.Cut(args[0], "/")
			if !ok {
				ns, pod = "default", args[0]
			}
			dirs, _ := filepath.Glob(filepath.Join(l.Pods(), ns, pod+"-*", "logs"))
			if len(dirs) == 0 {
				return fmt.Errorf("no logs of pod %s/%s under %s", ns, pod, l.Pods())
			}
			logs := dirs[len(dirs)-1]
			files, _ := filepath.Glob(filepath.Join(logs, "*.log"))
			for _, f := range files {
				name := strings.TrimSuffix(filepath.Base(f), ".log")
				if container != "" && name != container {
					continue
				}
				if container == "" && len(files) > 1 {
					fmt.Printf("==> %s <==\n", name)
				}
				r, err := os.Open(f)
				if err != nil {
					return err
				}
				_, _ = io.Copy(os.Stdout, r)
				r.Close()
			}
			return nil
		},
	}
	layoutFlag(cmd, &dir)
	cmd.Flags().StringVarP(&container, "container", "c", "", "container name")
	return cmd
}
