package load

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pos-lake/pos/load/layout"
)

// A part file keeps the statistics readers prune by (each column chunk's
// null count, and its bounds but for blob columns) and leaves out what none
// uses: the statistics in each data page's header.
func TestWriterStatistics(t *testing.T) {
	var rows []layout.MessageRow
	for i, text := range []string{"zeta " + strings.Repeat("z", 4000), "alpha", ""} {
		rows = append(rows, layout.MessageRow{ID: fmt.Sprintf("id%d", i), Text: text, Model: "m"})
	}
	data := writeMessageRows(t, rows...)
	file, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, cc := range file.Metadata().RowGroups[0].Columns {
		md := cc.MetaData
		name := strings.Join(md.PathInSchema, ".")
		st := md.Statistics
		switch name {
		case "id":
			if string(st.MinValue) != "id0" || string(st.MaxValue) != "id2" {
				t.Errorf("id: bounds %q..%q, want id0..id2", st.MinValue, st.MaxValue)
			}
		case "text":
			if len(st.MinValue)+len(st.MaxValue)+len(st.Min)+len(st.Max) > 0 {
				t.Errorf("text: a blob column has bounds (%d and %d bytes)", len(st.MinValue), len(st.MaxValue))
			}
			if st.NullCount != 1 {
				t.Errorf("text: null count %d, want 1", st.NullCount)
			}
		}
		seen[name] = true
		var h format.PageHeader
		dec := thrift.NewDecoder(new(thrift.CompactProtocol).NewReader(bytes.NewReader(data[md.DataPageOffset:])))
		if err := dec.Decode(&h); err != nil {
			t.Fatalf("%s: page header: %v", name, err)
		}
		var ps format.Statistics
		switch {
		case h.DataPageHeaderV2.Valid:
			ps = h.DataPageHeaderV2.V.Statistics
		case h.DataPageHeader.Valid:
			ps = h.DataPageHeader.V.Statistics
		default:
			t.Fatalf("%s: page at the data page offset is a %v", name, h.Type)
		}
		if len(ps.MinValue)+len(ps.MaxValue)+len(ps.Min)+len(ps.Max) > 0 {
			t.Errorf("%s: a data page header holds bounds %q..%q", name, ps.MinValue, ps.MaxValue)
		}
	}
	if !seen["id"] || !seen["text"] {
		t.Fatalf("columns id and text not both found: %v", seen)
	}
}
