package ledger

import (
	"context"
	"os"

	"repot.dev/repot-operator/contract"
)

// readProvenance returns the provenance file's content when it is there and
// parses, "" when it is not there yet.
func readProvenance(path string) (string, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if _, err := contract.ParseProvenance(b); err != nil {
		return "", err
	}
	return string(b), nil
}

// syncProvenance copies the provenance file onto the ledger once, when it
// appears and the store can be annotated. A file that does not parse is
// logged and not copied.
func (s *Syncer) syncProvenance(ctx context.Context) {
	if s.ProvenanceFile == "" || s.provenanceDone {
		return
	}
	a, ok := s.Store.(Annotator)
	if !ok {
		s.provenanceDone = true
		return
	}
	p, err := readProvenance(s.ProvenanceFile)
	if err != nil {
		s.Logf("ledger: reading %s: %v", s.ProvenanceFile, err)
		return
	}
	if p == "" {
		return
	}
	if err := a.Annotate(ctx, contract.LedgerProvenanceAnnotation, p); err != nil {
		s.Logf("ledger: %v (will retry)", err)
		return
	}
	s.provenanceDone = true
}
