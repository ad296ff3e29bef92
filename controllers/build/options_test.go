package build

var testOpts = Options{Image: "repot-operator:test"}
