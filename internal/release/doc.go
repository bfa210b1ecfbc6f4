// Package release keeps the release configuration honest: it renders the krew
// manifest template the way krew-release-bot does (for krew's validator), and
// its test keeps .goreleaser.yaml and krew-manifest.yaml consistent and every
// release archive shipping LICENSE; another builds the release image
// (dockers_v2, Dockerfile) offline and runs the binary in it.
package release

import (
	"regexp"
	"strings"
)

// RenderKrewManifest renders krew-manifest.yaml's template for a release tag
// as krew-release-bot would, asking sha256 for each archive URL.
func RenderKrewManifest(tmpl, tag string, sha256 func(uri string) string) string {
	add := regexp.MustCompile(`\{\{ addURIAndSha "([^"]+)" \.TagName \}\}`)
	s := strings.ReplaceAll(tmpl, "{{ .TagName }}", tag)
	return add.ReplaceAllStringFunc(s, func(m string) string {
		uri := add.FindStringSubmatch(m)[1]
		return "uri: " + uri + "\n      sha256: \"" + sha256(uri) + "\""
	})
}
