package load

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/pos-lake/pos/internal/atomicfile"
	"github.com/pos-lake/pos/load/searchindex"
	"github.com/pos-lake/pos/schema"
)

// The lake's state in <lake>/_state that every load reads and writes:
// the run log, which tables hold more than one version of a record, and
// the Parquet schema each table was written with.

// stateFiles are the files in <lake>/_state every pos-load (or pos-embed's
// first chunks) changes: runs.ndjson gets a line per run.
var stateFiles = []string{"runs.ndjson", "schemas.json", "versioned.json", "embeddings.json"}

// StateStamp changes whenever a load completes: a reader that kept what it
// derived from the lake's files (views, the session cache's sources) can
// keep it while the stamp stays the same. "" when the lake has no state.
func StateStamp(lake string) string {
	var b strings.Builder
	for _, f := range stateFiles {
		if fi, err := os.Stat(filepath.Join(lake, "_state", f)); err == nil {
			fmt.Fprintf(&b, "%s:%d:%d;", f, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return b.String()
}

// logRun appends this run's counts to <lake>/_state/runs.ndjson.
func (l *Loader) logRun() error {
	st := l.Stats()
	entry := map[string]any{
		"run": l.runID, "at": l.opt.Now().UTC().Format(time.RFC3339), "in": st.In,
		"rows": st.Rows, "duplicates": st.Duplicates, "versions": st.Versions,
		"files": st.Files, "checkpoints": st.Checkpoints, "skipped": st.Skipped,
	}
	if st.Compacted > 0 {
		entry["compacted"], entry["merged"] = st.Compacted, st.Merged
	}
	if len(l.scrubRun) > 0 {
		entry["scrub"] = l.scrubRun
	}
	b, _ := json.Marshal(entry)
	f, err := os.OpenFile(filepath.Join(l.opt.Lake, "_state", "runs.ndjson"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func removeTemps(lake string) error {
	for _, root := range []string{filepath.Join(lake, "raw"), filepath.Join(lake, "indexed")} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if !d.IsDir() && (strings.HasSuffix(path, ".parquet.tmp") || strings.HasSuffix(path, searchindex.VectorsExt+".tmp")) {
				return os.Remove(path)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

const versionedFile = "versioned.json"

func readVersioned(lake string) (map[string]bool, error) {
	m := map[string]bool{}
	b, err := os.ReadFile(filepath.Join(lake, "_state", versionedFile))
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	return m, json.Unmarshal(b, &m)
}

// Versioned reports, per table, whether the lake holds more than one
// version of some record (the views must then pick the latest).
func Versioned(lake string) map[string]bool {
	m, err := readVersioned(lake)
	if err != nil {
		return map[string]bool{TableRaw: true, TableMessages: true, TableExchanges: true, TableDocuments: true,
			TableDecisions: true, TableFileRefs: true, TableChunks: true, TableOther: true}
	}
	return m
}

func writeVersioned(lake string, m map[string]bool) error {
	b, _ := json.Marshal(m)
	return atomicfile.Write(filepath.Join(lake, "_state", versionedFile), b)
}

const schemasFile = "schemas.json"

// readSchemas returns the schema fingerprints recorded per table; nil when
// unknown (the views then read every table with union_by_name).
func readSchemas(lake string) map[string][]string {
	m := map[string][]string{}
	b, err := os.ReadFile(filepath.Join(lake, "_state", schemasFile))
	if err != nil || json.Unmarshal(b, &m) != nil {
		return map[string][]string{}
	}
	return m
}

// schemaFingerprint identifies the Parquet schema this build writes for a
// table. It is asked at each part file a load opens, and printing a
// schema costs far more than a lookup, so each table's is computed once.
func schemaFingerprint(table string) string {
	if fp, ok := fingerprints.Load(table); ok {
		return fp.(string)
	}
	fp := schema.ContentHash([]byte(parquet.SchemaOf(rowType(table)).String()))
	fingerprints.Store(table, fp)
	return fp
}

var fingerprints sync.Map // table -> schemaFingerprint
