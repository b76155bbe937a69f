package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/urfave/cli/v2"
)

// A resident pos-sync runs the syncs that `pos-sync --resident` asks of it,
// one after the other, each exactly as the asking process would have run
// it (its arguments, environment and working directory), so that a hook's
// sync after every turn pays neither a process start nor the scrubber's
// rules, which take longer to build than a turn takes to sync. It ends
// after --idle without a request. There is one a user, for every lake: its
// socket is in the user's runtime directory.
//
// Nothing is kept between syncs but what no input changes (the compiled
// rules, the packages' start-up): the watermarks, the lake and the
// embedding cache are read afresh by each, so a resident sync and a
// one-shot one are the same run, and any other writer of the lake may
// come between.

// serving is set in the resident process: the syncs it runs for others
// run there, not through another resident.
var serving bool

// request is what an asking pos-sync sends: itself, and what its run
// depends on besides the files.
type request struct {
	Exe  string   `json:"exe"` // the binary and its modification time:
	Mod  int64    `json:"mod"` // a resident of another build does not serve
	Args []string `json:"args"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir"`
}

// reply is the run's exit code and what it wrote on stderr; Stale says the
// resident is of another binary (and ends).
type reply struct {
	Code   int    `json:"code"`
	Stderr string `json:"stderr"`
	Stale  bool   `json:"stale,omitempty"`
}

// residentDir is where the resident's socket and lock are: the user's
// runtime directory, else a private directory in the temporary one.
func residentDir() (string, error) {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "pos"), nil
	}
	return filepath.Join(os.TempDir(), "pos-"+strconv.Itoa(os.Getuid())), nil
}

// privateDir makes dir, readable by its owner alone, and refuses one that
// is another user's or open to others: the socket runs syncs with the
// environment it is sent.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 || ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s is not a private directory of this user: the resident pos-sync will not use it", dir)
	}
	return nil
}

// thisBinary names the running binary and its modification time.
func thisBinary() (string, int64, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", 0, err
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return "", 0, err
	}
	return exe, fi.ModTime().UnixNano(), nil
}

// viaResident asks the resident pos-sync to run this sync, starting one
// when none answers, and passes on what the run wrote and its exit code.
// When no resident can be reached, the sync runs here.
func viaResident(c *cli.Context, here func() error) error {
	dir, err := residentDir()
	if err == nil {
		err = privateDir(dir)
	}
	var req request
	if err == nil {
		req.Exe, req.Mod, err = thisBinary()
	}
	if err == nil {
		req.Dir, err = os.Getwd()
	}
	if err != nil {
		warnf(c, "no resident pos-sync (%v): syncing here", err)
		return here()
	}
	req.Args, req.Env = os.Args, os.Environ()
	sock := socketPath(dir, req.Exe)
	conn, err := dial(sock, 0)
	if err != nil {
		if err := spawn(c, req.Exe); err != nil {
			warnf(c, "could not start a resident pos-sync (%v): syncing here", err)
			return here()
		}
		// It listens before anything else, and it builds the scrubber's
		// rules while this run's request waits.
		if conn, err = dial(sock, 10*time.Second); err != nil {
			warnf(c, "the resident pos-sync did not answer (%v): syncing here", err)
			return here()
		}
	}
	rep, err := ask(conn, &req)
	if err != nil || rep.Stale {
		if err != nil {
			warnf(c, "the resident pos-sync failed (%v): syncing here", err)
		}
		return here()
	}
	io.WriteString(c.App.ErrWriter, rep.Stderr)
	return exitCode(rep.Code)
}

func warnf(c *cli.Context, format string, args ...any) {
	fmt.Fprintf(c.App.ErrWriter, "pos-sync: "+format+"\n", args...)
}

// socketPath is the socket of the resident of the binary exe: each
// installed pos-sync has its own (a test's binaries never meet the
// user's), and a rebuilt one replaces the resident of the old build.
func socketPath(dir, exe string) string {
	h := fnv.New64a()
	io.WriteString(h, exe)
	return filepath.Join(dir, fmt.Sprintf("sync-%016x.sock", h.Sum64()))
}

// dial connects to the socket, trying again until wait has passed.
func dial(sock string, wait time.Duration) (net.Conn, error) {
	deadline := time.Now().Add(wait)
	for {
		conn, err := net.Dial("unix", sock)
		if err == nil || time.Now().After(deadline) {
			return conn, err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func ask(conn net.Conn, req *request) (*reply, error) {
	defer conn.Close()
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return nil, err
	}
	var rep reply
	if err := json.NewDecoder(conn).Decode(&rep); err != nil {
		return nil, fmt.Errorf("reading its reply: %w", err)
	}
	return &rep, nil
}

// spawn starts a resident pos-sync in a session of its own, so that it
// outlives the hook that started it, with --idle's time to live.
func spawn(c *cli.Context, exe string) error {
	cmd := exec.Command(exe, "--serve", "--idle", c.Duration("idle").String())
	cmd.Args[0] = os.Args[0]
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// exitCode is the error that makes this process exit with code, its
// message already written by the resident.
func exitCode(code int) error {
	if code == cmdio.OK {
		return nil
	}
	return cmdio.ReportedError{Code: code}
}

// serve is the resident: it takes the lock of the directory (a second
// resident ends at once), listens, and runs each request until idle
// passes without one.
func serve(c *cli.Context) error {
	dir, err := residentDir()
	if err == nil {
		err = privateDir(dir)
	}
	if err != nil {
		return err
	}
	exe, mod, err := thisBinary()
	if err != nil {
		return err
	}
	sock := socketPath(dir, exe)
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
	serving = true
	idle := c.Duration("idle")
	for {
		ul.SetDeadline(time.Now().Add(idle))
		conn, err := ul.Accept()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil
		}
		if err != nil {
			return err
		}
		if c.Context.Err() != nil {
			conn.Close()
			return nil
		}
		if stale := handle(c.Context, conn, exe, mod); stale {
			return nil
		}
	}
}

// runMu makes the resident's runs one after the other: each sets the
// process's environment and working directory to its asker's.
var runMu sync.Mutex

// handle runs one request; it reports whether the asker is another build
// (the resident then ends, and the next asker starts a new one).
func handle(ctx context.Context, conn net.Conn, exe string, mod int64) (stale bool) {
	defer conn.Close()
	var req request
	if err := json.NewDecoder(bufio.NewReader(conn)).Decode(&req); err != nil {
		return false
	}
	if req.Exe != exe || req.Mod != mod {
		json.NewEncoder(conn).Encode(reply{Stale: true})
		return true
	}
	var stderr bytes.Buffer
	code := runAs(ctx, &req, &stderr)
	json.NewEncoder(conn).Encode(reply{Code: code, Stderr: stderr.String()})
	return false
}

// runAs runs the asker's pos-sync in this process, in its environment and
// working directory, and puts the resident's back afterwards.
func runAs(ctx context.Context, req *request, stderr io.Writer) int {
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
