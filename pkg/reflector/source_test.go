package reflector

import (
	"strings"
	"testing"
)

// Format shows only the options that were set, resourceVersion always
// (`""` for a consistent read); compact abbreviates the names and clips a
// long continue token, and sent but negative numbers show as unset.
func TestRequestOptionsFormatShowsWhatWasSet(t *testing.T) {
	for _, c := range []struct {
		opts          RequestOptions
		long, compact string
	}{
		{RequestOptions{}, `resourceVersion=""`, `rv=""`},
		{RequestOptions{ResourceVersion: "0", Limit: 500}, "resourceVersion=0 limit=500", "rv=0 limit=500"},
		{RequestOptions{Limit: 500, Continue: "averyveryverylongcontinuetoken=="},
			`resourceVersion="" limit=500 continue=averyveryverylongcontinuetoken==`, `rv="" limit=500 continue=averyveryv…`},
		{RequestOptions{ResourceVersion: "211", ResourceVersionMatch: "NotOlderThan", SendInitialEvents: true, AllowWatchBookmarks: true, TimeoutSeconds: 397},
			"resourceVersion=211 resourceVersionMatch=NotOlderThan sendInitialEvents=true allowWatchBookmarks=true timeoutSeconds=397",
			"rv=211 match=NotOlderThan sendInitialEvents bookmarks timeout=397s"},
		{RequestOptions{ResourceVersion: "211", Limit: -1, TimeoutSeconds: -3}, "resourceVersion=211", "rv=211"},
		// What a proxied client chose, its control characters escaped: no screen runs them.
		{RequestOptions{ResourceVersion: "1\x1b[2J", Limit: 1, Continue: "\x1b]0;PWNED\a"}, `resourceVersion=1\x1b[2J limit=1 continue=\x1b]0;PWNED\x07`, `rv=1\x1b[2J limit=1 continue=\x1b]0;PWN…`},
	} {
		if got := c.opts.Format(false); got != c.long {
			t.Errorf("%+v: Format(false)\n got %s\nwant %s", c.opts, got, c.long)
		}
		if got := c.opts.Format(true); got != c.compact {
			t.Errorf("%+v: Format(true)\n got %s\nwant %s", c.opts, got, c.compact)
		}
	}
}

// A watch made without a resourceVersion resumes from none: the text says
// "" (it said "resourceVersion  if it watches again").
func TestAResumeFromNoResourceVersionSaysSo(t *testing.T) {
	for _, d := range []Decision{{Reason: ReasonWatchClosed, State: StateWatching, Observed: true}, {Reason: ReasonWatchClosed, State: StateWatching}} {
		if got := d.String(); !strings.Contains(got, `resourceVersion ""`) || strings.Contains(got, "  ") {
			t.Errorf("%q: want resourceVersion \"\"", got)
		}
	}
}
