package envs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Canonical re-encodes a JSON value with object keys sorted and no
// insignificant space, so that two encodings of the same value compare equal
// byte for byte. Numbers keep their literal text.
func Canonical(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return json.Marshal(v)
}

// decodeRaw parses a raw move into a generic value (numbers as json.Number).
// Only the first JSON value counts; anything after it is ignored.
func decodeRaw(raw json.RawMessage) (any, error) {
	if v, ok := intList(raw); ok {
		return v, nil
	}
	return decodeValue(raw)
}

// decodeValue is decodeRaw with encoding/json for any value.
func decodeValue(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("move is not valid JSON: %v", err)
	}
	return v, nil
}

// intList decodes the commonest move, a flat array of JSON integers such as
// [3, 0, 2], without encoding/json: a replay of 1,023 Hanoi moves spent
// three quarters of its time building a json.Decoder per move. It returns
// exactly what decodeValue would ([]any of json.Number, literal text kept)
// and ok=false for anything else, which then takes decodeValue's path.
func intList(raw []byte) ([]any, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	out := make([]any, 0, 4)
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return out, skipSpace(raw, i+1) == len(raw)
	}
	for {
		start := i
		if i < len(raw) && raw[i] == '-' {
			i++
		}
		digits := i
		for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
			i++
		}
		if i == digits || (raw[digits] == '0' && i-digits > 1) {
			return nil, false // no digits, or a leading zero
		}
		out = append(out, json.Number(raw[start:i]))
		i = skipSpace(raw, i)
		if i >= len(raw) {
			return nil, false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case ']':
			return out, skipSpace(raw, i+1) == len(raw)
		default:
			return nil, false
		}
	}
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// pyRepr renders a decoded JSON value roughly as Python's repr would, for
// messages that quote what a model wrote.
func pyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case json.Number:
		return x.String()
	case string:
		return "'" + strings.ReplaceAll(x, "'", "\\'") + "'"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		b, _ := json.Marshal(x)
		return string(b)
	}
	return fmt.Sprint(v)
}

// pyInt converts a value the way Python's int() does for the inputs models
// print: integers, integral floats and strings of digits (with optional sign
// and surrounding space).
func pyInt(v any) (int, error) {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
			return clampInt(i), nil
		}
		f, err := x.Float64()
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("invalid number %s", x)
		}
		return clampInt(int64(f)), nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case string:
		s := strings.TrimSpace(strings.ReplaceAll(x, "_", ""))
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil || s == "" {
			return 0, fmt.Errorf("invalid literal for int() with base 10: %s", pyRepr(x))
		}
		return clampInt(i), nil
	}
	return 0, fmt.Errorf("int() argument must be a string or a number, not %s", pyType(v))
}

func clampInt(i int64) int {
	const limit = 1 << 40
	if i > limit {
		return limit
	}
	if i < -limit {
		return -limit
	}
	return int(i)
}

func pyType(v any) string {
	switch v.(type) {
	case nil:
		return "'NoneType'"
	case bool:
		return "'bool'"
	case json.Number:
		return "'int'"
	case string:
		return "'str'"
	case []any:
		return "'list'"
	case map[string]any:
		return "'dict'"
	}
	return "'object'"
}

// asList returns v as a list, or false.
func asList(v any) ([]any, bool) {
	l, ok := v.([]any)
	return l, ok
}

// strList returns a non-nil copy of s, so that it encodes as [] when empty.
func strList(s []string) []string {
	out := make([]string, len(s))
	copy(out, s)
	return out
}

// strictDecode decodes data into v, rejecting unknown fields and trailing data.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after JSON value")
	}
	return nil
}
