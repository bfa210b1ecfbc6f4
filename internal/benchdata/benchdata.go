// Package benchdata generates the big objects the benchmarks use: the text
// of a large ConfigMap, like a Helm release's values, a Grafana dashboard or a
// big CRD's embedded configuration. The text is YAML-like and deliberately
// awkward for a JSON decoder: double quotes and backslashes (escaped in JSON),
// a line break every few dozen bytes and tabs (escaped), '<', '>' and '&' (which
// the API server escapes as \u003c…), and non-ASCII text (left as UTF-8).
package benchdata

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// YAMLText returns size bytes or a little less of YAML-like text for object
// i: the same i and size always give the same text, and different i give
// different text. It ends at the end of a line.
func YAMLText(i, size int) string {
	// The templates the text is made of; %d is replaced by a counter.
	lines := [...]string{
		"# Dashboard \"Service overview — Zürich\" (revision %d)",
		"dashboards:",
		"  - title: \"Latency p99 – Käufe/s #%d\"",
		"    query: \"histogram_quantile(0.99, sum(rate(http_request_duration_seconds_bucket{job=\\\"api\\\", path=~\\\"/v1/.*\\\"}[5m])) by (le))\"",
		"    description: 'Größe < 1 MiB & “smart quotes” 日本語のテキスト ✓ 🚀'",
		"    windowsPath: \"C:\\\\data\\\\logs\\\\app-%d.log\"",
		"\tindentedWithTab: true",
		"    thresholds: [{value: 80, color: \"#f2cc0c\"}, {value: 95, color: \"#e02f44\"}]",
		"    html: \"<a href=\\\"https://grafana.example/d/%d?orgId=1&refresh=30s\\\">open</a>\"",
		"    notes: |",
		"      Ελληνικά, русский текст, العربية, and plain ASCII words for item %d.",
		"      Escapes in the value: \\n \\t \\u00e9 stay as typed.",
		"replicaCount: %d",
		"image: {repository: registry.example/app, tag: \"v1.%d.0\", pullPolicy: IfNotPresent}",
		"resources: {limits: {cpu: 500m, memory: 512Mi}, requests: {cpu: 100m, memory: 128Mi}}",
	}
	var b strings.Builder
	b.Grow(size + 256)
	for n := 0; ; n++ {
		line := strings.Replace(lines[n%len(lines)], "%d", strconv.Itoa(i*100003+n), 1)
		if b.Len()+len(line)+1 > size {
			return b.String()
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
}

// WithData returns a copy of obj, the JSON of a ConfigMap whose last member
// is "data", with its data replaced by one key holding value, encoded as the
// API server encodes it (encoding/json, '<', '>' and '&' escaped).
func WithData(obj []byte, key, value string) ([]byte, error) {
	i := bytes.LastIndex(obj, []byte(`,"data":{`))
	if i < 0 {
		return nil, errors.New(`the object has no "data" member`)
	}
	data, err := json.Marshal(map[string]string{key: value})
	if err != nil {
		return nil, fmt.Errorf("encoding the data: %w", err)
	}
	out := append(bytes.Clone(obj[:i]), `,"data":`...)
	return append(append(out, data...), '}'), nil
}
