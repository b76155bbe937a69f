package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/dustin/go-humanize"

	"github.com/pos-lake/pos/extract/claudecode"
)

// ---------------------------------------------------------------------------
// --append: grow an existing home

func grow(home string, fraction float64, seed uint64, stdout io.Writer) error {
	start := time.Now()
	projects := filepath.Join(home, ".claude", "projects")
	type sess struct {
		path  string
		lines int
	}
	var files []sess
	total := 0
	var now time.Time // the home's latest time: when the appended lines are written
	err := filepath.WalkDir(projects, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "subagents" {
				return filepath.SkipDir
			}
			return nil
		}
		if base := strings.TrimSuffix(d.Name(), ".jsonl"); base == d.Name() || !isUUID(base) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n := bytes.Count(b, []byte{'\n'})
		if n > 0 {
			files = append(files, sess{p, n})
			total += n
		}
		if last := lastTimestamp(b); last.After(now) {
			now = last
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no session files under %s", projects)
	}
	want := max(1, int(float64(total)*fraction+0.5))
	// About a tenth of the sessions grow, each by a tenth (scaled by
	// fraction) of its lines: most files stay unchanged, as in real use.
	per := min(1, fraction*10)
	rng := rand.New(rand.NewPCG(seed, 0x6170706e64))
	rng.Shuffle(len(files), func(i, j int) { files[i], files[j] = files[j], files[i] })
	added, grown, addedBytes := 0, 0, 0
	for pass := 0; added < want; pass++ {
		for _, f := range files {
			if added >= want {
				break
			}
			k := min(want-added, max(1, int(float64(f.lines)*per+0.5)))
			// Sessions resumed one after another, from an hour after the
			// home's latest line: new lines are dated when they are
			// written, whatever day their session started.
			n, err := appendLines(f.path, k, seed, pass, now.Add(time.Hour+time.Duration(grown)*2*time.Minute))
			if err != nil {
				return err
			}
			added += k
			addedBytes += n
			grown++
		}
	}
	fmt.Fprintf(stdout, "gen: appended %d lines (%s, %d bytes) to %d of %d session files (%d lines before); %.1fs\n",
		added, humanize.Bytes(uint64(addedBytes)), addedBytes, grown, len(files), total, time.Since(start).Seconds())
	return nil
}

// appendLines appends k lines copied from the file itself: a block starting
// at a prompt, with fresh ids except the session id, timestamps moved to
// start at at (at the hour; past the file's last one in any case), and its
// first line chained to the file's last line.
func appendLines(p string, k int, seed uint64, pass int, at time.Time) (int, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, err
	}
	lines := bytes.SplitAfter(b, []byte{'\n'})
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	k = min(k, len(lines))
	start := len(lines) - k
	for i := start; i >= 0; i-- {
		if claudecode.IsPrompt(lines[i]) {
			start = i
			break
		}
	}
	block := bytes.Clone(bytes.Join(lines[start:start+k], nil))
	if block[len(block)-1] != '\n' {
		block = append(block, '\n')
	}
	session := strings.TrimSuffix(filepath.Base(p), ".jsonl")
	st := seed ^ xxhash.Sum64String(p) ^ uint64(pass)<<32
	rw := rewriter{salt: splitmix(&st), keep: map[string]bool{session: true}, override: map[string]string{}}
	if parent := firstValue(lines[start], `"parentUuid":"`); isUUID(parent) {
		if last := lastValue(b, `"uuid":"`); isUUID(last) {
			rw.override[parent] = last
		}
	}
	last, first := lastTimestamp(b), firstTimestamp(block)
	if at.Before(last) {
		at = last
	}
	rw.shift = time.Hour
	if !first.IsZero() && at.After(first) {
		// Whole hours, as the rewriter moves times.
		rw.shift = at.Sub(first).Truncate(time.Hour) + time.Hour
	}
	rw.rewrite(block)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return 0, err
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		block = append([]byte{'\n'}, block...)
	}
	_, err = f.Write(block)
	return len(block), errors.Join(err, f.Close())
}
