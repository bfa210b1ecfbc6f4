package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
)

// devVersion is what main.version says when no release stamped it.
const devVersion = "dev"

// ResolveVersion is the plugin's version: the one a release stamps into the
// binary (goreleaser's -X main.version), else the module version that
// "go install …@vX" or a build in a git checkout recorded, else "dev".
func ResolveVersion(stamped string) string {
	info, ok := debug.ReadBuildInfo()
	return resolveVersion(stamped, info, ok)
}

func resolveVersion(stamped string, info *debug.BuildInfo, ok bool) string {
	if stamped != "" && stamped != devVersion {
		return stamped
	}
	if ok && info != nil {
		if v := info.Main.Version; v != "" && v != "(devel)" {
			return v
		}
	}
	return devVersion
}

// DefaultUserAgent is the User-Agent of every request the plugin makes, in
// kubectl's form ("kubectl/v1.37.2 (linux/amd64) …"): an apiserver's audit log,
// its API Priority and Fairness distinguishers and a proxy's rows go by it.
func DefaultUserAgent(version string) string {
	return fmt.Sprintf("kubectl-watchcache/%s (%s/%s)", version, runtime.GOOS, runtime.GOARCH)
}

// identity is how a command that talks to a server names itself there.
type identity struct {
	version   string
	userAgent string // --user-agent; empty: DefaultUserAgent(version)
}

// addFlags registers --user-agent and makes every rest.Config that flags
// build (discovery and the RESTMapper included) carry the User-Agent.
func (id *identity) addFlags(f *pflag.FlagSet, flags *genericclioptions.ConfigFlags) {
	f.StringVar(&id.userAgent, "user-agent", "", "The User-Agent sent with every request (default \"kubectl-watchcache/VERSION (OS/ARCH)\")")
	wrap := flags.WrapConfigFn
	flags.WrapConfigFn = func(c *rest.Config) *rest.Config {
		if wrap != nil {
			c = wrap(c)
		}
		c.UserAgent = id.get()
		return c
	}
}

// get is the User-Agent to send.
func (id *identity) get() string {
	if ua := strings.TrimSpace(id.userAgent); ua != "" {
		return ua
	}
	return DefaultUserAgent(id.version)
}

// validate refuses a User-Agent that cannot be sent as a header value.
func (id *identity) validate() error {
	if strings.ContainsAny(id.userAgent, "\r\n\x00") {
		return usageErrorf("invalid --user-agent %q: it must be one line", id.userAgent)
	}
	return nil
}
