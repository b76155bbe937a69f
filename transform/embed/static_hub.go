package embed

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pos-lake/pos/internal/lazyre"
)

// DefaultHubEndpoint is the Hugging Face hub's address.
const DefaultHubEndpoint = "https://huggingface.co"

var modelNameRe = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ValidModelName checks a hub model name: org/name, letters, digits,
// '.', '_' and '-'.
func ValidModelName(name string) error {
	if !modelNameRe().MatchString(name) || strings.Contains(name, "..") {
		return fmt.Errorf("%q is not a hub model name (org/name, e.g. minishlab/potion-retrieval-32M)", name)
	}
	return nil
}

// PullOptions configure Pull.
type PullOptions struct {
	// Endpoint is the hub's base URL (default DefaultHubEndpoint).
	Endpoint string
	// Token, when set, is sent as a bearer token to the hub (not to the
	// hosts it redirects downloads to).
	Token string
	// Client makes the requests (default: one with no overall timeout,
	// as a model is large, and a 30 s wait for each answer).
	Client *http.Client
	// Progress, when set, is told of each file as it starts.
	Progress func(file string, size int64)
}

// PulledModel is a model in the models directory.
type PulledModel struct {
	Name  string
	Dir   string
	Size  int64 // bytes of its files
	Dim   int
	Rows  int
	DType string
}

// Pull downloads a model2vec model (StaticFiles) from the hub into
// modelsDir/org/name. Files are fetched into modelsDir/org/.name.pull,
// where a cut download resumes from; each is checked against the size
// and SHA-256 the hub states for it (its X-Linked-Size and X-Linked-Etag,
// or Content-Length), and the model must load before the directory is
// renamed into place: the models directory never holds a partial model.
func Pull(ctx context.Context, modelsDir, name string, opt PullOptions) (*PulledModel, error) {
	if err := ValidModelName(name); err != nil {
		return nil, err
	}
	base := strings.TrimRight(opt.Endpoint, "/")
	if base == "" {
		base = DefaultHubEndpoint
	}
	client := opt.Client
	if client == nil {
		client = &http.Client{Transport: &http.Transport{
			Proxy: http.ProxyFromEnvironment, ResponseHeaderTimeout: 30 * time.Second, TLSHandshakeTimeout: 30 * time.Second,
		}}
	}
	org, short, _ := strings.Cut(name, "/")
	final := filepath.Join(modelsDir, org, short)
	work := filepath.Join(modelsDir, org, "."+short+".pull")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	// One pull of a model at a time: two would write the same files.
	lock, err := os.OpenFile(work+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil, fmt.Errorf("%s: another pull of it is under way", name)
	}
	defer os.Remove(work + ".lock")
	// The hub redirects a large file's download to a signed URL on
	// another host: the token goes to the hub's own host only (Go's
	// client alone would send it on to the hub's subdomains).
	c := *client
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if req.URL.Host != via[0].URL.Host {
			req.Header.Del("Authorization")
		}
		return nil
	}
	h := hub{base: base, token: opt.Token, client: &c}
	for _, f := range StaticFiles {
		if err := h.fetch(ctx, name, f, filepath.Join(work, f), opt.Progress); err != nil {
			return nil, err
		}
	}
	m, err := LoadStatic(work, name)
	if err != nil {
		os.RemoveAll(work)
		return nil, fmt.Errorf("%s: the files downloaded are not a model2vec model: %w", name, err)
	}
	// Into place: an older copy is moved aside first and removed after.
	old := ""
	if _, err := os.Stat(final); err == nil {
		old = filepath.Join(modelsDir, org, "."+short+".old-"+randHex())
		if err := os.Rename(final, old); err != nil {
			return nil, err
		}
	}
	if err := os.Rename(work, final); err != nil {
		if old != "" {
			os.Rename(old, final)
		}
		return nil, err
	}
	if old != "" {
		os.RemoveAll(old)
	}
	return describe(final, name, m), nil
}

func describe(dir, name string, m *Static) *PulledModel {
	p := &PulledModel{Name: name, Dir: dir}
	for _, f := range StaticFiles {
		if st, err := os.Stat(filepath.Join(dir, f)); err == nil {
			p.Size += st.Size()
		}
	}
	if m != nil {
		p.Dim, p.Rows = m.dim, m.rows
	}
	return p
}

func randHex() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

type hub struct {
	base   string
	token  string
	client *http.Client
}

// fileMeta is what the hub states of a file before it is fetched.
type fileMeta struct {
	size   int64  // -1: not stated
	sha256 string // "" for files not in LFS (their ETag is a git hash)
}

func (h hub) url(name, file string) string {
	return h.base + "/" + name + "/resolve/main/" + file
}

func (h hub) request(ctx context.Context, method, url string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return nil, err
	}
	if h.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	req.Header.Set("User-Agent", "pos-embed")
	return req, nil
}

// meta asks the hub for a file's size and hash without following its
// redirect, whose answer carries X-Linked-Size and X-Linked-Etag for
// files kept in LFS.
func (h hub) meta(ctx context.Context, name, file string) (fileMeta, error) {
	req, err := h.request(ctx, http.MethodHead, h.url(name, file))
	if err != nil {
		return fileMeta{}, err
	}
	c := *h.client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := c.Do(req)
	if err != nil {
		return fileMeta{}, h.netErr(name, file, err)
	}
	res.Body.Close()
	if res.StatusCode >= 400 {
		return fileMeta{}, h.statusErr(name, file, res)
	}
	m := fileMeta{size: -1}
	if s := res.Header.Get("X-Linked-Size"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
			m.size = n
		}
	} else if res.StatusCode == http.StatusOK && res.ContentLength >= 0 {
		m.size = res.ContentLength
	}
	if e := strings.Trim(strings.TrimPrefix(res.Header.Get("X-Linked-Etag"), "W/"), `"`); len(e) == 64 {
		if _, err := hex.DecodeString(e); err == nil {
			m.sha256 = strings.ToLower(e)
		}
	}
	return m, nil
}

// fetch downloads one file to dst, resuming dst+".part" when the server
// honours a range, and checks it; dst is left only when complete.
func (h hub) fetch(ctx context.Context, name, file, dst string, progress func(string, int64)) error {
	meta, err := h.meta(ctx, name, file)
	if err != nil {
		return err
	}
	if st, err := os.Stat(dst); err == nil && (meta.size < 0 || st.Size() == meta.size) && h.verify(dst, meta) == nil {
		return nil // fetched by an earlier, interrupted pull
	}
	os.Remove(dst)
	part := dst + ".part"
	var have int64
	if st, err := os.Stat(part); err == nil {
		have = st.Size()
		if meta.size >= 0 && have > meta.size {
			os.Remove(part)
			have = 0
		}
	}
	if progress != nil {
		progress(file, meta.size)
	}
	req, err := h.request(ctx, http.MethodGet, h.url(name, file))
	if err != nil {
		return err
	}
	if have > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", have))
	}
	res, err := h.client.Do(req)
	if err != nil {
		return h.netErr(name, file, err)
	}
	defer res.Body.Close()
	flags := os.O_CREATE | os.O_WRONLY
	switch {
	case res.StatusCode == http.StatusPartialContent && have > 0:
		flags |= os.O_APPEND
	case res.StatusCode == http.StatusRequestedRangeNotSatisfiable && have > 0:
		// The part is whole, or bad: checked below, or fetched again.
		res.Body.Close()
		if err := os.Rename(part, dst); err != nil {
			return err
		}
		if err := h.verify(dst, meta); err != nil {
			os.Remove(dst)
			return err
		}
		return nil
	case res.StatusCode == http.StatusOK:
		flags |= os.O_TRUNC
		if meta.size < 0 && res.ContentLength >= 0 {
			meta.size = res.ContentLength
		}
	default:
		return h.statusErr(name, file, res)
	}
	f, err := os.OpenFile(part, flags, 0o644)
	if err != nil {
		return err
	}
	_, cerr := io.Copy(f, res.Body)
	if err := f.Close(); cerr == nil {
		cerr = err
	}
	if cerr != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%s: %s: download cut: %v (pull again to resume)", name, file, cerr)
	}
	if err := h.verify(part, meta); err != nil {
		os.Remove(part)
		return err
	}
	return os.Rename(part, dst)
}

// verify checks a downloaded file's size and SHA-256 against the hub's.
func (h hub) verify(path string, meta fileMeta) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sum := sha256.New()
	n, err := io.Copy(sum, f)
	if err != nil {
		return err
	}
	file := filepath.Base(strings.TrimSuffix(path, ".part"))
	if meta.size >= 0 && n != meta.size {
		return fmt.Errorf("%s: %d bytes downloaded, the hub states %d", file, n, meta.size)
	}
	if meta.sha256 != "" {
		if got := hex.EncodeToString(sum.Sum(nil)); got != meta.sha256 {
			return fmt.Errorf("%s: SHA-256 %s, the hub states %s", file, got, meta.sha256)
		}
	}
	return nil
}

func (h hub) statusErr(name, file string, res *http.Response) error {
	switch res.StatusCode {
	case http.StatusNotFound:
		return fmt.Errorf("%s: %s not found at %s (HTTP 404): check the model name", name, file, h.base)
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("%s: %s refused (HTTP %d): a gated or private model needs $HF_TOKEN", name, h.base, res.StatusCode)
	}
	return fmt.Errorf("%s: %s: %s answered HTTP %d", name, file, h.base, res.StatusCode)
}

func (h hub) netErr(name, file string, err error) error {
	if errors.Is(err, context.Canceled) {
		return context.Canceled
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("%s: %s: cannot reach %s: %v", name, file, h.base, err)
}

// ListModels returns the models in modelsDir (org/name directories with
// the files of a model2vec model), by name.
func ListModels(modelsDir string) ([]PulledModel, error) {
	orgs, err := os.ReadDir(modelsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []PulledModel
	for _, o := range orgs {
		if !o.IsDir() || strings.HasPrefix(o.Name(), ".") {
			continue
		}
		names, err := os.ReadDir(filepath.Join(modelsDir, o.Name()))
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			name := o.Name() + "/" + n.Name()
			if !n.IsDir() || strings.HasPrefix(n.Name(), ".") || ValidModelName(name) != nil {
				continue
			}
			dir := filepath.Join(modelsDir, o.Name(), n.Name())
			p := describe(dir, name, nil)
			if b, err := readTensorHeader(filepath.Join(dir, "model.safetensors")); err == nil {
				p.Rows, p.Dim, p.DType = b.rows, b.dim, b.dtype
			} else {
				p.DType = "incomplete: " + err.Error()
			}
			out = append(out, *p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

type headerInfo struct {
	rows, dim int
	dtype     string
}

// readTensorHeader reads the embeddings' shape from a safetensors header
// without reading the data.
func readTensorHeader(path string) (headerInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return headerInfo{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return headerInfo{}, err
	}
	var n [8]byte
	if _, err := io.ReadFull(f, n[:]); err != nil {
		return headerInfo{}, fmt.Errorf("model.safetensors: %w", err)
	}
	size := uint64(n[0]) | uint64(n[1])<<8 | uint64(n[2])<<16 | uint64(n[3])<<24 | uint64(n[4])<<32 | uint64(n[5])<<40 | uint64(n[6])<<48 | uint64(n[7])<<56
	if size > 100<<20 || int64(size)+8 > st.Size() {
		return headerInfo{}, errors.New("model.safetensors: bad header")
	}
	hdr := make([]byte, size)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return headerInfo{}, err
	}
	return parseHeaderInfo(hdr)
}
