package load

import (
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
		path := filepath.Join(t.TempDir(), "m.parquet")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w := newTypedWriter[layout.MessageRow](f)
		for _, c := range pat {
			r := layout.MessageRow{ID: "id"}
			if c == 'x' {
				r.Model = "m"
			}
			if err := w.add(r, 0); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		pf, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := pf.Stat()
		file, err := parquet.OpenFile(pf, st.Size())
		if err != nil {
			t.Fatal(err)
		}
		col, _ := file.Schema().Lookup("model")
		rows := make([]parquet.Row, len(pat))
		n, _ := parquet.NewGenericReader[layout.MessageRow](pf).ReadRows(rows)
		pf.Close()
		for i := range n {
			if null := rows[i][col.ColumnIndex].IsNull(); null != (pat[i] == '.') {
				t.Errorf("%q: row %d: null = %v", pat, i, null)
			}
		}
	}
}
