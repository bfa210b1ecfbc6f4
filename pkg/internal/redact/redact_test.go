package redact

import (
	"strings"
	"testing"
)

func TestSecretHidesDataStringDataAndTheLastAppliedConfiguration(t *testing.T) {
	in := `{"kind":"Secret","metadata":{"name":"s","annotations":{"keep":"me","` + LastApplied + `":"{\"data\":{\"k\":\"c2VjcmV0\"}}"}},"data":{"k":"c2VjcmV0"},"stringData":{"p":"hunter2"},"type":"Opaque"}`
	out, err := Secret([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, leaked := range []string{"c2VjcmV0", "hunter2"} {
		if strings.Contains(got, leaked) {
			t.Errorf("%q still in %s", leaked, got)
		}
	}
	for _, kept := range []string{`"keep":"me"`, `"name":"s"`, `"type":"Opaque"`, `"k":"REDACTED"`, `"p":"REDACTED"`, `"` + LastApplied + `":"REDACTED"`} {
		if !strings.Contains(got, kept) {
			t.Errorf("%s missing from %s", kept, got)
		}
	}
}

func TestSecretRefusesWhatItCannotRead(t *testing.T) {
	for _, in := range []string{`not json`, `{"data":"c2VjcmV0"}`, `{"metadata":{"annotations":{"a":1}}}`} {
		if out, err := Secret([]byte(in)); err == nil {
			t.Errorf("Secret(%s) = %s, want an error", in, out)
		}
	}
}
