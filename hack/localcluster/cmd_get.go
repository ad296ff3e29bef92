package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

func init() { register(newGetCommand) }

func newGetCommand() *cobra.Command {
	var cf clientFlags
	var all, wide bool
	cmd := &cobra.Command{
		Use:   "get RESOURCE [NAME]",
		Short: "Print resources as `kubectl get` does (the API server's table, with its printer columns)",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := ""
			if len(args) == 2 {
				name = args[1]
			}
			cfg, _, mapper, disc, err := cf.clients()
			if err != nil {
				return err
			}
			ns := cf.namespace
			if all {
				ns = ""
			}
			expander := restmapper.NewShortcutExpander(mapper, disc, nil)
			return getTable(cmd.Context(), cfg, expander, args[0], name, ns, wide, os.Stdout)
		},
	}
	cf.add(cmd)
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "all namespaces")
	cmd.Flags().BoolVar(&wide, "wide", false, "include the columns kubectl shows with -o wide")
	return cmd
}

// getTable fetches resource (plural, singular or short name) as a
// meta.k8s.io Table and prints it.
func getTable(ctx context.Context, cfg *rest.Config, mapper meta.RESTMapper, resource, name, ns string, wide bool, out io.Writer) error {
	gvr, err := mapper.ResourceFor(schema.GroupVersionResource{Resource: strings.ToLower(resource)})
	if err != nil {
		return fmt.Errorf("resource %q: %w", resource, err)
	}
	gvk, err := mapper.KindFor(gvr)
	if err != nil {
		return err
	}
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	p := "/apis/" + gvr.Group + "/" + gvr.Version
	if gvr.Group == "" {
		p = "/api/" + gvr.Version
	}
	namespaced := m.Scope.Name() == meta.RESTScopeNameNamespace
	if namespaced && ns != "" {
		p += "/namespaces/" + ns
	}
	p += "/" + gvr.Resource
	if name != "" {
		p += "/" + name
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return err
	}
	u.Path = path.Join(u.Path, p)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var st metav1.Status
		if json.Unmarshal(body, &st) == nil && st.Message != "" {
			return fmt.Errorf("%s", st.Message)
		}
		return fmt.Errorf("GET %s: %s", p, resp.Status)
	}
	var t metav1.Table
	if err := json.Unmarshal(body, &t); err != nil {
		return fmt.Errorf("decoding table: %w", err)
	}
	if len(t.Rows) == 0 {
		if ns != "" && namespaced {
			fmt.Fprintf(out, "No resources found in %s namespace.\n", ns)
		} else {
			fmt.Fprintln(out, "No resources found")
		}
		return nil
	}
	printTable(out, &t, namespaced && ns == "", wide, time.Now())
	return nil
}

// printTable prints t as kubectl does: upper-case headers, priority-0
// columns (all with wide), dates as ages.
func printTable(out io.Writer, t *metav1.Table, withNamespace, wide bool, now time.Time) {
	tw := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
	defer tw.Flush()
	var cols []int
	var head []string
	if withNamespace {
		head = append(head, "NAMESPACE")
	}
	for i, c := range t.ColumnDefinitions {
		if c.Priority != 0 && !wide {
			continue
		}
		cols = append(cols, i)
		head = append(head, strings.ToUpper(c.Name))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range t.Rows {
		var cells []string
		if withNamespace {
			var m metav1.PartialObjectMetadata
			_ = json.Unmarshal(r.Object.Raw, &m)
			cells = append(cells, m.Namespace)
		}
		for _, i := range cols {
			var v any
			if i < len(r.Cells) {
				v = r.Cells[i]
			}
			cells = append(cells, formatCell(v, t.ColumnDefinitions[i], now))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
}

func formatCell(v any, col metav1.TableColumnDefinition, now time.Time) string {
	if v == nil {
		return "<none>"
	}
	if s, ok := v.(string); ok && (col.Type == "date" || col.Format == "date") {
		if ts, err := time.Parse(time.RFC3339, s); err == nil {
			return duration.HumanDuration(now.Sub(ts))
		}
	}
	switch x := v.(type) {
	case float64:
		if x == float64(int64(x)) {
			return fmt.Sprintf("%d", int64(x))
		}
		return fmt.Sprintf("%g", x)
	case string:
		return x
	}
	return fmt.Sprint(v)
}
