package teamlake

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"

	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/scrub"
)

// What a machine publishes: the rows of its projects in scope, their text
// scrubbed again with personal data redacted (Options.PII), the raw table
// only when asked (Options.Raw). Each shared table records in its property
// ScrubProperty how its rows were scrubbed.

// ScrubProperty is the shared table's record of its rows' scrubbing: a
// JSON object {mark: rows}, the marks those of load.ScrubState (a
// schema.Scrub* value, load.ScrubNone, load.ScrubDeclared …), summed over
// every publish. It is set in the commit that adds the rows it counts.
const ScrubProperty = "pos.scrub"

// ScrubRecord reads a shared table's ScrubProperty; none when the table
// has no record (its rows came from a build that did not keep one).
func ScrubRecord(props iceberg.Properties) (map[string]int64, error) {
	m := map[string]int64{}
	v, ok := props[ScrubProperty]
	if !ok || v == "" {
		return m, nil
	}
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return nil, fmt.Errorf("table property %s: %w", ScrubProperty, err)
	}
	return m, nil
}

// MatchProject reports whether a project (the records' project column: a
// directory, or a name) matches pattern. A pattern with a slash is a
// path: it matches that directory and every directory below it, and its
// elements may be globs (path.Match: "/home/me/clients/*"). A pattern
// without one is a name: it matches a project with an element of that
// name anywhere in its path ("secret-repo" matches
// /home/me/secret-repo/tools), and may be a glob ("client-*"). A project
// "" matches nothing.
func MatchProject(pattern, project string) bool {
	pattern = strings.TrimSuffix(filepath.ToSlash(pattern), "/")
	project = strings.TrimSuffix(filepath.ToSlash(project), "/")
	if pattern == "" || project == "" {
		return false
	}
	if !strings.Contains(pattern, "/") {
		for _, el := range strings.Split(project, "/") {
			if ok, _ := path.Match(pattern, el); ok {
				return true
			}
		}
		return false
	}
	for p := project; ; {
		if ok, _ := path.Match(pattern, p); ok {
			return true
		}
		i := strings.LastIndexByte(p, '/')
		if i <= 0 {
			return false
		}
		p = p[:i]
	}
}

// CheckProjectPatterns returns the error of the first malformed pattern.
func CheckProjectPatterns(patterns []string) error {
	for _, p := range patterns {
		if strings.TrimSpace(p) == "" {
			return errors.New("an empty project pattern")
		}
		if _, err := path.Match(filepath.ToSlash(p), ""); err != nil {
			return fmt.Errorf("project pattern %q: %w", p, err)
		}
	}
	return nil
}

// ReadProjectList reads project patterns, one a line; blank lines and
// lines starting with # are skipped.
func ReadProjectList(r io.Reader) ([]string, error) {
	var out []string
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
		if errors.Is(err, io.EOF) {
			return out, CheckProjectPatterns(out)
		}
		if err != nil {
			return nil, err
		}
	}
}

// scoped reports whether Publish leaves rows out by project.
func (o *Options) scoped() bool { return len(o.OnlyProjects) > 0 || len(o.DenyProjects) > 0 }

// allowed reports whether a project's rows may be published.
func (o *Options) allowed(project string) bool {
	for _, p := range o.DenyProjects {
		if MatchProject(p, project) {
			return false
		}
	}
	if len(o.OnlyProjects) == 0 {
		return true
	}
	for _, p := range o.OnlyProjects {
		if MatchProject(p, project) {
			return true
		}
	}
	return false
}

// sessionProjects are the projects of the local lake's sessions, from its
// messages and sessions tables, by sessionKey. A row is judged by its own
// project and its session's: a table's row without a project (a document,
// a chunk of one) goes with its session, and a session that touched a
// denied project is left out whole.
func sessionProjects(ctx context.Context, local string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, name := range []string{layout.TableMessages, layout.TableSessions} {
		parts, err := layout.TablePartitions(local, name)
		if err != nil {
			return nil, err
		}
		for _, pk := range parts {
			files, err := layout.PartFiles(local, name, pk.Platform, pk.Date)
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				if err := readSessionProjects(ctx, f, out); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// readSessionProjects adds a part file's sessions' projects to out,
// reading its platform, session_id and project columns only.
func readSessionProjects(ctx context.Context, path string, out map[string][]string) error {
	pf, err := file.OpenParquetFile(path, false)
	if errors.Is(err, os.ErrNotExist) {
		return nil // compacted away since listed
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer pf.Close()
	var cols []int
	for _, c := range []string{"platform", "session_id", "project"} {
		i := pf.MetaData().Schema.ColumnIndexByName(c)
		if i < 0 {
			return fmt.Errorf("%s: no %s column", path, c)
		}
		cols = append(cols, i)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	rr, err := fr.GetRecordReader(ctx, cols, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		plat, sess, proj := stringCol(rec, "platform"), stringCol(rec, "session_id"), stringCol(rec, "project")
		if plat == nil || sess == nil || proj == nil {
			return fmt.Errorf("%s: platform, session_id and project are not strings", path)
		}
		for i := range int(rec.NumRows()) {
			p := proj.Value(i)
			if p == "" || proj.IsNull(i) {
				continue
			}
			k := sessionKey(plat.Value(i), sess.Value(i))
			if !slices.Contains(out[k], p) {
				out[k] = append(out[k], p)
			}
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func sessionKey(platform, session string) string { return platform + "\x00" + session }

// stringCol is a batch's string column of that name, nil if none.
func stringCol(rec arrow.RecordBatch, name string) *array.String {
	i := rec.Schema().FieldIndices(name)
	if len(i) != 1 {
		return nil
	}
	s, _ := rec.Column(i[0]).(*array.String)
	return s
}

// inScope filters out of recs the rows Options leave out, releasing recs;
// it returns the rest and the number left out. A row is in scope when its
// project and every project of its session are allowed; a row with
// neither is in scope unless OnlyProjects are set.
func (o *Options) inScope(ctx context.Context, recs []arrow.RecordBatch, sessions map[string][]string) ([]arrow.RecordBatch, int64, error) {
	defer release(recs)
	var total int64
	for _, rec := range recs {
		total += rec.NumRows()
	}
	out, kept, err := filterRows(ctx, recs, func(rec arrow.RecordBatch) (func(int) bool, error) {
		plat, sess, proj := stringCol(rec, "platform"), stringCol(rec, "session_id"), stringCol(rec, "project")
		if plat == nil {
			return nil, errors.New("no platform column")
		}
		return func(i int) bool {
			var projects []string
			if proj != nil && proj.IsValid(i) && proj.Value(i) != "" {
				projects = append(projects, proj.Value(i))
			}
			if sess != nil && sess.IsValid(i) {
				projects = append(projects, sessions[sessionKey(plat.Value(i), sess.Value(i))]...)
			}
			ok := len(projects) > 0 || len(o.OnlyProjects) == 0
			for _, p := range projects {
				ok = ok && o.allowed(p)
			}
			return ok
		}, nil
	})
	return out, total - kept, err
}

// keptColumns are the string columns a publish never scrubs: identity and
// structure, which the adapters make (ids, hashes, enums, model and tool
// names), not what a user or a tool wrote. Redacting them would break the
// shared lake's keys (id, content_hash: a record held once), its partitions
// (platform) or the joins between tables (session_id, parent_id, …). Every
// other string, list of strings and string in a list of structs is
// scrubbed: text, thinking, titles, prompts, responses, tool inputs and
// outputs, paths (cwd, source_path, files, path), project, user, machine,
// git_branch, labels, tags, pull_requests, meta, extra and the raw record.
// A nested column is named by its path: tools.name.
var keptColumns = map[string]bool{
	"id": true, "content_hash": true, "platform": true, "session_id": true, "parent_id": true,
	"prompt_id": true, "last_id": true, "exchange_id": true, "message_id": true, "request_id": true,
	"native_id": true, "native_type": true, "plan_id": true, "source_key": true, "agent_id": true,
	"agent_type": true, "ts_precision": true, "role": true, "content_type": true, "kind": true,
	"completeness": true, "status": true, "action": true, "title_source": true, "adapter": true,
	"adapter_version": true, "source_altered": true, "model": true, "models": true, "models.model": true,
	"tool": true, "tools": true, "tools.name": true, "tools.call_id": true, "commits": true, "patterns": true,
}

// scrubBatch returns rec with every string of its scrubbed columns passed
// through s.Field, and the number of redactions.
func scrubBatch(s *scrub.Scrubber, rec arrow.RecordBatch) (arrow.RecordBatch, int64) {
	var n int64
	cols := make([]arrow.Array, rec.NumCols())
	for i, f := range rec.Schema().Fields() {
		d := scrubData(s, f.Name, f.Name, rec.Column(i).Data(), &n)
		cols[i] = array.MakeFromData(d)
		d.Release()
	}
	out := array.NewRecordBatch(rec.Schema(), cols, rec.NumRows())
	for _, c := range cols {
		c.Release()
	}
	return out, n
}

// scrubData returns d with its strings scrubbed, recursing into lists and
// structs; what it returns is to be released. top is the column's name,
// the member the scrubber sees the value under; name is the nested path.
func scrubData(s *scrub.Scrubber, top, name string, d arrow.ArrayData, n *int64) arrow.ArrayData {
	if keptColumns[name] {
		d.Retain()
		return d
	}
	switch d.DataType().ID() {
	case arrow.STRING, arrow.BINARY:
		a := array.MakeFromData(d)
		defer a.Release()
		return scrubStrings(s, top, a, n)
	case arrow.LIST, arrow.STRUCT:
		var children []arrow.ArrayData
		for i, c := range d.Children() {
			cn := name
			if st, ok := d.DataType().(*arrow.StructType); ok {
				cn = name + "." + st.Field(i).Name
			}
			children = append(children, scrubData(s, top, cn, c, n))
		}
		out := array.NewData(d.DataType(), d.Len(), d.Buffers(), children, d.NullN(), d.Offset())
		for _, c := range children {
			c.Release()
		}
		return out
	}
	d.Retain()
	return d
}

// scrubStrings rebuilds a string or binary array with its values scrubbed.
func scrubStrings(s *scrub.Scrubber, top string, a arrow.Array, n *int64) arrow.ArrayData {
	b := array.NewBuilder(memory.DefaultAllocator, a.DataType())
	defer b.Release()
	b.Reserve(a.Len())
	for i := range a.Len() {
		if a.IsNull(i) {
			b.AppendNull()
			continue
		}
		var v string
		switch x := a.(type) {
		case *array.String:
			v = x.Value(i)
		case *array.Binary:
			v = string(x.Value(i))
		}
		out, k := s.Field(top, v)
		*n += int64(k)
		switch bb := b.(type) {
		case *array.StringBuilder:
			bb.Append(out)
		case *array.BinaryBuilder:
			bb.AppendString(out)
		}
	}
	arr := b.NewArray()
	defer arr.Release()
	d := arr.Data()
	d.Retain()
	return d
}

// markRank orders the marks of load.ScrubState from the least scrubbed.
func markRank(mark string) int {
	switch mark {
	case schema.ScrubOff:
		return 1
	case load.ScrubDeclared:
		return 2
	case schema.ScrubSecrets:
		return 3
	case schema.ScrubPII:
		return 4
	}
	return 0 // load.ScrubNone, load.ScrubUnknown, a mark this build does not know
}

// checkScrubbed refuses a table whose local rows were not all scrubbed
// (marks load.ScrubNone, load.ScrubUnknown, schema.ScrubOff, or a table
// the scrub state does not name) unless the publish scrubs them itself.
// It returns the weakest mark of the table's local rows.
func checkScrubbed(st *load.ScrubState, name string, pii bool) (string, error) {
	m := st.Tables[name]
	if len(m) == 0 {
		m = map[string]int64{load.ScrubUnknown: 0}
	}
	weakest := slices.MinFunc(slices.Sorted(maps.Keys(m)), func(a, b string) int { return markRank(a) - markRank(b) })
	if pii || markRank(weakest) > markRank(schema.ScrubOff) {
		return weakest, nil
	}
	var what string
	switch weakest {
	case load.ScrubUnknown:
		what = "rows of unknown scrubbing"
	case schema.ScrubOff:
		what = fmt.Sprintf("%d rows not scrubbed (pos-scrub --off)", m[schema.ScrubOff])
	default:
		what = fmt.Sprintf("%d rows never scrubbed", m[weakest])
	}
	return "", fmt.Errorf("the local %s table holds %s; publish with --pii (Options.PII) to scrub them as they are sent", name, what)
}

// addedMarks counts the marks of the rows a publish adds: with PII every
// row is schema.ScrubPII; else the mark each row carries in its extra
// column (pos-scrub's member), or, for a row without one or a table
// without that column (raw), the weakest mark of the local table.
func addedMarks(recs []arrow.RecordBatch, pii bool, weakest string, added int64) map[string]int64 {
	if pii {
		return map[string]int64{schema.ScrubPII: added}
	}
	out := map[string]int64{}
	for _, rec := range recs {
		extra := stringCol(rec, "extra")
		for i := range int(rec.NumRows()) {
			mark := weakest
			if extra != nil && extra.IsValid(i) && strings.Contains(extra.Value(i), `"`+schema.ScrubField+`"`) {
				var e map[string]json.RawMessage
				var m string
				if json.Unmarshal([]byte(extra.Value(i)), &e) == nil && json.Unmarshal(e[schema.ScrubField], &m) == nil && m != "" {
					mark = m
				}
			}
			out[mark]++
		}
	}
	return out
}

// mergeScrub is the table's ScrubProperty value with marks added.
func mergeScrub(props iceberg.Properties, marks map[string]int64) (string, error) {
	m, err := ScrubRecord(props)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(addMarks(m, marks))
	return string(b), err
}

// addMarks adds the counts of marks to those of m, which it returns (made
// when nil).
func addMarks(m, marks map[string]int64) map[string]int64 {
	if m == nil {
		m = map[string]int64{}
	}
	for k, v := range marks {
		m[k] += v
	}
	return m
}
