package layout

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/pos-lake/pos/internal/atomicfile"
	"github.com/pos-lake/pos/schema"
)

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

const versionedFile = "versioned.json"

func ReadVersioned(lake string) (map[string]bool, error) {
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
	m, err := ReadVersioned(lake)
	if err != nil {
		return map[string]bool{TableRaw: true, TableMessages: true, TableExchanges: true, TableDocuments: true,
			TableDecisions: true, TableFileRefs: true, TableChunks: true, TableOther: true}
	}
	return m
}

func WriteVersioned(lake string, m map[string]bool) error {
	b, _ := json.Marshal(m)
	return atomicfile.Write(filepath.Join(lake, "_state", versionedFile), b)
}

const SchemasFile = "schemas.json"

// ReadSchemas returns the schema fingerprints recorded per table; nil when
// unknown (the views then read every table with union_by_name).
func ReadSchemas(lake string) map[string][]string {
	m := map[string][]string{}
	b, err := os.ReadFile(filepath.Join(lake, "_state", SchemasFile))
	if err != nil || json.Unmarshal(b, &m) != nil {
		return map[string][]string{}
	}
	return m
}

// SchemaFingerprint identifies the Parquet schema this build writes for a
// table. It is asked at each part file a load opens, and printing a
// schema costs far more than a lookup, so each table's is computed once.
func SchemaFingerprint(table string) string {
	if fp, ok := fingerprints.Load(table); ok {
		return fp.(string)
	}
	fp := schema.ContentHash([]byte(parquet.SchemaOf(RowType(table)).String()))
	fingerprints.Store(table, fp)
	return fp
}

var fingerprints sync.Map // table -> SchemaFingerprint
