package artifacts

// Object is one stored object as a manifest lists it.
type Object struct {
	Key    string `json:"key"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// Lines is the number of JSONL lines (traces) the object holds.
	Lines int `json:"lines,omitempty"`
}

// Progress is what a shard's uploader has done, for the ledger and the
// evaluation's status.
type Progress struct {
	Objects int   `json:"objects"`
	Bytes   int64 `json:"bytes"`
	// PendingBytes are written locally and not yet in the store.
	PendingBytes int64 `json:"pendingBytes,omitempty"`
	// LostBytes were given up on at the end (the store stayed unreachable).
	LostBytes int64 `json:"lostBytes,omitempty"`
	Final     bool  `json:"final,omitempty"`
	// LastError is the last failure while the store is failing ("" once an
	// upload succeeds).
	LastError string `json:"lastError,omitempty"`
}
