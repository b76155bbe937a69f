package query

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pos-lake/pos/internal/atomicfile"
	"github.com/pos-lake/pos/load/catalog"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/rollup"
)

// The session cache: the sessions view aggregates every message and
// exchange of the lake, which on a large lake means reading thousands of
// files for a list of twenty sessions. Sessions keeps the view's counts in
// parts, a row per partition and session (rollup.SessionPartsSQL), and the
// session rollups' rows (rollup.SessionMetaRowsSQL), in two files under
// <lake>/rollup, with a manifest of the partitions' fingerprints they were
// computed from. A query recomputes the parts of the partitions that
// changed since (a sync touches a few), combines them with the rest
// (rollup.SessionsFromPartsSQL) and writes the files back for the next one;
// a lake it cannot write is answered all the same, without keeping them.
const (
	sessionCacheManifest = "sessions.json"
	sessionCacheVersion  = 2 // 2: the session rows have pull_requests
)

type sessionCache struct {
	Version   int               `json:"version"`
	PartsFile string            `json:"parts_file"`
	MetaFile  string            `json:"meta_file"`
	Parts     map[string]string `json:"parts"` // "platform/date" -> fingerprint of messages and exchanges files
	Meta      map[string]string `json:"meta"`  // "platform/date" -> fingerprint of session rollup files
	// State is the lake's layout.StateStamp when the files were last found
	// current: while it stays the same, a reader takes them as they are
	// without listing the partitions (see sessionCacheFiles).
	State string `json:"state,omitempty"`
}

// sessionSources returns the SQL sources of the session parts and of the
// session rollup rows, brought up to date with the lake.
func (d *DB) sessionSources(ctx context.Context) (parts, meta string, err error) {
	stamp := layout.StateStamp(d.lake)
	d.smu.Lock()
	defer d.smu.Unlock()
	if s := d.sources; stamp != "" && s.stamp == stamp {
		return s.parts, s.meta, nil
	}
	parts, meta, err = d.refreshSessionCache(ctx)
	if err == nil {
		d.sources.stamp, d.sources.parts, d.sources.meta = stamp, parts, meta
	}
	return parts, meta, err
}

// refreshSessionCache brings the session cache up to date with the lake's
// partitions and returns its sources.
func (d *DB) refreshSessionCache(ctx context.Context) (parts, meta string, err error) {
	dir := filepath.Join(d.lake, layout.RollupDir)
	state := layout.StateStamp(d.lake) // before the partitions are listed
	nowParts, err := d.listing.PartitionFingerprints(d.lake, layout.TableMessages, layout.TableExchanges)
	if err != nil {
		return "", "", err
	}
	nowMeta, err := d.listing.PartitionFingerprints(d.lake, layout.TableSessions)
	if err != nil {
		return "", "", err
	}
	var old sessionCache
	if b, err := os.ReadFile(filepath.Join(dir, sessionCacheManifest)); err == nil {
		if json.Unmarshal(b, &old) != nil || old.Version != sessionCacheVersion || !cacheFile(dir, old.PartsFile) || !cacheFile(dir, old.MetaFile) {
			old = sessionCache{}
		}
	}
	stamp := time.Now().UnixNano()
	// The rows of the partitions that changed are computed in Go where the
	// lake allows it (rollup.SessionCacheInGo), into files beside the cache
	// that the new cache file is copied from; else by the views' SQL.
	var scratch []string
	defer func() {
		for _, p := range scratch {
			os.Remove(p)
		}
	}()
	goWay := rollup.SessionCacheInGo(d.lake)
	inGo := func(kind string, write func(lake string, parts []string, path string) error) func([]string) (string, bool) {
		if !goWay {
			return nil
		}
		return func(parts []string) (string, bool) {
			path := filepath.Join(dir, fmt.Sprintf(".sessions-%s-new-%d.parquet", kind, stamp))
			if os.MkdirAll(dir, 0o700) != nil {
				return "", false
			}
			scratch = append(scratch, path)
			if write(d.lake, parts, path) != nil {
				return "", false // the SQL computes them
			}
			return readParquetSQL(path), true
		}
	}
	partsSQL, partsFresh, partsViews := cachedSource(dir, old.PartsFile, old.Parts, nowParts, rollup.SessionPartsSQL, inGo("parts", rollup.WriteSessionParts))
	metaSQL, metaFresh, metaViews := cachedSource(dir, old.MetaFile, old.Meta, nowMeta, rollup.SessionMetaRowsSQL, inGo("meta", rollup.WriteSessionMeta))
	if partsFresh && metaFresh {
		if old.State != state && state != "" {
			old.State = state
			if b, err := json.MarshalIndent(old, "", " "); err == nil {
				atomicfile.Write(filepath.Join(dir, sessionCacheManifest), b) // a read-only lake keeps the old one
			}
		}
		return partsSQL, metaSQL, nil
	}
	if partsViews || metaViews {
		if err := d.need(ctx, "messages", "exchange_rows", "session_rows"); err != nil {
			return "", "", err
		}
	}
	// Write the new files; should that fail (a read-only lake), the
	// queries are the sources.
	next := sessionCache{Version: sessionCacheVersion, PartsFile: old.PartsFile, MetaFile: old.MetaFile, Parts: nowParts, Meta: nowMeta, State: state}
	write := func(fresh bool, src string, name *string, kind string) (string, error) {
		if fresh {
			return src, nil
		}
		*name = fmt.Sprintf("sessions-%s-%d.parquet", kind, stamp)
		if err := d.copyTo(ctx, src, filepath.Join(dir, *name)); err != nil {
			return src, err
		}
		return readParquetSQL(filepath.Join(dir, *name)), nil
	}
	parts, errP := write(partsFresh, partsSQL, &next.PartsFile, "parts")
	meta, errM := write(metaFresh, metaSQL, &next.MetaFile, "meta")
	if errP != nil || errM != nil {
		// Answer from the views' SQL: the files computed in Go go with
		// this call.
		parts, _, _ = cachedSource(dir, old.PartsFile, old.Parts, nowParts, rollup.SessionPartsSQL, nil)
		meta, _, _ = cachedSource(dir, old.MetaFile, old.Meta, nowMeta, rollup.SessionMetaRowsSQL, nil)
		return parts, meta, d.need(ctx, "messages", "exchange_rows", "session_rows")
	}
	b, _ := json.MarshalIndent(next, "", " ")
	if atomicfile.Write(filepath.Join(dir, sessionCacheManifest), b) == nil {
		// Keep the files the previous manifest named: a reader may be
		// reading them.
		ents, _ := os.ReadDir(dir)
		keep := []string{next.PartsFile, next.MetaFile, old.PartsFile, old.MetaFile}
		for _, e := range ents {
			// (Temporary files are another writer's, or a dead one's, which
			// layout.SweepTemps removes.)
			if n := e.Name(); strings.HasPrefix(strings.TrimPrefix(n, "."), "sessions-") && !strings.HasSuffix(n, ".tmp") && !slices.Contains(keep, n) {
				os.Remove(filepath.Join(dir, n))
			}
		}
	}
	return parts, meta, nil
}

// cachedSource is the SQL source of a cache file's rows brought up to date:
// the file's rows of unchanged partitions and rows computed for the others
// (by inGo when it is given and succeeds, else by rows, a function of a
// partition filter); all of them computed when there is no file or most
// partitions changed. fresh says the file alone is current; views, that
// the source reads the views.
func cachedSource(dir, file string, had, now map[string]string, rows func(where string) string,
	inGo func(parts []string) (string, bool)) (src string, fresh, views bool) {
	compute := func(parts []string, where string) string {
		if inGo != nil {
			if src, ok := inGo(parts); ok {
				return "SELECT * FROM " + src
			}
		}
		views = true
		return rows(where)
	}
	if file == "" {
		return "(" + compute(slices.Sorted(maps.Keys(now)), "true") + ")", false, views
	}
	stale, gone := rollup.DiffPartitions(had, now)
	path := readParquetSQL(filepath.Join(dir, file))
	if len(stale) == 0 && len(gone) == 0 {
		return path, true, false
	}
	if len(stale) > len(now)/2 {
		return "(" + compute(slices.Sorted(maps.Keys(now)), "true") + ")", false, views
	}
	drop := append(slices.Clone(stale), gone...)
	src = "(SELECT * FROM " + path + " WHERE NOT " + rollup.PartitionFilter(drop)
	if len(stale) > 0 {
		src += "\nUNION ALL BY NAME\n" + compute(stale, rollup.PartitionFilter(stale))
	}
	return src + ")", false, views
}

func cacheFile(dir, name string) bool {
	if name == "" || strings.ContainsAny(name, `/\`) {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

func readParquetSQL(path string) string {
	return "read_parquet(" + layout.SQLString(layout.GlobLiteral(path)) + ")"
}

// copyTo writes the rows of the SQL source src to a new Parquet file at
// path, the user's alone, under a temporary name until complete.
func (d *DB) copyTo(ctx context.Context, src, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := layout.TempName(path)
	if _, err := d.db.ExecContext(ctx, "COPY (SELECT * FROM "+src+") TO "+layout.SQLString(tmp)+" (FORMAT parquet, COMPRESSION zstd)"); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// sessionViews returns sources of the messages and exchange_rows views
// narrowed to the partitions a session has rows in, which the session
// cache's parts list, their files named one by one, so that a lookup of
// one session reads those files only and DuckDB expands no glob of the
// whole table; without the cache (or for a session it does not know), the
// views.
func (d *DB) sessionViews(ctx context.Context, ref SessionRef) (messages, exchanges string, err error) {
	// (A session the cache does not know has no partitions in it.)
	if m, e, ok := d.partitionsOf(ctx, []SessionRef{ref}); ok && len(m)+len(e) > 0 {
		messages, err = catalog.PartitionSource(d.lake, "messages", m)
		if err == nil {
			exchanges, err = catalog.PartitionSource(d.lake, "exchange_rows", e)
		}
		if err == nil {
			return messages, exchanges, nil
		}
	}
	if err := d.need(ctx, "messages", "exchange_rows"); err != nil {
		return "", "", err
	}
	return "messages", "exchange_rows", nil
}

// sessionsMatch is a condition that matches the rows of the sessions.
func sessionsMatch(refs []SessionRef) (string, []any) {
	cond := make([]string, len(refs))
	args := make([]any, 0, 2*len(refs))
	for i, r := range refs {
		cond[i] = "(platform = ? AND session_id = ?)"
		args = append(args, r.Platform, r.SessionID)
	}
	return "(" + strings.Join(cond, " OR ") + ")", args
}

// partitionsOf lists the partitions the sessions have messages in and
// those they have exchanges in, from the session cache's parts; ok is
// false without the cache.
func (d *DB) partitionsOf(ctx context.Context, refs []SessionRef) (messages, exchanges []layout.Partition, ok bool) {
	if d.noSessionCache || len(refs) == 0 {
		return nil, nil, false
	}
	parts, _, err := d.sessionSources(ctx)
	if err != nil {
		return nil, nil, false
	}
	match, args := sessionsMatch(refs)
	rows, err := d.db.QueryContext(ctx, `SELECT platform, strftime(date, '%Y-%m-%d'),
  bool_or(message_count IS NOT NULL), bool_or(exchange_count IS NOT NULL)
FROM `+parts+` WHERE `+match+`
GROUP BY ALL ORDER BY ALL`, args...)
	if err != nil {
		return nil, nil, false
	}
	defer rows.Close()
	for rows.Next() {
		var p layout.Partition
		var m, e bool
		if rows.Scan(&p.Platform, &p.Date, &m, &e) != nil {
			return nil, nil, false
		}
		if m {
			messages = append(messages, p)
		}
		if e {
			exchanges = append(exchanges, p)
		}
	}
	return messages, exchanges, rows.Err() == nil
}

// sessionCacheFiles returns the paths of the session cache's parts and
// rollup files when they are current with the lake (brought up to date
// first when they are not); ok is false when the lake has none that are.
func (d *DB) sessionCacheFiles(ctx context.Context) (parts, meta string, ok bool) {
	if d.noSessionCache {
		return "", "", false
	}
	dir := filepath.Join(d.lake, layout.RollupDir)
	read := func() (sessionCache, bool) {
		var c sessionCache
		b, err := os.ReadFile(filepath.Join(dir, sessionCacheManifest))
		if err != nil || json.Unmarshal(b, &c) != nil || c.Version != sessionCacheVersion || !cacheFile(dir, c.PartsFile) || !cacheFile(dir, c.MetaFile) {
			return c, false
		}
		stamp := layout.StateStamp(d.lake)
		return c, stamp != "" && c.State == stamp
	}
	c, fresh := read()
	if !fresh {
		if _, _, err := d.sessionSources(ctx); err != nil {
			return "", "", false
		}
		if c, fresh = read(); !fresh {
			return "", "", false
		}
	}
	return filepath.Join(dir, c.PartsFile), filepath.Join(dir, c.MetaFile), true
}
