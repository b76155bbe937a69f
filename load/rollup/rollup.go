package rollup

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pos-lake/pos/internal/atomicfile"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/pricing"
	"golang.org/x/sync/errgroup"
)

// The usage rollup: the token sums of the messages pos-query stats counts
// (assistant messages, the placeholder model "<synthetic>" left out),
// grouped by platform, date, session, project, model, hour and long-context
// rank. Stats reads it instead of the messages when it can, which is many
// times faster: a lake of a million messages rolls up to a few ten
// thousand rows in one file.
//
// pos-load recomputes the rows of the (platform, date) partitions whose
// messages files changed and rewrites the file. The manifest records, for
// each partition, a fingerprint of the file names it was computed from, so
// a reader can tell the partitions whose rollup rows are current from those
// a load without the rollup (an older pos-load, a crash in between) changed
// since: those it reads from the messages.
const (
	rollupManifest = "usage.json"
	rollupVersion  = 1
)

// RollupColumns are the rollup file's columns, in order: its keys, then
// its sums (rollupMeasures).
var RollupColumns = func() []string {
	cols := append([]string{"platform", "date"}, rollupStringKeys...)
	cols = append(cols, "hour", "ctx_rank")
	for _, m := range rollupMeasures {
		cols = append(cols, m.name)
	}
	return cols
}()

// RollupManifest describes the current rollup file.
type RollupManifest struct {
	Version int `json:"version"`
	// File is the rollup's Parquet file, relative to <lake>/rollup.
	File string `json:"file"`
	// Thresholds are the long-context thresholds (prompt tokens: input,
	// cache writes and cache reads) the rows are ranked by, ascending: a
	// row's ctx_rank is the number of them its messages exceed. A price
	// whose tier starts at another threshold cannot be applied to it.
	Thresholds []int64 `json:"thresholds"`
	// Partitions maps "platform/date" to the fingerprint of the messages
	// files the partition's rows were computed from.
	Partitions map[string]string `json:"partitions"`
}

// RollupState is what a reader needs: the manifest and how the lake's
// messages partitions compare with it.
type RollupState struct {
	Manifest RollupManifest
	Path     string // absolute path of the rollup file
	// Stale lists the partitions ("platform/date") whose messages files
	// differ from the ones their rollup rows were computed from, or that
	// have no rows; their messages must be read instead.
	Stale []string
	// Gone lists the partitions the rollup has rows for that the lake no
	// longer has; those rows must be left out.
	Gone []string
}

// RollupThresholds are the long-context thresholds the rollup ranks
// messages by: those of the embedded price table and round ones a price
// file may use. A rank more splits a group only when its messages straddle
// the threshold.
func RollupThresholds() []int64 {
	ts := []int64{100_000, 128_000, 150_000, 200_000, 256_000, 272_000, 400_000, 500_000, 1_000_000}
	for _, m := range pricing.Default().Models() {
		if lc := m.LongContext; lc != nil && !slices.Contains(ts, lc.Above) {
			ts = append(ts, lc.Above)
		}
	}
	slices.Sort(ts)
	return ts
}

// messagePartitions fingerprints each partition of the messages table by
// the names of its Parquet files (part files are never rewritten: a new
// name is new data), listing through ls.
func messagePartitions(ls *layout.Listing, lake string) (map[string]string, error) {
	return ls.PartitionFingerprints(lake, layout.TableMessages)
}

func readRollupManifest(lake string) (*RollupManifest, error) {
	b, err := os.ReadFile(filepath.Join(lake, layout.RollupDir, rollupManifest))
	if err != nil {
		return nil, err
	}
	var m RollupManifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(lake, layout.RollupDir, rollupManifest), err)
	}
	if m.Version != rollupVersion || m.File == "" || strings.ContainsAny(m.File, `/\`) {
		return nil, fmt.Errorf("%s: not a rollup manifest of this build", filepath.Join(lake, layout.RollupDir, rollupManifest))
	}
	return &m, nil
}

// Cache keeps, for a process that updates the rollup again and again (a
// resident pos-sync), the rows of the rollup file it last read or wrote: a
// turn's sync changes a partition or two, and would otherwise read every
// row back. A nil Cache keeps nothing. Safe for concurrent use.
type Cache struct {
	mu   sync.Mutex
	file keptFile
	rows []RollupRow
}

// keptFile names a rollup file as it was read or written.
type keptFile struct {
	path  string
	size  int64
	mtime int64
}

// NewCache returns an empty Cache.
func NewCache() *Cache { return &Cache{} }

func fileOf(path string, fi os.FileInfo) keptFile {
	return keptFile{path: path, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
}

// readRows reads the rows of the rollup file at path, whose FileInfo is fi,
// or returns those kept of it. The rows are shared: the caller must not
// change them.
func (c *Cache) readRows(path string, fi os.FileInfo) ([]RollupRow, error) {
	if c == nil {
		return ReadRollupRows(path)
	}
	c.mu.Lock()
	kept, rows := c.file, c.rows
	c.mu.Unlock()
	if kept == fileOf(path, fi) {
		return rows, nil
	}
	rows, err := ReadRollupRows(path)
	if err == nil {
		c.keepAs(fileOf(path, fi), rows)
	}
	return rows, err
}

// keep keeps rows as those of the rollup file at path, just written.
func (c *Cache) keep(path string, rows []RollupRow) {
	if c == nil {
		return
	}
	fi, err := os.Stat(path)
	if err != nil {
		c.keepAs(keptFile{}, nil)
		return
	}
	c.keepAs(fileOf(path, fi), rows)
}

// keepAs keeps rows as those of the file f.
func (c *Cache) keepAs(f keptFile, rows []RollupRow) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.file, c.rows = f, rows
}

// ReadRollup compares the lake's rollup with its messages. It returns nil
// and no error when the lake has no rollup (or one of another build).
func ReadRollup(lake string) (*RollupState, error) {
	lake, err := filepath.Abs(lake)
	if err != nil {
		return nil, err
	}
	m, err := readRollupManifest(lake)
	if err != nil {
		return nil, nil
	}
	path := filepath.Join(lake, layout.RollupDir, m.File)
	if _, err := os.Stat(path); err != nil {
		return nil, nil
	}
	parts, err := messagePartitions(nil, lake)
	if err != nil {
		return nil, err
	}
	st := &RollupState{Manifest: *m, Path: path}
	st.Stale, st.Gone = DiffPartitions(m.Partitions, parts)
	return st, nil
}

// DiffPartitions returns the partitions of now whose fingerprint differs
// from (or is missing in) had, and those of had missing in now, sorted.
func DiffPartitions(had, now map[string]string) (stale, gone []string) {
	for k, fp := range now {
		if had[k] != fp {
			stale = append(stale, k)
		}
	}
	for k := range had {
		if _, ok := now[k]; !ok {
			gone = append(gone, k)
		}
	}
	slices.Sort(stale)
	slices.Sort(gone)
	return stale, gone
}

// PartitionFilter is a SQL condition true for the rows of the given
// partitions ("platform/date"), on the hive columns platform and date, in
// a form DuckDB prunes files by. An empty list gives "false".
func PartitionFilter(parts []string) string {
	if len(parts) == 0 {
		return "false"
	}
	byPlatform := map[string][]string{}
	var plats []string
	for _, p := range parts {
		platform, date, _ := strings.Cut(p, "/")
		if _, ok := byPlatform[platform]; !ok {
			plats = append(plats, platform)
		}
		byPlatform[platform] = append(byPlatform[platform], "DATE "+layout.SQLString(date))
	}
	var ors []string
	for _, platform := range plats {
		ors = append(ors, fmt.Sprintf("(platform = %s AND date IN (%s))", layout.SQLString(platform), strings.Join(byPlatform[platform], ", ")))
	}
	return "(" + strings.Join(ors, " OR ") + ")"
}

// The rollup's rules, stated once: RollupSelect makes its SQL of them and
// rollupPartition applies them in Go. A row's keys are its messages'
// platform and date partition, rollupStringKeys (NULL read as ""), the
// hour of ts and the long-context rank (rollupPrompt against the
// thresholds); its sums are rollupMeasures. RollupColumns lists them all.
var (
	// rollupFilter keeps the messages the rollup counts: assistant
	// messages, the placeholder model "<synthetic>" left out.
	rollupFilter = []rollupCond{{col: "role", val: "assistant"}, {col: "model", val: "<synthetic>", not: true}}
	// rollupStringKeys are the grouping columns read from the messages as
	// they are, NULL read as "".
	rollupStringKeys = []string{"session_id", "project", "model"}
	// rollupPrompt are the columns whose sum (NULL read as 0) is a
	// message's prompt, the size its long-context rank is of.
	rollupPrompt = []string{"input_tokens", "cache_creation_tokens", "cache_read_tokens"}
	// rollupMeasures are the rollup's sums over a row's messages, in
	// RollupColumns' order.
	rollupMeasures = []rollupMeasure{
		{name: "messages", kind: measureCount},
		{name: "input_tokens", kind: measureSum, col: "input_tokens"},
		{name: "output_tokens", kind: measureSum, col: "output_tokens"},
		{name: "cache_creation_tokens", kind: measureSum, col: "cache_creation_tokens"},
		{name: "cache_read_tokens", kind: measureSum, col: "cache_read_tokens"},
		// The 1-hour share of a message's cache writes, never more than
		// the writes.
		{name: "cache_creation_1h_tokens", kind: measureSum, col: rollupOneHour, atMost: "cache_creation_tokens"},
		// Claude Code messages with cache writes whose file predates the
		// 1-hour column: Stats prices their writes as 5-minute ones and
		// says how many there are.
		{name: "no1h", kind: measureMissing, col: rollupOneHour, platform: "claude_code", positive: "cache_creation_tokens"},
	}
)

// rollupOneHour is the messages column of the 1-hour share of cache
// writes, which a source may give by other means (RollupSource.OneHour).
const rollupOneHour = "cache_creation_1h_tokens"

// rollupCond is a condition on a string column: it equals val (not: it
// does not), NULL read as "".
type rollupCond struct {
	col, val string
	not      bool
}

type measureKind int

const (
	measureCount   measureKind = iota // the messages
	measureSum                        // the sum of col (NULL read as 0), each message's value at most atMost's
	measureMissing                    // the messages on platform whose col is NULL and positive column above 0
)

// rollupMeasure is a sum of the rollup over a row's messages.
type rollupMeasure struct {
	name     string // the rollup column
	kind     measureKind
	col      string
	atMost   string
	platform string
	positive string
}

// RollupSource is a relation of messages RollupSelect rolls up.
type RollupSource struct {
	// From is the relation: the messages view, or a join of it.
	From string
	// Alias qualifies the messages' columns in From ("m." or "").
	Alias string
	// Thresholds are the long-context thresholds ctx_rank counts.
	Thresholds []int64
	// ExactTime puts each message's ts in the hour column instead of its
	// hour: for a price tier that ends within an hour.
	ExactTime bool
	// OneHour, when set, is the expression of a message's 1-hour share of
	// cache writes for a relation without the column
	// cache_creation_1h_tokens; no message then counts in no1h.
	OneHour string
}

// sql is the condition in SQL on the columns qualified by alias. A
// condition that a column equals a value other than "" is false for NULL
// without coalesce.
func (c rollupCond) sql(alias string) string {
	if c.not {
		return "coalesce(" + alias + c.col + ", '') <> " + layout.SQLString(c.val)
	}
	return alias + c.col + " = " + layout.SQLString(c.val)
}

// rollupRank is the expression of a message's long-context rank: how many
// of thresholds its prompt exceeds.
func rollupRank(alias string, thresholds []int64) string {
	var prompt []string
	for _, c := range rollupPrompt {
		prompt = append(prompt, "coalesce("+alias+c+", 0)")
	}
	ctx := strings.Join(prompt, " + ")
	rank := "0"
	if len(thresholds) > 0 {
		var terms []string
		for _, t := range thresholds {
			terms = append(terms, fmt.Sprintf("CAST(%s > %d AS UTINYINT)", ctx, t))
		}
		rank = strings.Join(terms, " + ")
	}
	return "CAST(" + rank + " AS UTINYINT)"
}

// RollupSelect is the query that rolls up the messages of src to rows of
// the rollup, with its columns (a NULL session, project or model read as
// "", ctx_rank a BIGINT): those of rollupFilter that meet one of where
// (SQL conditions on src, each read on its own and the rows of all summed
// together; none or "": every message).
func RollupSelect(src RollupSource, where ...string) string {
	a := src.Alias
	hour := "date_trunc('hour', " + a + "ts)"
	if src.ExactTime {
		hour = a + "ts"
	}
	items := []string{a + "platform AS platform", a + "date AS date"}
	for _, k := range rollupStringKeys {
		items = append(items, "coalesce("+a+k+", '') AS "+k)
	}
	items = append(items, hour+" AS hour", "CAST("+rollupRank(a, src.Thresholds)+" AS BIGINT) AS ctx_rank")
	outer := []string{"platform", "date"}
	outer = append(outer, rollupStringKeys...)
	outer = append(outer, "hour", "ctx_rank")
	col := func(c string) string {
		if c == rollupOneHour && src.OneHour != "" {
			return "coalesce(" + src.OneHour + ", 0)"
		}
		return "coalesce(" + a + c + ", 0)"
	}
	for _, m := range rollupMeasures {
		switch m.kind {
		case measureCount:
			outer = append(outer, "count(*) AS "+m.name)
			continue
		case measureSum:
			e := col(m.col)
			if m.atMost != "" {
				e = "least(" + e + ", " + col(m.atMost) + ")"
			}
			items = append(items, e+" AS "+m.name)
		case measureMissing:
			e := "CAST(0 AS BIGINT)"
			if m.col != rollupOneHour || src.OneHour == "" {
				e = "CAST(" + a + m.col + " IS NULL AND " + a + "platform = " + layout.SQLString(m.platform) + " AND " + col(m.positive) + " > 0 AS BIGINT)"
			}
			items = append(items, e+" AS "+m.name)
		}
		outer = append(outer, "CAST(sum("+m.name+") AS BIGINT) AS "+m.name)
	}
	var filter []string
	for _, c := range rollupFilter {
		filter = append(filter, c.sql(a))
	}
	if len(where) == 0 {
		where = []string{""}
	}
	var bodies []string
	for _, w := range where {
		conds := filter
		if w != "" {
			conds = append(slices.Clone(filter), w)
		}
		bodies = append(bodies, "SELECT "+strings.Join(items, ", ")+"\n    FROM "+src.From+"\n    WHERE "+strings.Join(conds, "\n      AND "))
	}
	return "SELECT " + strings.Join(outer, ", ") + "\nFROM (\n  " + strings.Join(bodies, "\n  UNION ALL\n  ") + "\n)\nGROUP BY ALL"
}

// RollupTextSQL prints the rollup rows of the source %s (a file's
// read_parquet or RollupSelect's query) as one text, a line a row in a
// fixed order: tests compare the file pos-load writes with what
// RollupSelect computes from the messages view.
const RollupTextSQL = `SELECT string_agg(concat_ws(' ', platform, date, session_id, coalesce(project, ''), model, hour, ctx_rank,
    messages, input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens, cache_creation_1h_tokens, no1h), e'\n'
  ORDER BY platform, date, session_id, hour, coalesce(project, ''), model, ctx_rank)
FROM %s`

// UpdateRollup brings <lake>/rollup up to date with the messages: the rows
// of the partitions whose files changed are recomputed, the others kept.
// With nothing changed it only lists the partitions. The caller holds the
// lake's lock.
func UpdateRollup(ctx context.Context, lake string) error {
	return (*Cache)(nil).Update(ctx, lake, nil)
}

// Update is UpdateRollup, through the rows c keeps, listing the lake's
// partitions through ls (nil: read afresh).
func (c *Cache) Update(ctx context.Context, lake string, ls *layout.Listing) error {
	lake, err := filepath.Abs(lake)
	if err != nil {
		return err
	}
	parts, err := messagePartitions(ls, lake)
	if err != nil {
		return err
	}
	thresholds := RollupThresholds()
	old, err := readRollupManifest(lake)
	if err != nil || !slices.Equal(old.Thresholds, thresholds) {
		old = nil
	}
	var oldPath string
	var oldInfo os.FileInfo
	var stale, gone []string
	if old != nil {
		oldPath = filepath.Join(lake, layout.RollupDir, old.File)
		if oldInfo, err = os.Stat(oldPath); err != nil {
			old = nil
		} else {
			stale, gone = DiffPartitions(old.Partitions, parts)
			if len(stale) == 0 && len(gone) == 0 {
				return nil
			}
		}
	}
	dir := filepath.Join(lake, layout.RollupDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// Keep the rows of the partitions that did not change; recompute
	// everything when most did, or when the old file cannot be read.
	var rows []RollupRow
	recompute := old == nil || len(stale) > len(parts)/2
	if !recompute {
		kept, err := c.readRows(oldPath, oldInfo)
		recompute = err != nil
		drop := map[string]bool{}
		for _, p := range append(slices.Clone(stale), gone...) {
			drop[p] = true
		}
		for _, r := range kept {
			if !drop[r.Platform+"/"+r.DateString()] {
				rows = append(rows, r)
			}
		}
	}
	if recompute {
		rows, stale = nil, slices.Sorted(maps.Keys(parts))
	}
	versioned := layout.Versioned(lake)[layout.TableMessages]
	// The partitions are independent: read them on every core, keep their
	// rows in partition order.
	parted := make([][]RollupRow, len(stale))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, p := range stale {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			pr, err := rollupPartition(lake, p, thresholds, versioned)
			if err != nil {
				return fmt.Errorf("rollup: %w", err)
			}
			parted[i] = pr
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, pr := range parted {
		rows = append(rows, pr...)
	}
	name := fmt.Sprintf("usage-%d.parquet", time.Now().UnixNano())
	tmp := layout.TempName(filepath.Join(dir, name))
	if err := writeRollup(tmp, rows); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("rollup: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		os.Remove(tmp)
		return err
	}
	c.keep(filepath.Join(dir, name), rows)
	m := RollupManifest{Version: rollupVersion, File: name, Thresholds: thresholds, Partitions: parts}
	b, _ := json.MarshalIndent(m, "", " ")
	if err := atomicfile.Write(filepath.Join(dir, rollupManifest), b); err != nil {
		return err
	}
	// Keep the previous file: a reader may have read the old manifest.
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		n := e.Name()
		if n == name || oldPath != "" && n == filepath.Base(oldPath) {
			continue
		}
		if strings.HasPrefix(n, "usage-") && strings.HasSuffix(n, ".parquet") || strings.HasPrefix(n, ".usage-") {
			os.Remove(filepath.Join(dir, n))
		}
	}
	return nil
}
