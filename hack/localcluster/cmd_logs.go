package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

func init() { register(newLogsCommand) }

// newLogsCommand prints a pod's container logs as `kubectl logs` does:
// through the API server, from the node's kubelet.
func newLogsCommand() *cobra.Command {
	var (
		cf        clientFlags
		container string
	)
	cmd := &cobra.Command{
		Use:   "logs [NAMESPACE/]POD",
		Short: "Print a pod's container logs (every container's, init containers first, without -c), read from the kubelet through the API server",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, pod, ok := strings.Cut(args[0], "/")
			if !ok {
				ns, pod = cf.namespace, args[0]
			}
			cfg, err := cf.config()
			if err != nil {
				return err
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			return printLogs(cmd.Context(), cs, ns, pod, container, os.Stdout)
		},
	}
	cf.add(cmd)
	cmd.Flags().StringVarP(&container, "container", "c", "", "container name (default: every container)")
	return cmd
}

func printLogs(ctx context.Context, cs kubernetes.Interface, ns, pod, container string, out io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	containers := []string{container}
	if container == "" {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return err
		}
		containers = nil
		for _, c := range append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
			containers = append(containers, c.Name)
		}
	}
	for _, c := range containers {
		if len(containers) > 1 {
			fmt.Fprintf(out, "==> %s <==\n", c)
		}
		r, err := cs.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: c}).Stream(ctx)
		if err != nil {
			if len(containers) > 1 {
				fmt.Fprintf(out, "(%v)\n", err)
				continue
			}
			return err
		}
		_, err = io.Copy(out, r)
		r.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
