package nodeagent

import "testing"

func TestIPAllocator(t *testing.T) {
	a := NewIPAllocator(0)
	first, _ := a.Allocate()
	second, _ := a.Allocate()
	if first != "127.0.0.2" || second != "127.0.0.3" {
		t.Fatalf("got %s, %s; want 127.0.0.2, 127.0.0.3", first, second)
	}
	a.Release(first)
	third, _ := a.Allocate()
	if third != "127.0.0.4" {
		t.Errorf("released address reused at once: got %s, want 127.0.0.4", third)
	}
	// Skips .255 and .0.
	a.next = 0xfe
	x, _ := a.Allocate()
	y, _ := a.Allocate()
	if x != "127.0.0.254" || y != "127.0.1.1" {
		t.Errorf("got %s, %s; want 127.0.0.254, 127.0.1.1", x, y)
	}
}

func TestIPAllocatorBlock(t *testing.T) {
	a := NewIPAllocator(7)
	ip, _ := a.Allocate()
	if ip != "127.7.0.2" {
		t.Errorf("got %s, want 127.7.0.2", ip)
	}
}
