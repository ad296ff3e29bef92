package methods

import (
	"context"
	"errors"

	"repot.dev/repot-operator/contract"
)

// cot is chain of thought: one plain prompt for the whole move list.
// (Skeleton: the cot helper replaces this file.)
func cot(_ context.Context, _ *run, method string) (contract.Record, contract.Trace, error) {
	return contract.Record{}, contract.Trace{}, errors.New(method + " is not implemented yet")
}
