// Command render-krew renders krew-manifest.yaml for a tag into DIR/watchcache.yaml,
// so krew's validate-krew-manifest can check it (CI does, with -skip-install):
//
//	go run ./hack/render-krew v0.1.0 DIR
//
// Without archives every sha256 is a placeholder of the right shape. Given the
// archives goreleaser built (-archive, repeatable), the URIs whose file name
// matches an archive's get that archive's real sha256, so that
// "kubectl krew install --manifest=DIR/watchcache.yaml --archive=ARCHIVE" can
// verify it (hack/krew-install-check.sh does):
//
//	go run ./hack/render-krew -archive dist/kubectl-watchcache_linux_amd64.tar.gz v0.1.0 DIR
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kubectl-watchcache/kubectl-watchcache/internal/release"
)

// archives collects the repeatable -archive flag.
type archives []string

func (a *archives) String() string     { return strings.Join(*a, ",") }
func (a *archives) Set(v string) error { *a = append(*a, v); return nil }

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("render-krew", flag.ContinueOnError)
	var files archives
	fs.Var(&files, "archive", "a release archive whose sha256 goes into the manifest; its file name must match a platform's URI (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: go run ./hack/render-krew [-archive FILE]... TAG DIR")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return errors.New("want TAG and DIR")
	}
	tag, dir := fs.Arg(0), fs.Arg(1)

	sums := map[string]string{} // archive file name -> sha256
	for _, f := range files {
		sum, err := sha256File(f)
		if err != nil {
			return err
		}
		sums[filepath.Base(f)] = sum
	}
	tmpl, err := os.ReadFile("krew-manifest.yaml")
	if err != nil {
		return fmt.Errorf("reading the krew manifest template: %w", err)
	}
	used := map[string]bool{}
	out := release.RenderKrewManifest(string(tmpl), tag, func(uri string) string {
		if sum, ok := sums[path.Base(uri)]; ok {
			used[path.Base(uri)] = true
			return sum
		}
		return strings.Repeat("0", 64)
	})
	// An archive no platform names means goreleaser and the manifest disagree.
	var unused []string
	for name := range sums {
		if !used[name] {
			unused = append(unused, name)
		}
	}
	if len(unused) > 0 {
		sort.Strings(unused)
		return fmt.Errorf("no platform in krew-manifest.yaml has a URI ending in %s", strings.Join(unused, ", "))
	}
	dst := filepath.Join(dir, "watchcache.yaml")
	if err := os.WriteFile(dst, []byte(out), 0o644); err != nil {
		return fmt.Errorf("writing the rendered manifest: %w", err)
	}
	fmt.Println(dst)
	return nil
}

func sha256File(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", fmt.Errorf("reading archive: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hashing %s: %w", name, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
