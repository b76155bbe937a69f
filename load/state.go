package load

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pos-lake/pos/load/searchindex"
)

// The lake's state in <lake>/_state that every load reads and writes:
// the run log, which tables hold more than one version of a record, and
// the Parquet schema each table was written with.

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
