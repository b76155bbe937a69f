// Package seaweedtest runs a real SeaweedFS server for the tests of the
// team lake: S3 and an Iceberg REST catalog on loopback, on free ports, in
// a temporary directory, stopped when the test ends. The binary is the one
// pipelines/seaweedfs.sh builds (or $POS_WEED); without it the test skips,
// saying so.
//
// It is imported by tests only.
package seaweedtest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Version is the SeaweedFS module version pipelines/seaweedfs.sh builds; the
// binary is cached under a directory named after it.
const Version = "v0.0.0-20261109003541-7506e5f91cd6"

// The credentials the server is started with: the S3 admin identity, which
// also signs the catalog's requests.
const (
	AccessKey = "pos-test-access"
	SecretKey = "pos-test-secret-key-0123456789"
	Region    = "us-east-1"
)

// Server is a running SeaweedFS.
type Server struct {
	S3          string // S3 endpoint, http://127.0.0.1:PORT
	Catalog     string // Iceberg REST catalog, http://127.0.0.1:PORT
	Bucket      string // an ordinary bucket created at start
	TableBucket string // the S3 Tables bucket the catalog serves (warehouse s3://TableBucket)
	Dir         string // the server's data directory
	metrics     string
}

// Binary returns the weed binary's path: $POS_WEED, else the cached build
// of Version, else "" when neither exists.
func Binary() string {
	if p := os.Getenv("POS_WEED"); p != "" {
		return p
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	p := filepath.Join(cache, "pos", "seaweedfs-"+Version, "weed")
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
		return p
	}
	return ""
}

// Start runs a server for the test and stops it at the test's end. It
// skips the test when there is no binary (see Binary).
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		t.Skip("no SeaweedFS binary: run pipelines/seaweedfs.sh (or set POS_WEED) to run the team-lake tests")
	}
	dir := t.TempDir()
	ports := freePorts(t, 14)
	s := &Server{
		S3:          "http://127.0.0.1:" + strconv.Itoa(ports[0]),
		Catalog:     "http://127.0.0.1:" + strconv.Itoa(ports[1]),
		Bucket:      "team",
		TableBucket: "tables",
		Dir:         dir,
		metrics:     "http://127.0.0.1:" + strconv.Itoa(ports[2]) + "/metrics",
	}
	args := []string{"mini",
		"-dir=" + dir, "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-bucket=" + s.Bucket, "-tableBucket=" + s.TableBucket,
		"-s3.port=" + strconv.Itoa(ports[0]), "-s3.port.iceberg=" + strconv.Itoa(ports[1]),
		"-metricsPort=" + strconv.Itoa(ports[2]), "-metricsIp=127.0.0.1",
		"-master.port=" + strconv.Itoa(ports[3]), "-master.port.grpc=" + strconv.Itoa(ports[4]),
		"-filer.port=" + strconv.Itoa(ports[5]), "-filer.port.grpc=" + strconv.Itoa(ports[6]),
		"-volume.port=" + strconv.Itoa(ports[7]), "-volume.port.grpc=" + strconv.Itoa(ports[8]),
		"-s3.port.grpc=" + strconv.Itoa(ports[9]), "-s3.port.lance=" + strconv.Itoa(ports[10]),
		"-admin.port=" + strconv.Itoa(ports[11]), "-admin.port.grpc=" + strconv.Itoa(ports[12]),
		"-webdav.port=" + strconv.Itoa(ports[13]),
		"-webdav=false", "-admin.ui=false", "-master.telemetry=false",
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+AccessKey, "AWS_SECRET_ACCESS_KEY="+SecretKey)
	log, err := os.Create(filepath.Join(dir, "weed.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting SeaweedFS: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		log.Close()
	})
	if err := s.wait(done, 90*time.Second); err != nil {
		tail, _ := os.ReadFile(log.Name())
		t.Fatalf("SeaweedFS did not start: %v\n%s", err, lastLines(string(tail), 30))
	}
	return s
}

// wait polls until the S3 endpoint and the catalog answer and an object
// can be stored: S3 answers before the volume server has registered, and
// a write then fails.
func (s *Server) wait(done <-chan error, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	ready := s.S3 + "/" + s.Bucket + "/.pos-ready"
	for {
		select {
		case err := <-done:
			return fmt.Errorf("it exited: %v", err)
		default:
		}
		if answers(http.MethodGet, s.S3+"/", nil, false) && answers(http.MethodGet, s.Catalog+"/v1/"+s.TableBucket+"/namespaces", nil, true) &&
			answers(http.MethodPut, ready, []byte("ready"), true) && answers(http.MethodDelete, ready, nil, true) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer from %s and %s, or no object stored, in %s", s.S3, s.Catalog, limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// answers tells whether url answers a request with body; signed, the
// request is signed as the catalog's clients sign theirs and must
// succeed: the catalog answers before its table bucket exists.
func answers(method, url string, body []byte, signed bool) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return false
	}
	if signed {
		creds := aws.Credentials{AccessKeyID: AccessKey, SecretAccessKey: SecretKey}
		sum := sha256.Sum256(body)
		hash := hex.EncodeToString(sum[:])
		req.Header.Set("X-Amz-Content-Sha256", hash)
		if err := v4.NewSigner().SignHTTP(ctx, creds, req, hash, "s3", Region, time.Now()); err != nil {
			return false
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	if signed {
		return resp.StatusCode/100 == 2
	}
	return resp.StatusCode < 500
}

// Env is the AWS SDK's standard configuration for the server, for a
// command the test runs.
func (s *Server) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + AccessKey, "AWS_SECRET_ACCESS_KEY=" + SecretKey,
		"AWS_REGION=" + Region, "AWS_ENDPOINT_URL_S3=" + s.S3,
	}
}

var requestLine = regexp.MustCompile(`^SeaweedFS_s3_request_total\{([^}]*)\} ([0-9.e+]+)$`)

// Requests returns the S3 requests the server has answered, by action
// (GetObject, PutObject, HeadObject, ListObjectsV2, ...), from its
// Prometheus counters.
func (s *Server) Requests(t testing.TB) map[string]int {
	t.Helper()
	resp, err := http.Get(s.metrics)
	if err != nil {
		t.Fatalf("reading SeaweedFS's metrics: %v", err)
	}
	defer resp.Body.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := requestLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		action := ""
		for _, kv := range strings.Split(m[1], ",") {
			if v, ok := strings.CutPrefix(kv, `type="`); ok {
				action = strings.TrimSuffix(v, `"`)
			}
		}
		n, _ := strconv.ParseFloat(m[2], 64)
		out[action] += int(n)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading SeaweedFS's metrics: %v", err)
	}
	return out
}

// freePorts reserves n distinct free loopback ports and releases them for
// the server to take.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Setenv points the AWS SDK's variables at the server for the rest of the
// test (see Env).
func (s *Server) Setenv(t testing.TB) {
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}
