package wire_test

import (
	"fmt"
	"strings"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/wire"
)

// A LIST response as an observing proxy sees it go by, decoded by its
// Content-Type into the compact objects a store keeps.
func ExampleDecodeListResponse() {
	body := strings.NewReader(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"10"},"items":[` +
		`{"metadata":{"namespace":"default","name":"a","uid":"uid-a","resourceVersion":"8","labels":{"app":"web"}},"data":{"k":"v"}},` +
		`{"metadata":{"namespace":"default","name":"b","uid":"uid-b","resourceVersion":"9"}}]}`)
	page, err := wire.DecodeListResponse(body, "application/json", false)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("list at resourceVersion", page.ResourceVersion)
	for _, it := range page.Items {
		o := it.Object
		fmt.Printf("%s/%s %s %s labels %q\n", o.Namespace, o.Name, o.UID, o.ResourceVersion, o.Labels)
	}
	// Output:
	// list at resourceVersion 10
	// default/a uid-a 8 labels "app=web"
	// default/b uid-b 9 labels ""
}
