package catalog_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/load/catalog"
	"github.com/pos-lake/pos/load/layout"
)

// A lake whose path holds DuckDB's glob characters is read as it is named:
// every view, the catalog and a partition's file list read its rows, and
// none of the lake beside it whose name the path, read as a pattern,
// would match.
func TestLakePathWithGlobCharacters(t *testing.T) {
	for _, name := range []string{"a[1]*b", "a?b", `a\b`, "a{1,2}b", "**", "a[b", "it's [x]"} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			lake := filepath.Join(root, name, "lake")
			day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
			loadtest.Load(t, lake, loadtest.Msg("m1", "s", "mine", day), loadtest.Msg("m2", "s", "mine too", day.AddDate(0, 0, 1)))
			// Lakes whose names the unescaped pattern matches.
			for _, decoy := range []string{"a1b", "a1Zb", "axb", "a", "ab", "it's x"} {
				loadtest.Load(t, filepath.Join(root, decoy, "lake"), loadtest.Msg("d-"+decoy, "s", "decoy", day))
			}
			want := "2 mine|mine too"
			q := "SELECT CAST(count(*) AS VARCHAR) || ' ' || string_agg(text, '|' ORDER BY id) FROM messages"
			if got := loadtest.One(t, loadtest.Views(t, lake), q); got != want {
				t.Errorf("views: %q, want %q", got, want)
			}
			// The catalog, attached (a DSN cannot name every path; DuckDB
			// takes what follows a "?" in a database path for options, so
			// such a lake's is reached through a link).
			db, err := catalog.OpenDB("")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			cat := filepath.Join(lake, catalog.CatalogFile)
			if strings.Contains(name, "?") {
				link := filepath.Join(t.TempDir(), "link")
				os.Symlink(lake, link)
				cat = filepath.Join(link, catalog.CatalogFile)
			}
			if _, err := db.Exec("ATTACH " + layout.SQLString(cat) + " AS cat (READ_ONLY)"); err != nil {
				t.Fatal(err)
			}
			got := loadtest.One(t, db, strings.Replace(q, "FROM messages", "FROM cat.messages", 1))
			if strings.Contains(name, `\`) {
				// pos.duckdb's glob can match a backslash only with "?",
				// and so a name differing there too (see layout.GlobEscape).
				if !strings.Contains(got, "mine|mine too") {
					t.Errorf("catalog: %q", got)
				}
			} else if got != want {
				t.Errorf("catalog: %q, want %q", got, want)
			}
			parts, err := layout.Partitions(lake, layout.TableMessages, "")
			if err != nil {
				t.Fatal(err)
			}
			src, err := catalog.PartitionSource(lake, "messages", parts)
			if err != nil {
				t.Fatal(err)
			}
			if got := loadtest.One(t, db, strings.Replace(q, "FROM messages", "FROM "+src, 1)); got != want {
				t.Errorf("partition source: %q, want %q", got, want)
			}
			files, err := layout.PartitionFiles(lake, layout.TableMessages, "", time.Time{}, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			fs, list, err := catalog.FilesSource(lake, layout.TableMessages, files)
			if err != nil {
				t.Fatal(err)
			}
			if got := loadtest.One(t, db, strings.Replace(q, "FROM messages", "FROM "+fs, 1), list); got != want {
				t.Errorf("files source: %q, want %q", got, want)
			}
		})
	}
}

// scratchPrefix begins the names of the scratch directories
// (layout.HoldScratch).
const scratchPrefix = "pos-schema-"

// The zero-row schema files of a lake this process cannot write are made in
// a directory this process creates, private, and never read from the shared
// temporary directory, where anyone may have put a file of that name.
func TestSchemaFilesNeverFromSharedTemp(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	// A scratch dir an earlier test of this process made, unheld, goes:
	// this one's is made under tmp.
	layout.HoldScratch()()
	lake := t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	loadtest.Load(t, lake, loadtest.Msg("m1", "s", "x", day))
	// Every table's schema file, planted where an older build looked:
	// $TMPDIR/pos-schema/<fingerprint>/<table>/…/empty.parquet, with a row.
	db, err := catalog.OpenDB("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, table := range layout.Tables {
		real, err := catalog.SchemaFile(lake, table, false)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(filepath.Join(lake, "_schema"), real)
		planted := filepath.Join(tmp, "pos-schema", rel)
		os.MkdirAll(filepath.Dir(planted), 0o777)
		q := fmt.Sprintf("COPY (SELECT * REPLACE ('planted-id' AS id) FROM (SELECT * FROM read_parquet(%s) UNION ALL BY NAME SELECT 'planted-id' AS id)) TO %s (FORMAT parquet)",
			layout.SQLString(real), layout.SQLString(planted))
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	// The lake's _schema cannot be written (a file in the way: as
	// unwritable as a read-only lake, even for root), and the views read
	// every table's schema file (no record of the files' schemas).
	os.RemoveAll(filepath.Join(lake, "_schema"))
	os.WriteFile(filepath.Join(lake, "_schema"), nil, 0o400)
	os.Remove(filepath.Join(lake, "_state", layout.SchemasFile))
	release := layout.HoldScratch()
	vdb := loadtest.Views(t, lake)
	for _, v := range catalog.Views {
		var n int64
		if err := vdb.QueryRow("SELECT count(*) FROM " + v + " WHERE id = 'planted-id'").Scan(&n); err != nil && !strings.Contains(err.Error(), "not found") {
			t.Fatalf("%s: %v", v, err)
		}
		if n > 0 {
			t.Errorf("%s serves the planted row", v)
		}
	}
	if n := loadtest.One(t, vdb, "SELECT count(*) FROM messages"); n != "1" {
		t.Errorf("messages: %s rows", n)
	}
	made, _ := filepath.Glob(filepath.Join(tmp, scratchPrefix+strconv.Itoa(os.Getpid())+"-*"))
	if len(made) != 1 {
		t.Fatalf("scratch dirs %v", made)
	}
	dir := made[0]
	fi, err := os.Stat(dir)
	if err != nil || !strings.HasPrefix(dir, tmp) || fi.Mode().Perm() != 0o700 {
		t.Fatalf("scratch dir %s: %v %v", dir, fi.Mode(), err)
	}
	vdb.Close()
	release()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the scratch dir outlived its last holder: %v", err)
	}
	// A scratch dir of a process that was killed goes when the next is made.
	dead := filepath.Join(tmp, scratchPrefix+strconv.Itoa(loadtest.DeadPid(t))+"-1")
	os.MkdirAll(filepath.Join(dead, "x"), 0o700)
	release = layout.HoldScratch()
	loadtest.Views(t, lake)
	release()
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("a dead process's scratch dir is still there: %v", err)
	}
}
