package load

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/pos-lake/pos/load/layout"
)

// An optional field's zero value is written as null whatever the rows around
// it: parquet-go v0.32.0 wrote the trailing zero values of a Write whose last
// run of values starts at row y and is y rows long as non-null ("" not NULL).
func TestOptionalZeroIsNull(t *testing.T) {
	for _, pat := range []string{".x.", "..xx..", ".x..........", "x.x..xx.xx..xxx"} {
		var in []layout.MessageRow
		for _, c := range pat {
			r := layout.MessageRow{ID: "id"}
			if c == 'x' {
				r.Model = "m"
			}
			in = append(in, r)
		}
		data := writeMessageRows(t, in...)
		file, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		col, _ := file.Schema().Lookup("model")
		rows := make([]parquet.Row, len(pat))
		n, _ := parquet.NewGenericReader[layout.MessageRow](bytes.NewReader(data)).ReadRows(rows)
		for i := range n {
			if null := rows[i][col.ColumnIndex].IsNull(); null != (pat[i] == '.') {
				t.Errorf("%q: row %d: null = %v", pat, i, null)
			}
		}
	}
}

// writeMessageRows writes rows through the typed writer to a part file and
// returns the file's bytes.
func writeMessageRows(t *testing.T, rows ...layout.MessageRow) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := newTypedWriter[layout.MessageRow](f)
	for _, r := range rows {
		if err := w.add(r, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
