package findings

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/format"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// Throttled is the server's flow control answering 429.
const Throttled ID = "throttled"

type throttled struct {
	// the last 429 of API Priority and Fairness: its FlowSchema and
	// PriorityLevel (the last UIDs given) and what it said
	schemaUID, levelUID string
	said                string
	names               map[string]string // "kind/uid" → the name a 429 carried or NameFlowControl gave
}

func (r *throttled) entry() Entry {
	return Entry{Throttled, Warning, "the server answered 429 (not the \"storage is (re)initializing\" 429 of a restarting server): count, Retry-After, FlowSchema and PriorityLevel, by name when the user may read them (a throttled user's lookup of the names is often throttled too: it is retried after its Retry-After and at the end of the run, and the finding names them once known), else by UID, its action giving the `kubectl get flowschemas -o custom-columns=… \\| grep UID` lines that find them"}
}

func (r *throttled) observe(e *Engine, n reflector.Note) {
	q := n.Request
	if n.Kind != reflector.NoteRequestEnded || q == nil || q.End == nil || !isThrottle(q.End) {
		return
	}
	end := q.End
	e.raise(Throttled, Warning, n.At, func(f *Finding) {
		f.Count++
		who := "the API server"
		if e.track.injected(Throttled) != "" {
			who = "the observing proxy (--fault)"
		}
		f.Title = fmt.Sprintf("%s throttled %s (429 Too Many Requests)", who, format.PluralUngrouped(f.Count, "request"))
		facts := f.Evidence.Facts
		if facts == nil {
			facts = map[string]string{}
		}
		if d := end.Status.Details; d != nil && d.RetryAfterSeconds > 0 {
			facts["retryAfter"] = roundDur(time.Duration(d.RetryAfterSeconds) * time.Second)
		}
		if t := end.Throttle; t != nil {
			if t.RetryAfter > 0 {
				facts["retryAfter"] = roundDur(t.RetryAfter)
			}
			if t.FlowSchemaUID != "" {
				r.schemaUID = t.FlowSchemaUID
				r.keepName("flowschema", t.FlowSchemaUID, t.FlowSchema)
			}
			if t.PriorityLevelUID != "" {
				r.levelUID = t.PriorityLevelUID
				r.keepName("prioritylevelconfiguration", t.PriorityLevelUID, t.PriorityLevel)
			}
		}
		r.said = fmt.Sprintf("%s answered 429; the last, #%d (%s), said: %s", format.PluralUngrouped(f.Count, "request"), q.ID, strings.ToUpper(string(q.Verb)), end.Cause())
		f.Evidence = Evidence{Requests: appendLast(f.Evidence.Requests, q.ID), Facts: facts}
		f.Cause = "API Priority and Fairness had no seat for the request in its priority level and its queues were full (or the level rejects): the client's requests, or others in the same level, exceed its share"
		if e.track.injected(Throttled) != "" && r.schemaUID == "" && r.levelUID == "" {
			// No 429 named a FlowSchema: the server throttled none of them.
			f.Cause = "the proxy answered these requests 429 with a Retry-After in the server's place, as API Priority and Fairness does; no 429 named a FlowSchema or PriorityLevel, as the server's do"
		}
		f.Docs = "https://kubernetes.io/docs/concepts/cluster-administration/flow-control/"
		r.name(f)
	})
}

// isThrottle says whether end is a 429 of the server's flow control (API
// Priority and Fairness, or max-in-flight), not one of the 429s that say
// something else: a watch cache still initializing after a restart, or the
// observing proxy's answer for a server it could not reach.
func isThrottle(end *reflector.RequestEnd) bool {
	st := end.Status
	if st == nil || st.Code != 429 {
		return false
	}
	m := strings.ToLower(st.Message)
	return !strings.Contains(m, "storage is (re)initializing") && !strings.Contains(m, "the server could not be reached")
}

// learn keeps names learned after the 429s (Engine.NameFlowControl) and
// says them at once when they are the ones throttled gave by UID.
func (r *throttled) learn(e *Engine, flowSchemas, priorityLevels map[string]string) {
	// In the UIDs' order, not a map's: past the bound, which names are
	// kept is the same live and in a replay.
	for _, uid := range slices.Sorted(maps.Keys(flowSchemas)) {
		r.keepName("flowschema", uid, flowSchemas[uid])
	}
	for _, uid := range slices.Sorted(maps.Keys(priorityLevels)) {
		r.keepName("prioritylevelconfiguration", uid, priorityLevels[uid])
	}
	if f, ok := e.found[Throttled]; ok {
		before := f.Evidence.Text
		r.name(f)
		if f.Evidence.Text != before {
			e.pending = append(e.pending, f.clone())
		}
	}
}

// name says throttled's FlowSchema and PriorityLevel with the names known
// so far: in its facts, its evidence and its action, which says how to
// find the names it does not know.
func (r *throttled) name(f *Finding) {
	facts := f.Evidence.Facts
	var unnamed []string
	if uid := r.schemaUID; uid != "" {
		facts["flowSchema"] = r.named("flowschema", uid)
		if r.names["flowschema/"+uid] == "" && commandSafe(uid) {
			unnamed = append(unnamed, "kubectl get flowschemas -o custom-columns=NAME:.metadata.name,UID:.metadata.uid,PRIORITYLEVEL:.spec.priorityLevelConfiguration.name | grep "+uid)
		}
	}
	if uid := r.levelUID; uid != "" {
		facts["priorityLevel"] = r.named("prioritylevelconfiguration", uid)
		if r.names["prioritylevelconfiguration/"+uid] == "" && commandSafe(uid) {
			unnamed = append(unnamed, "kubectl get prioritylevelconfigurations -o custom-columns=NAME:.metadata.name,UID:.metadata.uid | grep "+uid)
		}
	}
	text := r.said
	if fs, pl := facts["flowSchema"], facts["priorityLevel"]; fs != "" || pl != "" {
		text += fmt.Sprintf("; API Priority and Fairness classified it as FlowSchema %s, PriorityLevel %s", orDash(fs), orDash(pl))
	}
	f.Evidence.Text = text
	const lighter = "make fewer or lighter requests (metadata-only informers, selectors, a shared informer instead of many)"
	fs, pl := r.names["flowschema/"+r.schemaUID], r.names["prioritylevelconfiguration/"+r.levelUID]
	switch {
	case len(unnamed) > 0:
		f.Action = "find their names by UID (this run could not read them: its user may not, or was throttled there too), as a user who may read flowcontrol.apiserver.k8s.io: " + strings.Join(unnamed, "; ") +
			"; then give that PriorityLevel more shares (nominalConcurrencyShares) or queues, or change which FlowSchema matches this client; " + lighter
	case commandSafe(fs) && commandSafe(pl):
		f.Action = fmt.Sprintf("FlowSchema %s matches this client and sends it to PriorityLevel %s (kubectl get flowschema %s -o yaml; kubectl get prioritylevelconfiguration %s -o yaml): give %s more shares (nominalConcurrencyShares) or queues, or match this client to another level; %s", fs, pl, fs, pl, pl, lighter)
	default:
		f.Action = "see which FlowSchema matches this client (kubectl get flowschemas) and give its PriorityLevel more shares (nominalConcurrencyShares) or queues; " + lighter
	}
}

// commandSafe says whether s may stand in a command the action gives to
// copy into a shell: an object's name or UID, as the API server makes
// them. A header or a trace may say anything.
// The length is checked apart: a counted repetition ({0,252}) would compile
// into 252 copies of the class at every start of the program.
func commandSafe(s string) bool { return len(s) <= 253 && safeWord.MatchString(s) }

var safeWord = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// keepName keeps the name of a flow-control object, when there is one
// (at most keepObjects of them).
func (r *throttled) keepName(kind, uid, name string) {
	if name == "" || uid == "" {
		return
	}
	if r.names == nil {
		r.names = map[string]string{}
	}
	key := kind + "/" + uid
	if _, ok := r.names[key]; ok || len(r.names) < keepObjects {
		r.names[key] = name
	}
}

// named is "NAME (uid UID)", or "uid UID" when no name is known: the name
// a 429 carried (the Source names what it can read, and a trace records
// it, so a replay names the same) or one learned after (NameFlowControl).
func (r *throttled) named(kind, uid string) string {
	if n := r.names[kind+"/"+uid]; n != "" {
		return n + " (uid " + uid + ")"
	}
	return "uid " + uid
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
