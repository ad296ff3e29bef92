package methods

import (
	"context"
	"errors"

	"repot.dev/repot-operator/contract"
)

// vex is verified execution. (Skeleton: replaced.)
func vex(_ context.Context, _ *run, method string) (contract.Record, contract.Trace, error) {
	return contract.Record{}, contract.Trace{}, errors.New(method + " is not implemented yet")
}

// runVEXCondition runs a vex-* Derail condition. (Skeleton: replaced.)
func runVEXCondition(_ context.Context, _ Deps, _ Options, _ DerailTask, condition string) (contract.Record, contract.Trace, error) {
	return contract.Record{}, contract.Trace{}, errors.New(condition + " is not implemented yet")
}
