package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// namespaces is how many namespaces the ConfigMaps are spread over.
const namespaces = 20

// fieldManager is the server-side apply manager that owns the benchmark objects.
const fieldManager = "helm"

// objects creates and updates the benchmark's ConfigMaps.
type objects struct {
	cs      *kubernetes.Clientset
	writers int
	have    int
	// revision makes every update change the object: an apply that changes
	// nothing gets no new resourceVersion and no watch event.
	revision atomic.Int64
}

func newObjects(cfg *rest.Config, writers int) (*objects, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the clientset: %w", err)
	}
	return &objects{cs: cs, writers: writers}, nil
}

func namespaceOf(i int) string { return fmt.Sprintf("bench-%02d", i%namespaces) }
func nameOf(i int) string      { return fmt.Sprintf("app-%05d-config", i) }

// appConfig is the bulk of a ConfigMap's data: a small application config.
const appConfig = `server:
  port: 8080
  readTimeout: 30s
  writeTimeout: 30s
  maxHeaderBytes: 1048576
database:
  host: postgres.%[1]s.svc.cluster.local
  port: 5432
  pool: {min: 2, max: 20, idleTimeout: 5m}
cache:
  redis: redis-master.%[1]s.svc.cluster.local:6379
  ttl: 10m
logging:
  level: info
  format: json
features:
  newCheckout: true
  recommendations: false
instance: %[2]d
`

// configMap is the apply configuration of ConfigMap i at a revision: Helm-like
// labels and annotations and about 500 bytes of data, about 1.3 KB of JSON
// once the apiserver adds its metadata and managedFields.
func configMap(i, revision int) *corev1ac.ConfigMapApplyConfiguration {
	ns, name := namespaceOf(i), nameOf(i)
	app := fmt.Sprintf("app-%05d", i)
	data := fmt.Sprintf(appConfig, ns, i)
	sum := sha256.Sum256([]byte(data))
	return corev1ac.ConfigMap(name, ns).
		WithLabels(map[string]string{
			"app.kubernetes.io/name":       app,
			"app.kubernetes.io/instance":   app + "-prod",
			"app.kubernetes.io/version":    "1.4." + strconv.Itoa(i%10),
			"app.kubernetes.io/component":  "config",
			"app.kubernetes.io/part-of":    "shop",
			"app.kubernetes.io/managed-by": "Helm",
		}).
		WithAnnotations(map[string]string{
			"meta.helm.sh/release-name":      app,
			"meta.helm.sh/release-namespace": ns,
			"checksum/config":                hex.EncodeToString(sum[:]),
		}).
		WithData(map[string]string{
			"application.yaml": data,
			"log-level":        "info",
			"revision":         strconv.Itoa(revision),
		})
}

func (o *objects) apply(ctx context.Context, i, revision int) (*corev1.ConfigMap, error) {
	cm, err := o.cs.CoreV1().ConfigMaps(namespaceOf(i)).Apply(ctx, configMap(i, revision), metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	if err != nil {
		return nil, fmt.Errorf("applying ConfigMap %s/%s: %w", namespaceOf(i), nameOf(i), err)
	}
	return cm, nil
}

// ensure creates ConfigMaps until there are n, with parallel writers.
func (o *objects) ensure(ctx context.Context, n int) error {
	if o.have == 0 {
		for i := range namespaces {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespaceOf(i)}}
			if _, err := o.cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating namespace %s: %w", ns.Name, err)
			}
		}
	}
	if n <= o.have {
		return nil
	}
	start, from := time.Now(), o.have
	var next atomic.Int64
	next.Store(int64(from))
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for range o.writers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if _, err := o.apply(ctx, i, 0); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-done:
			if err := context.Cause(ctx); err != nil {
				return err
			}
			o.have = n
			took := time.Since(start)
			logf("created %d ConfigMaps in %s (%.0f/s)", n-from, took.Round(time.Millisecond), float64(n-from)/took.Seconds())
			return nil
		case <-tick.C:
			logf("created %d of %d", min(int(next.Load()), n)-from, n-from)
		}
	}
}

// sample is one acknowledged write or one applied change: which resourceVersion, when.
type sample struct {
	rv string
	at time.Time
}

// update re-applies the objects 0..n-1 with new revisions, round robin, from
// parallel writers, until the deadline; writes in flight then finish (so
// every write is acknowledged). It returns every acknowledgement.
func (o *objects) update(ctx context.Context, until time.Time, n int) ([]sample, error) {
	acks := make([][]sample, o.writers)
	errs := make([]error, o.writers)
	var wg sync.WaitGroup
	for w := range o.writers {
		wg.Go(func() {
			for k := 0; time.Now().Before(until); k++ {
				i := (w + k*o.writers) % n
				cm, err := o.apply(ctx, i, int(o.revision.Add(1)))
				if err != nil {
					errs[w] = err
					return
				}
				acks[w] = append(acks[w], sample{rv: cm.ResourceVersion, at: time.Now()})
			}
		})
	}
	wg.Wait()
	var all []sample
	for w := range acks {
		if errs[w] != nil {
			return nil, errs[w]
		}
		all = append(all, acks[w]...)
	}
	return all, nil
}
