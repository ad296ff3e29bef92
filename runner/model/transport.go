package model

import (
	"net"
	"net/http"
	"time"
)

// NewTransport is the HTTP transport of the model client (and of the
// runner's other calls to the server): keep-alive pools sized for many
// concurrent calls. Names resolve as the pod's resolver says (the
// cluster's DNS).
func NewTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 1024
	t.MaxIdleConnsPerHost = 512
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	t.DialContext = d.DialContext
	return t
}
