package release

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

type goreleaser struct {
	Version int `json:"version"`
	Builds  []struct {
		Main    string   `json:"main"`
		Binary  string   `json:"binary"`
		Env     []string `json:"env"`
		Ldflags []string `json:"ldflags"`
		Goos    []string `json:"goos"`
		Goarch  []string `json:"goarch"`
	} `json:"builds"`
	Archives []struct {
		Formats         []string `json:"formats"`
		NameTemplate    string   `json:"name_template"`
		FormatOverrides []struct {
			Goos    string   `json:"goos"`
			Formats []string `json:"formats"`
		} `json:"format_overrides"`
		Files []archiveFile `json:"files"`
	} `json:"archives"`
	ProjectName string `json:"project_name"`
}

// archiveFile is one entry of a goreleaser archive's files: a glob, or
// {src, dst, strip_parent}.
type archiveFile struct {
	Src         string `json:"src"`
	Dst         string `json:"dst"`
	StripParent bool   `json:"strip_parent"`
}

func (f *archiveFile) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &f.Src); err == nil {
		return nil
	}
	type plain archiveFile
	if err := json.Unmarshal(b, (*plain)(f)); err != nil {
		return fmt.Errorf("archive file entry %s: %w", b, err)
	}
	return nil
}

type krewPlugin struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version   string `json:"version"`
		Platforms []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			Sha256 string `json:"sha256"`
			Bin    string `json:"bin"`
		} `json:"platforms"`
	} `json:"spec"`
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEveryKrewPlatformIsAnArchiveGoreleaserBuilds(t *testing.T) {
	var gr goreleaser
	if err := yaml.Unmarshal(read(t, "../../.goreleaser.yaml"), &gr); err != nil {
		t.Fatalf("parsing .goreleaser.yaml: %v", err)
	}
	var kp krewPlugin
	if err := yaml.Unmarshal([]byte(RenderKrewManifest(string(read(t, "../../krew-manifest.yaml")), "v1.2.3", func(string) string { return strings.Repeat("0", 64) })), &kp); err != nil {
		t.Fatalf("parsing the rendered krew-manifest.yaml: %v", err)
	}
	if gr.Version != 2 || len(gr.Builds) != 1 || len(gr.Archives) != 1 {
		t.Fatalf("goreleaser: want version 2 with one build and one archive, got %+v", gr)
	}
	b, a := gr.Builds[0], gr.Archives[0]
	if b.Main != "./cmd/kubectl-watchcache" || b.Binary != "kubectl-watchcache" || !contains(b.Env, "CGO_ENABLED=0") || !strings.Contains(strings.Join(b.Ldflags, " "), "-X main.version=v{{ .Version }}") {
		t.Errorf("goreleaser build: got %+v", b)
	}
	if kp.Kind != "Plugin" || kp.Metadata.Name != "watchcache" || kp.Spec.Version != "v1.2.3" || len(kp.Spec.Platforms) == 0 {
		t.Fatalf("krew manifest: got %+v", kp)
	}
	seen := map[string]bool{}
	for _, p := range kp.Spec.Platforms {
		goos, arch := p.Selector.MatchLabels["os"], p.Selector.MatchLabels["arch"]
		seen[goos+"/"+arch] = true
		if !contains(b.Goos, goos) || !contains(b.Goarch, arch) {
			t.Errorf("krew platform %s/%s is not built by goreleaser", goos, arch)
		}
		format := a.Formats[0]
		for _, o := range a.FormatOverrides {
			if o.Goos == goos {
				format = o.Formats[0]
			}
		}
		name := strings.NewReplacer("{{ .ProjectName }}", gr.ProjectName, "{{ .Os }}", goos, "{{ .Arch }}", arch).Replace(a.NameTemplate)
		want := "https://github.com/kubectl-watchcache/kubectl-watchcache/releases/download/v1.2.3/" + name + "." + format
		if p.URI != want {
			t.Errorf("krew %s/%s uri: got %s, want %s", goos, arch, p.URI, want)
		}
		wantBin := "kubectl-watchcache"
		if goos == "windows" {
			wantBin += ".exe"
		}
		if p.Bin != wantBin {
			t.Errorf("krew %s/%s bin: got %s, want %s", goos, arch, p.Bin, wantBin)
		}
	}
	for _, goos := range b.Goos {
		for _, arch := range b.Goarch {
			if !seen[goos+"/"+arch] {
				t.Errorf("goreleaser builds %s/%s but the krew manifest does not offer it", goos, arch)
			}
		}
	}
}

// TestArchivesShipTheLicense keeps LICENSE in every release archive: krew's
// index rejects plugins whose archives carry no license.
func TestArchivesShipTheLicense(t *testing.T) {
	var gr goreleaser
	if err := yaml.Unmarshal(read(t, "../../.goreleaser.yaml"), &gr); err != nil {
		t.Fatalf("parsing .goreleaser.yaml: %v", err)
	}
	if len(gr.Archives) == 0 {
		t.Fatal("goreleaser: no archives")
	}
	if license := string(read(t, "../../LICENSE")); !strings.Contains(license, "Apache License") || !strings.Contains(license, "Version 2.0, January 2004") {
		t.Errorf("LICENSE is not the Apache License 2.0")
	}
	for i, a := range gr.Archives {
		licensed := false
		for _, f := range a.Files {
			// goreleaser fails on a pattern that matches nothing; say which.
			matches, err := filepath.Glob(filepath.Join("../..", f.Src))
			if err != nil || len(matches) == 0 {
				t.Errorf("archive %d: files entry %q matches no file in the repository", i, f.Src)
			}
			if ok, _ := filepath.Match(f.Src, "LICENSE"); ok && (f.Dst == "" || f.Dst == ".") {
				licensed = true
			}
		}
		if !licensed {
			t.Errorf("archive %d: files %+v do not put LICENSE at the archive's root", i, a.Files)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
