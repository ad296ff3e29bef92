package schedule

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
)

// provRun is a finished run of one simulated model "m" with a provenance.
func provRun(name string, p *repotv1.ModelProvenance) *repotv1.RepotEvaluation {
	e := revtesting.MakeEvaluation(name, "ns").Simulated("m", "strong", 1).Obj()
	e.Status.ProblemsHash, e.Status.SandboxMode = "sha256:aa", "seccomp"
	e.Status.Models = []repotv1.ModelStatus{{Name: "m", Provenance: p}}
	return e
}

// baseProv is the provenance of a run whose runner reported.
func baseProv() *repotv1.ModelProvenance {
	return &repotv1.ModelProvenance{
		Images: []repotv1.ContainerImage{
			{Pod: "server", Container: "server", Image: "repot:dev", ImageID: "repot@sha256:111"},
			{Pod: "runner", Container: "run", Image: "repot:dev", ImageID: "repot@sha256:111"},
		},
		ServerArgs:         []string{"repot", "sim-server", "--profile", "strong"},
		OperatorVersion:    "v0.4.0",
		OperatorCommit:     "abc",
		ServedModels:       []repotv1.ServedModel{{ID: "sim-strong", Root: "repot-simulation/strong"}},
		Sampling:           []repotv1.NameValue{{Name: "max_tokens", Value: "16384"}, {Name: "temperature", Value: "0"}},
		ChatTemplateKwargs: []repotv1.NameValue{{Name: "enable_thinking", Value: "false"}},
		RepotVersion:       "(devel)",
		RepotCommit:        "abc",
	}
}

func TestProvenanceDifferences(t *testing.T) {
	cases := []struct {
		name string
		cur  func(p *repotv1.ModelProvenance, e *repotv1.RepotEvaluation)
		want []string
	}{{
		name: "identical but for time: no differences",
		cur:  func(*repotv1.ModelProvenance, *repotv1.RepotEvaluation) {},
	}, {
		name: "another runner image",
		cur: func(p *repotv1.ModelProvenance, _ *repotv1.RepotEvaluation) {
			p.Images[1].Image, p.Images[1].ImageID = "repot:next", "repot@sha256:222"
		},
		want: []string{"model m: runner container run image: repot@sha256:111 -> repot@sha256:222"},
	}, {
		name: "another sampling temperature",
		cur:  func(p *repotv1.ModelProvenance, _ *repotv1.RepotEvaluation) { p.Sampling[1].Value = "0.7" },
		want: []string{"model m: sampling temperature: 0 -> 0.7"},
	}, {
		name: "thinking on, another profile, another problem set, another runner build",
		cur: func(p *repotv1.ModelProvenance, e *repotv1.RepotEvaluation) {
			p.ChatTemplateKwargs = nil
			p.ServerArgs[3] = "weak"
			p.RepotCommit = "def"
			e.Status.ProblemsHash = "sha256:bb"
		},
		want: []string{
			"problem set: sha256:aa -> sha256:bb",
			"model m: server args: repot sim-server --profile strong -> repot sim-server --profile weak",
			"model m: chat template kwarg enable_thinking: false -> (unset)",
			"model m: runner repot commit: abc -> def",
		},
	}, {
		name: "servers created by another operator build",
		cur: func(p *repotv1.ModelProvenance, _ *repotv1.RepotEvaluation) {
			p.OperatorVersion, p.OperatorCommit = "v0.5.0", "def"
		},
		want: []string{"model m: operator version: v0.4.0 -> v0.5.0", "model m: operator commit: abc -> def"},
	}, {
		name: "an operator build only one run recorded is no difference",
		cur: func(p *repotv1.ModelProvenance, _ *repotv1.RepotEvaluation) {
			p.OperatorVersion, p.OperatorCommit = "", ""
		},
	}, {
		name: "a runner that did not report is no difference",
		cur: func(p *repotv1.ModelProvenance, _ *repotv1.RepotEvaluation) {
			p.ServedModels, p.Sampling, p.ChatTemplateKwargs, p.RepotVersion, p.RepotCommit = nil, nil, nil, "", ""
			p.Images = p.Images[:1] // nor is a container only one run reported
		},
	}, {
		name: "a run without provenance (from before it was recorded) is no difference",
		cur: func(_ *repotv1.ModelProvenance, e *repotv1.RepotEvaluation) {
			e.Status.Models[0].Provenance = nil
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := provRun("base", baseProv())
			p := baseProv()
			cur := provRun("cur", p)
			tc.cur(p, cur)
			if diff := cmp.Diff(tc.want, provenanceDifferences(cur, base)); diff != "" {
				t.Errorf("differences (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProvenanceDifferencesBounded(t *testing.T) {
	base, p := provRun("base", baseProv()), baseProv()
	cur := provRun("cur", p)
	p.Sampling, base.Status.Models[0].Provenance.Sampling = nil, nil
	for i := 0; i < 40; i++ {
		p.Sampling = append(p.Sampling, repotv1.NameValue{Name: fmt.Sprintf("k%02d", i), Value: "1"})
		base.Status.Models[0].Provenance.Sampling = append(base.Status.Models[0].Provenance.Sampling, repotv1.NameValue{Name: fmt.Sprintf("k%02d", i), Value: "2"})
	}
	got := provenanceDifferences(cur, base)
	if len(got) != maxDifferences || got[maxDifferences-1] != "and 9 more differences" {
		t.Errorf("%d differences, last %q; want %d ending with the count of the rest", len(got), got[len(got)-1], maxDifferences)
	}
}
