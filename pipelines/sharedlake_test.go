package pipelines_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	claudecode "github.com/pos-lake/pos/extract/claudecode/about"
	"github.com/pos-lake/pos/internal/corpus"
	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/internal/seaweedtest"
	"github.com/pos-lake/pos/load/teamlake/teamlaketest"
)

// A lake published with pos-load --lake s3://… answers pos-query as the
// local lake that published it: the same stats, sessions, timeline, search
// hits and SQL results. A second identical query reads no object from the
// server. (The local lake is scrubbed with --pii, as publishing scrubs by
// default: scrubbing again changes nothing.)
func TestSharedLakeAnswersAsLocal(t *testing.T) {
	dir := corpus.Platform(t, claudecode.Name)
	s := seaweedtest.Start(t)
	tmp := t.TempDir()
	local, shared := filepath.Join(tmp, "local"), "s3://"+s.TableBucket+"/team"
	env := append(s.Env(), "POS_CATALOG="+s.Catalog, "POS_LOCAL_LAKE="+local, "XDG_CACHE_HOME="+filepath.Join(tmp, "cache"))
	mustSh(t, fmt.Sprintf("pos-extract -q --platform claude_code --root %q --full | pos-normalize -q | pos-scrub -q --pii | pos-embed -q | pos-load -q --lake %q",
		dir, shared), env...)
	queries := []string{
		"stats --format json",
		"stats --by model --format json",
		"sessions --limit 0 --format json",
		"timeline --limit 0 --format json",
		"search 'retry with backoff' --mode lexical -k 20 --format json",
		"search 'why did the build fail' --mode hybrid -k 20 --format json",
		"search 'parquet schema' --mode vector --min-similarity -1 -k 20 --format json",
		`sql --format json "SELECT role, count(*) AS n, sum(length(text)) AS chars FROM messages GROUP BY role ORDER BY role"`,
		`sql --format json "SELECT count(*) AS n, count(DISTINCT session_id) AS sessions FROM chunks"`,
	}
	for _, q := range queries {
		want := mustSh(t, "pos-query "+q+" --lake "+local, env...)
		got := mustSh(t, "pos-query "+q+" --lake "+shared, env...)
		if strings.TrimSpace(want) == "[]" || len(want) < 20 {
			t.Errorf("pos-query %s: the local lake's answer is empty: %q", q, want)
		}
		if got != want {
			t.Errorf("pos-query %s on the shared lake:\n%.2000s\nwant the local lake's:\n%.2000s", q, got, want)
		}
	}
	// pos-mcp given the shared lake answers its tools as on the local lake.
	mcpAnswers := func(lake string) []string {
		cmd := exec.Command(filepath.Join(binDir, "pos-mcp"), "--lake", lake)
		cmd.Env = append(os.Environ(), append([]string{"XDG_DATA_HOME=" + tmp}, env...)...)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "shared", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		var out []string
		for _, c := range []struct {
			name string
			args map[string]any
		}{
			{"stats", map[string]any{}},
			{"search", map[string]any{"query": "retry with backoff", "mode": "lexical"}},
			{"timeline", map[string]any{"limit": 20}},
		} {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args})
			if err != nil {
				t.Fatalf("pos-mcp --lake %s: %s: %v", lake, c.name, err)
			}
			b, _ := json.Marshal(res)
			if res.IsError {
				t.Fatalf("pos-mcp --lake %s: %s: %s", lake, c.name, b)
			}
			out = append(out, string(b))
		}
		return out
	}
	if got, want := mcpAnswers(shared), mcpAnswers(local); !slices.Equal(got, want) {
		t.Errorf("pos-mcp on the shared lake:\n%.3000s\nwant the local lake's:\n%.3000s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	before := s.Requests(t)
	mustSh(t, "pos-query stats --format json --lake "+shared, env...)
	after := s.Requests(t)
	if before["GET"] == 0 || after["GET"] != before["GET"] {
		t.Errorf("a repeated query: the server's GETs went from %d to %d, want no new one", before["GET"], after["GET"])
	}

	// pos-query ddl's DuckDB statements read a local copy of the bucket as
	// the local lake's views read its files; those of a local lake attach
	// its pos.duckdb.
	s.Setenv(t)
	bucket := filepath.Join(tmp, "bucket")
	teamlaketest.CopyBucket(t, s.TableBucket, bucket)
	const q = "SELECT count(*), count(DISTINCT id), sum(length(text)) FROM messages"
	want := loadtest.One(t, loadtest.Views(t, local), "SELECT concat_ws(' ', count(*), count(DISTINCT id), sum(length(text))) FROM messages")
	for _, c := range []struct{ name, args string }{
		{"shared", "--lake " + shared + " --root " + bucket},
		{"local", "--lake " + local},
	} {
		ddl := mustSh(t, "pos-query ddl --engine duckdb "+c.args, env...)
		db, err := sql.Open("duckdb", "?autoinstall_known_extensions=false&autoload_known_extensions=false")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(ddl); err != nil {
			t.Fatalf("the %s lake's ddl: %v\n%s", c.name, err, ddl)
		}
		var n, ids, chars int64
		if err := db.QueryRow(q).Scan(&n, &ids, &chars); err != nil {
			t.Fatalf("the %s lake's ddl: %v", c.name, err)
		}
		if got := fmt.Sprint(n, " ", ids, " ", chars); got != want {
			t.Errorf("messages through the %s lake's ddl: %s, want %s (the local lake's views)", c.name, got, want)
		}
	}
	for _, engine := range []string{"spark", "trino", "athena"} {
		out := mustSh(t, "pos-query ddl --engine "+engine+" --lake "+shared, env...)
		if !strings.Contains(out, "team") || !strings.Contains(out, s.TableBucket) || strings.Contains(out, seaweedtest.SecretKey) {
			t.Errorf("pos-query ddl --engine %s: want the namespace and warehouse, never the secret:\n%s", engine, out)
		}
	}
}
