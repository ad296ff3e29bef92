package sandbox

import (
	"strings"
	"testing"
)

func TestParseMinimum(t *testing.T) {
	tests := []struct {
		in      string
		want    Minimum
		wantErr bool
	}{
		{"", MinSeccomp, false},
		{"seccomp", MinSeccomp, false},
		{"seccomp+landlock", MinSeccompLandlock, false},
		{"seccomp+namespaces", MinSeccompNamespaces, false},
		{"none", MinNone, false},
		{"landlock", "", true},
		{"SECCOMP", "", true},
	}
	for _, tt := range tests {
		got, err := ParseMinimum(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseMinimum(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestMeetsMinimum checks the fail-closed decision on what a child reported.
func TestMeetsMinimum(t *testing.T) {
	tests := []struct {
		min         Minimum
		confinement string
		wantErr     string // substring; "" means accepted
	}{
		{MinSeccomp, "seccomp, landlock ABI 6", ""},
		{MinSeccomp, "seccomp, landlock off", ""},
		{MinSeccomp, "no seccomp (errno 22), landlock ABI 6", "seccompProfile"},
		{MinSeccomp, "no seccomp (not in force), no landlock", "could not be installed"},
		{MinSeccompLandlock, "seccomp, landlock ABI 6", ""},
		{MinSeccompLandlock, "seccomp, no landlock", "Landlock is required"},
		{MinSeccompLandlock, "seccomp, landlock off", "Landlock is required"},
		{MinNone, "no seccomp (errno 22), no landlock", ""},
	}
	for _, tt := range tests {
		p := &Python{opts: Options{Min: tt.min}, confinement: tt.confinement}
		err := p.meetsMinimum()
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("min %s, %q: unexpected error %v", tt.min, tt.confinement, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("min %s, %q: error %v, want one mentioning %q", tt.min, tt.confinement, err, tt.wantErr)
		}
	}
}

func TestFilterProgramAssembles(t *testing.T) {
	b, err := FilterProgram()
	if err != nil {
		t.Skipf("no seccomp syscall table for this architecture: %v", err)
	}
	if len(b) == 0 || len(b)%8 != 0 || len(b)/8 > 4096 {
		t.Errorf("filter is %d bytes, want a non-empty multiple of 8 within the kernel's 4096 instructions", len(b))
	}
}
