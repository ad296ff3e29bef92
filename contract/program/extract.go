// Package program turns a model's reply into a plan: Extract pulls the
// Python program out of the reply, and ParseMoves reads the `moves = [...]`
// line the program printed (or, failing that, wrote in its source).
//
// Nothing here executes code; running the program is runner/sandbox's job.
// Every error returned is a model failure with a human-readable reason,
// never an infrastructure failure.
package program

import (
	"strings"
)

// Extract returns the program contained in a model reply: any
// <think>...</think> section is removed first, then the longest fenced code
// block (``` or ~~~, with or without an info string such as "python") is
// returned; when the reply has no fenced block, the whole remaining reply,
// trimmed, is returned.
//
// A fence left open at the end of the reply (a truncated answer) counts as a
// block running to the end. Ties between blocks of equal length go to the
// first one.
func Extract(reply string) string {
	text := stripThink(reply)
	best, found := "", false
	for _, b := range fencedBlocks(text) {
		if !found || len(b) > len(best) {
			best, found = b, true
		}
	}
	if found {
		return best
	}
	return strings.TrimSpace(text)
}

// stripThink removes reasoning sections. Closed <think>...</think> pairs are
// cut out; a </think> with no opening tag before it (some chat templates put
// the opening tag in the prompt) cuts everything before it; an opening tag
// that is never closed cuts everything after it.
func stripThink(s string) string {
	const open, closeTag = "<think>", "</think>"
	if c := strings.Index(s, closeTag); c >= 0 {
		if o := strings.Index(s, open); o < 0 || o > c {
			s = s[c+len(closeTag):]
		}
	}
	var b strings.Builder
	for {
		o := strings.Index(s, open)
		if o < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:o])
		rest := s[o+len(open):]
		c := strings.Index(rest, closeTag)
		if c < 0 {
			break
		}
		s = rest[c+len(closeTag):]
	}
	return b.String()
}

// fencedBlocks returns the contents of every fenced code block in text, in
// order. A fence is a line whose first non-blank characters are at least
// three backticks or tildes; the block closes at a line holding only a fence
// of the same character at least as long, or at a line ending in the opening
// fence (models often glue the closing fence to the last line of code).
func fencedBlocks(text string) []string {
	var blocks []string
	lines := strings.SplitAfter(text, "\n")
	for i := 0; i < len(lines); i++ {
		fence, ok := openingFence(lines[i])
		if !ok {
			continue
		}
		var body strings.Builder
		closed := false
		for i++; i < len(lines); i++ {
			line := lines[i]
			trimmed := strings.TrimSpace(line)
			if isClosingFence(trimmed, fence) {
				closed = true
				break
			}
			if strings.HasSuffix(trimmed, fence) {
				body.WriteString(strings.TrimRight(strings.TrimRight(line, " \t\r\n"), fence[:1]))
				closed = true
				break
			}
			body.WriteString(line)
		}
		blocks = append(blocks, strings.TrimSpace(body.String()))
		if !closed {
			break
		}
	}
	return blocks
}

// openingFence reports whether line opens a fenced block and returns the
// fence string (the run of backticks or tildes).
func openingFence(line string) (string, bool) {
	t := strings.TrimLeft(line, " \t")
	if len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return "", false
	}
	ch := t[0]
	n := 0
	for n < len(t) && t[n] == ch {
		n++
	}
	if n < 3 {
		return "", false
	}
	info := strings.TrimSpace(t[n:])
	// An info string never contains a backtick; "```x```" is inline code.
	if ch == '`' && strings.Contains(info, "`") {
		return "", false
	}
	return t[:n], true
}

// isClosingFence reports whether trimmed (a whole line without surrounding
// blanks) closes a block opened with fence.
func isClosingFence(trimmed, fence string) bool {
	if len(trimmed) < len(fence) {
		return false
	}
	for i := 0; i < len(trimmed); i++ {
		if trimmed[i] != fence[0] {
			return false
		}
	}
	return true
}
