package nodeagent

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path"
	"strings"
)

// DefaultImagePatterns are the images a process node runs: the project's
// image under any registry and tag.
var DefaultImagePatterns = []string{"repot-operator", "repot"}

// ImageMatcher decides which images a process node can run. A pattern
// without "/" and ":" names a repository (the last path element of the image
// without tag or digest, e.g. "repot-operator" matches
// "ghcr.io/acme/repot-operator:v1"); any other pattern is a path.Match glob
// over the whole image reference.
type ImageMatcher struct {
	Patterns []string
}

// Runnable reports whether image is the project's own image.
func (m ImageMatcher) Runnable(image string) bool {
	repo := repository(image)
	for _, p := range m.Patterns {
		if !strings.ContainsAny(p, "/:") {
			if ok, _ := path.Match(p, repo); ok {
				return true
			}
			continue
		}
		if ok, _ := path.Match(p, image); ok {
			return true
		}
	}
	return false
}

// repository returns the last path element of an image reference without
// its tag or digest.
func repository(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	if i := strings.LastIndex(image, "/"); i >= 0 {
		image = image[i+1:]
	}
	if i := strings.Index(image, ":"); i >= 0 {
		image = image[:i]
	}
	return image
}

// hostBinaryImageID is the imageID a process node reports for every
// container: the repot binary on the host that stands in for the image,
// "process://<path>@sha256:<hex>" with the sha256 of the binary's bytes, so
// that status.models[].provenance records which build ran (a digest of the
// host binary, not of any container image). Without a readable binary it is
// "process://<path>".
func hostBinaryImageID(binary string) string {
	f, err := os.Open(binary)
	if err != nil {
		return "process://" + binary
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "process://" + binary
	}
	return "process://" + binary + "@sha256:" + hex.EncodeToString(h.Sum(nil))
}

// imageID is hostBinaryImageID of the agent's binary, computed once.
func (a *Agent) imageID() string {
	a.imageIDOnce.Do(func() { a.imageIDValue = hostBinaryImageID(a.o.RepotBinary) })
	return a.imageIDValue
}
