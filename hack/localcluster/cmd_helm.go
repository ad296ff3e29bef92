package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	"helm.sh/helm/v4/pkg/strvals"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

func init() { register(newHelmInstallCommand) }

// newHelmInstallCommand installs a chart the way Argo CD installs one: the
// chart rendered by Helm's own engine with the given values, its CRDs first,
// then every object server-side applied. No helm binary or Tiller-style
// release record is needed.
func newHelmInstallCommand() *cobra.Command {
	var (
		cf         clientFlags
		release    string
		sets, strs []string
	)
	cmd := &cobra.Command{
		Use:   "helm-install CHART-DIR --namespace NS [--set k=v ...]",
		Short: "Render a Helm chart with Helm's engine and server-side apply it (CRDs first), as Argo CD installs charts",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cf.namespace == "" {
				return fmt.Errorf("--namespace is required")
			}
			return helmInstall(cmd.Context(), cf, args[0], release, sets, strs, os.Stdout)
		},
	}
	cf.add(cmd)
	cmd.Flags().StringVar(&release, "release", "repot-operator", "release name")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "a value, as helm's --set takes it (key=value, a.b=c, list[0]=x)")
	cmd.Flags().StringArrayVar(&strs, "set-string", nil, "a string value, as helm's --set-string takes it")
	return cmd
}

// helmInstall renders the chart in dir with the values and server-side
// applies it into cf.namespace (made, enforcing the restricted Pod Security
// Standard, when missing): its CRDs first, then its objects.
func helmInstall(ctx context.Context, cf clientFlags, dir, release string, sets, strs []string, out io.Writer) error {
	cfg, dyn, mapper, _, err := cf.clients()
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ns := cf.namespace
	crds, objs, err := renderChart(dir, release, ns, sets, strs)
	if err != nil {
		return err
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted",
	}}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if err := applyAll(ctx, dyn, mapper, crds, "", out); err != nil {
		return err
	}
	mapper.Reset()
	return applyAll(ctx, dyn, mapper, objs, ns, out)
}

// renderChart renders the chart's templates with the values and returns its
// CRDs and the rendered objects.
func renderChart(dir, release, ns string, sets, strs []string) (crds, objs []*unstructured.Unstructured, err error) {
	chrt, err := loader.Load(dir)
	if err != nil {
		return nil, nil, err
	}
	values := map[string]any{}
	for _, s := range sets {
		if err := strvals.ParseInto(s, values); err != nil {
			return nil, nil, fmt.Errorf("--set %s: %w", s, err)
		}
	}
	for _, s := range strs {
		if err := strvals.ParseIntoString(s, values); err != nil {
			return nil, nil, fmt.Errorf("--set-string %s: %w", s, err)
		}
	}
	vals, err := util.ToRenderValues(chrt, values, common.ReleaseOptions{Name: release, Namespace: ns, IsInstall: true}, nil)
	if err != nil {
		return nil, nil, err
	}
	files, err := engine.Render(chrt, vals)
	if err != nil {
		return nil, nil, err
	}
	for _, crd := range chrt.CRDObjects() {
		docs, err := decodeDocs(crd.File.Data)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", crd.Filename, err)
		}
		crds = append(crds, docs...)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		if strings.HasSuffix(name, ".yaml") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		docs, err := decodeDocs([]byte(files[name]))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		objs = append(objs, docs...)
	}
	return crds, objs, nil
}

func decodeDocs(data []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(string(data), "\n---") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return nil, err
		}
		if len(u.Object) == 0 {
			continue
		}
		out = append(out, u)
	}
	return out, nil
}
