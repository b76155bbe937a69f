package query

import (
	"slices"
	"testing"
)

func TestViewsIn(t *testing.T) {
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"SELECT 1", nil},
		{"SELECT count(*) FROM messages", []string{"messages"}},
		{"select * from Messages m join \"sessions\" s using (session_id)", []string{"messages", "sessions"}},
		{"SELECT * FROM exchange_rows", []string{"exchange_rows"}},
		{"SELECT * FROM exchanges_2", nil}, // not a view's name
		{"SELECT text FROM messages WHERE text LIKE '%raw%'", []string{"raw", "messages"}},
		{"SHOW TABLES", nil},
		{"SELECT view_name FROM duckdb_views() WHERE view_name = 'raw'", nil},
		{"DESCRIBE chunks", []string{"chunks"}},
	} {
		if got := viewsIn(c.q); !slices.Equal(got, c.want) {
			t.Errorf("viewsIn(%q) = %v, want %v", c.q, got, c.want)
		}
	}
}
