package trace

import (
	"encoding/json"
	"errors"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/diff"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/internal/jsonscan"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/internal/redact"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

// object returns what the trace keeps of one of resource i's objects for
// the resource's mode, with Secret values redacted unless the user asked otherwise.
func (r *Recorder) object(i int, raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	r.resMu.RLock()
	rr := r.resources[i]
	r.resMu.RUnlock()
	out, err := trimObject(raw, rr.objects, rr.redact, rr.secrets)
	if err != nil {
		// Never write what could not be inspected: it might be an unredacted Secret.
		b, _ := json.Marshal(map[string]string{"error": "object could not be decoded for the trace: " + err.Error()})
		return b
	}
	return out
}

// changes is what resource i's trace keeps of an event's changes: their
// values only with whole objects, and never a Secret's unless asked for.
func (r *Recorder) changes(i int, ch *diff.Changes) *diff.Changes {
	if ch == nil {
		return nil
	}
	r.resMu.RLock()
	rr := r.resources[i]
	r.resMu.RUnlock()
	if !rr.keepChangeValues {
		return ch.WithoutValues()
	}
	return ch
}

// trimObject applies an object mode and Secret redaction to one object.
// hide says whether Secrets are redacted (named so as not to shadow the
// redact package).
func trimObject(raw json.RawMessage, mode ObjectMode, hide, secretsResource bool) (json.RawMessage, error) {
	if hide && secretsResource {
		return trimMaps(raw, mode, hide, secretsResource)
	}
	out, secret, err := trimInPlace(raw, mode, hide)
	if secret {
		// Secrets are rare: redact them through maps, where every value is in hand.
		return trimMaps(raw, mode, hide, secretsResource)
	}
	return out, err
}

// trimInPlace trims an object in one pass over its JSON (pkg/internal/jsonscan),
// copying the members it keeps as they are instead of decoding and
// re-encoding them. secret reports a Secret to redact, which it leaves to
// trimMaps (out is then nil). Members keep their order (trimMaps sorts them).
func trimInPlace(raw json.RawMessage, mode ObjectMode, hide bool) (out json.RawMessage, secret bool, err error) {
	var sc jsonscan.Scanner
	sc.Reset(raw)
	var apiVersion, kind, metadata []byte
	kindIsSecret := false
	if sc.Object() {
		for key, ok := sc.Key(); ok; key, ok = sc.Key() {
			switch string(key) {
			case "apiVersion":
				apiVersion = sc.Raw()
			case "kind":
				kind = sc.Raw()
				var k jsonscan.Scanner
				k.Reset(kind)
				v, _ := k.String()
				kindIsSecret = k.Err() == nil && string(v) == "Secret"
			case "metadata":
				metadata = sc.Raw()
			default:
				sc.Skip()
			}
		}
	}
	if err := sc.End(); err != nil {
		return nil, false, err
	}
	if kindIsSecret && hide {
		return nil, true, nil
	}
	if mode == ObjectsFull {
		// As trimMaps does, refuse metadata that is not an object.
		if metadata != nil && metadata[0] != '{' && string(metadata) != "null" {
			return nil, false, errors.New("metadata is not an object")
		}
		return raw, false, nil
	}
	b := make([]byte, 0, len(metadata)+len(apiVersion)+len(kind)+64)
	b = append(b, '{')
	sep := func() {
		if len(b) > 1 {
			b = append(b, ',')
		}
	}
	if apiVersion != nil {
		b = append(append(b, `"apiVersion":`...), apiVersion...)
	}
	if kind != nil {
		sep()
		b = append(append(b, `"kind":`...), kind...)
	}
	// Like trimMaps: none mode always has metadata; metadata mode drops a null one.
	if mode == ObjectsNone || (metadata != nil && string(metadata) != "null") {
		sep()
		b = append(b, `"metadata":`...)
		if b, err = trimMetadata(b, metadata, mode, kindIsSecret); err != nil {
			return nil, false, err
		}
	}
	return append(b, '}'), false, nil
}

// trimMetadata appends metadata without managedFields (metadata mode), or only
// identity and the end-of-initial-events annotation (none mode; never for a Secret).
func trimMetadata(b, metadata []byte, mode ObjectMode, secret bool) ([]byte, error) {
	var sc jsonscan.Scanner
	sc.Reset(metadata)
	if metadata == nil || !sc.Object() {
		if err := sc.Err(); err != nil {
			return nil, err
		}
		if mode == ObjectsNone {
			return append(b, "{}"...), nil
		}
		return append(b, "null"...), nil
	}
	b = append(b, '{')
	n := 0
	member := func(key, value []byte) {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = appendJSONString(b, key)
		b = append(append(b, ':'), value...)
	}
	for key, ok := sc.Key(); ok; key, ok = sc.Key() {
		switch {
		case mode == ObjectsMetadata && string(key) != "managedFields":
			member(key, sc.Raw())
		case mode == ObjectsNone && (string(key) == "namespace" || string(key) == "name" || string(key) == "uid" || string(key) == "resourceVersion"):
			member(key, sc.Raw())
		case mode == ObjectsNone && string(key) == "annotations" && !secret:
			// A bookmark's end-of-initial-events annotation is part of the watch protocol, not object data.
			if end := initialEventsEndValue(&sc); end != nil {
				b2 := appendJSONString(append([]byte(`{`), `"`+initialEventsEnd+`":`...), end)
				member(key, append(b2, '}'))
			}
		default:
			sc.Skip()
		}
	}
	if err := sc.End(); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// initialEventsEndValue reads an annotations object and returns the
// end-of-initial-events value, or nil when it is absent, empty, or when the
// annotations are not all strings (as decoding them into a map would fail).
func initialEventsEndValue(sc *jsonscan.Scanner) []byte {
	var end []byte
	valid := true
	if sc.Peek() != '{' {
		sc.Skip() // null, or not a map of strings: nothing to keep
		return nil
	}
	sc.Object()
	for key, ok := sc.Key(); ok; key, ok = sc.Key() {
		switch sc.Peek() {
		case '"':
			v, _ := sc.String()
			if string(key) == initialEventsEnd {
				end = v
			}
		case 'n':
			sc.Skip()
			if string(key) == initialEventsEnd {
				end = nil
			}
		default:
			valid = false
			sc.Skip()
		}
	}
	if !valid || len(end) == 0 {
		return nil
	}
	return end
}

// appendJSONString appends s as a JSON string (no HTML escaping, as the recorder writes).
func appendJSONString(b, s []byte) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, `\u00`...)
			b = append(b, hexDigits[c>>4], hexDigits[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// trimMaps trims an object by decoding it into maps: the way for Secrets,
// whose values must be replaced one by one.
func trimMaps(raw json.RawMessage, mode ObjectMode, hide, secretsResource bool) (json.RawMessage, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, err
	}
	var kind string
	_ = json.Unmarshal(top["kind"], &kind)
	secret := hide && (secretsResource || kind == "Secret")
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
		if err := redact.Data(top); err != nil {
			return nil, err
		}
	}
	if secret {
		if err := redact.Annotations(meta); err != nil {
			return nil, err
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

const initialEventsEnd = wire.InitialEventsEndAnnotation
