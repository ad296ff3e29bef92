package contract

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// CheckBaseURL says whether raw is a URL a runner can call: scheme http or
// https, a host, no query or fragment, and, where it names a port, one
// from 1 to 65535. The runner's --base-url and the model client check it;
// the CRD's rules on spec.models[].endpoint.url say the same in CEL
// (api/v1alpha1), so that a URL the runner would refuse is refused when
// the manifest is applied, not in a pod (spec.problems.url shares them,
// but for a query, which a download URL may carry).
func CheckBaseURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("%q must be an http(s) URL (%v)", raw, err)
	// Written in lower case, as the CRD reads it (url.Parse lowers it).
	case !strings.HasPrefix(raw, "http://") && !strings.HasPrefix(raw, "https://"):
		return fmt.Errorf("%q must be an http(s) URL", raw)
	// The client appends /chat/completions: a query or fragment would
	// end up before it.
	case strings.ContainsAny(raw, "?#"):
		return fmt.Errorf("%q must be an http(s) URL without a query or fragment", raw)
	case u.Hostname() == "":
		return fmt.Errorf("%q must be an http(s) URL with a host", raw)
	}
	if p := u.Port(); p != "" {
		// At most five digits, as the CRD's rule reads a port.
		if n, err := strconv.Atoi(p); err != nil || len(p) > 5 || n < 1 || n > 65535 {
			return fmt.Errorf("%q must be an http(s) URL whose port is from 1 to 65535, not %s", raw, p)
		}
	}
	return nil
}
