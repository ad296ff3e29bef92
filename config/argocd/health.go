// Package argocd holds the Argo CD health checks of the repot.dev kinds
// (resource_customizations/<group>/<kind>/health.lua, the layout of Argo
// CD's own resource_customizations) and runs them the way Argo CD does, with
// the same Lua runtime (github.com/yuin/gopher-lua), for the tests.
package argocd

import (
	"embed"
	"fmt"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

//go:embed resource_customizations
var scripts embed.FS

// Group is the API group of the kinds with a health check.
const Group = "repot.dev"

// Kinds are the kinds with a health check.
var Kinds = []string{"RepotEvaluation", "RepotSchedule"}

// Health is what a health.lua returns: an Argo CD health status (Healthy,
// Progressing, Degraded, Suspended, Missing, Unknown) and a message.
type Health struct {
	Status  string
	Message string
}

// Script returns the health.lua of a kind.
func Script(kind string) (string, error) {
	b, err := scripts.ReadFile("resource_customizations/" + Group + "/" + kind + "/health.lua")
	if err != nil {
		return "", fmt.Errorf("no health check for %s/%s: %w", Group, kind, err)
	}
	return string(b), nil
}

// Evaluate runs the health check of obj's kind on obj (an object as JSON
// decodes it), as Argo CD does: obj is a global table and the script
// returns a table with status and message.
func Evaluate(obj map[string]any) (Health, error) {
	kind, _ := obj["kind"].(string)
	script, err := Script(kind)
	if err != nil {
		return Health{}, err
	}
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	L.SetGlobal("obj", toLua(L, obj))
	if err := L.DoString(script); err != nil {
		return Health{}, fmt.Errorf("health.lua of %s: %w", kind, err)
	}
	ret, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		return Health{}, fmt.Errorf("health.lua of %s returned %s, want a table", kind, L.Get(-1).Type())
	}
	h := Health{Status: lua.LVAsString(ret.RawGetString("status")), Message: lua.LVAsString(ret.RawGetString("message"))}
	switch h.Status {
	case "Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown":
		return h, nil
	}
	return Health{}, fmt.Errorf("health.lua of %s returned status %q, not an Argo CD health status", kind, h.Status)
}

// toLua converts a decoded JSON value to Lua as Argo CD does: objects and
// arrays become tables (arrays 1-based), numbers LNumber.
func toLua(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(x)
	case string:
		return lua.LString(x)
	case int64:
		return lua.LNumber(x)
	case int:
		return lua.LNumber(x)
	case int32:
		return lua.LNumber(x)
	case float64:
		return lua.LNumber(x)
	case map[string]any:
		t := L.NewTable()
		for k, e := range x {
			t.RawSetString(k, toLua(L, e))
		}
		return t
	case []any:
		t := L.NewTable()
		for _, e := range x {
			t.Append(toLua(L, e))
		}
		return t
	}
	return lua.LString(fmt.Sprint(v))
}

// Assess returns both views of an object's health: the Argo CD health from
// its health.lua, and the kstatus status (sigs.k8s.io/cli-utils, what Flux
// waits on) with its message.
func Assess(obj map[string]any) (Health, string, string, error) {
	h, err := Evaluate(obj)
	if err != nil {
		return Health{}, "", "", err
	}
	res, err := kstatus.Compute(&unstructured.Unstructured{Object: obj})
	if err != nil {
		return Health{}, "", "", fmt.Errorf("kstatus: %w", err)
	}
	return h, string(res.Status), res.Message, nil
}
