package testbin

import (
	"os/exec"
	"testing"
)

func TestExitCode(t *testing.T) {
	for _, c := range []struct {
		script string
		want   int
	}{{"exit 0", 0}, {"exit 3", 3}, {"kill -PIPE $$", -1}} {
		if got := ExitCode(t, exec.Command("sh", "-c", c.script).Run()); got != c.want {
			t.Errorf("%s: exit code %d, want %d", c.script, got, c.want)
		}
	}
}
