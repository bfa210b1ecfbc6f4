// Package layers_test holds the module's layering rules as a test, built on
// `go list -json ./...`: the layer table below is the one docs/design.md
// draws ("Layers"), and the test fails when the code, the table and the
// drawing disagree.
package layers_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// layers is the module's layer table, top to bottom: a package may import
// only packages of the layers below its own (never one of its own layer, nor
// one above). Paths are from the module's root; "dir/..." places dir and
// everything under it, and a longer entry wins over a shorter one.
// docs/design.md ("Layers") draws the same table: every entry must be named
// in its drawing, in this order from top to bottom.
var layers = []struct {
	name     string
	packages []string
}{
	{"commands", []string{"cmd/...", "hack/..."}},
	{"front ends", []string{"internal/cli", "internal/scenarios", "internal/soak"}},
	{"the report", []string{"internal/report"}},
	{"what a run shows, attached", []string{"internal/outputs"}},
	{"one run", []string{"internal/session", "internal/proxy"}},
	{"what a run shows", []string{
		"internal/observed", "internal/tracegen", "internal/metrics",
		"internal/alert", "internal/lines", "internal/causal", "internal/cost", "internal/probe",
		"internal/subjects",
	}},
	{"the tests' fakes", []string{"pkg/tui/internal/tuitest"}},
	{"the dashboard's entry, traces, the summary; the live source", []string{"pkg/tui", "pkg/trace", "internal/summary", "pkg/live"}},
	{"the overview", []string{"pkg/tui/internal/overview"}},
	{"a resource's dashboard, the overview's table", []string{"pkg/tui/internal/dashboard", "pkg/tui/internal/table"}},
	{"what the dashboard's models share", []string{"pkg/tui/internal/program"}},
	{"the dashboard's components", []string{"pkg/tui/internal/..."}},
	{"what the components share", []string{"pkg/tui/internal/common"}},
	{"the wire; findings", []string{"pkg/wire", "pkg/findings"}},
	{"the reflector", []string{"pkg/reflector"}},
	{"the ground", []string{
		"pkg/store", "pkg/diff", "pkg/internal/jsonscan", "pkg/internal/redact", "pkg/internal/ring", "pkg/wire/request", "pkg/format", "internal/fault", "internal/plugintest",
		"internal/testcluster", "internal/informerheap", "internal/testdeps", "internal/benchdata", "internal/release", "hack/bench/internal/probe",
	}},
	{"the test cluster's programs", []string{"internal/clusterbin"}},
}

// pkg is what `go list -json` says of a package that the rules read.
type pkg struct {
	ImportPath string
	GoFiles    []string
	CgoFiles   []string
	Imports    []string
}

// listModule is the module's path and every package of the module
// (hack/tools, a module of its own, is not one).
func listModule(t *testing.T) (module string, pkgs []pkg) {
	t.Helper()
	noteInputs(t, filepath.Join("..", ".."))
	module = strings.TrimSpace(string(goRun(t, "list", "-m")))
	dec := json.NewDecoder(bytes.NewReader(goRun(t, "list", "-json=ImportPath,GoFiles,CgoFiles,Imports", "./...")))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages")
	}
	return module, pkgs
}

// goRun runs the go command at the module's root and returns its output.
func goRun(t *testing.T, args ...string) []byte {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		goCmd = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	cmd := exec.Command(goCmd, args...)
	cmd.Dir = filepath.Join("..", "..")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

// noteInputs stats every directory and Go file that `go list ./...` reads
// under root, so that go test's cache, which knows only what the test
// itself opens, runs the test again when an import or a package changes.
func noteInputs(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
		} else if !strings.HasSuffix(path, ".go") && d.Name() != "go.mod" {
			return nil
		}
		_, err = os.Stat(path)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// place is the layer of path (from the module's root; 0 is the top) and the
// table's entry that places it, or -1.
func place(path string) (layer int, entry string) {
	layer, best := -1, -1
	for i, l := range layers {
		for _, e := range l.packages {
			dir, tree := strings.CutSuffix(e, "/...")
			if path == dir || tree && strings.HasPrefix(path, dir+"/") {
				if len(dir) > best {
					layer, entry, best = i, e, len(dir)
				}
			}
		}
	}
	return layer, entry
}

func TestImportsRunDownTheLayers(t *testing.T) {
	module, pkgs := listModule(t)
	used := map[string]bool{}
	for _, p := range pkgs {
		rel, ok := strings.CutPrefix(p.ImportPath, module+"/")
		if !ok {
			t.Errorf("%s: not under the module's root, which the table cannot place", p.ImportPath)
			continue
		}
		if len(p.GoFiles)+len(p.CgoFiles) == 0 {
			continue // tests alone (this package): nothing imports it, and its imports build no program
		}
		layer, entry := place(rel)
		if layer < 0 {
			t.Errorf("%s: no layer places it: add it to the table in internal/layers/layers_test.go and to the drawing in docs/design.md (\"Layers\")", rel)
			continue
		}
		used[entry] = true
		for _, imp := range p.Imports {
			irel, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue // the standard library or another module
			}
			if strings.HasPrefix(rel, "pkg/") && strings.HasPrefix(irel, "internal/") {
				t.Errorf("%s imports %s: nothing under pkg/ imports internal/ (pkg/internal/... is for that)", rel, irel)
			}
			ilayer, _ := place(irel)
			switch {
			case ilayer < 0:
				// reported as unplaced where it is listed itself
			case ilayer == layer:
				t.Errorf("%s imports %s: both are in the layer %q; a package imports only the layers below its own", rel, irel, layers[layer].name)
			case ilayer < layer:
				t.Errorf("%s (layer %q) imports %s from the layer above it, %q", rel, layers[layer].name, irel, layers[ilayer].name)
			}
		}
	}
	for _, l := range layers {
		for _, e := range l.packages {
			if !used[e] {
				t.Errorf("the table places %s (layer %q), but no package is there: take it out of the table and out of docs/design.md", e, l.name)
			}
		}
	}
}

// linksClientGo is the one package under pkg/ that links client-go: the
// live Source, which connects. The others decode, record, replay and show
// what a server answered, and a program built on them alone (a trace's
// reader, a decoder of captured responses) links none of it.
const linksClientGo = "pkg/live"

func TestOnlyTheLiveSourceLinksClientGo(t *testing.T) {
	noteInputs(t, filepath.Join("..", ".."))
	module := strings.TrimSpace(string(goRun(t, "list", "-m")))
	found := false
	for _, line := range strings.Split(strings.TrimSpace(string(goRun(t, "list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", "./pkg/..."))), "\n") {
		p, deps, _ := strings.Cut(line, " ")
		for _, d := range strings.Fields(deps) {
			if !strings.HasPrefix(d, "k8s.io/client-go/") {
				continue
			}
			if rel := strings.TrimPrefix(p, module+"/"); rel != linksClientGo {
				t.Errorf("%s links %s: under pkg/ only %s links client-go", rel, d, linksClientGo)
			}
			found = true
			break
		}
	}
	if !found {
		t.Errorf("nothing under pkg/ links client-go, not even %s: is the test still looking?", linksClientGo)
	}
}

// TestTheDesignDrawsTheTable holds docs/design.md's drawing to the table:
// every entry is named in the drawing of "## Layers", each layer's entries
// below every entry of the layers above it.
func TestTheDesignDrawsTheTable(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Layers\n")
	if !ok {
		t.Fatal(`docs/design.md has no "## Layers" section`)
	}
	_, drawing, ok := strings.Cut(section, "```\n")
	if ok {
		drawing, _, ok = strings.Cut(drawing, "```")
	}
	if !ok {
		t.Fatal(`docs/design.md's "Layers" section has no drawing (a fenced block)`)
	}
	lines := strings.Split(drawing, "\n")
	// named is the pattern of a line that names entry: dir/ and anything
	// after it for a tree (dir/...), else the path alone.
	named := func(entry string) *regexp.Regexp {
		if dir, tree := strings.CutSuffix(entry, "/..."); tree {
			return regexp.MustCompile(`(^|[^\w/.-])` + regexp.QuoteMeta(dir+"/") + `[^\s,;()]*`)
		}
		return regexp.MustCompile(`(^|[^\w/.-])` + regexp.QuoteMeta(entry) + `($|[^\w/.-])`)
	}
	// lineOf is the first line of the drawing that names entry, or -1. A
	// longer entry of the table wins over a tree that holds it: a line
	// names the tree only where it names more than its longer entries (and
	// what follows one of them: "table.Fit", "table/columns.go").
	lineOf := func(entry string) int {
		re := named(entry)
		var longer []*regexp.Regexp
		if dir, tree := strings.CutSuffix(entry, "/..."); tree {
			for _, l := range layers {
				for _, e := range l.packages {
					if e != entry && strings.HasPrefix(e, dir+"/") {
						path := strings.TrimSuffix(e, "/...")
						longer = append(longer, regexp.MustCompile(`(^|[^\w/.-])`+regexp.QuoteMeta(path)+`($|[^\w-][^\s,;()]*)`))
					}
				}
			}
		}
		for i, l := range lines {
			for _, o := range longer {
				l = o.ReplaceAllString(l, " ")
			}
			if re.MatchString(l) {
				return i
			}
		}
		return -1
	}
	lowestAbove, lowestName := -1, ""
	for _, l := range layers {
		highest, highestName, lowest, name := len(lines), "", -1, ""
		for _, e := range l.packages {
			i := lineOf(e)
			if i < 0 {
				t.Errorf("docs/design.md's drawing of the layers does not name %s (layer %q)", e, l.name)
				continue
			}
			if i < highest {
				highest, highestName = i, e
			}
			if i > lowest {
				lowest, name = i, e
			}
		}
		if highestName != "" && highest <= lowestAbove {
			t.Errorf("docs/design.md draws %s (layer %q) at or above %s, from a layer above it", highestName, l.name, lowestName)
		}
		if name != "" {
			lowestAbove, lowestName = lowest, name
		}
	}
	if t.Failed() {
		var table strings.Builder
		for _, l := range layers {
			fmt.Fprintf(&table, "\n  %-22s %s", l.name, strings.Join(l.packages, " "))
		}
		t.Logf("the table in internal/layers/layers_test.go, top to bottom:%s", table.String())
	}
}
