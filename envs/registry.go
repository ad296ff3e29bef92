package envs

import (
	"fmt"
	"sort"
)

// registry maps environment names to their implementations.
var registry = map[string]Env{}

func registerEnv(e Env) { registry[e.Name()] = e }

// Lookup returns the environment with the given name.
func Lookup(name string) (Env, error) {
	e, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown environment %q (known: %v)", name, EnvNames())
	}
	return e, nil
}

// EnvNames lists the registered environments in sorted order.
func EnvNames() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
