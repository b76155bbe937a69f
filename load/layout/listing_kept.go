package layout

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pos-lake/pos/internal/atomicfile"
)

// The kept listing: a process that searches once (pos-query) would list
// every partition directory of the chunks for each search, 1,800 of them
// on a lake of a million chunks. A Listing that lists a whole table keeps
// its files, relative to the table's directory, in <lake>/rollup, with the
// lake's state stamp it was listed under; the next process takes them as
// they are while the stamp stays the same (the rule a Listing keeps its
// own answers by), and lists the table again otherwise. A file that is
// damaged, of another version or of another stamp is ignored, and
// replaced by the next whole listing; a lake this process cannot write is
// listed every time, as before.

// keptListingVersion is the first line's version of the kept listing.
const keptListingVersion = 1

// maxKeptListing bounds the size of a kept listing read: a million part
// files of ~100 bytes of path each.
const maxKeptListing = 128 << 20

// distrusted holds the kept listings (path -> stamp) that a Listing of this
// process found wrong (Forget) but may not have been able to remove: they
// are not read again under that stamp.
var distrusted sync.Map

// keptListingPath is where the listing of lake's table is kept.
func keptListingPath(lake, table string) string {
	return filepath.Join(lake, RollupDir, "listing-"+table+".txt")
}

// tableFiles returns the files of the whole table under stamp, relative to
// its directory: those l keeps, else those kept in the lake, else, when
// whole is set (the caller wants them all anyway), listed and kept. ok is
// false when it has none to give (the caller lists its window only).
func (l *Listing) tableFiles(lake, table, stamp string, whole bool) (rel []string, ok bool, err error) {
	if stamp == "" {
		return nil, false, nil
	}
	key := lake + "\x00" + table
	l.mu.Lock()
	rel, ok = l.tables[key]
	l.mu.Unlock()
	if ok {
		return rel, true, nil
	}
	path := keptListingPath(lake, table)
	if v, bad := distrusted.Load(path); !bad || v != stamp {
		if got, ok := readKeptListing(path, stamp, table); ok {
			l.keep(key, stamp, path, got)
			return got, true, nil
		}
	}
	if !whole {
		return nil, false, nil
	}
	abs, err := l.partitionFiles(lake, table, "", time.Time{}, time.Time{})
	if err != nil {
		return nil, false, err
	}
	root := TableDir(lake, table) + string(filepath.Separator)
	rel = make([]string, 0, len(abs))
	for _, f := range abs {
		r, found := strings.CutPrefix(f, root)
		if !found || validRel(r) != nil {
			return nil, false, nil // a name the kept listing cannot hold
		}
		rel = append(rel, r)
	}
	if os.MkdirAll(filepath.Join(lake, RollupDir), 0o700) == nil &&
		atomicfile.Write(path, encodeKeptListing(stamp, table, rel)) == nil {
		l.keep(key, stamp, path, rel)
	} else {
		l.keep(key, stamp, "", rel) // a read-only lake: this process keeps them
	}
	return rel, true, nil
}

func (l *Listing) keep(key, stamp, path string, rel []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if stamp != l.stamp {
		return // a newer load's listing took over meanwhile
	}
	l.tables[key] = rel
	if path != "" {
		l.kept[path] = stamp
	}
}

// windowOf returns the files of rel, a whole table's relative files in
// PartitionFiles' order, in the partitions of platform and the window, as
// PartitionFiles names them.
func windowOf(lake, table string, rel []string, platform string, since, until time.Time) []string {
	from, to := "", ""
	if !since.IsZero() {
		from = since.UTC().Format(time.DateOnly)
	}
	if !until.IsZero() {
		to = until.UTC().Format(time.DateOnly)
	}
	if platform != "" {
		platform = PartValue(platform)
	}
	// The parts of a relative file are neither empty, "." nor ".."
	// (validRel): the table's directory and it joined are clean, as
	// filepath.Join(Dir(…), name) would make them.
	root := TableDir(lake, table) + string(filepath.Separator)
	var out []string
	if platform == "" && from == "" && to == "" {
		out = make([]string, 0, len(rel))
	}
	for _, r := range rel {
		if plat, date, _ := splitRel(r); platform != "" && plat != platform || from != "" && date < from || to != "" && date > to {
			continue
		}
		out = append(out, root+filepath.FromSlash(r))
	}
	return out
}

// splitRel splits platform=P/date=D/NAME, checked by validRel.
func splitRel(r string) (plat, date, name string) {
	p, rest, _ := strings.Cut(r, "/")
	d, name, _ := strings.Cut(rest, "/")
	return strings.TrimPrefix(p, "platform="), strings.TrimPrefix(d, "date="), name
}

// validRel checks that r names a Parquet file of a partition:
// platform=P/date=D/NAME.parquet, with no other separator and no part that
// leaves the table's directory.
func validRel(r string) error {
	parts := strings.Split(r, "/")
	if len(parts) != 3 {
		return fmt.Errorf("%q: not platform=P/date=D/file", r)
	}
	plat, okP := strings.CutPrefix(parts[0], "platform=")
	date, okD := strings.CutPrefix(parts[1], "date=")
	name := parts[2]
	switch {
	case !okP || !okD || plat == "" || date == "":
		return fmt.Errorf("%q: not platform=P/date=D/file", r)
	case !strings.HasSuffix(name, ".parquet") || name == ".parquet":
		return fmt.Errorf("%q: not a Parquet file", r)
	case strings.ContainsAny(r, "\\\x00\n\r") || name == "." || name == "..":
		return fmt.Errorf("%q: a name no partition holds", r)
	}
	return nil
}

// encodeKeptListing writes a kept listing:
//
//	pos-listing 1
//	<state stamp>
//	<table>
//	<number of files>
//	<file>            one a line, relative to the table's directory
//	crc32c <hex>      of all the lines before
func encodeKeptListing(stamp, table string, rel []string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "pos-listing %d\n%s\n%s\n%d\n", keptListingVersion, stamp, table, len(rel))
	for _, r := range rel {
		b.WriteString(r)
		b.WriteByte('\n')
	}
	return encodeSum(b.Bytes())
}

// encodeSum appends the sum line of body.
func encodeSum(body []byte) []byte {
	return fmt.Appendf(body, "crc32c %08x\n", crc32.Checksum(body, castagnoli))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errBadListing says a kept listing cannot be trusted.
var errBadListing = errors.New("not a kept listing of this build")

// parseKeptListing reads what encodeKeptListing wrote.
func parseKeptListing(b []byte) (stamp, table string, rel []string, err error) {
	body, sum, ok := cutLastLine(b)
	if !ok {
		return "", "", nil, errBadListing
	}
	if want, ok := parseSum(sum); !ok || crc32.Checksum(body, castagnoli) != want {
		return "", "", nil, errBadListing
	}
	lines := strings.Split(string(body), "\n")
	if len(lines) < 5 || lines[len(lines)-1] != "" || lines[0] != "pos-listing "+strconv.Itoa(keptListingVersion) {
		return "", "", nil, errBadListing
	}
	lines = lines[:len(lines)-1]
	stamp, table = lines[1], lines[2]
	n, err := strconv.Atoi(lines[3])
	if err != nil || stamp == "" || table == "" || strings.Contains(table, "/") || n != len(lines)-4 || lines[3] != strconv.Itoa(n) {
		return "", "", nil, errBadListing
	}
	rel = lines[4:]
	for _, r := range rel {
		if validRel(r) != nil {
			return "", "", nil, errBadListing
		}
	}
	return stamp, table, rel, nil
}

// cutLastLine splits b before its last line, which must end in a newline.
func cutLastLine(b []byte) (body []byte, last string, ok bool) {
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return nil, "", false
	}
	i := bytes.LastIndexByte(b[:len(b)-1], '\n')
	if i < 0 {
		return nil, "", false
	}
	return b[:i+1], string(b[i+1 : len(b)-1]), true
}

// parseSum reads "crc32c <8 lowercase hex digits>".
func parseSum(s string) (uint32, bool) {
	h, ok := strings.CutPrefix(s, "crc32c ")
	if !ok || len(h) != 8 || strings.ToLower(h) != h {
		return 0, false
	}
	v, err := strconv.ParseUint(h, 16, 32)
	return uint32(v), err == nil
}

// readKeptListing returns the files kept at path for table under stamp;
// false when there are none to trust.
func readKeptListing(path, stamp, table string) ([]string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxKeptListing {
		return nil, false
	}
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, false
	}
	s, t, rel, err := parseKeptListing(b)
	if err != nil || s != stamp || t != table {
		return nil, false
	}
	return rel, true
}
