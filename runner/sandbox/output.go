package sandbox

import (
	"bytes"
	"strings"
	"sync"
)

// capWriter keeps the first limit bytes written to it and accepts (and
// drops) the rest, so the writing process never blocks on a full pipe.
// onExceed, when set, is called once, the first time the limit is passed.
type capWriter struct {
	mu       sync.Mutex
	buf      bytes.Buffer
	limit    int
	exceeded bool
	onExceed func()
}

func (w *capWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	room := w.limit - w.buf.Len()
	if len(p) <= room {
		w.buf.Write(p)
		return len(p), nil
	}
	if room > 0 {
		w.buf.Write(p[:room])
	}
	if !w.exceeded {
		w.exceeded = true
		if w.onExceed != nil {
			w.onExceed()
		}
	}
	return len(p), nil
}

// text returns what was kept, with invalid UTF-8 replaced, and whether the
// limit was passed.
func (w *capWriter) text() (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.ToValidUTF8(w.buf.String(), "\uFFFD"), w.exceeded
}
