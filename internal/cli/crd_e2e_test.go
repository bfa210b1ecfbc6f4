package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestE2EACRDDeletedWhileWatchedIsWaitedForAndAShortNameOfTwoWarns, on
// the real API server: two CRDs share a short name, and the tool resolves
// it as kubectl does, warning as kubectl does that it could mean the other
// one (a reviewer saw it pick one in silence). Then one CRD is deleted
// while it is watched (an operator's reinstall) and installed again: the
// run backs off through the 404s instead of failing a second after the
// CRD went, and its cache ends with the object made after the reinstall.
func TestE2EACRDDeletedWhileWatchedIsWaitedForAndAShortNameOfTwoWarns(t *testing.T) {
	dir, kc, tmp := pluginPath(t), kubeconfig(t), t.TempDir()
	do := func(args ...string) {
		t.Helper()
		if out, errOut, err := kubectl(t, dir, args...); err != nil {
			t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
		}
	}
	file := func(name, body string) string {
		t.Helper()
		path := filepath.Join(tmp, name)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	crd := func(group string) string {
		return file(group+".yaml", fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.%[1]s}
spec:
  group: %[1]s
  names: {kind: Gizmo, plural: gizmos, singular: gizmo, shortNames: [gzm]}
  scope: Namespaced
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`, group))
	}
	a, b := crd("a.crd-e2e.test"), crd("b.crd-e2e.test")
	established := []string{"wait", "--for", "condition=Established", "--timeout", "60s", "crd/gizmos.a.crd-e2e.test"}
	do("apply", "-f", a, "-f", b)
	t.Cleanup(func() { _, _, _ = kubectl(t, dir, "delete", "--ignore-not-found", "-f", a, "-f", b) })
	do(append(established, "crd/gizmos.b.crd-e2e.test")...)

	// Discovery serves a CRD a moment after it is Established: until it
	// serves both, the name is unknown, or only one has it.
	const warning = `Warning: short name "gzm" could also match lower priority resource gizmos.`
	code, stderr := 0, ""
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if code, _, stderr = run(t, "gzm", "-n", "default", "--kubeconfig", kc, "--no-tui", "--once"); code == ExitOK && strings.Contains(stderr, warning) {
			break
		}
	}
	if code != ExitOK || !strings.Contains(stderr, warning) {
		t.Errorf("gzm: exit %d, stderr %q; want exit 0 and kubectl's warning that it could mean the other", code, stderr)
	}

	tracePath := filepath.Join(tmp, "crd.jsonl")
	r := startRun(t, "gizmos.a.crd-e2e.test", "-n", "default", "--kubeconfig", kc, "--no-tui", "--summary", "-o", "json", "--trace", tracePath)
	r.waitFor(t, `"reason":"list-complete"`, 1, time.Minute)
	do("delete", "crd", "gizmos.a.crd-e2e.test")
	r.waitFor(t, `"reason":"backoff"`, 2, time.Minute) // 404s, retried
	do("apply", "-f", a)
	do(established...)
	do("apply", "-f", file("g1.yaml", "apiVersion: a.crd-e2e.test/v1\nkind: Gizmo\nmetadata: {name: g1, namespace: default}\n"))
	// g1 comes as an event, or in the relist that a 410 for the old
	// resourceVersion starts, which counts it as missed.
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if out := r.out.String(); strings.Contains(out, `"name":"g1"`) || strings.Contains(out, "1 missed add") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("g1 did not reach the cache within 2 minutes of the reinstall:\n%s", tail(r.out.String()))
		}
	}
	s := only(t, r.stop(t))
	if s.Objects != 1 || len(s.Store) != 1 || s.Store[0].Name != "g1" {
		t.Errorf("after the reinstall: %d objects %+v, want g1 alone", s.Objects, s.Store)
	}
	if strings.Contains(r.out.String(), `"reason":"permanent-error"`) {
		t.Errorf("the 404s of the deleted CRD failed the run:\n%s", tail(r.out.String()))
	}
	// Its trace says the 404s were retried, and its replay decides as it did.
	if code, _, stderr := run(t, "replay", tracePath, "--speed", "0", "--no-tui", "--strict"); code != ExitOK {
		t.Errorf("replay --strict: exit %d\n%s", code, stderr)
	}
}

// A warning kubectl's own code prints while the resources resolve is kept
// for the dashboard's footer, which hides what stderr said before it.
func TestKubectlsWarningIsKeptForTheDashboard(t *testing.T) {
	var errOut strings.Builder
	o := NewWatchOptions(genericiooptions.IOStreams{ErrOut: &errOut})
	if _, err := o.kubectlWarned.Write([]byte("Warning: short name \"gzm\" could also match lower priority resource gizmos.b.crd-e2e.test\n")); err != nil {
		t.Fatal(err)
	}
	if want := `short name "gzm" could also match lower priority resource gizmos.b.crd-e2e.test`; o.kubectlWarned.last != want || !strings.HasPrefix(errOut.String(), "Warning: ") {
		t.Errorf("kept %q, stderr %q; want %q kept and the line on stderr", o.kubectlWarned.last, errOut.String(), want)
	}
}
