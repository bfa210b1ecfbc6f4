package testcluster

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

// A recreate is counted as what happened: a delete that found nothing
// then a create is one create, and a delete whose create failed is a
// delete and a failed write.
func TestAChurnRecreateCountsTheWritesThatHappened(t *testing.T) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	for _, tc := range []struct {
		name                 string
		deleteErr, createErr error
		want                 ChurnStats
	}{
		{name: "both", want: ChurnStats{Recreates: 1}},
		{name: "nothing to delete", deleteErr: apierrors.NewNotFound(gvr.GroupResource(), "churn-0"), want: ChurnStats{Creates: 1}},
		{name: "the create failed", createErr: errors.New("connection refused"), want: ChurnStats{Deletes: 1, Failed: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "ConfigMapList"})
			dyn.PrependReactor("delete", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, tc.deleteErr })
			dyn.PrependReactor("create", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
				return tc.createErr != nil, nil, tc.createErr
			})
			c := &Churn{client: dyn.Resource(gvr).Namespace("ns"), opts: ChurnOptions{Prefix: "churn", Object: ConfigMap}, exists: map[int]bool{0: true}}
			c.write(context.Background(), 0, 9)
			if got := c.Stats(); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}
