// Package redact hides a Secret's values: the rule a trace and the
// dashboard's object view both follow, written once.
package redact

import "encoding/json"

// Value replaces each hidden value.
const Value = "REDACTED"

// LastApplied is the annotation kubectl apply keeps the applied object in:
// a Secret's is its values again.
const LastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// Data redacts, in an object's top-level members, every value of data and
// stringData.
func Data(top map[string]json.RawMessage) error {
	red, _ := json.Marshal(Value)
	for _, field := range []string{"data", "stringData"} {
		v, ok := top[field]
		if !ok {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(v, &m); err != nil {
			return err
		}
		for k := range m {
			m[k] = red
		}
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		top[field] = b
	}
	return nil
}

// Annotations redacts, in an object's metadata members, the last applied
// configuration.
func Annotations(meta map[string]json.RawMessage) error {
	ann, ok := meta["annotations"]
	if !ok {
		return nil
	}
	var a map[string]string
	if err := json.Unmarshal(ann, &a); err != nil {
		return err
	}
	if _, ok := a[LastApplied]; !ok {
		return nil
	}
	a[LastApplied] = Value
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	meta["annotations"] = b
	return nil
}

// Secret returns a Secret's JSON with its data, stringData and last
// applied configuration's values redacted.
func Secret(raw []byte) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, err
	}
	if err := Data(top); err != nil {
		return nil, err
	}
	if m, ok := top["metadata"]; ok {
		var meta map[string]json.RawMessage
		if err := json.Unmarshal(m, &meta); err != nil {
			return nil, err
		}
		if err := Annotations(meta); err != nil {
			return nil, err
		}
		b, err := json.Marshal(meta)
		if err != nil {
			return nil, err
		}
		top["metadata"] = b
	}
	return json.Marshal(top)
}
