package layout

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pos-lake/pos/internal/lazyre"
)

// DuckDB expands glob patterns in every path its file readers are given,
// a list's items included: a lake under "a[1]*b" would read "a1xb"'s files
// (or none). Its matcher takes a bracket expression as a literal ("[[]" is
// "[", "[*]" is "*"), while a backslash escape does not work, and "{" is no
// pattern character. In a pattern DuckDB splits the path at "\" as well as
// "/", so a backslash, which is a file name's character where paths start
// with "/", can only be matched by "?" (any one character).

// globSpecial are the characters DuckDB's glob gives a meaning to.
const globSpecial = "[*?"

// GlobLiteral returns path in the form DuckDB's file readers take to mean
// that path and no other: each pattern character stands in brackets. A
// path without one is returned as it is (DuckDB reads it without
// globbing, a backslash included).
func GlobLiteral(path string) string {
	if !strings.ContainsAny(path, globSpecial) {
		return path
	}
	return GlobEscape(path)
}

// GlobLiterals is GlobLiteral of each path.
func GlobLiterals(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = GlobLiteral(p)
	}
	return out
}

// SQLString is s as an SQL string literal, for the names and paths the
// lake's SQL writes into its statements.
func SQLString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// LiteralPaths is an SQL expression of a list of file paths bound as a
// parameter (VARCHAR[]), each made literal for DuckDB's file readers as
// GlobLiteral makes it: read_parquet(LiteralPaths) reads those files and
// no other, while the caller keeps the paths as they are.
var LiteralPaths = func() string {
	e := `regexp_replace(p, '([\[*?])', '[\1]', 'g')`
	if filepath.Separator == '/' {
		e = "replace(" + e + `, '\', '?')`
	}
	return `list_transform(?::VARCHAR[], p -> CASE WHEN regexp_matches(p, '[\[*?]') THEN ` + e + " ELSE p END)"
}()

// GlobPrefix returns dir as the fixed part of a pattern that goes on with
// a separator and pattern characters of its own.
func GlobPrefix(dir string) string { return GlobEscape(dir) }

func GlobEscape(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case strings.IndexByte(globSpecial, c) >= 0:
			b.WriteByte('[')
			b.WriteByte(c)
			b.WriteByte(']')
		case c == '\\' && filepath.Separator == '/':
			// Not a separator here, but DuckDB splits a pattern at it:
			// only "?" matches it (and any other one character, which the
			// rest of the path all but always rules out).
			b.WriteByte('?')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// The private scratch directory: the zero-row schema files of a lake whose
// _schema this process cannot write are made there. It is created by this
// process (mode 0700, a name no other process chose), so nothing another
// local user put in the shared temporary directory is ever read.
var scratch struct {
	mu   sync.Mutex
	dir  string
	refs int
}

const scratchPrefix = "pos-schema-"

// HoldScratch keeps the scratch directory, if one is made, until release
// is called as many times as HoldScratch was: a reader of the lake holds
// it while its views may read the files in it. The last release removes
// it.
func HoldScratch() (release func()) {
	scratch.mu.Lock()
	scratch.refs++
	scratch.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			scratch.mu.Lock()
			defer scratch.mu.Unlock()
			scratch.refs--
			if scratch.refs == 0 && scratch.dir != "" {
				os.RemoveAll(scratch.dir)
				scratch.dir = ""
			}
		})
	}
}

// ScratchDir returns the scratch directory, made on first use. Those that
// processes of this user left behind when they were killed go first.
func ScratchDir() (string, error) {
	scratch.mu.Lock()
	defer scratch.mu.Unlock()
	if scratch.dir != "" {
		return scratch.dir, nil
	}
	removeDeadScratch(os.TempDir())
	dir, err := os.MkdirTemp("", scratchPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", err
	}
	scratch.dir = dir
	return dir, nil
}

// removeDeadScratch removes the scratch directories in tmp that are this
// user's and whose process is gone.
func removeDeadScratch(tmp string) {
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), scratchPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pid, _, ok := strings.Cut(rest, "-")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || n <= 0 || n == os.Getpid() || pidAlive(n) {
			continue
		}
		p := filepath.Join(tmp, e.Name())
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() && ownedByMe(fi) {
			os.RemoveAll(p)
		}
	}
}

func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// pidAlive reports whether a process with this id runs on this machine.
func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Temporary files. Every file pos writes in the lake is written under a
// temporary name and renamed into place; a writer killed in between leaves
// the temporary file behind. Their names carry the writer's process id
// (TempPattern), so the next run of any pos binary on the lake removes
// those whose writer is gone (SweepTemps), and never one still being
// written.

// TempPattern is the os.CreateTemp pattern of a temporary file for base:
// ".<base>.pid<PID>-<random>.tmp".
func TempPattern(base string) string {
	return "." + base + ".pid" + strconv.Itoa(os.Getpid()) + "-*.tmp"
}

// TempName is a temporary name beside path for a writer that needs no
// random part (one writer at a time, by lock or by process).
func TempName(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".pid"+strconv.Itoa(os.Getpid())+"-0.tmp")
}

var tempRE = lazyre.New(`^\..*\.pid([0-9]+)-[^/]*\.tmp$`)

// legacyTempAge is how old a temporary file whose name carries no process
// id (an older build's) must be before it is taken for a dead writer's.
const legacyTempAge = time.Hour

// staleTemp reports whether name, a file's name, is a temporary file whose
// writer is gone.
func staleTemp(name string, mod time.Time) bool {
	if !strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".tmp") {
		return false
	}
	if m := tempRE().FindStringSubmatch(name); m != nil {
		pid, err := strconv.Atoi(m[1])
		return err == nil && pid != os.Getpid() && !pidAlive(pid)
	}
	return time.Since(mod) > legacyTempAge
}

// SweepTemps removes the temporary files that killed writers left in the
// lake's own directories: _state, rollup, _schema and the summaries table
// (pos-query writes the last three too, without the writers' lock). The
// data tables' part files are pos-load's, removed under its lock after a
// run that did not end cleanly (removeTemps). It reports the first error
// other than a missing directory; a reader of a read-only lake ignores it.
func SweepTemps(lake string) error {
	var first error
	sweep := func(dir string, deep bool) {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if d.IsDir() {
				if path != dir && !deep {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return nil // gone meanwhile
			}
			if staleTemp(d.Name(), fi.ModTime()) {
				if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
			}
			return nil
		})
		if err != nil && first == nil {
			first = err
		}
	}
	sweep(filepath.Join(lake, "_state"), false)
	sweep(filepath.Join(lake, "_state", CompactDir), false)
	sweep(filepath.Join(lake, RollupDir), false)
	sweep(filepath.Join(lake, "_schema"), true)
	sweep(TableDir(lake, TableSummaries), true)
	return first
}

// CompactDir is where partitions are staged, inside <lake>/_state.
const CompactDir = "compact"

// RollupDir holds the usage rollup and its manifest, in <lake>.
const RollupDir = "rollup"
