package reflector

import (
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
)

// InitialEventsEndAnnotation marks the bookmark that ends a streaming list.
const InitialEventsEndAnnotation = metav1.InitialEventsAnnotationKey

// wireMeta is the part of an object's metadata the store keeps. Decoding into
// it skips everything else (spec, data, managedFields) without building maps.
type wireMeta struct {
	Metadata struct {
		Namespace         string            `json:"namespace"`
		Name              string            `json:"name"`
		UID               string            `json:"uid"`
		ResourceVersion   string            `json:"resourceVersion"`
		Generation        int64             `json:"generation"`
		CreationTimestamp *time.Time        `json:"creationTimestamp"`
		DeletionTimestamp *time.Time        `json:"deletionTimestamp"`
		Labels            map[string]string `json:"labels"`
		Annotations       map[string]string `json:"annotations"`
		OwnerReferences   []struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Name       string `json:"name"`
			UID        string `json:"uid"`
			Controller *bool  `json:"controller"`
		} `json:"ownerReferences"`
	} `json:"metadata"`
}

// DecodeObject decodes the compact store form of one object's JSON. With
// keepBody the JSON itself is kept as the object's Body (not copied: raw must
// not be modified afterwards).
func DecodeObject(raw []byte, keepBody bool) (*store.Object, error) {
	obj, _, err := decodeObject(raw, keepBody)
	return obj, err
}

// decodeObject also reports whether the object is the initial-events-end bookmark.
func decodeObject(raw []byte, keepBody bool) (*store.Object, bool, error) {
	var w wireMeta
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, false, fmt.Errorf("decoding object: %w", err)
	}
	m := &w.Metadata
	obj := &store.Object{
		Namespace:       m.Namespace,
		Name:            m.Name,
		UID:             m.UID,
		ResourceVersion: m.ResourceVersion,
		Generation:      m.Generation,
		Labels:          m.Labels,
	}
	if m.CreationTimestamp != nil {
		obj.CreationTimestamp = *m.CreationTimestamp
	}
	obj.DeletionTimestamp = m.DeletionTimestamp
	if len(m.OwnerReferences) > 0 {
		obj.OwnerReferences = make([]store.OwnerRef, len(m.OwnerReferences))
		for i, o := range m.OwnerReferences {
			obj.OwnerReferences[i] = store.OwnerRef{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name, UID: o.UID, Controller: o.Controller != nil && *o.Controller}
		}
	}
	if keepBody {
		obj.Body = raw
	}
	return obj, m.Annotations[InitialEventsEndAnnotation] == "true", nil
}

// wireList is a LIST response with its items left undecoded.
type wireList struct {
	Metadata struct {
		ResourceVersion    string `json:"resourceVersion"`
		Continue           string `json:"continue"`
		RemainingItemCount *int64 `json:"remainingItemCount"`
	} `json:"metadata"`
	Items []json.RawMessage `json:"items"`
}

// DecodeList decodes a LIST response body into a Page.
func DecodeList(body []byte, keepBody bool) (*Page, error) {
	var l wireList
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, fmt.Errorf("decoding list: %w", err)
	}
	page := &Page{
		ResourceVersion:    l.Metadata.ResourceVersion,
		Continue:           l.Metadata.Continue,
		RemainingItemCount: l.Metadata.RemainingItemCount,
		Items:              make([]Item, len(l.Items)),
	}
	for i, raw := range l.Items {
		obj, err := DecodeObject(raw, keepBody)
		if err != nil {
			return nil, fmt.Errorf("list item %d: %w", i, err)
		}
		page.Items[i] = Item{Object: obj, Raw: raw}
	}
	return page, nil
}

// DecodeWatchEvent decodes one watch event from its type and object JSON.
func DecodeWatchEvent(typ string, object []byte, keepBody bool) (WatchEvent, error) {
	ev := WatchEvent{Type: EventType(typ)}
	switch ev.Type {
	case EventAdded, EventModified, EventDeleted, EventBookmark:
		obj, end, err := decodeObject(object, keepBody && ev.Type != EventBookmark)
		if err != nil {
			return ev, fmt.Errorf("%s event: %w", typ, err)
		}
		ev.Item = Item{Object: obj, Raw: object}
		ev.InitialEventsEnd = ev.Type == EventBookmark && end
	case EventError:
		var st metav1.Status
		if err := json.Unmarshal(object, &st); err != nil {
			return ev, fmt.Errorf("ERROR event: decoding status: %w", err)
		}
		ev.Status = &st
	default:
		return ev, fmt.Errorf("watch event of unknown type %q", typ)
	}
	return ev, nil
}
