// Package resident is the asking side of a resident pos-sync: the socket
// it listens on, the request and reply it exchanges, and the client that
// sends a sync to it, starting it when none runs. The resident itself is
// in pos-sync (--serve); this package stays free of the pipeline's
// packages, so that pos-sync-client, the hooks' client, starts in a few
// milliseconds where pos-sync's package initialisation takes tens.
package resident

import (
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
	"syscall"
	"time"
)

// Request is what an asker sends: the pos-sync binary it wants to run
// the sync (its path and modification time: a resident of another build
// does not serve it), and what the run depends on besides the files.
type Request struct {
	Exe  string   `json:"exe"`
	Mod  int64    `json:"mod"`
	Args []string `json:"args"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir"`
}

// Reply is the run's exit code and what it wrote on stderr; Stale says
// the resident is of another build (and ends).
type Reply struct {
	Code   int    `json:"code"`
	Stderr string `json:"stderr"`
	Stale  bool   `json:"stale,omitempty"`
}

// Dir is where the residents' sockets and locks are, made private: the
// user's runtime directory, else a directory of the temporary one. It
// refuses a directory that is another user's or open to others: a socket
// there runs syncs with the environment it is sent.
func Dir() (string, error) {
	dir := filepath.Join(os.TempDir(), "pos-"+strconv.Itoa(os.Getuid()))
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		dir = filepath.Join(d, "pos")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 || ok && int(st.Uid) != os.Getuid() {
		return "", fmt.Errorf("%s is not a private directory of this user", dir)
	}
	return dir, nil
}

// SocketPath is the socket of the resident of the pos-sync at exe: each
// installed pos-sync has its own (a test's binaries never meet the
// user's), and a rebuilt one replaces the resident of the old build.
func SocketPath(dir, exe string) string {
	h := fnv.New64a()
	io.WriteString(h, exe)
	return filepath.Join(dir, fmt.Sprintf("sync-%016x.sock", h.Sum64()))
}

// Binary is the real path of the binary at path and its modification time.
func Binary(path string) (string, int64, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", 0, err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", 0, err
	}
	return real, fi.ModTime().UnixNano(), nil
}

// DefaultIdle is how long a resident started by an asker waits for the
// next request before it ends ($POS_SYNC_IDLE overrides it).
const DefaultIdle = 15 * time.Minute

// Idle is $POS_SYNC_IDLE, else DefaultIdle.
func Idle() (time.Duration, error) {
	v := os.Getenv("POS_SYNC_IDLE")
	if v == "" {
		return DefaultIdle, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("$POS_SYNC_IDLE: %q is not a duration such as 15m", v)
	}
	return d, nil
}

// ErrUnreachable says no resident could be asked: the caller syncs itself.
var ErrUnreachable = errors.New("no resident pos-sync")

// Ask sends req to the resident of req.Exe, starting one (the binary
// argv0 names, with --serve) when none answers. A resident of another
// build ends on its stale reply, and the request is sent once more, to
// one of this build; a reply still stale is returned as such. An error
// wrapping ErrUnreachable says none could be reached.
func Ask(req *Request, argv0 string, idle time.Duration) (*Reply, error) {
	rep, err := askOnce(req, argv0, idle)
	if err == nil && rep.Stale {
		rep, err = askOnce(req, argv0, idle)
	}
	return rep, err
}

func askOnce(req *Request, argv0 string, idle time.Duration) (*Reply, error) {
	dir, err := Dir()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	sock := SocketPath(dir, req.Exe)
	conn, err := dial(sock, 0)
	if err != nil {
		if err := spawn(req.Exe, argv0, idle); err != nil {
			return nil, fmt.Errorf("%w: starting one: %v", ErrUnreachable, err)
		}
		// It listens before anything else, and builds the scrubber's
		// rules while this request waits.
		if conn, err = dial(sock, 10*time.Second); err != nil {
			return nil, fmt.Errorf("%w: it did not answer: %v", ErrUnreachable, err)
		}
	}
	defer conn.Close()
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	var rep Reply
	if err := json.NewDecoder(conn).Decode(&rep); err != nil {
		return nil, fmt.Errorf("%w: reading its reply: %v", ErrUnreachable, err)
	}
	return &rep, nil
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

// spawn starts a resident in a session of its own, so that it outlives
// the hook that started it.
func spawn(exe, argv0 string, idle time.Duration) error {
	closeInheritedOnExec()
	cmd := exec.Command(exe, "--serve", "--idle", idle.String())
	cmd.Args[0] = argv0
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// ClientMain is pos-sync-client's main: it runs `pos-sync ARGS` in the
// resident pos-sync of the pos-sync binary beside it (else the one on
// $PATH), passes on what that run wrote on stderr, and returns its exit
// code. When no resident can be reached, the pos-sync binary runs the
// sync itself, in this process's place.
func ClientMain() int {
	args := os.Args[1:]
	if len(args) == 1 && (args[0] == "--help" || args[0] == "-h") {
		fmt.Fprint(os.Stdout, clientHelp)
		return 0
	}
	path, err := syncBinary()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pos-sync-client: %v\n", err)
		return 1
	}
	idle, err := Idle()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pos-sync-client: %v\n", err)
		return 2
	}
	req := &Request{Args: append([]string{"pos-sync"}, args...), Env: os.Environ()}
	req.Exe, req.Mod, err = Binary(path)
	if err == nil {
		req.Dir, err = os.Getwd()
	}
	if err == nil {
		var rep *Reply
		if rep, err = Ask(req, path, idle); err == nil && !rep.Stale {
			io.WriteString(os.Stderr, rep.Stderr)
			return rep.Code
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "pos-sync-client: %v: running pos-sync here\n", err)
	}
	err = syscall.Exec(path, append([]string{path}, args...), os.Environ())
	fmt.Fprintf(os.Stderr, "pos-sync-client: running %s: %v\n", path, err)
	return 1
}

// syncBinary is the pos-sync beside this binary, else the one on $PATH.
func syncBinary() (string, error) {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "pos-sync")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	p, err := exec.LookPath("pos-sync")
	if err != nil {
		return "", fmt.Errorf("no pos-sync beside this binary or on $PATH")
	}
	return filepath.Abs(p)
}

const clientHelp = `pos-sync-client - run a pos-sync in the resident pos-sync (for hooks)

USAGE:
   pos-sync-client [pos-sync's flags]

   Runs "pos-sync FLAGS" in the resident pos-sync of the pos-sync binary
   beside this one (else the one on $PATH), as pos-sync --resident does,
   starting the resident when none runs; it ends after $POS_SYNC_IDLE
   (default 15m) without a sync. What the sync writes on stderr and its
   exit code are this command's. It starts in a few milliseconds, where
   pos-sync's own start takes tens: a hook that syncs after every turn
   pays for the sync alone. When no resident can be reached, pos-sync
   runs the sync in this process's place. See pos-sync --help.
`

// closeInheritedOnExec marks the descriptors this process inherited beyond stdio
// close-on-exec, so that the resident, which outlives its asker, does not
// hold them: a hook's lock file held open by it would stop the next hook.
func closeInheritedOnExec() {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		for fd := 3; fd < 1024; fd++ {
			syscall.CloseOnExec(fd)
		}
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
