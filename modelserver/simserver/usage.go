package simserver

import (
	"strings"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/prompt"
)

// messageOverhead is the tokens a chat template adds per message.
const messageOverhead = 4

// promptTokens counts a prompt's tokens from its text.
func promptTokens(msgs []contract.Message) int {
	n := 0
	for _, m := range msgs {
		n += Tokens(m.Content) + messageOverhead
	}
	return n
}

// cacheBlock is the prefix-cache block size in tokens.
const cacheBlock = 16

// cachedTokens is a deterministic stand-in for prefix caching: the system
// message is always cached, and so is the stable part of the user message
// (up to an Attempt line or the checkpoint marker) when the prompt is a
// later call about a problem the server has already been asked. Whole
// blocks only. Arrival order plays no part.
func cachedTokens(msgs []contract.Message, d Decision) int {
	n := 0
	for _, m := range msgs {
		switch m.Role {
		case contract.RoleSystem:
			n += Tokens(m.Content) + messageOverhead
		case contract.RoleUser:
			if d.Mode == ModeChat {
				continue
			}
			if cut := stableEnd(m.Content); cut > 0 {
				n += Tokens(m.Content[:cut]) + messageOverhead
			}
		}
	}
	return n / cacheBlock * cacheBlock
}

// stableEnd is where the part shared with the problem's first prompt ends,
// or 0 for a first prompt.
func stableEnd(text string) int {
	if i := strings.Index(text, "\n"+prompt.Marker); i >= 0 {
		return i
	}
	// A VEX chunk prompt after the run's first: its stable part was sent
	// before (the first chunk starts with no verified move, no message).
	if i := strings.Index(text, "\n"+prompt.ChunkMarker); i >= 0 && !strings.Contains(text[i:], "\nVerified moves so far: 0\n") {
		return i
	}
	if i := strings.Index(text, "\nAttempt: "); i >= 0 {
		return i
	}
	return 0
}
