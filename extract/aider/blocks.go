package aider

import (
	"regexp"
	"strings"
)

// The kinds of markdown block Aider writes to .aider.chat.history.md.
const (
	blockHeader    = "header"    // "# aider chat started at <time>"
	blockUser      = "user"      // consecutive "#### " lines: one prompt
	blockAssistant = "assistant" // the reply: everything between the other blocks
	blockStatus    = "status"    // consecutive "> " lines: Aider's own output
)

const headerPrefix = "# aider chat started at "

// maxBlock bounds the bytes one block holds: a longer block (a reply whose
// fence never closes, in a file of hundreds of MB) is cut into pieces of
// this size, each one record, so memory stays bounded.
const maxBlock = 32 << 20

// block is one markdown block: its lines verbatim (without their '\n') and
// where it is in the file.
type block struct {
	kind      string
	line      int64 // 1-based number of the first line
	offset    int64 // byte offset of the first line
	lines     []string
	size      int
	continued bool // the rest of a block cut at maxBlock
}

// text is the block's lines joined, as they are in the file.
func (b *block) text() string { return strings.Join(b.lines, "\n") }

// Aider's edit-block markers (aider/coders/editblock_coder.py).
var (
	searchRE  = regexp.MustCompile(`^<{5,9} SEARCH>?\s*$`)
	dividerRE = regexp.MustCompile(`^={5,9}\s*$`)
	replaceRE = regexp.MustCompile(`^>{5,9} REPLACE\s*$`)
)

// splitter cuts the lines of a chat history into blocks.
//
// Aider writes a prompt as "#### " lines and its own output as "> " lines,
// each ending in two spaces (a markdown line break), and the reply as it
// came, after a blank line. A message of Aider's that spans lines has "> "
// on its first line only and the two spaces after its last, blank lines
// and all. A reply may itself hold "#### " headings and "> " quotes, and
// fences whose contents are anything, so:
//
//   - inside a reply's fence or SEARCH/REPLACE block only a session header,
//     or a prompt line with its two trailing spaces after a blank line,
//     ends the reply;
//   - once the file has shown its trailing spaces (marked), a "#### " line
//     without them is reply text, and a "> " line without them outside a
//     reply opens a multi-line status message that runs to the next line
//     ending in two spaces;
//   - in a file whose trailing blanks an editor stripped (never marked), a
//     "#### " or "> " line opens a prompt or status group when no reply is
//     open, a status group goes on to the next blank line, and the usual
//     status lines (Tokens, Applied edit …) end a reply.
type splitter struct {
	cur    *block
	blanks []string // blank lines inside a reply, kept if the reply goes on
	fence  int      // backticks of the reply's open fence, 0 if none
	inSR   bool     // inside a SEARCH/REPLACE block of the reply
	marked bool     // a line with Aider's trailing spaces was seen
	multi  bool     // inside a multi-line status message
	// prevBlank: the line before was blank. Aider writes a blank line
	// before every prompt, so a prompt line after a blank one ends even a
	// reply whose fence never closed (a reply cut at the token limit).
	prevBlank bool
	emit      func(*block) error
}

// add takes the next complete line (without its '\n').
func (s *splitter) add(raw string, num, off int64) error {
	c := strings.TrimSuffix(raw, "\r")
	reply := s.cur != nil && s.cur.kind == blockAssistant
	blank := strings.TrimSpace(c) == ""
	defer func() { s.prevBlank = blank }()
	user, status := strictUser(c), strictStatus(c)
	if user || status {
		s.marked = true
	}
	switch {
	case strings.HasPrefix(c, headerPrefix):
		if err := s.close(); err != nil {
			return err
		}
		return s.emit(&block{kind: blockHeader, line: num, offset: off, lines: []string{raw}, size: len(raw)})
	case s.multi && !user:
		// The rest of a multi-line message: up to its trailing spaces.
		s.multi = !strings.HasSuffix(c, "  ")
		return s.appendTo(blockStatus, raw, num, off)
	case reply && (s.fence > 0 || s.inSR) && !(user && s.prevBlank):
		return s.appendReply(c, raw, num, off)
	case blank:
		if reply {
			s.blanks = append(s.blanks, raw)
			return nil
		}
		return s.close()
	case user || (!s.marked && !reply && lenientUser(c)):
		return s.group(blockUser, raw, num, off)
	case status || (lenientStatus(c) && (!reply || knownStatus(c))):
		if err := s.group(blockStatus, raw, num, off); err != nil {
			return err
		}
		s.multi = s.marked && !status
		return nil
	case !s.marked && s.cur != nil && s.cur.kind == blockStatus:
		// A multi-line message of Aider's: only its first line has "> ".
		return s.appendTo(blockStatus, raw, num, off)
	case reply:
		return s.appendReply(c, raw, num, off)
	}
	if err := s.close(); err != nil {
		return err
	}
	s.start(blockAssistant, raw, num, off)
	s.track(c)
	return nil
}

// group adds a prompt or status line: to the open group of its kind, or as
// the first line of a new one.
func (s *splitter) group(kind, raw string, num, off int64) error {
	if s.cur != nil && s.cur.kind == kind {
		return s.appendTo(kind, raw, num, off)
	}
	if err := s.close(); err != nil {
		return err
	}
	s.start(kind, raw, num, off)
	return nil
}

func (s *splitter) appendTo(kind, raw string, num, off int64) error {
	if s.cur.size+len(raw) > maxBlock {
		if err := s.cut(); err != nil {
			return err
		}
		s.start(kind, raw, num, off)
		s.cur.continued = true
		return nil
	}
	s.cur.lines = append(s.cur.lines, raw)
	s.cur.size += len(raw) + 1
	return nil
}

func (s *splitter) appendReply(c, raw string, num, off int64) error {
	for _, b := range s.blanks {
		s.cur.lines = append(s.cur.lines, b)
		s.cur.size += len(b) + 1
	}
	s.blanks = s.blanks[:0]
	if s.cur.size+len(raw) > maxBlock {
		// Cut the reply; the fence state goes on into the next piece.
		fence, inSR := s.fence, s.inSR
		if err := s.cut(); err != nil {
			return err
		}
		s.start(blockAssistant, raw, num, off)
		s.cur.continued = true
		s.fence, s.inSR = fence, inSR
	} else {
		s.cur.lines = append(s.cur.lines, raw)
		s.cur.size += len(raw) + 1
	}
	s.track(c)
	return nil
}

func (s *splitter) start(kind, raw string, num, off int64) {
	s.cur = &block{kind: kind, line: num, offset: off, lines: []string{raw}, size: len(raw) + 1}
	s.fence, s.inSR = 0, false
}

// cut emits the open block as it is.
func (s *splitter) cut() error {
	b := s.cur
	s.cur = nil
	for len(b.lines) > 1 && strings.TrimSpace(b.lines[len(b.lines)-1]) == "" {
		b.lines = b.lines[:len(b.lines)-1] // a reply's fence left open
	}
	s.blanks = s.blanks[:0]
	return s.emit(b)
}

// close ends the open block, if any, and emits it.
func (s *splitter) close() error {
	s.multi = false
	if s.cur == nil {
		return nil
	}
	s.fence, s.inSR = 0, false
	return s.cut()
}

// track follows the reply's fences and SEARCH/REPLACE blocks. Inside a
// SEARCH/REPLACE block every line is file content (a markdown file's own
// fences included) until the REPLACE marker.
func (s *splitter) track(c string) {
	if s.inSR {
		if replaceRE.MatchString(c) {
			s.inSR = false
		}
		return
	}
	if searchRE.MatchString(c) {
		s.inSR = true
		return
	}
	t := strings.TrimLeft(c, " ")
	n := len(t) - len(strings.TrimLeft(t, "`"))
	switch {
	case s.fence == 0 && n >= 3:
		s.fence = n
	case s.fence > 0 && n >= s.fence && strings.TrimSpace(t) == strings.Repeat("`", n):
		s.fence = 0
	}
}

// strictUser is a prompt line as Aider writes it: "#### text  ".
func strictUser(c string) bool {
	return strings.HasPrefix(c, "#### ") && strings.HasSuffix(c, "  ")
}

func lenientUser(c string) bool {
	return strings.HasPrefix(c, "#### ") || c == "####"
}

// strictStatus is a status line as Aider writes it: "> text  ".
func strictStatus(c string) bool {
	return (strings.HasPrefix(c, "> ") && strings.HasSuffix(c, "  ")) || c == ">  "
}

func lenientStatus(c string) bool {
	return strings.HasPrefix(c, "> ") || c == ">"
}

// knownStatus are status lines that end a reply even without their
// trailing spaces.
func knownStatus(c string) bool {
	for _, p := range []string{"> Tokens: ", "> Applied edit to ", "> Commit ", "> You can use /undo"} {
		if strings.HasPrefix(c, p) {
			return true
		}
	}
	return false
}
