// Package buildinfo is the repot binary's version and VCS revision: a leaf
// of the standard library only, so that the operator (which records its
// build on the children it creates) and the engine (which records it in a
// run's provenance) read it from one place without importing each other.
package buildinfo
