package methods

import (
	"context"
	"errors"

	"repot.dev/repot-operator/contract"
)

// selfConsistency draws up to k CoT samples. (Skeleton: replaced.)
func selfConsistency(_ context.Context, _ *run, method string) (contract.Record, contract.Trace, error) {
	return contract.Record{}, contract.Trace{}, errors.New(method + " is not implemented yet")
}
