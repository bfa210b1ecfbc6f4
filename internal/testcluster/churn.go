package testcluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// ChurnOptions shape a Churn: objects named PREFIX-0 … PREFIX-(Names-1) in
// Namespace are created, updated, deleted, and deleted and recreated under
// the same name (a new UID), at about Rate writes a second in bursts.
type ChurnOptions struct {
	Namespace string
	// Resource is what is written; default ConfigMaps.
	Resource schema.GroupVersionResource
	// Object builds the object named name, its content varying with n;
	// default a ConfigMap. Give one for any other Resource.
	Object func(name string, n int64) *unstructured.Unstructured
	// Prefix of the names; default "churn".
	Prefix string
	// Names is how many names the churn cycles through; default 100.
	Names int
	// Rate is the writes a second; default 50.
	Rate float64
}

// churnBurst is how many writes go out together.
const churnBurst = 5

// ChurnStats count a churn's writes by kind, and the writes that failed
// (while the apiserver was down, for instance: the churn goes on).
type ChurnStats struct {
	Creates, Updates, Deletes, Recreates, Failed int64
}

// Writes is the number of successful writes (a recreate is two).
func (s ChurnStats) Writes() int64 { return s.Creates + s.Updates + s.Deletes + 2*s.Recreates }

func (s ChurnStats) String() string {
	return fmt.Sprintf("%d creates, %d updates, %d deletes, %d recreates, %d failed writes", s.Creates, s.Updates, s.Deletes, s.Recreates, s.Failed)
}

// Churn writes to the cluster in the background until Stop.
type Churn struct {
	client dynamic.ResourceInterface
	opts   ChurnOptions
	cancel context.CancelFunc
	done   chan struct{}
	stats  struct{ creates, updates, deletes, recreates, failed atomic.Int64 }
	exists map[int]bool // what the churn believes exists (its loop's alone)
}

// ConfigMap is the churn's default object: a ConfigMap whose data changes with n.
func ConfigMap(name string, n int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "labels": map[string]any{"churn": "true"}},
		"data":     map[string]any{"n": fmt.Sprint(n)},
	}}
}

// StartChurn starts writing with cfg's credentials.
func StartChurn(cfg *rest.Config, opts ChurnOptions) (*Churn, error) {
	if opts.Resource.Empty() {
		opts.Resource = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	}
	if opts.Object == nil {
		opts.Object = ConfigMap
	}
	if opts.Prefix == "" {
		opts.Prefix = "churn"
	}
	if opts.Names <= 0 {
		opts.Names = 100
	}
	if opts.Rate <= 0 {
		opts.Rate = 50
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("churn: dynamic client: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Churn{client: dyn.Resource(opts.Resource).Namespace(opts.Namespace), opts: opts, cancel: cancel, done: make(chan struct{}), exists: map[int]bool{}}
	go c.loop(ctx)
	return c, nil
}

// Stats are the counts so far.
func (c *Churn) Stats() ChurnStats {
	return ChurnStats{Creates: c.stats.creates.Load(), Updates: c.stats.updates.Load(), Deletes: c.stats.deletes.Load(),
		Recreates: c.stats.recreates.Load(), Failed: c.stats.failed.Load()}
}

// Stop stops the churn, waits for the writes in flight to be answered,
// and returns the counts: a LIST after Stop sees every write the churn
// made (a write cancelled in flight could still commit after the LIST).
func (c *Churn) Stop() ChurnStats {
	c.cancel()
	<-c.done
	return c.Stats()
}

func (c *Churn) loop(ctx context.Context) {
	defer close(c.done)
	rnd := rand.New(rand.NewPCG(1, 0)) // the same operations every run
	interval := time.Duration(float64(time.Second) * churnBurst / c.opts.Rate)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for i := 0; i < churnBurst && ctx.Err() == nil; i++ {
			c.write(ctx, rnd.IntN(c.opts.Names), rnd.IntN(10))
		}
	}
}

// writeTimeout bounds one write; Stop does not cancel a write in flight.
const writeTimeout = 10 * time.Second

// write does one operation on name i: create when it does not exist;
// otherwise update (6 in 10), delete (2 in 10) or delete and recreate (2 in 10).
func (c *Churn) write(ctx context.Context, i, dice int) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	name := fmt.Sprintf("%s-%d", c.opts.Prefix, i)
	exists := c.exists[i]
	obj := c.opts.Object(name, time.Now().UnixNano())
	var err error
	switch {
	case !exists:
		if _, err = c.client.Create(ctx, obj, metav1.CreateOptions{}); err == nil || apierrors.IsAlreadyExists(err) {
			c.exists[i] = true
			if err == nil {
				c.stats.creates.Add(1)
			}
			return
		}
	case dice < 6:
		// A merge patch of the whole object updates it whatever its resourceVersion.
		b, merr := obj.MarshalJSON()
		if merr != nil {
			err = merr
			break
		}
		if _, err = c.client.Patch(ctx, name, "application/merge-patch+json", b, metav1.PatchOptions{}); err == nil {
			c.stats.updates.Add(1)
			return
		}
		if apierrors.IsNotFound(err) {
			c.exists[i] = false
			return
		}
	case dice < 8:
		if err = c.client.Delete(ctx, name, metav1.DeleteOptions{}); err == nil || apierrors.IsNotFound(err) {
			c.exists[i] = false
			if err == nil {
				c.stats.deletes.Add(1)
			}
			return
		}
	default:
		// What happened is counted: a delete that found nothing and a
		// create are one create, and a delete whose create failed is a
		// delete (and a failed write).
		if err = c.client.Delete(ctx, name, metav1.DeleteOptions{}); err == nil || apierrors.IsNotFound(err) {
			deleted := err == nil
			c.exists[i] = false
			if _, err = c.client.Create(ctx, obj, metav1.CreateOptions{}); err == nil {
				if deleted {
					c.stats.recreates.Add(1)
				} else {
					c.stats.creates.Add(1)
				}
				c.exists[i] = true
				return
			}
			if deleted {
				c.stats.deletes.Add(1)
			}
		}
	}
	c.stats.failed.Add(1)
}
