package nodeagent

import (
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
