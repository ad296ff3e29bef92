package reporttest

import "testing"

func TestUpperHalfInFirstScreen(t *testing.T) {
	tests := []struct {
		name string
		c    Chart
		want bool
	}{
		{"whole chart in view", Chart{Top: 250, Bottom: 713, Height: 463}, true},
		{"upper half ends at the fold", Chart{Top: 500, Bottom: 1300, Height: 800}, true},
		{"upper half crosses the fold", Chart{Top: 809, Bottom: 1324, Height: 515}, false},
		{"below the first screen", Chart{Top: 1200, Bottom: 1600, Height: 400}, false},
		{"not laid out", Chart{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := UpperHalfInFirstScreen(tc.c); got != tc.want {
				t.Errorf("UpperHalfInFirstScreen(%+v) = %v, want %v", tc.c, got, tc.want)
			}
		})
	}
}
