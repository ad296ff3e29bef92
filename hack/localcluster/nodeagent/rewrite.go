package nodeagent

import (
	"regexp"
	"sort"
	"strings"
)

// pathMap maps a container's mount paths to directories of the process node.
type pathMap []pathMapping

type pathMapping struct{ from, to string }

// newPathMap builds a mapping from mountPath to local path; longer mount
// paths win over their prefixes.
func newPathMap(m map[string]string) pathMap {
	out := make(pathMap, 0, len(m))
	for from, to := range m {
		out = append(out, pathMapping{strings.TrimRight(from, "/"), to})
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i].from) != len(out[j].from) {
			return len(out[i].from) > len(out[j].from)
		}
		return out[i].from < out[j].from
	})
	return out
}

// rewrite replaces every occurrence of a mount path in s that stands as a
// path (at the start of s or after a separator such as "=", ":", ",", a quote
// or a space, and followed by the end, "/" or such a separator) with the
// local directory. "/repot/out" becomes "<pod dir>/volumes/repot/out" but
// "/repot/outer" and "x/repot/out" stay as they are.
func (pm pathMap) rewrite(s string) string {
	if len(pm) == 0 || !strings.Contains(s, "/") {
		return s
	}
	var b strings.Builder
	i := 0
outer:
	for i < len(s) {
		if i == 0 || isSep(s[i-1]) {
			for _, m := range pm {
				if m.from == "" || !strings.HasPrefix(s[i:], m.from) {
					continue
				}
				j := i + len(m.from)
				if j == len(s) || s[j] == '/' || isSep(s[j]) {
					b.WriteString(m.to)
					i = j
					continue outer
				}
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

func isSep(c byte) bool {
	switch c {
	case '=', ':', ',', ';', '"', '\'', ' ', '\t', '\n', '(', '[', '{', '@':
		return true
	}
	return false
}

var (
	// bindAll matches a listen address on every interface: ":8000",
	// "0.0.0.0:8000", "[::]:8000", optionally after "--flag=".
	bindAll = regexp.MustCompile(`^((?:-{1,2}[A-Za-z0-9_.-]+=)?)(?:0\.0\.0\.0|\[::\]|)(:[0-9]+)$`)
	// podLocal matches a host:port on the pod's own loopback.
	podLocal = regexp.MustCompile(`\b(?:localhost|127\.0\.0\.1)(:[0-9]+)`)
)

// rewriteAddresses gives a pod its own loopback: on a process node every pod
// shares the host's network, so an address meaning "this pod" (listen on all
// interfaces, or localhost inside the pod) becomes the pod IP. Other pods
// then do not collide on the same port.
func rewriteAddresses(s, podIP string) string {
	if podIP == "" {
		return s
	}
	if m := bindAll.FindStringSubmatch(s); m != nil {
		return m[1] + podIP + m[2]
	}
	return podLocal.ReplaceAllString(s, podIP+"$1")
}
