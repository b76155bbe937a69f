package load

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
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
			loadRecs(t, lake, msg("m1", "s", "mine", day), msg("m2", "s", "mine too", day.AddDate(0, 0, 1)))
			// Lakes whose names the unescaped pattern matches.
			for _, decoy := range []string{"a1b", "a1Zb", "axb", "a", "ab", "it's x"} {
				loadRecs(t, filepath.Join(root, decoy, "lake"), msg("d-"+decoy, "s", "decoy", day))
			}
			want := "2 mine|mine too"
			q := "SELECT CAST(count(*) AS VARCHAR) || ' ' || string_agg(text, '|' ORDER BY id) FROM messages"
			if got := one(t, views(t, lake), q); got != want {
				t.Errorf("views: %q, want %q", got, want)
			}
			// The catalog, attached (a DSN cannot name every path; DuckDB
			// takes what follows a "?" in a database path for options, so
			// such a lake's is reached through a link).
			db, err := OpenDB("")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			cat := filepath.Join(lake, CatalogFile)
			if strings.Contains(name, "?") {
				link := filepath.Join(t.TempDir(), "link")
				os.Symlink(lake, link)
				cat = filepath.Join(link, CatalogFile)
			}
			if _, err := db.Exec("ATTACH " + sqlString(cat) + " AS cat (READ_ONLY)"); err != nil {
				t.Fatal(err)
			}
			got := one(t, db, strings.Replace(q, "FROM messages", "FROM cat.messages", 1))
			if strings.Contains(name, `\`) {
				// pos.duckdb's glob can match a backslash only with "?",
				// and so a name differing there too (see globEscape).
				if !strings.Contains(got, "mine|mine too") {
					t.Errorf("catalog: %q", got)
				}
			} else if got != want {
				t.Errorf("catalog: %q, want %q", got, want)
			}
			parts, err := Partitions(lake, TableMessages, "")
			if err != nil {
				t.Fatal(err)
			}
			src, err := PartitionSource(lake, "messages", parts)
			if err != nil {
				t.Fatal(err)
			}
			if got := one(t, db, strings.Replace(q, "FROM messages", "FROM "+src, 1)); got != want {
				t.Errorf("partition source: %q, want %q", got, want)
			}
			files, err := PartitionFiles(lake, TableMessages, "", time.Time{}, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			fs, list, err := FilesSource(lake, TableMessages, files)
			if err != nil {
				t.Fatal(err)
			}
			if got := one(t, db, strings.Replace(q, "FROM messages", "FROM "+fs, 1), list); got != want {
				t.Errorf("files source: %q, want %q", got, want)
			}
		})
	}
}

// deadPid returns the id of a process that has ended.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if pidAlive(pid) {
		t.Skip("the killed process's id is in use again")
	}
	return pid
}

// A writer killed before its rename leaves a temporary file: the next run
// on the lake removes it, wherever pos writes temporary files in the lake,
// and never the file of a writer that is still running.
func TestTempsOfKilledWritersAreRemoved(t *testing.T) {
	lake := t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	loadRecs(t, lake, msg("m1", "s", "x", day))
	dead := strconv.Itoa(deadPid(t))
	live := strconv.Itoa(os.Getpid())
	sdir := filepath.Join(lake, "indexed", TableSummaries, "platform=test", "date=2026-05-01")
	os.MkdirAll(sdir, 0o700)
	schemaDirs, _ := filepath.Glob(filepath.Join(lake, "_schema", "*", TableMessages, "*", "*"))
	if len(schemaDirs) != 1 {
		t.Fatalf("schema dirs %v", schemaDirs)
	}
	stale := []string{
		filepath.Join(lake, "_state", ".catalog.hash.pid"+dead+"-123.tmp"),
		filepath.Join(lake, "_state", ".watermarks.json.pid"+dead+"-9.tmp"),
		filepath.Join(lake, RollupDir, ".usage-1.parquet.pid"+dead+"-0.tmp"),
		filepath.Join(schemaDirs[0], ".messages.pid"+dead+"-77.tmp"),
		filepath.Join(sdir, ".part-x-s0001.parquet.pid"+dead+"-0.tmp"),
		filepath.Join(lake, "_state", ".catalog.hash.4242.tmp"), // an older build's, an hour old
	}
	keep := []string{
		filepath.Join(lake, "_state", ".catalog.hash.pid"+live+"-5.tmp"), // a live writer's
		filepath.Join(lake, "_state", ".schemas.json.1.tmp"),             // an older build's, new
		filepath.Join(lake, "_state", "catalog.hash"),
	}
	for _, p := range append(stale, keep[:2]...) {
		if err := os.WriteFile(p, []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(stale[len(stale)-1], old, old)
	// A clean lake (the last run ended well): the temporary files go all
	// the same.
	loadRecs(t, lake, msg("m2", "s", "y", day))
	for _, p := range stale {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("left behind: %s (%v)", p, err)
		}
	}
	for _, p := range keep {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("removed: %s", p)
		}
	}
	// A reader sweeps too.
	p := filepath.Join(lake, RollupDir, ".sessions-parts-1.parquet.pid"+dead+"-0.tmp")
	os.WriteFile(p, nil, 0o600)
	if err := SweepTemps(lake); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("SweepTemps left %s", p)
	}
	// Every temporary file pos writes in the lake is named so.
	n := 0
	filepath.WalkDir(lake, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".tmp") && !tempRE().MatchString(d.Name()) && d.Name() != ".schemas.json.1.tmp" {
			t.Errorf("a temporary file without its writer's pid: %s", path)
		}
		n++
		return nil
	})
	if pat := TempPattern("x"); !tempRE().MatchString(strings.Replace(pat, "*", "123", 1)) {
		t.Errorf("TempPattern %q does not match the sweep's pattern", pat)
	}
	if !tempRE().MatchString(filepath.Base(TempName("/l/usage-1.parquet"))) {
		t.Errorf("TempName %q does not match the sweep's pattern", TempName("/l/usage-1.parquet"))
	}
}

// The zero-row schema files of a lake this process cannot write are made in
// a directory this process creates, private, and never read from the shared
// temporary directory, where anyone may have put a file of that name.
func TestSchemaFilesNeverFromSharedTemp(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	// A scratch dir an earlier test of this process made, unheld, goes:
	// this one's is made under tmp.
	scratch.mu.Lock()
	if scratch.dir != "" {
		os.RemoveAll(scratch.dir)
		scratch.dir = ""
	}
	scratch.mu.Unlock()
	lake := t.TempDir()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	loadRecs(t, lake, msg("m1", "s", "x", day))
	// Every table's schema file, planted where an older build looked:
	// $TMPDIR/pos-schema/<fingerprint>/<table>/…/empty.parquet, with a row.
	db, err := OpenDB("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, table := range Tables {
		real, err := schemaFile(lake, table, false)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(filepath.Join(lake, "_schema"), real)
		planted := filepath.Join(tmp, "pos-schema", rel)
		os.MkdirAll(filepath.Dir(planted), 0o777)
		q := fmt.Sprintf("COPY (SELECT * REPLACE ('planted-id' AS id) FROM (SELECT * FROM read_parquet(%s) UNION ALL BY NAME SELECT 'planted-id' AS id)) TO %s (FORMAT parquet)",
			sqlString(real), sqlString(planted))
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	// The lake's _schema cannot be written (a file in the way: as
	// unwritable as a read-only lake, even for root), and the views read
	// every table's schema file (no record of the files' schemas).
	os.RemoveAll(filepath.Join(lake, "_schema"))
	os.WriteFile(filepath.Join(lake, "_schema"), nil, 0o400)
	os.Remove(filepath.Join(lake, "_state", schemasFile))
	release := HoldScratch()
	vdb := views(t, lake)
	for _, v := range Views {
		var n int64
		if err := vdb.QueryRow("SELECT count(*) FROM " + v + " WHERE id = 'planted-id'").Scan(&n); err != nil && !strings.Contains(err.Error(), "not found") {
			t.Fatalf("%s: %v", v, err)
		}
		if n > 0 {
			t.Errorf("%s serves the planted row", v)
		}
	}
	if n := one(t, vdb, "SELECT count(*) FROM messages"); n != "1" {
		t.Errorf("messages: %s rows", n)
	}
	dir := scratch.dir
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
	dead := filepath.Join(tmp, scratchPrefix+strconv.Itoa(deadPid(t))+"-1")
	os.MkdirAll(filepath.Join(dead, "x"), 0o700)
	release = HoldScratch()
	views(t, lake)
	release()
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("a dead process's scratch dir is still there: %v", err)
	}
}
