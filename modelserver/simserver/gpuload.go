package simserver

// DecodeLoad reports the decode work done so far: tokens decoded and the
// real seconds during which at least one sequence was decoding. It drives
// the SIMULATED GPU of `repot sim-server --fake-gpu`.
func (s *Server) DecodeLoad() (tokens, busySeconds float64) {
	decoded, active, _ := s.dec.stats()
	return decoded, active * s.opt.Latency.Scale
}
