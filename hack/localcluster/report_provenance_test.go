package main

import (
	"bytes"
	"testing"

	"k8s.io/utils/ptr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

func TestPrintProvenance(t *testing.T) {
	m := repotv1.ModelStatus{Name: "sim-strong", Provenance: &repotv1.ModelProvenance{
		Images: []repotv1.ContainerImage{
			{Pod: "server", Container: "server", Image: "repot-operator:dev", ImageID: "process:///repo/bin/repot@sha256:ab12"},
			{Pod: "runner", Container: "run", Image: "repot-operator:dev"},
		},
		ServedModels:       []repotv1.ServedModel{{ID: "sim-strong", Root: "repot-simulation/strong", MaxModelLen: ptr.To[int64](131072)}},
		Sampling:           []repotv1.NameValue{{Name: "max_tokens", Value: "16384"}, {Name: "temperature", Value: "0"}},
		ChatTemplateKwargs: []repotv1.NameValue{{Name: "enable_thinking", Value: "false"}},
		RepotVersion:       "(devel)",
		RepotCommit:        "abc",
	}}
	var b bytes.Buffer
	printProvenance(&b, &m)
	want := `  image: server/server: process:///repo/bin/repot@sha256:ab12
  image: runner/run: repot-operator:dev (no digest reported)
  served model (/v1/models): sim-strong, root repot-simulation/strong, max_model_len 131072
  sampling: max_tokens: 16384
  sampling: temperature: 0
  chat_template_kwargs: enable_thinking: false
  runner repot version: (devel)
  runner repot commit: abc
`
	if b.String() != want {
		t.Errorf("printed:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	printProvenance(&b, &repotv1.ModelStatus{Name: "x"})
	if b.Len() != 0 {
		t.Errorf("printed %q for a model without provenance", b.String())
	}
}
