package release

import (
	"archive/tar"
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	"sigs.k8s.io/yaml"
)

// releaseImage is what .goreleaser.yaml says of the build and the image.
type releaseImage struct {
	Builds []struct {
		ID      string   `json:"id"`
		Main    string   `json:"main"`
		Binary  string   `json:"binary"`
		Env     []string `json:"env"`
		Flags   []string `json:"flags"`
		Ldflags []string `json:"ldflags"`
		Goos    []string `json:"goos"`
		Goarch  []string `json:"goarch"`
	} `json:"builds"`
	DockersV2 []struct {
		IDs        []string `json:"ids"`
		Dockerfile string   `json:"dockerfile"`
		Images     []string `json:"images"`
		Platforms  []string `json:"platforms"`
	} `json:"dockers_v2"`
}

// dockerfile is the image a Dockerfile describes, read by a Dockerfile
// reader that knows only what an image of one static binary needs: FROM
// scratch, ARG, COPY of a file, USER and ENTRYPOINT in JSON form. Anything
// else is an error, so the test cannot build another image than docker would.
type dockerfile struct {
	copies     [][2]string // source in the build context, destination
	user       string
	entrypoint []string
}

func readDockerfile(b []byte, args map[string]string) (dockerfile, error) {
	var d dockerfile
	from := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		instr, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		switch strings.ToUpper(instr) {
		case "FROM":
			if rest != "scratch" || from {
				return d, errors.New("want one FROM scratch, got FROM " + rest)
			}
			from = true
		case "ARG":
			if _, ok := args[rest]; !ok {
				return d, errors.New("ARG " + rest + " is not one the build sets")
			}
		case "COPY":
			f := strings.Fields(os.Expand(rest, func(k string) string { return args[k] }))
			if len(f) != 2 || strings.HasPrefix(f[0], "--") {
				return d, errors.New("COPY " + rest + ": want COPY SOURCE DESTINATION")
			}
			d.copies = append(d.copies, [2]string{f[0], f[1]})
		case "USER":
			d.user = rest
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(rest), &d.entrypoint); err != nil {
				return d, errors.New("ENTRYPOINT " + rest + ": want the JSON form")
			}
		default:
			return d, errors.New("instruction " + instr + " is not one this reader builds")
		}
	}
	if !from {
		return d, errors.New("no FROM")
	}
	return d, sc.Err()
}

// TestTheReleaseImageIsTheStaticPluginAloneRunAsNonRoot builds the image of
// .goreleaser.yaml's dockers_v2 offline: the binary as goreleaser builds it
// (its env, flags and ldflags) for linux on this machine's architecture, in
// goreleaser's build context (OS/ARCH/binary), then the Dockerfile's image
// with go-containerregistry on an empty base. The image, written as a
// tarball and read back, is valid, has one layer holding only the static
// binary, runs it as /kubectl-watchcache as 65532:65532, and the binary taken
// out of its layer runs `version`. deploy/base runs that image.
func TestTheReleaseImageIsTheStaticPluginAloneRunAsNonRoot(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the plugin as the release does")
	}
	var gr releaseImage
	if err := yaml.Unmarshal(read(t, "../../.goreleaser.yaml"), &gr); err != nil {
		t.Fatal(err)
	}
	if len(gr.Builds) != 1 || len(gr.DockersV2) != 1 {
		t.Fatalf("want one build and one dockers_v2 image, got %+v", gr)
	}
	b, di := gr.Builds[0], gr.DockersV2[0]
	if !reflect.DeepEqual(di.IDs, []string{b.ID}) || len(di.Images) == 0 {
		t.Fatalf("dockers_v2: %+v, want the build %q's binaries in a named image", di, b.ID)
	}
	platform := "linux/" + runtime.GOARCH
	for _, p := range di.Platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		if !contains(b.Goos, goos) || !contains(b.Goarch, goarch) {
			t.Errorf("the image's platform %s is not one goreleaser builds", p)
		}
	}
	if !contains(di.Platforms, platform) {
		t.Skipf("the image is not built for %s", platform)
	}
	var kust struct {
		Images []struct {
			Name string `json:"name"`
		} `json:"images"`
	}
	if err := yaml.Unmarshal(read(t, "../../deploy/base/kustomization.yaml"), &kust); err != nil {
		t.Fatal(err)
	}
	if len(kust.Images) != 1 || kust.Images[0].Name != di.Images[0] {
		t.Errorf("deploy/base runs %+v, the release's image is %s", kust.Images, di.Images[0])
	}

	// The binary, as goreleaser builds it, in goreleaser's build context.
	const version = "0.0.0-imagetest"
	context := t.TempDir()
	bin := filepath.Join(context, platform, b.Binary)
	ldflags := strings.ReplaceAll(strings.Join(b.Ldflags, " "), "{{ .Version }}", version)
	if strings.Contains(ldflags, "{{") {
		t.Fatalf("ldflags with a template this test does not fill: %s", ldflags)
	}
	args := append(append([]string{"build", "-o", bin}, b.Flags...), "-ldflags", ldflags, b.Main)
	build := exec.Command("go", args...)
	build.Dir = "../.."
	build.Env = append(append(os.Environ(), b.Env...), "GOOS=linux", "GOARCH="+runtime.GOARCH)
	start := time.Now()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("go %s: %s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))

	// The Dockerfile's image, on an empty base.
	df, err := readDockerfile(read(t, filepath.Join("../..", di.Dockerfile)), map[string]string{"TARGETPLATFORM": platform})
	if err != nil {
		t.Fatalf("%s: %v", di.Dockerfile, err)
	}
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	for _, c := range df.copies {
		data := read(t, filepath.Join(context, filepath.FromSlash(c[0])))
		if err := tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(c[1], "/"), Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(layer.Bytes())), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config.User, cf.Config.Entrypoint = df.user, df.entrypoint
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag(di.Images[0] + ":v" + version)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "image.tar")
	if err := tarball.WriteToFile(file, tag, img); err != nil {
		t.Fatal(err)
	}

	// The image, read back as docker load would read it.
	img, err = tarball.ImageFromPath(file, &tag)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(img); err != nil {
		t.Fatalf("the image is not valid: %v", err)
	}
	if cf, err = img.ConfigFile(); err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH || cf.Config.User != "65532:65532" || !reflect.DeepEqual(cf.Config.Entrypoint, []string{"/kubectl-watchcache"}) || len(cf.Config.Cmd) > 0 {
		t.Errorf("the image's config: %s/%s, user %q, entrypoint %q, cmd %q; want linux, 65532:65532, [/kubectl-watchcache], none",
			cf.OS, cf.Architecture, cf.Config.User, cf.Config.Entrypoint, cf.Config.Cmd)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("the image's layers: %d %v, want one", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	var files []string
	extracted := filepath.Join(t.TempDir(), "kubectl-watchcache")
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		files = append(files, h.Name)
		if "/"+path.Clean(h.Name) == cf.Config.Entrypoint[0] {
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(extracted, data, os.FileMode(h.Mode)&0o777); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !reflect.DeepEqual(files, []string{"kubectl-watchcache"}) {
		t.Fatalf("the layer holds %q, want the plugin alone", files)
	}
	e, err := elf.Open(extracted)
	if err != nil {
		t.Fatalf("the binary in the image: %v", err)
	}
	libs, _ := e.ImportedLibraries()
	for _, p := range e.Progs {
		if p.Type == elf.PT_INTERP {
			libs = append(libs, "an interpreter")
		}
	}
	e.Close()
	if len(libs) > 0 {
		t.Errorf("the binary in the image is not static: it needs %q", libs)
	}
	out, err := exec.Command(extracted, "version").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "kubectl-watchcache v"+version { // the tag, as krew names it
		t.Errorf("the image's binary, version: %v %q", err, out)
	}
	if d, err := img.Digest(); err == nil {
		sz, _ := layers[0].Size()
		t.Logf("image %s (%s): one layer of %.1f MiB compressed; %s", tag, d, float64(sz)/(1<<20), strings.TrimSpace(string(out)))
	}
}
