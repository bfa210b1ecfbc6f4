package trace

import (
	"encoding/json"
)

// Redacted replaces secret values in traces.
const Redacted = "REDACTED"

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// object returns what the trace keeps of one object's JSON for the recorder's
// mode, with Secret values redacted unless the user asked otherwise.
func (r *Recorder) object(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	out, err := trimObject(raw, r.objects, r.redact, r.secrets)
	if err != nil {
		// Never write what could not be inspected: it might be an unredacted Secret.
		b, _ := json.Marshal(map[string]string{"error": "object could not be decoded for the trace: " + err.Error()})
		return b
	}
	return out
}

// trimObject applies an object mode and Secret redaction to one object.
func trimObject(raw json.RawMessage, mode ObjectMode, redact, secretsResource bool) (json.RawMessage, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, err
	}
	var kind string
	_ = json.Unmarshal(top["kind"], &kind)
	secret := redact && (secretsResource || kind == "Secret")
	var meta map[string]json.RawMessage
	if m, ok := top["metadata"]; ok {
		if err := json.Unmarshal(m, &meta); err != nil {
			return nil, err
		}
	}
	switch mode {
	case ObjectsNone:
		keep := map[string]json.RawMessage{}
		for _, k := range []string{"namespace", "name", "uid", "resourceVersion"} {
			if v, ok := meta[k]; ok {
				keep[k] = v
			}
		}
		// A bookmark's end-of-initial-events annotation is part of the watch protocol, not object data.
		if ann, ok := meta["annotations"]; ok && kind != "Secret" && !secret {
			var a map[string]string
			if json.Unmarshal(ann, &a) == nil && a[initialEventsEnd] != "" {
				keep["annotations"], _ = json.Marshal(map[string]string{initialEventsEnd: a[initialEventsEnd]})
			}
		}
		meta = keep
		top = map[string]json.RawMessage{"apiVersion": top["apiVersion"], "kind": top["kind"]}
	case ObjectsMetadata:
		delete(meta, "managedFields")
		top = map[string]json.RawMessage{"apiVersion": top["apiVersion"], "kind": top["kind"]}
	case ObjectsFull:
		if !secret {
			return raw, nil
		}
		for _, field := range []string{"data", "stringData"} {
			if v, ok := top[field]; ok {
				red, err := redactValues(v)
				if err != nil {
					return nil, err
				}
				top[field] = red
			}
		}
	}
	if secret {
		if ann, ok := meta["annotations"]; ok {
			var a map[string]string
			if err := json.Unmarshal(ann, &a); err != nil {
				return nil, err
			}
			if _, ok := a[lastApplied]; ok {
				a[lastApplied] = Redacted
				meta["annotations"], _ = json.Marshal(a)
			}
		}
	}
	if meta != nil {
		b, err := json.Marshal(meta)
		if err != nil {
			return nil, err
		}
		top["metadata"] = b
	}
	for k, v := range top {
		if v == nil {
			delete(top, k)
		}
	}
	return json.Marshal(top)
}

const initialEventsEnd = "k8s.io/initial-events-end"

// redactValues replaces every value of a JSON object with "REDACTED".
func redactValues(v json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, err
	}
	red, _ := json.Marshal(Redacted)
	for k := range m {
		m[k] = red
	}
	return json.Marshal(m)
}
