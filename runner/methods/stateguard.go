package methods

import (
	"context"
	"errors"

	"repot.dev/repot-operator/contract"
)

// runStateGuard runs the stateguard-rollback Derail condition. (Skeleton:
// replaced.)
func runStateGuard(_ context.Context, _ Deps, _ Options, _ DerailTask) (contract.Record, contract.Trace, error) {
	return contract.Record{}, contract.Trace{}, errors.New(contract.CondStateGuard + " is not implemented yet")
}
