package buildinfo

import (
	"runtime/debug"
)

// linkedVersion and linkedRevision are set at link time, e.g. by the
// Dockerfile from its VERSION and REVISION build arguments (-ldflags "-X
// repot.dev/repot-operator/contract/buildinfo.linkedVersion=..."): an image
// build has no .git to stamp VCS information from.
var (
	linkedVersion  string
	linkedRevision string
)

// Version is the repot binary's version and the VCS revision it was built
// from: the values set at link time when there are, else
// runtime/debug.ReadBuildInfo's module version ("(devel)" for a source
// build) and vcs.revision (with "-dirty" when the tree had changes; "" when
// the build recorded none).
func Version() (version, commit string) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = &debug.BuildInfo{}
	}
	version, commit = fromBuildInfo(bi)
	if linkedVersion != "" {
		version = linkedVersion
	}
	if linkedRevision != "" {
		commit = linkedRevision
	}
	return version, commit
}

func fromBuildInfo(bi *debug.BuildInfo) (version, commit string) {
	version = bi.Main.Version
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if commit != "" && dirty {
		commit += "-dirty"
	}
	return version, commit
}
