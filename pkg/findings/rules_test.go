package findings

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// catalogueTable is the catalogue as README.md's table of the findings.
func catalogueTable() string {
	var b strings.Builder
	b.WriteString("| id | severity | raised when |\n|---|---|---|\n")
	for _, e := range Catalogue() {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", e.ID, e.Severity, e.When)
	}
	return b.String()
}

func TestReadmeFindingsTableIsTheCatalogue(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := catalogueTable(); !strings.Contains(string(readme), want) {
		t.Errorf("README.md's table of the findings is not the rules' catalogue; write it as:\n%s", want)
	}
	if want := "what counts as a relist storm (default `" + RelistStormDefault() + "`)"; !strings.Contains(string(readme), want) {
		t.Errorf("README.md's flags do not say --relist-storm's default: %q", want)
	}
}
