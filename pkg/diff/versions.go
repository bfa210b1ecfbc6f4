package diff

// DefaultMaxObjects is how many objects' last versions Versions holds by
// default (--diff-max-objects).
const DefaultMaxObjects = 20000

// Versions holds the JSON of each object's last version, as listed or
// watched, up to a cap on objects, and diffs the next version of an object
// against it. Keys name objects ("namespace/name"). It is not safe for
// concurrent use.
type Versions struct {
	max        int
	keepValues bool
	held       map[string]held
}

type held struct {
	uid string
	raw []byte
}

// NewVersions holds up to maxObjects objects (DefaultMaxObjects when 0 or
// less); the changes it returns keep their values when keepValues is set.
func NewVersions(maxObjects int, keepValues bool) *Versions {
	if maxObjects <= 0 {
		maxObjects = DefaultMaxObjects
	}
	return &Versions{max: maxObjects, keepValues: keepValues, held: map[string]held{}}
}

// Reset forgets every version: a list that replaces the cache begins.
func (v *Versions) Reset() { clear(v.held) }

// Len is how many objects' versions are held.
func (v *Versions) Len() int { return len(v.held) }

// Hold keeps raw as key's last version (an item listed, an ADDED event),
// unless the cap is reached and key is not held already.
func (v *Versions) Hold(key, uid string, raw []byte) {
	if len(raw) == 0 {
		return
	}
	if _, ok := v.held[key]; !ok && len(v.held) >= v.max {
		return
	}
	v.held[key] = held{uid: uid, raw: raw}
}

// Forget drops key's version (a DELETED event).
func (v *Versions) Forget(key string) { delete(v.held, key) }

// Event keeps the versions up to date with one watch event of type typ
// ("ADDED", "MODIFIED" or "DELETED") of the object key, and returns the
// changes of a MODIFIED event: recorded when the event carries them
// already (the replay of a trace that recorded them), diffed otherwise; for
// the other types, recorded as it came (nil: only MODIFIED events carry any).
func (v *Versions) Event(typ, key, uid string, raw []byte, recorded *Changes) *Changes {
	switch typ {
	case "ADDED":
		v.Hold(key, uid, raw)
	case "MODIFIED":
		if recorded == nil {
			return v.Modified(key, uid, raw)
		}
		v.Hold(key, uid, raw)
	case "DELETED":
		v.Forget(key)
	}
	return recorded
}

// Modified diffs a MODIFIED event's object against key's held version, then
// holds it in its place. An object with another UID than the one held (a
// recreate whose delete was missed) is not diffed against it.
func (v *Versions) Modified(key, uid string, raw []byte) *Changes {
	prev, ok := v.held[key]
	full := len(v.held) >= v.max
	v.Hold(key, uid, raw)
	switch {
	case !ok && full:
		return Skip(SkipCap)
	case !ok:
		return Skip(SkipNoPrevious)
	case prev.uid != uid:
		return Skip(SkipOtherUID)
	}
	ch, err := Compare(prev.raw, raw, v.keepValues)
	if err != nil {
		return Skip(SkipNotJSON)
	}
	return ch
}
