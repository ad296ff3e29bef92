package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"regexp"
	"strings"
	"testing"

	"repot.dev/repot-operator/contract"
)

var svgElement = regexp.MustCompile(`(?s)<svg .*?</svg>`)

// FuzzRenderNames: names come from records, which come from model replies'
// runs, ledgers and files a report reads; whatever they hold, the page
// renders, carries no markup from them, and every chart is well-formed XML.
func FuzzRenderNames(f *testing.F) {
	f.Add("sim-strong", "tower_of_hanoi", "pot", "p1")
	f.Add("<script>alert(1)</script>", "env\"><img src=x>", "repot", "]]>&amp;")
	f.Add("http://example.com/x", "", "m\x00", "p")
	f.Fuzz(func(t *testing.T, model, env, method, problem string) {
		if model == "" || method == "" || problem == "" {
			return // ReadRecords refuses such records
		}
		recs := []contract.Record{
			{Model: model, ProblemID: problem, Environment: env, Complexity: 1, Method: method, Success: true, Route: contract.RouteInitialSuccess, InitialSuccess: true, Calls: 1},
			{Model: model + "2", ProblemID: problem, Environment: env, Complexity: 2, Method: contract.MethodRePoT, Route: contract.RouteSuffixRepair, Calls: 2, InitialPrefixPermille: 500},
			{Model: model + "2", ProblemID: problem, Environment: env, Complexity: 2, Method: contract.MethodPoTRetry, Route: contract.RouteFreshRetry, Calls: 2},
		}
		src := FromRecords(model, OriginRunDir, recs)
		src.Models = []ModelInfo{{Name: model, ServedBy: ServedUnknown, Detail: env}}
		var b bytes.Buffer
		if err := Render(&b, Report{Title: method, Sources: []Source{src}}); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		for _, bad := range []string{"<script", "<img"} {
			if strings.Contains(page, bad) {
				t.Fatalf("page contains %q", bad)
			}
		}
		for _, svg := range svgElement.FindAllString(page, -1) {
			d := xml.NewDecoder(strings.NewReader(svg))
			d.Strict = true
			for {
				_, err := d.Token()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("chart is not well-formed: %v", err)
				}
			}
		}
	})
}
