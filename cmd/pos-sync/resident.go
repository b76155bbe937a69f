package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/cmd/internal/resident"
	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/internal/dircache"
	"github.com/pos-lake/pos/internal/watermark"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/rollup"
	"github.com/pos-lake/pos/transform/scrub"
	"github.com/urfave/cli/v2"
)

// A resident pos-sync runs the syncs that `pos-sync --resident` (or
// pos-sync-client) asks of it, one after the other, each exactly as the
// asking process would have run it (its arguments, environment and
// working directory), so that a hook's sync after every turn pays neither
// a process start nor the scrubber's rules, which take longer to build
// than a turn takes to sync. It ends after --idle without a request.
// There is one a user and binary, for every lake (cmd/internal/resident).
//
// Nothing is kept between syncs but what no input changes (the compiled
// rules, the packages' start-up; the scrubber, while its options,
// allowlist and key are the same) and what is checked against the files it
// came from (the ids of the lake's part files, which are never rewritten
// in place: see load.IDCache; the parsed watermarks file, kept with its
// identity and a hash of its bytes: see watermark.KeepParsed; the entries of directories that
// have not changed: see dircache.Cache; the rows of the usage rollup's
// file, by its name, size and time: see rollup.Cache), and the Parquet
// writers' buffers, reset for each file: the watermarks, the lake and the
// embedding cache are read afresh by each, so a resident sync and a
// one-shot one are the same run, and any other writer of the lake may
// come between.

// serving is set in the resident process: the syncs it runs for others
// run there, not through another resident.
var serving bool

// residentDirs keeps the entries of the directories the resident's walks
// read, each checked against its directory's time (see dircache.Cache).
var residentDirs *dircache.Cache

// residentIDs keeps the ids of the part files the resident's loads read:
// up to 4M ids (64 MB), a few weeks of a heavy user's partitions.
var residentIDs *load.IDCache

// residentListing keeps the listings of the lake's partition directories
// the resident's loads read (the search index's, the usage rollup's), and
// residentRollup the rows of the rollup file last written.
var (
	residentListing *layout.Listing
	residentRollup  *rollup.Cache
)

// residentScrubber keeps the scrubber of the last sync (its rules, its
// prefilter and its scanners) with what it was built from (newScrubber).
var residentScrubber struct {
	sync.Mutex
	s   *scrub.Scrubber
	key string
}

// residentWriters keeps the Parquet writers of the resident's loads, up
// to 8 a table: each holds a page of buffers per column.
var residentWriters *load.Writers

// viaResident asks the resident pos-sync to run this sync, starting one
// when none answers, and passes on what the run wrote and its exit code.
// When no resident can be reached, the sync runs here.
func viaResident(c *cli.Context, here func() error) error {
	exe, err := os.Executable()
	var req resident.Request
	if err == nil {
		req.Exe, req.Mod, err = resident.Binary(exe)
	}
	if err == nil {
		req.Dir, err = os.Getwd()
	}
	if err != nil {
		warnf(c, "no resident pos-sync (%v): syncing here", err)
		return here()
	}
	req.Args, req.Env = os.Args, os.Environ()
	rep, err := resident.Ask(&req, os.Args[0], c.Duration("idle"))
	if err != nil {
		warnf(c, "%v: syncing here", err)
		return here()
	}
	if rep.Stale {
		return here()
	}
	io.WriteString(c.App.ErrWriter, rep.Stderr)
	if rep.Code == cmdio.OK {
		return nil
	}
	return cmdio.ReportedError{Code: rep.Code}
}

func warnf(c *cli.Context, format string, args ...any) {
	fmt.Fprintf(c.App.ErrWriter, "pos-sync: "+format+"\n", args...)
}

// serve is the resident: it takes the lock of its socket (a second
// resident ends at once), listens, and runs each request until idle
// passes without one.
func serve(c *cli.Context) error {
	dir, err := resident.Dir()
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	exe, mod, err := resident.Binary(exe)
	if err != nil {
		return err
	}
	sock := resident.SocketPath(dir, exe)
	lk, err := os.OpenFile(strings.TrimSuffix(sock, ".sock")+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer lk.Close()
	if err := syscall.Flock(int(lk.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil // another resident serves
	}
	os.Remove(sock) // a dead resident's
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return err
	}
	ul := ln.(*net.UnixListener)
	ul.SetUnlinkOnClose(true)
	defer ul.Close()
	// Told to stop (SIGTERM, Ctrl-C), it stops listening at once, so the
	// next asker starts a new resident instead of meeting a closing one.
	defer context.AfterFunc(c.Context, func() { ul.Close() })()
	serving = true
	residentIDs = load.NewIDCache(4 << 20)
	residentWriters = load.NewWriters(8)
	residentDirs = extract.NewDirCache()
	residentListing = layout.NewListing()
	residentRollup = rollup.NewCache()
	watermark.KeepParsed()
	idle, last := c.Duration("idle"), time.Now()
	for {
		// It wakes every few seconds: it ends once idle has passed, or
		// once its socket is gone (its directory removed).
		ul.SetDeadline(time.Now().Add(min(idle, 2*time.Second)))
		conn, err := ul.Accept()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			if _, err := os.Stat(sock); err != nil || time.Since(last) >= idle {
				return nil
			}
			continue
		}
		if c.Context.Err() != nil {
			if err == nil {
				conn.Close()
			}
			return nil
		}
		if err != nil {
			return err
		}
		// A resident of an older build stops listening and lets go of
		// its lock before it says so: the asker then starts a new one,
		// instead of meeting this one's closing socket.
		if stale := handle(c.Context, conn, exe, mod, func() { ul.Close(); lk.Close() }); stale {
			return nil
		}
		last = time.Now()
	}
}

// runMu makes the resident's runs one after the other: each sets the
// process's environment and working directory to its asker's.
var runMu sync.Mutex

// handle runs one request; it reports whether the asker is of another
// build (the resident then ends, and the asker starts a new one). Before
// it replies to such an asker, it calls stop.
func handle(ctx context.Context, conn net.Conn, exe string, mod int64, stop func()) (stale bool) {
	defer conn.Close()
	var req resident.Request
	if err := json.NewDecoder(conn).Decode(&req); err != nil {
		return false
	}
	if req.Exe != exe || req.Mod != mod {
		stop()
		json.NewEncoder(conn).Encode(resident.Reply{Stale: true})
		return true
	}
	var stderr bytes.Buffer
	code := runAs(ctx, &req, &stderr)
	json.NewEncoder(conn).Encode(resident.Reply{Code: code, Stderr: stderr.String()})
	return false
}

// runAs runs the asker's pos-sync in this process, in its environment and
// working directory, and puts the resident's back afterwards.
func runAs(ctx context.Context, req *resident.Request, stderr io.Writer) int {
	runMu.Lock()
	defer runMu.Unlock()
	env, wd := os.Environ(), ""
	if d, err := os.Getwd(); err == nil {
		wd = d
	}
	defer func() {
		setEnv(env)
		if wd != "" {
			os.Chdir(wd)
		}
	}()
	if err := os.Chdir(req.Dir); err != nil {
		fmt.Fprintf(stderr, "pos-sync: resident: %v\n", err)
		return cmdio.Failure
	}
	setEnv(req.Env)
	return cmdio.Run(ctx, newApp(), req.Args, strings.NewReader(""), io.Discard, stderr)
}

func setEnv(env []string) {
	os.Clearenv()
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			os.Setenv(k, v)
		}
	}
}
