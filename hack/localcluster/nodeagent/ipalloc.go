package nodeagent

import (
	"fmt"
	"sync"
)

// IPAllocator hands out pod IPs in 127.B.0.0/16, starting at 127.B.0.2
// (127.0.0.1 is the host: the API server and etcd listen there). Addresses
// are handed out in order and only reused after the range wraps, so a stale
// hosts entry rarely points at another pod.
type IPAllocator struct {
	mu    sync.Mutex
	block uint32 // B
	next  uint32 // offset in the block
	inUse map[uint32]bool
}

const (
	ipFirst = 2
	ipLast  = 1<<16 - 2 // 127.B.255.254
)

// NewIPAllocator returns an allocator for 127.block.0.0/16 with nothing in
// use.
func NewIPAllocator(block int) *IPAllocator {
	return &IPAllocator{block: uint32(block) & 0xff, next: ipFirst, inUse: map[uint32]bool{}}
}

// Allocate returns a free address.
func (a *IPAllocator) Allocate() (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for range ipLast {
		n := a.next
		a.next++
		if a.next > ipLast {
			a.next = ipFirst
		}
		// Skip .0 and .255 in the last octet: some tools treat them as
		// network or broadcast addresses.
		if b := n & 0xff; b == 0 || b == 0xff || a.inUse[n] {
			continue
		}
		ip := fmt.Sprintf("127.%d.%d.%d", a.block, n>>8&0xff, n&0xff)
		if ip == NoEndpointsIP {
			continue
		}
		a.inUse[n] = true
		return ip, nil
	}
	return "", fmt.Errorf("no free pod IP in 127.%d.0.0/16", a.block)
}

// Release returns ip to the pool.
func (a *IPAllocator) Release(ip string) {
	var b0, b1, b2, b3 uint32
	if _, err := fmt.Sscanf(ip, "%d.%d.%d.%d", &b0, &b1, &b2, &b3); err != nil || b0 != 127 || b1 != a.block {
		return
	}
	a.mu.Lock()
	delete(a.inUse, b2<<8|b3)
	a.mu.Unlock()
}
