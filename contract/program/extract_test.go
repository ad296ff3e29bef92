package program

import "testing"

func TestExtract(t *testing.T) {
	tests := []struct {
		name, reply, want string
	}{
		{"plain reply", "  print('moves = []')\n", "print('moves = []')"},
		{"one block", "Here:\n```python\nprint(1)\n```\nDone.", "print(1)"},
		{"longest of two", "```\na\n```\ntext\n```py\nlonger code\n```", "longer code"},
		{"tie goes to first", "```\nab\n```\n```\ncd\n```", "ab"},
		{"think removed", "<think>```\nthinking code that is long\n```</think>\n```\nreal\n```", "real"},
		{"think only prefix closed", "reasoning ```\nlong long long\n```\n</think>```\nx\n```", "x"},
		{"unclosed think", "```\nok\n```<think>```\nvery long reasoning block\n```", "ok"},
		{"two thinks", "<think>a</think>mid<think>b</think>end", "midend"},
		{"truncated fence", "```python\nprint(1)\nprint(2)", "print(1)\nprint(2)"},
		{"tilde fence", "~~~python\nx = 1\n~~~", "x = 1"},
		{"longer closing fence", "````\nx\n`````\n", "x"},
		{"shorter fence does not close", "````\na\n```\nb\n````", "a\n```\nb"},
		{"glued closing fence", "```python\nif x:\n    print(1)```\nafter", "if x:\n    print(1)"},
		{"indented fence", "  ```python\n  x = 1\n  ```", "x = 1"},
		{"inline code is not a fence", "use ```x``` here", "use ```x``` here"},
		{"crlf", "```python\r\nx = 1\r\n```\r\n", "x = 1"},
		{"empty reply", "", ""},
		{"only think", "<think>hmm</think>", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Extract(tt.reply); got != tt.want {
				t.Errorf("Extract(%q) = %q, want %q", tt.reply, got, tt.want)
			}
		})
	}
}
