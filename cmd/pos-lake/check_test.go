package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/internal/seaweedtest"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/teamlake"
	"github.com/pos-lake/pos/load/teamlake/teamlaketest"
)

// pos-lake check, a process of its own that reads the lake's Iceberg
// metadata afresh, passes on a published lake and prints one line a
// table; with a data file deleted from the bucket it exits 1, naming the
// file on stdout and stderr.
func TestCheckProcess(t *testing.T) {
	s := seaweedtest.Start(t)
	local := t.TempDir()
	loadtest.Load(t, local, teamlaketest.Messages(1, 12)...)
	shared := "s3://" + s.TableBucket + "/team"
	env := append(os.Environ(), s.Env()...)
	run := func(args ...string) (stdout, stderr string, err error) {
		cmd := exec.Command(filepath.Join(binDir, "pos-lake"), append(args, "--lake", shared, "--catalog", s.Catalog)...)
		cmd.Env = env
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		err = cmd.Run()
		return o.String(), e.String(), err
	}
	if out, errOut, err := run("publish", "--local-lake", local, "--machine", "box", "--table", layout.TableMessages); err != nil {
		t.Fatalf("publish: %v\n%s%s", err, out, errOut)
	}

	out, errOut, err := run("check")
	if err != nil {
		t.Fatalf("check: %v\n%s%s", err, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(teamlake.Tables) {
		t.Fatalf("check printed %d lines, want one a table:\n%s", len(lines), out)
	}
	var rep teamlake.CheckReport
	if err := json.Unmarshal([]byte(lines[0]), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Table != layout.TableMessages || !rep.Exists || rep.Rows != 12 || rep.Files == 0 || len(rep.Problems) != 0 {
		t.Errorf("messages: %+v, want 12 rows and no problem", rep)
	}

	s.Setenv(t)
	l, err := teamlake.Open(context.Background(), teamlake.Options{Lake: shared, Catalog: s.Catalog})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := l.Table(context.Background(), layout.TableMessages)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	gone := tasks[len(tasks)-1].File.FilePath()
	teamlaketest.DeleteObject(t, gone)
	out, errOut, err = run("check", "--table", layout.TableMessages)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("check with %s deleted: %v, want exit 1\n%s%s", gone, err, out, errOut)
	}
	if !strings.Contains(out, `"data file `+gone+`: missing from the bucket"`) {
		t.Errorf("stdout does not name %s as missing:\n%s", gone, out)
	}
	if !strings.HasPrefix(errOut, "pos-lake: the shared lake has problems: messages: data file "+gone+": missing from the bucket") {
		t.Errorf("stderr: %s", errOut)
	}
}
