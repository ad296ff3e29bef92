package model

import "fmt"

// InfraError is a call that failed for reasons outside the model (connection
// reset, 5xx, 429, timeout, or a non-retryable 4xx such as a bad API key)
// after the client's retries. It is recorded apart from model failures.
type InfraError struct {
	// Cause is the last attempt's error.
	Cause error
	// Attempts is how many attempts were made (retries = Attempts-1).
	Attempts int
	// StatusCode is the last HTTP status, 0 when none was received.
	StatusCode int
	// Retryable reports whether the last cause was of a retryable kind (the
	// retries ran out) rather than a permanent rejection.
	Retryable bool
}

// Error says how many attempts were made and why the last one failed.
func (e *InfraError) Error() string {
	return fmt.Sprintf("model call failed after %d attempt(s): %v", e.Attempts, e.Cause)
}

// Unwrap returns the cause.
func (e *InfraError) Unwrap() error { return e.Cause }

// Retries is the number of retries made before giving up.
func (e *InfraError) Retries() int {
	if e.Attempts <= 0 {
		return 0
	}
	return e.Attempts - 1
}
