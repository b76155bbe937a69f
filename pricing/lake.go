package pricing

import (
	"os"
	"path/filepath"
)

// ImportedFile is where a lake keeps the price table imported into it
// (Import), relative to the lake directory.
const ImportedFile = "_pricing/imported.json"

// ImportedPath is the imported price table of the lake at lake.
func ImportedPath(lake string) string { return filepath.Join(lake, filepath.FromSlash(ImportedFile)) }

// LoadLake returns the embedded table, with the table imported into the
// lake at lake (if any) applied over it, then the override files.
func LoadLake(lake string, files ...string) (*Table, error) {
	var all []string
	if lake != "" {
		if p := ImportedPath(lake); fileExists(p) {
			all = append(all, p)
		}
	}
	return Load(append(all, files...)...)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
