package enrich

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/pos-lake/pos/schema"
)

func TestShellFiles(t *testing.T) {
	for _, tc := range []struct {
		script string
		want   []string // action:path
	}{
		{`cat README.md`, []string{"read:README.md"}},
		{`sed -n '1,200p' src/lib.rs`, []string{"read:src/lib.rs"}},
		{`sed -i 's/a/b/' a.go b.go`, []string{"edit:a.go", "edit:b.go"}},
		{`sed -i '' -e 's/a/b/' a.go`, []string{"edit:a.go"}},
		{`head -n 50 "docs/design notes.md" | grep -n TODO`, []string{"read:docs/design notes.md"}},
		{`tail -20 log.txt`, []string{"read:log.txt"}},
		{`rg -n "func main" cmd/ --glob '*.go'`, []string{"search:cmd/"}},
		{`rg -e foo -e bar internal`, []string{"search:internal"}},
		{`grep -rn TODO src lib 2>/dev/null`, []string{"search:src", "search:lib"}},
		{`find ./extract -name '*.go' -newer go.mod`, []string{"search:./extract"}},
		{`ls -la /etc/nginx && cat /etc/nginx/nginx.conf`, []string{"search:/etc/nginx", "read:/etc/nginx/nginx.conf"}},
		{`echo hi > out.txt; echo more >> out.txt`, []string{"write:out.txt", "write:out.txt"}},
		{`wc -l < input.csv`, []string{"read:input.csv"}},
		{`rm -rf build dist`, []string{"delete:build", "delete:dist"}},
		{`mv old.go new.go`, []string{"delete:old.go", "write:new.go"}},
		{`cp a.txt b.txt /tmp/out/`, []string{"read:a.txt", "read:b.txt", "write:/tmp/out/"}},
		{`touch new_file.py && sudo tee /etc/hosts`, []string{"write:new_file.py", "write:/etc/hosts"}},
		{`cd api && go test ./... 2>&1 | tail -30`, nil},
		{`cat "$FILE" ${HOME}/x *.go ~/notes.md -`, nil},
		{`for f in a.go b.go; do cat $f; done`, nil},
		{`cat <<'EOF' > main.go
package main
EOF`, []string{"write:main.go"}},
		{`if [ -f go.mod ]; then cat go.mod; fi`, []string{"read:go.mod"}},
		{`echo $(cat VERSION)`, []string{"read:VERSION"}},
		{`git diff HEAD~1 -- a.go && npm test`, nil},
		{`cat 'unterminated`, nil},
	} {
		var got []string
		for _, f := range shellFiles(tc.script) {
			got = append(got, f.action+":"+f.path)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s\n got  %q\n want %q", tc.script, got, tc.want)
		}
	}
}

// FileRefs reads the shell calls of every platform, relative to the tool's
// working directory when it names one, else to the message's cwd.
func TestFileRefsShell(t *testing.T) {
	for _, tc := range []struct {
		tool, input string
		want        []string
	}{
		{"Bash", `{"command":"cat go.mod && rg -n Open load/","description":"look"}`, []string{"read:/w/app/go.mod", "search:/w/app/load"}},
		{"exec_command", `{"cmd":"sed -n '1,80p' src/main.rs","workdir":"/home/dev/api"}`, []string{"read:/home/dev/api/src/main.rs"}},
		{"shell", `{"command":["bash","-lc","nl -ba lib.py | head"],"workdir":"/srv"}`, []string{"read:/srv/lib.py"}},
		{"shell", `{"command":["cat","/etc/os-release"]}`, []string{"read:/etc/os-release"}},
		{"local_shell", `{"type":"exec","command":["rm","tmp.txt"],"working_directory":"/x"}`, []string{"delete:/x/tmp.txt"}},
		{"run_shell_command", `{"command":"ls docs"}`, []string{"search:/w/app/docs"}},
		{"run_terminal_cmd", `{"command":"npm list prettier","is_background":"False"}`, nil},
	} {
		m := schema.New(schema.KindMessage)
		m.ID, m.Cwd, m.Role = "m1", "/w/app", schema.RoleAssistant
		m.Tools = []schema.Tool{{Name: tc.tool, Input: json.RawMessage(tc.input)}}
		var got []string
		for _, r := range FileRefs(testFast, m) {
			if r.Tool != tc.tool {
				t.Errorf("%s: tool %q", tc.tool, r.Tool)
			}
			got = append(got, fmt.Sprintf("%s:%s", r.Action, r.Path))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s %s\n got  %q\n want %q", tc.tool, tc.input, got, tc.want)
		}
	}
}

// Any command text: no panic, and every file named is a plausible path.
func FuzzShellFiles(f *testing.F) {
	for _, s := range []string{
		`cat README.md`, `sed -i '' -e 's/a/b/' a.go`, `rg -n "x" cmd/ --glob '*.go'`,
		`cat <<'EOF' > main.go
x
EOF`, `find . -name '*.go' | xargs grep -l TODO`, `cp a b c/`, `echo $(cat V) > out 2>&1`,
		`for f in *.go; do head -n 5 "$f"; done`, `((x++)); [[ -f a ]] && rm -f -- a`, "cat '\x00'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		for _, p := range shellFiles(script) {
			if !plausiblePath(p.path) || p.action == "" {
				t.Fatalf("%q: %+v", script, p)
			}
		}
		m := schema.New(schema.KindMessage)
		in, _ := json.Marshal(map[string]string{"command": script, "workdir": "/w"})
		m.Tools = []schema.Tool{{Name: "Bash", Input: in}}
		FileRefs(testFast, m)
	})
}
