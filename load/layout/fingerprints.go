package layout

import (
	"os"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/sync/errgroup"
)

// PartitionFingerprints maps each partition ("platform/date") of the given
// tables to a fingerprint of the names of its Parquet files in each: what
// changes when a load adds or removes data there.
func PartitionFingerprints(lake string, tables ...string) (map[string]string, error) {
	return (*Listing)(nil).PartitionFingerprints(lake, tables...)
}

// PartitionFingerprints is PartitionFingerprints, from what l keeps of the
// directories that have not changed.
func (l *Listing) PartitionFingerprints(lake string, tables ...string) (map[string]string, error) {
	type dir struct {
		table string
		part  PartKey
		ents  []os.DirEntry
	}
	var dirs []dir
	for _, table := range tables {
		parts, err := l.TablePartitions(lake, table)
		if err != nil {
			return nil, err
		}
		for _, p := range parts {
			dirs = append(dirs, dir{table: table, part: p})
		}
	}
	// The directories are listed a few at a time: a warm query waits on
	// hundreds of them.
	var g errgroup.Group
	g.SetLimit(8)
	for i := range dirs {
		d := &dirs[i]
		g.Go(func() (err error) {
			d.ents, err = l.readDir(Dir(lake, d.table, d.part.Platform, d.part.Date))
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	files := map[string][]string{}
	for _, d := range dirs {
		key := d.part.Platform + "/" + d.part.Date
		for _, f := range d.ents { // ReadDir sorts by name
			if !f.IsDir() && strings.HasSuffix(f.Name(), ".parquet") {
				name := f.Name()
				if len(tables) > 1 {
					name = d.table + "/" + name
				}
				files[key] = append(files[key], name)
			}
		}
	}
	out := make(map[string]string, len(files))
	for key, names := range files {
		h := xxhash.New()
		for _, n := range names {
			h.WriteString(n)
			h.WriteString("\n")
		}
		out[key] = strconv.FormatUint(h.Sum64(), 16)
	}
	return out, nil
}
