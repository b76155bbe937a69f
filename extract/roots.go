package extract

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pos-lake/pos/extract/platforms"
)

// RootsVar is the environment variable that lists the roots pos-extract
// reads in addition to each platform's default locations:
// platform=path entries joined by the path list separator (':' on Unix),
// as the configuration file's [roots] table sets it.
const RootsVar = "POS_ROOTS"

// ParseRoots reads extra roots as RootsVar holds them: platform=path
// entries (a platform's name or alias; a path starting with ~/ is under
// home) separated by sep. Empty entries are passed over. The result maps
// each canonical platform name to its roots, in their order, once each.
func ParseRoots(s string, sep rune, home string) (map[string][]string, error) {
	roots := map[string][]string{}
	for _, e := range strings.Split(s, string(sep)) {
		if strings.TrimSpace(e) == "" {
			continue
		}
		name, dir, ok := strings.Cut(e, "=")
		if !ok || strings.TrimSpace(dir) == "" {
			return nil, fmt.Errorf("%q is not platform=path", e)
		}
		p, ok := platforms.Canonical(name)
		if !ok {
			return nil, fmt.Errorf("%q: unknown platform %q (known: %s)", e, strings.TrimSpace(name), strings.Join(platforms.Names(), ", "))
		}
		dir = strings.TrimSpace(dir)
		if rest, ok := strings.CutPrefix(dir, "~"+string(os.PathSeparator)); ok && home != "" {
			dir = filepath.Join(home, rest)
		} else if dir == "~" && home != "" {
			dir = home
		}
		for {
			// Cleaning may leave blanks at the end ("a /"), and trimming
			// them a separator ("a/ /"): until neither changes it.
			d := strings.TrimSpace(filepath.Clean(dir))
			if d == dir {
				break
			}
			dir = d
		}
		if !slices.Contains(roots[p], dir) {
			roots[p] = append(roots[p], dir)
		}
	}
	return roots, nil
}
