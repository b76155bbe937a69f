package query_test

import (
	"context"
	"slices"
	"testing"

	"github.com/pos-lake/pos/query"
)

// A query defines the views it names and not the others; one that names
// none, or looks at the catalog, sees them all.
func TestSQLDefinesNamedViews(t *testing.T) {
	ctx := context.Background()
	d := open(t)
	views := func() []string {
		tb, err := d.SQL(ctx, "SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY 1")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range tb.Rows {
			out = append(out, r[0].(string))
		}
		return out
	}
	if _, err := d.SQL(ctx, "SELECT count(*) FROM messages"); err != nil {
		t.Fatal(err)
	}
	if got := query.DefinedViews(d); !slices.Equal(got, []string{"messages"}) {
		t.Fatalf("after a query of messages, defined: %v", got)
	}
	if got := views(); len(got) < 10 || !slices.Contains(got, "sessions") {
		t.Fatalf("the catalog lists %v", got)
	}
}
