package methods

import (
	"fmt"
	"strings"

	"repot.dev/repot-operator/runner/model"
)

var errInfra = &model.InfraError{Cause: fmt.Errorf("connection reset"), Attempts: 4, Retryable: true}

// errHugeInfra quotes a long server reply, as a proxy's error page would.
var errHugeInfra = &model.InfraError{Cause: fmt.Errorf("502 from proxy: %s", strings.Repeat("<html>bad gateway é</html>\n", 500)), Attempts: 4, Retryable: true}
