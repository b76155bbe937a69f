package query

import (
	"strings"

	"github.com/pos-lake/pos/load/catalog"
)

// catalogWords are the words of a query that looks at the catalog (SHOW
// TABLES, duckdb_views(), information_schema...), which should list every
// view.
var catalogWords = []string{"show", "duckdb_views", "duckdb_tables", "duckdb_columns", "information_schema", "pragma", "pg_catalog", "sqlite_master"}

// viewsIn returns the views a query names, for a lazy DB to define only
// those: defining a view reads its files' list and schema, ~0.9 s for every
// view of a lake of a million messages. The match is on words, outside or
// inside quotes, so it may define a view the query does not read (a word in
// a string), never miss one it reads. None (every view) when the query
// names no view or looks at the catalog.
func viewsIn(q string) []string {
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		words[w] = true
	}
	for _, w := range catalogWords {
		if words[w] {
			return nil
		}
	}
	var views []string
	for _, v := range catalog.Views {
		if words[v] {
			views = append(views, v)
		}
	}
	return views
}
