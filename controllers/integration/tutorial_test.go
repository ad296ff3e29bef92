package integration_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```")

var _ = Describe("the tutorial", func() {
	It("gives manifests the API server accepts (server-side dry run)", func() {
		root, err := repoRoot()
		Expect(err).NotTo(HaveOccurred())
		doc, err := os.ReadFile(filepath.Join(root, "docs", "tutorial.md"))
		Expect(err).NotTo(HaveOccurred())
		ns := createNamespace("tutorial")
		kinds := map[string]int{}
		for _, m := range yamlBlock.FindAllSubmatch(doc, -1) {
			dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(m[1]), 4096)
			for {
				u := &unstructured.Unstructured{}
				if err := dec.Decode(&u.Object); err != nil {
					break
				}
				if len(u.Object) == 0 {
					continue
				}
				if u.GetKind() != "RuntimeClass" {
					u.SetNamespace(ns)
				}
				Expect(k8s.Create(ctx, u, client.DryRunAll)).To(Succeed(), "%s %s", u.GetKind(), u.GetName())
				kinds[u.GetKind()]++
			}
		}
		Expect(kinds).To(Equal(map[string]int{"PersistentVolumeClaim": 2, "RuntimeClass": 1}))
	})
})
