package cursor

import (
	"bufio"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/extracttest"
	"github.com/pos-lake/pos/internal/watermark"
	"github.com/pos-lake/pos/schema"
)

// The live-database test: another process holds the global database open
// and keeps committing while the adapter reads it, as Cursor does.

const writerEnv = "POS_CURSOR_TEST_WRITER" // "<journal mode>:<path>" in the writer process

// cLive is the composer the writer process keeps adding to.
const cLive = "cccccccc-cccc-4ccc-8ccc-cccccccccccc"

// maxLiveHeaders caps the live composer's order, so its composerData row
// stays small; older bubbles fall out of the order (and are read raw).
const maxLiveHeaders = 300

// TestWriterProcess is the writer, run as a separate process by
// TestConcurrentWriter. It commits a few bubbles and the composer's order
// in one transaction, again and again. On "stop" it stops writing (and
// keeps the database open) and prints how many bubbles it wrote; on "quit"
// it closes the database and exits.
func TestWriterProcess(t *testing.T) {
	spec := os.Getenv(writerEnv)
	if spec == "" {
		t.Skip("the writer process of TestConcurrentWriter")
	}
	mode, path, _ := strings.Cut(spec, ":")
	db, err := sql.Open("sqlite", sqliteURI(path, "_pragma=journal_mode("+mode+")&_pragma=busy_timeout(5000)"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	cmds := make(chan string)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			cmds <- sc.Text()
		}
		close(cmds)
	}()
	n := 0
	var headers []obj
	writing := true
	for {
		select {
		case c, ok := <-cmds:
			switch {
			case !ok || c == "quit":
				db.Close()
				return
			case c == "stop":
				writing = false
				fmt.Printf("stopped %d\n", n)
			}
			continue
		default:
		}
		if !writing {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			n++
			id := "w" + strconv.Itoa(n)
			typ := 2
			if n%3 == 1 {
				typ = 1
			}
			headers = append(headers, obj{"bubbleId": id, "type": typ})
			if _, err := tx.Exec(`INSERT INTO cursorDiskKV VALUES (?, ?)`, "bubbleId:"+cLive+":"+id,
				js(obj{"_v": 2, "type": typ, "bubbleId": id, "text": strings.Repeat("words ", 50) + id})); err != nil {
				t.Fatal(err)
			}
		}
		if len(headers) > maxLiveHeaders {
			headers = headers[len(headers)-maxLiveHeaders:]
		}
		if _, err := tx.Exec(`INSERT INTO cursorDiskKV VALUES (?, ?)`, "composerData:"+cLive,
			js(obj{"_v": 3, "composerId": cLive, "name": "Live", "createdAt": ms(0, 0), "fullConversationHeadersOnly": headers})); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if n == 3 {
			fmt.Println("ready")
		}
		time.Sleep(time.Millisecond)
	}
}

// sumFiles hashes a database and its -wal. (The -shm index is shared
// memory that every reader updates; it holds no data.)
func sumFiles(t *testing.T, path string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	for _, p := range []string{path, path + "-wal", path + "-journal"} {
		b, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = sha256.Sum256(b)
	}
	return out
}

func TestConcurrentWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a writer process")
	}
	for _, mode := range []string{"wal", "delete"} {
		t.Run(mode, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "globalStorage", dbName)
			writeDB(t, path, true, globalRows())
			cmd := exec.Command(os.Args[0], "-test.run=^TestWriterProcess$")
			cmd.Env = append(os.Environ(), writerEnv+"="+mode+":"+path)
			cmd.Stderr = os.Stderr
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Wait()
			defer stdin.Close()
			watchdog := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
			defer watchdog.Stop()
			lines := bufio.NewScanner(stdout)
			expect := func(prefix string) string {
				t.Helper()
				for lines.Scan() {
					if strings.HasPrefix(lines.Text(), prefix) {
						return lines.Text()
					}
				}
				t.Fatalf("writer ended before %q: %v", prefix, lines.Err())
				return ""
			}
			expect("ready")

			// Reads while the writer commits: no error, no skip, and every
			// read is consistent (each bubble in the order has its body,
			// since both are written in one transaction).
			reads, grew := 0, 0
			last := 0
			for start := time.Now(); time.Since(start) < 2*time.Second || reads < 5; reads++ {
				res := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{path}})
				// (The fixture's composer that is not JSON is the one skip.)
				if len(res.Skips) != 1 || res.Skips[0].Key != "cursorDiskKV:composerData:"+cBad {
					t.Fatalf("read %d while writing: %v", reads, res.Skips)
				}
				live := find(res.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindMessage && r.SessionID == cLive })
				for _, m := range live {
					if m.Completeness != schema.CompleteFull {
						t.Fatalf("read %d: torn snapshot, bubble %s has no body", reads, m.NativeID)
					}
				}
				if len(live) == 0 || len(find(res.Recs, func(r *schema.Record) bool { return r.SessionID == cKV && r.Kind == schema.KindMessage })) != 11 {
					t.Fatalf("read %d: %d live messages", reads, len(live))
				}
				n, _ := strconv.Atoi(strings.TrimPrefix(live[len(live)-1].NativeID, "w"))
				if n > last {
					grew++
				}
				last = n
			}
			t.Logf("%s: %d reads while writing, %d saw new bubbles", mode, reads, grew)
			if grew < 2 {
				t.Fatalf("the writer did not write during the reads (%d)", grew)
			}

			// The writer stops (its connection stays open): a read does not
			// change a byte of the database or its -wal, and sees every
			// committed bubble.
			fmt.Fprintln(stdin, "stop")
			fields := strings.Fields(expect("stopped"))
			written, _ := strconv.Atoi(fields[1])
			before := sumFiles(t, path)
			res := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{path}, State: watermark.NewState()})
			after := sumFiles(t, path)
			if len(before) == 0 || fmt.Sprint(before) != fmt.Sprint(after) {
				t.Fatalf("the read changed the database: %x -> %x", before, after)
			}
			if mode == "wal" && before["state.vscdb-wal"] == [32]byte{} {
				t.Fatal("no -wal file while the writer holds the database open in WAL mode")
			}
			live := find(res.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindMessage && r.SessionID == cLive })
			raws := find(res.Recs, func(r *schema.Record) bool {
				return r.Kind == schema.KindRaw && r.SessionID == cLive && strings.HasPrefix(r.Source.Key, "cursorDiskKV:bubbleId:")
			})
			if len(live) != min(written, maxLiveHeaders) || len(raws) != written || live[len(live)-1].NativeID != "w"+strconv.Itoa(written) {
				t.Fatalf("after the writer stopped: %d messages, %d bubble rows, want %d written", len(live), len(raws), written)
			}
			fmt.Fprintln(stdin, "quit")
		})
	}
}
