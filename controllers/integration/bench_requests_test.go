package integration_test

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// requestCounter counts the manager's requests to the API server by verb
// and resource, with their total latency, so that the benchmark can say
// where a reconcile's time goes: the operator spends about 2 ms of CPU per
// pass, the rest is waiting on these requests.
type requestCounter struct {
	mu sync.Mutex
	by map[string]*requestStat
}

type requestStat struct {
	n     int
	total time.Duration
	max   time.Duration
}

// wrap returns a copy of cfg whose requests are counted.
func (rc *requestCounter) wrap(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			start := time.Now()
			resp, err := rt.RoundTrip(req)
			d := time.Since(start)
			rc.add(requestKey(req), d)
			if pr, ok := req.Context().Value(passKey{}).(*passRequests); ok {
				pr.add(requestKey(req), d)
			}
			return resp, err
		})
	})
	return out
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// requestKey is "VERB resource[/subresource]" of a request to the API
// server; watches are "WATCH resource".
func requestKey(req *http.Request) string {
	verb := req.Method
	if req.URL.Query().Get("watch") == "true" {
		verb = "WATCH"
	}
	// .../namespaces/<ns>/<resource>[/<name>[/<subresource>]]
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == "namespaces" && i+2 < len(parts) {
			tail := parts[i+2:]
			res := tail[0]
			if len(tail) == 3 {
				res += "/" + tail[2]
			}
			return verb + " " + res
		}
	}
	return verb + " " + req.URL.Path
}

func (rc *requestCounter) add(key string, d time.Duration) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.by == nil {
		rc.by = map[string]*requestStat{}
	}
	s := rc.by[key]
	if s == nil {
		s = &requestStat{}
		rc.by[key] = s
	}
	s.n++
	s.total += d
	s.max = max(s.max, d)
}

// writes is the number of requests that change something.
func (rc *requestCounter) writes() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for k, s := range rc.by {
		if !strings.HasPrefix(k, "GET ") && !strings.HasPrefix(k, "WATCH ") {
			n += s.n
		}
	}
	return n
}

// table lists the counts, mean and max latency, most frequent first.
func (rc *requestCounter) table() string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	keys := make([]string, 0, len(rc.by))
	for k := range rc.by {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return rc.by[keys[i]].n > rc.by[keys[j]].n })
	var sb strings.Builder
	for _, k := range keys {
		s := rc.by[k]
		fmt.Fprintf(&sb, "%-40s %6d  mean %6.1f ms  max %6.1f ms\n", k, s.n,
			float64(s.total.Microseconds())/1000/float64(s.n), float64(s.max.Microseconds())/1000)
	}
	return sb.String()
}

// passKey carries a reconcile's passRequests in its context.
type passKey struct{}

// passRequests are the requests of one reconcile.
type passRequests struct {
	mu   sync.Mutex
	reqs []string
}

func (p *passRequests) add(key string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reqs = append(p.reqs, fmt.Sprintf("%s %.0fms", key, float64(d.Microseconds())/1000))
}

func (p *passRequests) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.reqs, ", ")
}
