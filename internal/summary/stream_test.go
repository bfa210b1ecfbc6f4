package summary

import (
	"strings"
	"testing"

	"github.com/kubectl-watchcache/kubectl-watchcache/pkg/reflector"
)

// A stream's summary says for people what its client asked for; a trace
// that did not record it says nothing.
func TestAStreamSaysWhatItsClientAskedFor(t *testing.T) {
	for _, tc := range []struct {
		st   StreamSummary
		want string
	}{
		{StreamSummary{}, ""},
		{StreamSummary{Wire: reflector.WireProtobuf}, "protobuf, full objects"},
		{StreamSummary{Wire: reflector.WireProtobuf, MetadataOnly: true}, "protobuf, metadata only"},
		{StreamSummary{Wire: reflector.WireJSON, Table: true}, "json, tables"},
	} {
		if got := tc.st.Asks(); got != tc.want {
			t.Errorf("%+v asks %q, want %q", tc.st, got, tc.want)
		}
	}
	var b strings.Builder
	s := Summary{Resource: "configmaps.v1", Stream: &StreamSummary{ID: 2, UserAgent: "ctrl", RemoteAddr: "127.0.0.1:1", Wire: reflector.WireProtobuf, MetadataOnly: true}}
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), `stream #2 of 127.0.0.1:1 (ctrl), namespace "", asks protobuf, metadata only`+"\n") {
		t.Errorf("the text summary begins\n%s", b.String())
	}
}

// Two streams of one client that differ by their selectors alone are told
// apart in the text summary (it said only their namespace).
func TestAStreamsTextSummarySaysItsSelectors(t *testing.T) {
	var b strings.Builder
	s := Summary{Resource: "configmaps.v1", Stream: &StreamSummary{ID: 1, UserAgent: "curl", RemoteAddr: "127.0.0.1:1", Namespace: "ns", LabelSelector: "app=web", FieldSelector: "metadata.name=a"}}
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), `stream #1 of 127.0.0.1:1 (curl), namespace "ns", -l app=web, --field-selector metadata.name=a`+"\n") {
		t.Errorf("the text summary begins\n%s", b.String())
	}
}
