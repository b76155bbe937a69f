package pipelines_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	claudecode "github.com/pos-lake/pos/extract/claudecode/about"
	"github.com/pos-lake/pos/internal/corpus"
	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/internal/seaweedtest"
	"github.com/pos-lake/pos/load/catalog"
	"github.com/pos-lake/pos/load/teamlake"
)

// publishedRe finds a table's rows added and sent in pos-load's summary
// of a publish.
var publishedRe = regexp.MustCompile(`[a-z_]+ \+(\d+) of (\d+)`)

// machine is a simulated machine: its home's Claude Code projects, its
// own local lake and the names it stamps on records and commits.
type machine struct {
	name, user string
	root       string // HOME/.claude/projects
	lake       string // its local lake
}

// pipeline is the machine's full pipeline into lake: a local directory,
// or the shared lake (then pos-load loads $POS_LOCAL_LAKE and publishes).
func (m machine) pipeline(lake string) string {
	return fmt.Sprintf("pos-extract -q --platform claude_code --root %q --full --machine %s --user %s | pos-normalize -q | pos-scrub -q --pii | pos-embed -q | pos-load --lake %q",
		m.root, m.name, m.user, lake)
}

// Three machines, each with its own home (overlapping parts of the corpus,
// and generated sessions on two of them), publish into one shared lake at
// once, twice: the first time each publisher is killed with SIGKILL at a
// random point with probability 2/3, the second time all run to the end
// through pos-load --lake s3://…. A reader fetches the lake over and over
// meanwhile and never sees part of a commit. At the end pos-lake check
// passes and every shared table holds the rows of one local lake loaded
// from the three homes, none lost and none twice.
func TestSharedMachines(t *testing.T) {
	src := corpus.Platform(t, claudecode.Name)
	s := seaweedtest.Start(t)
	s.Setenv(t)
	tmp := t.TempDir()
	shared := "s3://" + s.TableBucket + "/team"
	env := append(s.Env(), "POS_CATALOG="+s.Catalog, "POS_SCRUB_KEY=pos shared-machines test key, 32 bytes or more",
		"XDG_CACHE_HOME="+filepath.Join(tmp, "cache"))

	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("POS_KILL_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("POS_KILL_SEED: %v", err)
		}
	}
	t.Logf("seed %d (POS_KILL_SEED=%d repeats the kills)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 33))

	machines := makeHomes(t, src, tmp)
	for _, m := range machines {
		mustSh(t, m.pipeline(m.lake), env...)
	}
	// The reference: one local lake loaded with the three homes, each
	// through its machine's pipeline, in the order the machines loaded
	// theirs, so that where a record has two versions (its machine and user
	// differ) the latest by ingested_at, which the views keep, is the same
	// machine's in both lakes.
	ref := filepath.Join(tmp, "all")
	for _, m := range machines {
		mustSh(t, m.pipeline(ref), env...)
	}

	l, err := teamlake.Open(context.Background(), teamlake.Options{Lake: shared, Catalog: s.Catalog})
	if err != nil {
		t.Fatal(err)
	}
	rdb, err := catalog.OpenDB("")
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	rd := &reader{t: t, lake: l, db: rdb, env: env, shared: shared, catalog: s.Catalog, cache: filepath.Join(tmp, "reader"),
		seen: map[string]map[string]bool{}, snaps: map[string]map[int64]bool{}}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			rd.observe()
		}
	}()

	// Round 1: the three publish at once, each killed at a random point
	// with probability 2/3.
	var wg sync.WaitGroup
	kills := 0
	for _, m := range machines {
		cmd := exec.Command(filepath.Join(binDir, "pos-lake"), "publish", "--lake", shared, "--catalog", s.Catalog,
			"--local-lake", m.lake, "--machine", m.name)
		cmd.Env = append(os.Environ(), env...)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		kill := rng.IntN(3) > 0
		after := time.Duration(rng.IntN(7000)) * time.Millisecond
		if kill {
			kills++
		}
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if kill {
				time.Sleep(after)
				cmd.Process.Kill()
			}
			err := cmd.Wait()
			how := "not killed"
			if kill {
				how = fmt.Sprintf("SIGKILL at %v", after)
			}
			t.Logf("round 1, %s (%s): %v after %v\n%s", m.name, how, err, time.Since(start).Round(time.Millisecond), out.String())
			if !kill && err != nil {
				t.Errorf("round 1, %s: %v", m.name, err)
			}
		})
	}
	wg.Wait()
	t.Logf("round 1: %d of %d publishes killed", kills, len(machines))
	committed := logSnapshots(t, l, "after round 1")

	// The machine that committed most in round 1 loses its record of what
	// it sent, as one killed between a commit and that record does: it
	// sends every file again, and the shared lake must take none of the
	// rows it holds.
	forgetful := machines[0]
	for _, m := range machines {
		if committed[m.name] > committed[forgetful.name] {
			forgetful = m
		}
	}
	if err := os.RemoveAll(filepath.Join(forgetful.lake, "_state", "teamlake")); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s forgets what it sent; it committed %d rows in round 1", forgetful.name, committed[forgetful.name])

	// Round 2: the three run their pipelines again into the shared lake, to
	// the end; pos-load loads nothing new and publishes what round 1 left.
	for _, m := range machines {
		wg.Go(func() {
			_, errs, code := sh(t, m.pipeline(shared), append(env, "POS_LOCAL_LAKE="+m.lake, "POS_MACHINE="+m.name)...)
			t.Logf("round 2, %s: exit %d\n%s", m.name, code, errs)
			if code != 0 {
				t.Errorf("round 2, %s: exit %d\n%s", m.name, code, errs)
				return
			}
			if m.name != forgetful.name {
				return
			}
			// pos-load's summary: "published to …: messages +A of R, …".
			var rows, added int64
			for _, m := range publishedRe.FindAllStringSubmatch(errs, -1) {
				a, _ := strconv.ParseInt(m[1], 10, 64)
				r, _ := strconv.ParseInt(m[2], 10, 64)
				rows, added = rows+r, added+a
			}
			if rows == 0 {
				t.Errorf("round 2, %s: no publish summary in\n%s", m.name, errs)
			}
			t.Logf("round 2, %s sent %d rows again, added %d", m.name, rows, added)
			if added != rows-committed[m.name] {
				t.Errorf("round 2, %s sent %d rows, of which round 1 committed %d, and added %d", m.name, rows, committed[m.name], added)
			}
		})
	}
	wg.Wait()
	close(stop)
	<-done
	rd.observe() // the end state, seen by the reader too
	logSnapshots(t, l, "after round 2")
	t.Logf("reader: %d fetches, %d table snapshots checked, %d distinct snapshots", rd.fetches, rd.checked, rd.distinct())
	if rd.fetches < 3 {
		t.Errorf("the reader fetched %d times during the rounds", rd.fetches)
	}

	out, errs, code := sh(t, fmt.Sprintf("pos-lake check --lake %q --catalog %q", shared, s.Catalog), env...)
	t.Logf("pos-lake check: exit %d\n%s%s", code, out, errs)
	if code != 0 {
		t.Errorf("pos-lake check: exit %d\n%s%s", code, out, errs)
	}

	cache := filepath.Join(tmp, "fetched")
	mustSh(t, fmt.Sprintf("pos-lake fetch --lake %q --catalog %q --cache %q", shared, s.Catalog, cache), env...)
	db, err := catalog.OpenDB("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, name := range teamlake.Tables {
		compareTable(t, db, name, cache, ref)
	}
	// What pos-query reads: its views over the cache and over the local
	// lake, which keep one version of each record.
	vs, vl := loadtest.Views(t, cache), loadtest.Views(t, ref)
	for _, name := range teamlake.Tables {
		q := fmt.Sprintf(`SELECT count(*) || ' ' || md5(coalesce(string_agg(r, chr(10) ORDER BY r), ''))
			FROM (SELECT CAST(x AS VARCHAR) AS r FROM (SELECT COLUMNS(c -> c NOT IN (%s)) FROM %s) x)`, quoteList(viewExcluded), name)
		got, want := loadtest.One(t, vs, q), loadtest.One(t, vl, q)
		t.Logf("the %s view: shared %s, local %s", name, got, want)
		if got != want || strings.HasPrefix(want, "0 ") {
			t.Errorf("the %s view over the shared lake's cache reads (rows, digest) %s, over the local lake %s", name, got, want)
		}
	}
}

// viewExcluded are the view columns left out of the comparison: the load
// time, and the path of the Parquet file a row was read from (the cache's
// and the local lake's differ).
var viewExcluded = []string{"ingested_at", "filename"}

func quoteList(ss []string) string {
	var q []string
	for _, s := range ss {
		q = append(q, "'"+s+"'")
	}
	return strings.Join(q, ", ")
}

// excluded are the table columns left out of the comparison: the time a
// row was loaded, by its machine for the shared lake and by the reference
// lake's own runs for the local one.
var excluded = []string{"ingested_at"}

// compareTable checks that a table's rows in the fetched cache are those
// of the reference lake, all columns but excluded, as multisets.
func compareTable(t *testing.T, db *sql.DB, name, cache, ref string) {
	t.Helper()
	rows := func(lake string) string {
		return fmt.Sprintf("SELECT CAST(x AS VARCHAR) AS r FROM (SELECT * EXCLUDE (%s) FROM read_parquet('%s', hive_partitioning = false)) x",
			strings.Join(excluded, ", "), partGlob(lake, name))
	}
	q := fmt.Sprintf(`WITH a AS (%s), b AS (%s)
		SELECT (SELECT count(*) FROM a), (SELECT count(*) FROM b),
		  (SELECT count(*) FROM (FROM a EXCEPT ALL FROM b)), (SELECT count(*) FROM (FROM b EXCEPT ALL FROM a)),
		  (SELECT count(*) - count(DISTINCT r) FROM a)`, rows(cache), rows(ref))
	var shared, local, extra, missing, dup int64
	if err := db.QueryRow(q).Scan(&shared, &local, &extra, &missing, &dup); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	sameID := count(t, db, fmt.Sprintf("SELECT count(*) FROM (SELECT id FROM read_parquet('%s') GROUP BY id HAVING count(*) > 1)", partGlob(ref, name)))
	t.Logf("%s: shared %d rows, local %d rows (ids held in two versions: %d); only shared %d, only local %d, shared twice %d",
		name, shared, local, sameID, extra, missing, dup)
	if local == 0 {
		t.Errorf("%s: the reference lake has no rows", name)
	}
	if shared != local || extra != 0 || missing != 0 || dup != 0 {
		t.Errorf("%s: the shared lake's %d rows are not the local lake's %d: %d only in the shared lake, %d only in the local one, %d held twice\n%s",
			name, shared, local, extra, missing, dup, sampleDiff(t, db, rows(cache), rows(ref)))
	}
}

// sampleDiff shows a few rows each side holds and the other does not.
func sampleDiff(t *testing.T, db *sql.DB, a, b string) string {
	var sb strings.Builder
	for _, side := range [][2]string{{"shared", fmt.Sprintf("SELECT left(r, 600) FROM (%s EXCEPT ALL %s) ORDER BY 1 LIMIT 3", a, b)},
		{"local", fmt.Sprintf("SELECT left(r, 600) FROM (%s EXCEPT ALL %s) ORDER BY 1 LIMIT 3", b, a)}} {
		rs, err := db.Query(side[1])
		if err != nil {
			t.Fatal(err)
		}
		for rs.Next() {
			var r string
			rs.Scan(&r)
			fmt.Fprintf(&sb, "only %s: %s\n", side[0], r)
		}
		rs.Close()
	}
	return sb.String()
}

func partGlob(lake, name string) string {
	return filepath.Join(lake, "indexed", name, "platform=*", "date=*", "*.parquet")
}

// logSnapshots logs each shared table's snapshots: the machine that
// committed it and the rows it added. It returns the rows each machine
// added.
func logSnapshots(t *testing.T, l *teamlake.Lake, when string) map[string]int64 {
	t.Helper()
	added := map[string]int64{}
	var sb strings.Builder
	for _, name := range teamlake.Tables {
		tbl, err := l.Table(context.Background(), name)
		if err != nil {
			fmt.Fprintf(&sb, "  %s: %v\n", name, err)
			continue
		}
		var parts []string
		for _, sn := range tbl.Metadata().Snapshots() {
			if sn.Summary == nil {
				continue
			}
			m, n := sn.Summary.Properties["pos.machine"], sn.Summary.Properties["added-records"]
			parts = append(parts, m+"+"+n)
			v, err := strconv.ParseInt(n, 10, 64)
			if err != nil {
				t.Errorf("%s: snapshot %d: added-records %q", name, sn.SnapshotID, n)
			}
			added[m] += v
		}
		total := "0"
		if cur := tbl.CurrentSnapshot(); cur != nil && cur.Summary != nil {
			total = cur.Summary.Properties["total-records"]
		}
		fmt.Fprintf(&sb, "  %s: %s rows, commits %s\n", name, total, strings.Join(parts, " "))
	}
	t.Logf("shared lake %s:\n%s", when, sb.String())
	return added
}

// reader fetches the shared lake into a cache and checks each table
// snapshot it holds is whole: as many rows as the snapshot's summary
// counts, no (id, content_hash) twice, and every pair an earlier fetch
// saw still there (the lake only grows; no maintenance runs here).
type reader struct {
	t                      *testing.T
	lake                   *teamlake.Lake
	env                    []string
	shared, catalog, cache string

	db               *sql.DB
	fetches, checked int
	seen             map[string]map[string]bool // table → the pairs of the last observation
	snaps            map[string]map[int64]bool  // table → snapshots seen
}

func (r *reader) distinct() int {
	n := 0
	for _, s := range r.snaps {
		n += len(s)
	}
	return n
}

// observe fetches the shared lake and checks each table the cache holds.
func (r *reader) observe() {
	t := r.t
	cmd := exec.Command(filepath.Join(binDir, "pos-lake"), "fetch", "--lake", r.shared, "--catalog", r.catalog, "--cache", r.cache)
	cmd.Env = append(os.Environ(), r.env...)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Errorf("reader: pos-lake fetch: %v\n%s", err, errb.String())
		time.Sleep(200 * time.Millisecond)
		return
	}
	r.fetches++
	for line := range strings.Lines(string(out)) {
		var rep teamlake.FetchReport
		if err := json.Unmarshal([]byte(line), &rep); err != nil {
			t.Errorf("reader: %q: %v", line, err)
			continue
		}
		if rep.Snapshot == 0 {
			continue
		}
		r.check(rep.Table, rep.Snapshot)
	}
}

// check checks one table of the cache, which holds snapshot snap.
func (r *reader) check(name string, snap int64) {
	t := r.t
	tbl, err := r.lake.Table(context.Background(), name)
	if err != nil {
		t.Errorf("reader: %s: %v", name, err)
		return
	}
	sn := tbl.Metadata().SnapshotByID(snap)
	if sn == nil || sn.Summary == nil {
		t.Errorf("reader: %s: the fetched snapshot %d is not in the table's metadata", name, snap)
		return
	}
	total, err := strconv.ParseInt(sn.Summary.Properties["total-records"], 10, 64)
	if err != nil {
		t.Errorf("reader: %s snapshot %d: total-records: %v", name, snap, err)
		return
	}
	rows, err := r.db.Query(fmt.Sprintf("SELECT id, content_hash FROM read_parquet('%s', hive_partitioning = false)", partGlob(r.cache, name)))
	if err != nil {
		t.Errorf("reader: %s: %v", name, err)
		return
	}
	defer rows.Close()
	keys := map[string]bool{}
	var n, dups int64
	for rows.Next() {
		var id, hash string
		if err := rows.Scan(&id, &hash); err != nil {
			t.Errorf("reader: %s: %v", name, err)
			return
		}
		n++
		k := id + "\x00" + hash
		if keys[k] {
			dups++
		}
		keys[k] = true
	}
	if err := rows.Err(); err != nil {
		t.Errorf("reader: %s: %v", name, err)
		return
	}
	r.checked++
	if r.snaps[name] == nil {
		r.snaps[name] = map[int64]bool{}
	}
	r.snaps[name][snap] = true
	if n != total || dups != 0 {
		t.Errorf("reader: %s snapshot %d: the cache holds %d rows (%d pairs twice), the snapshot %d", name, snap, n, dups, total)
	}
	lost := 0
	for k := range r.seen[name] {
		if !keys[k] {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("reader: %s snapshot %d: %d of the %d pairs an earlier fetch saw are gone", name, snap, lost, len(r.seen[name]))
	}
	r.seen[name] = keys
}

// makeHomes lays out three machines' homes under dir: the corpus's
// sessions (each with its subagents) dealt round the three, every other
// one to the next machine too, and a generated home's sessions on the
// third machine, a third of them on the first too.
func makeHomes(t *testing.T, src, dir string) []machine {
	t.Helper()
	gen := filepath.Join(dir, "gen")
	mustRun(t, exec.Command("go", "build", "-o", filepath.Join(dir, "genbin"), "./bench/gen"))
	mustRun(t, exec.Command(filepath.Join(dir, "genbin"), "--src", src, "--out", gen, "--size", "3MB", "--platforms", "claude_code", "--seed", "33"))
	ms := []machine{{name: "box0", user: "alice"}, {name: "box1", user: "bob"}, {name: "box2", user: "carol"}}
	for i := range ms {
		ms[i].root = filepath.Join(dir, ms[i].name, ".claude", "projects")
		ms[i].lake = filepath.Join(dir, ms[i].name, "lake")
	}
	deal := func(from string, to func(k int) []int) {
		us := sessionUnits(t, from)
		keys := slices.Sorted(maps.Keys(us))
		for k, key := range keys {
			for _, i := range to(k) {
				for _, rel := range us[key] {
					copyFile(t, filepath.Join(from, rel), filepath.Join(ms[i].root, rel))
				}
			}
		}
		t.Logf("%s: %d sessions dealt", from, len(keys))
	}
	deal(src, func(k int) []int {
		if k%2 == 0 {
			return []int{k % 3, (k + 1) % 3}
		}
		return []int{k % 3}
	})
	deal(filepath.Join(gen, ".claude", "projects"), func(k int) []int {
		if k%3 == 0 {
			return []int{2, 0}
		}
		return []int{2}
	})
	return ms
}

// sessionUnits groups the .jsonl files below root by session: a session's
// file with its subagents' files.
func sessionUnits(t *testing.T, root string) map[string][]string {
	t.Helper()
	us := map[string][]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		key := rel
		if i := strings.Index(rel, string(filepath.Separator)+"subagents"+string(filepath.Separator)); i >= 0 {
			key = rel[:i] + ".jsonl"
		}
		us[key] = append(us[key], rel)
		return nil
	})
	if err != nil || len(us) == 0 {
		t.Fatalf("%s: %d sessions: %v", root, len(us), err)
	}
	return us
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(to), 0o700)
	}
	if err == nil {
		err = os.WriteFile(to, b, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func mustRun(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
}
