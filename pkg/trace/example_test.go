package trace_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/store"
	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/trace"
)

// A trace replayed through a reflector: a LIST of two ConfigMaps, then a
// watch that deletes one and ends where the recording stopped.
func ExampleReplay() {
	const recorded = `{"k":"header","v":1,"resource":{"version":"v1","resource":"configmaps","kind":"ConfigMap","namespaced":true}}
{"k":"note","state":"Listing","reason":"initial-list"}
{"k":"request","id":1,"verb":"list","opts":{}}
{"k":"item","id":1,"object":{"metadata":{"namespace":"default","name":"a","uid":"uid-a","resourceVersion":"5"}}}
{"k":"item","id":1,"object":{"metadata":{"namespace":"default","name":"b","uid":"uid-b","resourceVersion":"6"}}}
{"k":"page","id":1,"resourceVersion":"10","items":2}
{"k":"end","id":1,"reason":"closed"}
{"k":"note","state":"Watching","reason":"list-complete","resourceVersion":"10","objectCount":2}
{"k":"request","id":2,"verb":"watch","opts":{"resourceVersion":"10","allowWatchBookmarks":true}}
{"k":"event","id":2,"type":"DELETED","object":{"metadata":{"namespace":"default","name":"b","uid":"uid-b","resourceVersion":"11"}}}
{"k":"end","id":2,"reason":"canceled","error":"context canceled"}
{"k":"note","state":"Stopped","reason":"stopped"}
`
	rd, err := trace.NewReader("example.jsonl", strings.NewReader(recorded))
	if err != nil {
		fmt.Println(err)
		return
	}
	replay := trace.NewReplay(rd, 0) // 0: as fast as possible
	st, w := store.New()
	r, err := reflector.New(replay.Resources()[0].ReflectorConfig(), w, st)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := replay.Run(context.Background(), r); err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range st.List() {
		fmt.Println(o.Ref(), o.ResourceVersion)
	}
	shown, _ := replay.Differences(10)
	fmt.Println("recorded decisions:", replay.RecordedDecisions(), "differences:", len(shown))
	// Output:
	// default/a 5
	// recorded decisions: 3 differences: 0
}
