package informerheap

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Population is a collection of realistic objects to measure informers on.
type Population struct {
	ConfigMaps  int
	Deployments int
	// Namespaces the objects are spread over, named Prefix-00, Prefix-01…
	Namespaces int
	Prefix     string
	// Writers is how many requests are in flight at once.
	Writers int
	// First is the shape of the objects in the first namespace (Prefix-00,
	// the first a LIST returns); the rest are Helm-like. Real clusters are
	// like this: argocd, cert-manager and default each hold their own kinds
	// of objects.
	First Shape
	// Huge of the ConfigMaps, spread over the namespaces, hold about
	// 900 KiB of data each (a Grafana dashboard, a Helm release's
	// manifest): a few objects that are much of the list's bytes.
	Huge int
}

// huge says whether ConfigMap i is one of the Huge ones.
func (p Population) huge(i int) bool {
	if p.Huge <= 0 {
		return false
	}
	every := max(p.ConfigMaps/p.Huge, 1)
	return i%every == every/2 && i/every < p.Huge
}

// Shape is what a population's objects look like.
type Shape int

// Shapes of objects.
const (
	// Helm: a ConfigMap of an application's config; a Deployment of three
	// containers with env, ports, probes, resources and mounts.
	Helm Shape = iota
	// Small: a ConfigMap of one short key; a Deployment of one bare container.
	Small
	// Large: Helm-like, with a 12 KiB last-applied-configuration annotation
	// (as kubectl apply leaves).
	Large
)

// PopulationLabel is the label every object of a population has, its Prefix as value.
const PopulationLabel = "watchcache.test/population"

// Selector selects the population's objects.
func (p Population) Selector() string { return PopulationLabel + "=" + p.Prefix }

// shape is the shape of the objects in namespace ns.
func (p Population) shape(ns string) Shape {
	if ns == p.Namespace(0) {
		return p.First
	}
	return Helm
}

// The two server-side apply field managers that own every object's fields
// (so each has managedFields of two managers, as objects deployed by one
// tool and touched by another do).
const (
	FirstManager  = "helm"
	SecondManager = "argocd-controller"
)

// Namespace is the name of namespace i.
func (p Population) Namespace(i int) string {
	return fmt.Sprintf("%s-%02d", p.Prefix, i%max(p.Namespaces, 1))
}

// Create creates the namespaces and objects: each object applied by the
// first manager (its content), then by the second (a label and an annotation).
func (p Population) Create(ctx context.Context, cfg *rest.Config) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building the clientset: %w", err)
	}
	for i := range max(p.Namespaces, 1) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.Namespace(i)}}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", ns.Name, err)
		}
	}
	type job func(ctx context.Context) error
	var jobs []job
	for i := range p.ConfigMaps {
		ns, name := p.Namespace(i), fmt.Sprintf("app-%05d-config", i)
		jobs = append(jobs, func(ctx context.Context) error {
			c := cs.CoreV1().ConfigMaps(ns)
			cm := configMap(name, ns, i, p.shape(ns), p.Prefix)
			if p.huge(i) {
				cm = cm.WithData(map[string]string{"dashboard.json": hugeData(i)})
			}
			if _, err := c.Apply(ctx, cm, metav1.ApplyOptions{FieldManager: FirstManager, Force: true}); err != nil {
				return fmt.Errorf("applying ConfigMap %s/%s: %w", ns, name, err)
			}
			second := corev1ac.ConfigMap(name, ns).WithLabels(map[string]string{"argocd.argoproj.io/instance": "shop-" + ns}).
				WithAnnotations(map[string]string{"argocd.argoproj.io/tracking-id": "shop-" + ns + ":/ConfigMap:" + ns + "/" + name})
			if _, err := c.Apply(ctx, second, metav1.ApplyOptions{FieldManager: SecondManager, Force: true}); err != nil {
				return fmt.Errorf("applying ConfigMap %s/%s as %s: %w", ns, name, SecondManager, err)
			}
			return nil
		})
	}
	for i := range p.Deployments {
		ns, name := p.Namespace(i), fmt.Sprintf("app-%05d", i)
		jobs = append(jobs, func(ctx context.Context) error {
			c := cs.AppsV1().Deployments(ns)
			if _, err := c.Apply(ctx, deployment(name, ns, i, p.shape(ns), p.Prefix), metav1.ApplyOptions{FieldManager: FirstManager, Force: true}); err != nil {
				return fmt.Errorf("applying Deployment %s/%s: %w", ns, name, err)
			}
			second := appsv1ac.Deployment(name, ns).WithLabels(map[string]string{"argocd.argoproj.io/instance": "shop-" + ns}).
				WithAnnotations(map[string]string{"argocd.argoproj.io/tracking-id": "shop-" + ns + ":apps/Deployment:" + ns + "/" + name})
			if _, err := c.Apply(ctx, second, metav1.ApplyOptions{FieldManager: SecondManager, Force: true}); err != nil {
				return fmt.Errorf("applying Deployment %s/%s as %s: %w", ns, name, SecondManager, err)
			}
			return nil
		})
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(p.Writers, 1) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(jobs) || ctx.Err() != nil {
					return
				}
				if err := jobs[i](ctx); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}

const appConfig = `server:
  port: 8080
  readTimeout: 30s
  writeTimeout: 30s
database:
  host: postgres.%[1]s.svc.cluster.local
  port: 5432
  pool: {min: 2, max: 20, idleTimeout: 5m}
cache:
  redis: redis-master.%[1]s.svc.cluster.local:6379
  ttl: 10m
logging: {level: info, format: json}
instance: %[2]d
`

func helmLabels(app, ns string, i int) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":       app,
		"app.kubernetes.io/instance":   app + "-prod",
		"app.kubernetes.io/version":    "1.4." + strconv.Itoa(i%10),
		"app.kubernetes.io/component":  "backend",
		"app.kubernetes.io/part-of":    "shop",
		"app.kubernetes.io/managed-by": "Helm",
		"helm.sh/chart":                "shop-" + ns + "-2.3.1",
	}
}

func configMap(name, ns string, i int, shape Shape, population string) *corev1ac.ConfigMapApplyConfiguration {
	if shape == Small {
		return corev1ac.ConfigMap(name, ns).WithLabels(map[string]string{PopulationLabel: population}).WithData(map[string]string{"log-level": "info"})
	}
	data := fmt.Sprintf(appConfig, ns, i)
	sum := sha256.Sum256([]byte(data))
	labels := helmLabels(name, ns, i)
	labels[PopulationLabel] = population
	annotations := map[string]string{
		"meta.helm.sh/release-name":      name,
		"meta.helm.sh/release-namespace": ns,
		"checksum/config":                hex.EncodeToString(sum[:]),
	}
	if shape == Large {
		annotations[lastApplied] = lastAppliedOf(name, ns)
	}
	return corev1ac.ConfigMap(name, ns).WithLabels(labels).WithAnnotations(annotations).
		WithData(map[string]string{"application.yaml": data, "log-level": "info", "revision": "1"})
}

// hugeData is about 900 KiB of a dashboard's JSON.
func hugeData(i int) string {
	var b strings.Builder
	for j := 0; b.Len() < 900<<10; j++ {
		fmt.Fprintf(&b, `{"id":%d,"title":"panel %d of dashboard %d","expr":"sum(rate(http_requests_total{job=\"shop\",instance=~\".*-%d\"}[5m]))"},`, j, j, i, j%97)
	}
	return b.String()
}

// lastApplied is kubectl apply's annotation: the whole object as applied.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// lastAppliedOf is a 12 KiB last-applied-configuration.
func lastAppliedOf(name, ns string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":%q},"data":{`, name, ns)
	for i := 0; b.Len() < 12<<10; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"setting-%03d":"value of setting %d for %s, as the last kubectl apply wrote it"`, i, i, name)
	}
	b.WriteString("}}")
	return b.String()
}

// deployment is a Helm-like Deployment: three containers with env, ports,
// probes, resources and mounts, five volumes, labels and annotations.
func deployment(name, ns string, i int, shape Shape, population string) *appsv1ac.DeploymentApplyConfiguration {
	if shape == Small {
		sel := map[string]string{"app": name}
		return appsv1ac.Deployment(name, ns).WithLabels(map[string]string{PopulationLabel: population}).
			WithSpec(appsv1ac.DeploymentSpec().WithSelector(metav1ac.LabelSelector().WithMatchLabels(sel)).
				WithTemplate(corev1ac.PodTemplateSpec().WithLabels(sel).
					WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("app").WithImage("busybox:1.37")))))
	}
	labels := helmLabels(name, ns, i)
	labels[PopulationLabel] = population
	annotations := map[string]string{"meta.helm.sh/release-name": name, "meta.helm.sh/release-namespace": ns, "deployment.kubernetes.io/revision": "3"}
	if shape == Large {
		annotations[lastApplied] = lastAppliedOf(name, ns)
	}
	sel := map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/instance": name + "-prod"}
	res := func(cpu, mem string) *corev1ac.ResourceRequirementsApplyConfiguration {
		rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
		return corev1ac.ResourceRequirements().WithRequests(rl).WithLimits(rl)
	}
	env := func(prefix string) []*corev1ac.EnvVarApplyConfiguration {
		var out []*corev1ac.EnvVarApplyConfiguration
		// In order, not from a map: the sidecars take the first three and
		// two, and every run must measure the same objects.
		for _, kv := range [][2]string{{"LOG_LEVEL", "info"}, {"REGION", "eu-west-1"}, {"FEATURE_FLAGS", "checkout,search,recommendations"}, {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://otel-collector.observability:4317"}, {"SERVICE_NAME", name}} {
			out = append(out, corev1ac.EnvVar().WithName(prefix+kv[0]).WithValue(kv[1]))
		}
		out = append(out,
			corev1ac.EnvVar().WithName(prefix+"POD_NAME").WithValueFrom(corev1ac.EnvVarSource().WithFieldRef(corev1ac.ObjectFieldSelector().WithFieldPath("metadata.name"))),
			corev1ac.EnvVar().WithName(prefix+"DB_PASSWORD").WithValueFrom(corev1ac.EnvVarSource().WithSecretKeyRef(corev1ac.SecretKeySelector().WithName(name+"-db").WithKey("password"))))
		return out
	}
	probe := func(path string) *corev1ac.ProbeApplyConfiguration {
		return corev1ac.Probe().WithHTTPGet(corev1ac.HTTPGetAction().WithPath(path).WithPort(intstr.FromString("http"))).WithPeriodSeconds(10).WithFailureThreshold(3)
	}
	app := corev1ac.Container().WithName("app").WithImage("registry.example.com/shop/"+name+":1.4."+strconv.Itoa(i%10)).
		WithPorts(corev1ac.ContainerPort().WithName("http").WithContainerPort(8080), corev1ac.ContainerPort().WithName("metrics").WithContainerPort(9090)).
		WithEnv(env("")...).WithResources(res("500m", "512Mi")).
		WithLivenessProbe(probe("/healthz")).WithReadinessProbe(probe("/ready")).
		WithVolumeMounts(corev1ac.VolumeMount().WithName("config").WithMountPath("/etc/app"), corev1ac.VolumeMount().WithName("tmp").WithMountPath("/tmp"),
			corev1ac.VolumeMount().WithName("certs").WithMountPath("/etc/certs").WithReadOnly(true))
	proxy := corev1ac.Container().WithName("envoy").WithImage("envoyproxy/envoy:v1.31.2").
		WithArgs("--config-path", "/etc/envoy/envoy.yaml", "--log-level", "warn").
		WithPorts(corev1ac.ContainerPort().WithName("proxy").WithContainerPort(15001)).
		WithEnv(env("ENVOY_")[:3]...).WithResources(res("100m", "128Mi")).
		WithVolumeMounts(corev1ac.VolumeMount().WithName("envoy").WithMountPath("/etc/envoy"), corev1ac.VolumeMount().WithName("certs").WithMountPath("/etc/certs").WithReadOnly(true))
	logs := corev1ac.Container().WithName("log-shipper").WithImage("fluent/fluent-bit:3.1.9").
		WithEnv(env("FLUENT_")[:2]...).WithResources(res("50m", "64Mi")).
		WithVolumeMounts(corev1ac.VolumeMount().WithName("logs").WithMountPath("/var/log/app"))
	return appsv1ac.Deployment(name, ns).
		WithLabels(labels).
		WithAnnotations(annotations).
		WithSpec(appsv1ac.DeploymentSpec().WithReplicas(3).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(sel)).
			WithTemplate(corev1ac.PodTemplateSpec().
				WithLabels(labels).
				WithAnnotations(map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "9090", "checksum/config": fmt.Sprintf("%064x", i)}).
				WithSpec(corev1ac.PodSpec().
					WithServiceAccountName(name).
					WithContainers(app, proxy, logs).
					WithVolumes(
						corev1ac.Volume().WithName("config").WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName(name+"-config")),
						corev1ac.Volume().WithName("envoy").WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName("envoy-"+ns)),
						corev1ac.Volume().WithName("certs").WithSecret(corev1ac.SecretVolumeSource().WithSecretName(name+"-tls")),
						corev1ac.Volume().WithName("tmp").WithEmptyDir(corev1ac.EmptyDirVolumeSource()),
						corev1ac.Volume().WithName("logs").WithEmptyDir(corev1ac.EmptyDirVolumeSource()),
					))))
}
