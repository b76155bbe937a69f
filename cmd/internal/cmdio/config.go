package cmdio

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// The configuration file: $POS_CONFIG, else $XDG_CONFIG_HOME/pos/config.toml
// (~/.config/pos/config.toml). Each of its keys stands for an environment
// variable, which it sets when the environment does not, so that flags
// override the environment, which overrides the file; the binaries that
// pos runs in turn (pos-lake) read the same values.
//
//	lake = "s3://team-lake/pos"              # POS_LAKE
//	catalog = "https://catalog.example.com"  # POS_CATALOG
//	only_projects = ["/home/me/work/*"]      # POS_ONLY_PROJECTS
//
//	[roots]                                  # POS_ROOTS: read in addition to the defaults
//	aider = ["~/src/app", "~/src/lib"]
//	claude_code = ["/mnt/laptop/.claude"]
type config struct {
	Lake         string   `toml:"lake"`          // POS_LAKE
	LocalLake    string   `toml:"local_lake"`    // POS_LOCAL_LAKE: the local lake of a shared one
	Catalog      string   `toml:"catalog"`       // POS_CATALOG
	Machine      string   `toml:"machine"`       // POS_MACHINE
	CacheMax     string   `toml:"cache_max"`     // POS_CACHE_MAX
	OnlyProjects []string `toml:"only_projects"` // POS_ONLY_PROJECTS
	DenyProjects string   `toml:"deny_projects"` // POS_DENY_PROJECTS: a file of projects
	// Roots are more places pos-extract reads, by platform: POS_ROOTS,
	// written as RootsEnv does.
	Roots map[string][]string `toml:"roots"`
}

// RootsEnv writes extra roots by platform as POS_ROOTS holds them:
// platform=path entries joined by the path list separator (':' on Unix),
// platforms in name order, each one's paths in their order.
func RootsEnv(roots map[string][]string) string {
	var b []string
	for _, p := range slices.Sorted(maps.Keys(roots)) {
		for _, dir := range roots[p] {
			b = append(b, p+"="+dir)
		}
	}
	return strings.Join(b, string(os.PathListSeparator))
}

// ConfigPath is where the configuration file is looked for.
func ConfigPath() string {
	if p := os.Getenv("POS_CONFIG"); p != "" {
		return p
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "pos", "config.toml")
}

// ApplyConfig sets the environment variables the configuration file gives
// and the environment does not. A missing file is no configuration; a
// file that cannot be read, or has a key it does not know, is an error
// naming it.
func ApplyConfig() error {
	path := ConfigPath()
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var c config
	dec := toml.NewDecoder(bytes.NewReader(b)).DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		var de *toml.DecodeError
		var se *toml.StrictMissingError
		switch {
		case errors.As(err, &se) && len(se.Errors) > 0:
			row, _ := se.Errors[0].Position()
			return fmt.Errorf("%s:%d: unknown key %s (known: lake, local_lake, catalog, machine, cache_max, only_projects, deny_projects, roots)",
				path, row, strings.Join(se.Errors[0].Key(), "."))
		case errors.As(err, &de):
			row, col := de.Position()
			return fmt.Errorf("%s:%d:%d: %v", path, row, col, de)
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	for env, v := range map[string]string{
		"POS_LAKE": c.Lake, "POS_LOCAL_LAKE": c.LocalLake, "POS_CATALOG": c.Catalog, "POS_MACHINE": c.Machine,
		"POS_CACHE_MAX": c.CacheMax, "POS_ONLY_PROJECTS": strings.Join(c.OnlyProjects, ","), "POS_DENY_PROJECTS": c.DenyProjects,
		"POS_ROOTS": RootsEnv(c.Roots),
	} {
		if _, set := os.LookupEnv(env); !set && v != "" {
			os.Setenv(env, v)
		}
	}
	return nil
}
