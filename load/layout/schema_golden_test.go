package layout

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// The Parquet schema of every table's rows, column for column, is the
// lake's file format: it names the columns, their order, types and
// encodings, and state.go fingerprints it. testdata/row_schemas.txt holds
// it, with each column's encoding; POS_UPDATE_SCHEMAS=1 rewrites the file after a deliberate change.
func TestRowSchemasGolden(t *testing.T) {
	var b strings.Builder
	for _, table := range Tables {
		b.WriteString("# " + table + "\n")
		s := parquet.SchemaOf(RowType(table))
		b.WriteString(s.String())
		b.WriteString("\n")
		// String leaves out each column's encoding (the dict tag).
		for _, path := range s.Columns() {
			leaf, _ := s.Lookup(path...)
			enc := "plain"
			if e := leaf.Node.Encoding(); e != nil {
				enc = e.String()
			}
			b.WriteString(strings.Join(path, ".") + " " + enc + "\n")
		}
	}
	path := filepath.Join("testdata", "row_schemas.txt")
	if os.Getenv("POS_UPDATE_SCHEMAS") == "1" {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("row schemas differ from %s:\n%s", path, got)
	}
}
