package query_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/query"
)

// A terminal's table shows the chosen columns under their headers, the
// short one of "long|short" when narrow, and leaves out optional columns
// to fit, saying so on Err; other formats have every column.
func TestOutputTable(t *testing.T) {
	table := func() *query.Table {
		return &query.Table{
			Columns: []query.Column{{Name: "id", Type: "VARCHAR"}, {Name: "output_tokens", Type: "BIGINT"},
				{Name: "extra", Type: "BIGINT"}, {Name: "title", Type: "VARCHAR"}},
			Rows: [][]any{{"a1", int64(1234), int64(7), "a title long enough to be cut when the table is narrow"}},
		}
	}
	cols := []string{"id:session", "output_tokens:out tokens|out", "extra", "title"}
	for _, tc := range []struct {
		format        query.Format
		width         int
		want, notWant []string
		note          string
	}{
		{query.FormatTable, 200, []string{"SESSION", "OUT TOKENS", "EXTRA", "1,234", "a title long enough"}, nil, ""},
		{query.FormatTable, 30, []string{"SESSION", "OUT"}, []string{"EXTRA", "OUT TOKENS"}, "t: left out to fit 30 columns: extra (see more)\n"},
		{query.FormatCSV, 30, []string{"id,output_tokens,extra,title", "a1,1234,7,"}, nil, ""},
	} {
		var out, errb bytes.Buffer
		o := &query.Output{W: &out, Err: &errb, Name: "t", Format: tc.format, Width: tc.width, Now: time.Now(), FitHint: "(see more)"}
		if err := o.Table(table(), cols, []string{"extra"}, "title"); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s %d: no %q in\n%s", tc.format, tc.width, w, out.String())
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(out.String(), w) {
				t.Errorf("%s %d: %q in\n%s", tc.format, tc.width, w, out.String())
			}
		}
		if errb.String() != tc.note {
			t.Errorf("%s %d: stderr %q, want %q", tc.format, tc.width, errb.String(), tc.note)
		}
	}
}
