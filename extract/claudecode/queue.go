package claudecode

import (
	"cmp"
	"strings"

	"github.com/pos-lake/pos/schema"
)

// Claude Code keeps what the user types while it is working (and the
// notifications of background tasks) in an input queue, and logs the
// queue in queue-operation lines:
//
//   - enqueue (with the text as content): the prompt waits;
//   - dequeue: it is taken off to start the next turn, written as a user
//     line of its own;
//   - popAll: the queue went back into the input box, to be edited; what
//     is sent after is a user line;
//   - remove: it was taken into the running turn. Later versions then
//     write it as a queued_command attachment (queuedLine) and give the
//     remove a reason (absorbed_mid_turn, or delivered_to_agent,
//     agent_stopped for a notification another agent took or nobody
//     did); earlier ones (2.1.39) write nothing else, so the enqueue holds
//     the only copy of words the model read and answered.
//
// A prompt that only the queue holds becomes a message of its own, placed
// where it was taken in; one a user line or an attachment carries is not
// counted again.
type queuedEntry struct {
	text string
	ts   string        // when it was typed: part of the message's id
	src  schema.Source // the enqueue line, which holds the text
	at   string        // when it was taken into the turn (the remove)
	sess string
}

// queueLine follows one queue-operation line.
func (r *run) queueLine(fs *fileState, l *line, rec *schema.Record) {
	switch l.Operation {
	case "enqueue":
		c, err := parseContent(l.Content)
		if err != nil {
			return
		}
		text, _ := userParts(c)
		if strings.TrimSpace(text) == "" {
			return
		}
		fs.queued = append(fs.queued, queuedEntry{text: strings.Clone(text), ts: strings.Clone(l.Timestamp), src: *rec.Source,
			sess: strings.Clone(cmp.Or(l.SessionID, fs.session))})
	case "dequeue":
		if len(fs.queued) > 0 {
			fs.queued = fs.queued[1:]
		}
	case "popAll":
		fs.queued = nil
	case "remove":
		i := fs.takenIndex(stringContent(l.Content))
		if i < 0 {
			return
		}
		e := fs.queued[i]
		fs.queued = append(fs.queued[:i:i], fs.queued[i+1:]...)
		if l.Reason != "" && l.Reason != "absorbed_mid_turn" {
			return // not read by this thread's model
		}
		e.at = strings.Clone(l.Timestamp)
		fs.absorbed = append(fs.absorbed, e)
	}
}

// takenIndex is the entry a remove takes: the one with its text when it
// names one, else the oldest prompt a person typed (the queue hands those
// to the running turn; a notification waits for the turn's end), else
// the oldest.
func (fs *fileState) takenIndex(text string) int {
	if len(fs.queued) == 0 {
		return -1
	}
	if t := strings.TrimSpace(text); t != "" {
		for i, e := range fs.queued {
			if strings.TrimSpace(e.text) == t {
				return i
			}
		}
		return -1
	}
	for i, e := range fs.queued {
		if role, _, _ := classifyUserText(e.text); role == schema.RoleUser {
			return i
		}
	}
	return 0
}

// carried drops the queued prompt a user line or a queued_command
// attachment carries itself: the line is its message.
func (fs *fileState) carried(text string) {
	t := strings.TrimSpace(text)
	if t == "" {
		return
	}
	for i, e := range fs.absorbed {
		if strings.TrimSpace(e.text) == t {
			fs.absorbed = append(fs.absorbed[:i:i], fs.absorbed[i+1:]...)
			return
		}
	}
	for i, e := range fs.queued {
		if strings.TrimSpace(e.text) == t {
			fs.queued = append(fs.queued[:i:i], fs.queued[i+1:]...)
			return
		}
	}
}

// absorbedMessages queues the messages of the prompts taken into the
// running turn that no line carried: called before the turn's next
// assistant line (an attachment that carries one comes before it, after
// the tool result the remove preceded) and at the end of the file.
func (r *run) absorbedMessages(fs *fileState) error {
	for _, e := range fs.absorbed {
		rec := schema.New(schema.KindMessage)
		rec.Platform = platform
		rec.NativeType = "queue-operation/enqueue"
		rec.SessionID = e.sess
		rec.ID = schema.ID(platform, "queued", cmp.Or(e.sess, fs.session), e.ts, e.text)
		rec.ParentID = fs.lastMain
		src := e.src
		rec.Source = &src
		rec.Completeness = schema.CompleteFull
		r.opt.Stamp(rec, platform, AdapterVersion)
		if ts, ok := parseTS(cmp.Or(e.at, e.ts)); ok {
			rec.TS, rec.TSPrecision = ts, schema.PrecisionExact
		}
		rec.Role, rec.ContentType, rec.Text = classifyUserText(e.text)
		// Not a place to resume from: a read starting at the remove
		// would not know the text, so the open exchange stays where it
		// was, and a read of it again makes the same message.
		fs.sawMain = true
		if err := r.queue(fs, rec); err != nil {
			return err
		}
	}
	clear(fs.absorbed)
	fs.absorbed = fs.absorbed[:0]
	return nil
}

// queueCarrier is the text of a line that would carry a queued prompt
// itself: a user line's text (not a tool result), or a queued_command
// attachment's prompt.
func queueCarrier(l *line) string {
	if text, _, ok := queuedPrompt(l); ok {
		return text
	}
	if l.Type != "user" || l.Message == nil {
		return ""
	}
	c, err := parseContent(l.Message.Content)
	if err != nil {
		return ""
	}
	text, results := userParts(c)
	if len(results) > 0 {
		return ""
	}
	return text
}
