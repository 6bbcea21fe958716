package threads

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/internal/jsonargs"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// maxLine is the longest line of JSON Lines that Import reads.
const maxLine = 16 << 20

// lineFields are the fields a line of JSON Lines may have.
var lineFields = []string{"conversation", "title", "at", "from", "to", "text", "private", "id"}

var errLongLine = errors.New("the line is longer than 16 MiB")

// jsonl imports JSON Lines from br, one message a line, stopping at the first bad line.
func (im *importer) jsonl(br *bufio.Reader) error {
	var buf []byte
	for n := 1; ; n++ {
		var err error
		buf, err = readLine(br, buf[:0])
		if errors.Is(err, errLongLine) {
			return &ImportError{Line: n, Index: -1, Err: err}
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("reading line %d: %w", n, err)
		}
		if len(bytes.TrimSpace(buf)) > 0 {
			// The JSON decoder would turn bad bytes into U+FFFD: refuse them instead.
			if !utf8.Valid(buf) {
				return &ImportError{Line: n, Index: -1, Err: errors.New("the line is not valid UTF-8")}
			}
			l, perr := im.parseLine(buf)
			if perr != nil {
				return &ImportError{Line: n, Index: -1, Err: perr}
			}
			im.add(n, -1, l.conv, l.title, time.Time{}, l.m)
		}
		if err == io.EOF {
			return nil
		}
	}
}

// readLine appends the next line of br to buf, without its line end. At the end of the input
// it returns io.EOF with what was left (maybe nothing); beyond maxLine, errLongLine.
func readLine(br *bufio.Reader, buf []byte) ([]byte, error) {
	for {
		frag, err := br.ReadSlice('\n')
		if len(buf)+len(frag) > maxLine+2 { // +2: the "\r\n" that ends it
			return buf, errLongLine
		}
		buf = append(buf, frag...)
		if err == bufio.ErrBufferFull {
			continue
		}
		buf = bytes.TrimSuffix(buf, []byte("\n"))
		buf = bytes.TrimSuffix(buf, []byte("\r"))
		if len(buf) > maxLine {
			return buf, errLongLine
		}
		return buf, err
	}
}

// line is one line of JSON Lines, read and checked.
type line struct {
	conv, title string
	m           Message
}

// given is a line's fields as they came, before checkLine checks them.
type given struct {
	conv, title, at, from, to, text, id string
	private                             bool
}

// parseLine reads and checks one line; its errors name the field at fault.
func (im *importer) parseLine(raw []byte) (line, error) {
	fields, err := lineObject(raw)
	if err != nil {
		return line{}, err
	}
	g, err := givenFields(fields)
	if err != nil {
		return line{}, err
	}
	return im.checkLine(g)
}

// lineObject reads raw as one JSON object with none but lineFields, so that a field
// misspelled is refused by name rather than silently dropped.
func lineObject(raw []byte) (jsonargs.Fields, error) {
	fields, err := jsonargs.Object(raw)
	switch {
	case errors.Is(err, jsonargs.ErrNotObject):
		return nil, fmt.Errorf("a line is one JSON object, got %s", jsonargs.Kind(raw))
	case err != nil:
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	if unknown := jsonargs.Unknown(fields, lineFields); len(unknown) > 0 {
		for i, u := range unknown {
			unknown[i] = strconv.Quote(u)
		}
		what := "unknown field"
		if len(unknown) > 1 {
			what += "s"
		}
		return nil, fmt.Errorf("%s %s: a line takes conversation, title, at, from, to, text, private and id", what, strings.Join(unknown, ", "))
	}
	return fields, nil
}

// givenFields takes a line's fields by their JSON types, the strings first (of them, the
// three a line needs: conversation, from and text), then private, a boolean. Their values
// are checked by checkLine.
func givenFields(fields jsonargs.Fields) (given, error) {
	var g given
	for _, f := range []struct {
		name     string
		to       *string
		required bool
	}{
		{"conversation", &g.conv, true},
		{"from", &g.from, true},
		{"text", &g.text, true},
		{"to", &g.to, false},
		{"at", &g.at, false},
		{"title", &g.title, false},
		{"id", &g.id, false},
	} {
		ok, err := stringField(fields, f.name, f.to)
		if err != nil {
			return given{}, err
		}
		if !ok && f.required {
			return given{}, fmt.Errorf("field %q is missing: a line needs conversation, from and text", f.name)
		}
	}
	if raw := fields.Get("private"); jsonargs.Given(raw) {
		if err := json.Unmarshal(raw, &g.private); err != nil {
			return given{}, fmt.Errorf("field \"private\" must be true or false, got %s", jsonargs.Kind(raw))
		}
	}
	return g, nil
}

// checkLine checks a line's fields and makes its message: actors with their prefix, the
// time (the import's, if none is given), and an external ID, the one given or else one
// made of its content (contentID), so that importing the same input again adds nothing.
func (im *importer) checkLine(g given) (line, error) {
	l := line{conv: g.conv, m: Message{Text: g.text, Private: g.private}}
	if err := CheckID(l.conv); err != nil {
		return line{}, fmt.Errorf("field \"conversation\": %w", err)
	}
	l.title = CleanTitle(g.title)
	var err error
	if l.m.From, err = prefixedActor(g.from); err != nil {
		return line{}, fmt.Errorf("field \"from\": %w", err)
	}
	if g.to != "" {
		if l.m.To, err = prefixedActor(g.to); err != nil {
			return line{}, fmt.Errorf("field \"to\": %w", err)
		}
	}
	if l.m.Text == "" || len(l.m.Text) > MaxText {
		return line{}, fmt.Errorf("field \"text\": %w, got %d bytes", ErrBadText, len(l.m.Text))
	}
	at := g.at
	l.m.At = im.now
	if at != "" {
		t, err := time.Parse(time.RFC3339Nano, at)
		if err != nil {
			return line{}, fmt.Errorf("field \"at\" must be an RFC 3339 time like 2026-11-08T10:42:00Z, got %q", truncate(at, 40))
		}
		l.m.At = t
		at = t.UTC().Format(time.RFC3339Nano)
	}
	if err := CheckMessage(l.m); err != nil {
		field := "text"
		if errors.Is(err, ErrBadTime) {
			field = "at"
		}
		return line{}, fmt.Errorf("field %q: %w", field, err)
	}
	if g.id != "" {
		if err := CheckExternal(g.id); err != nil {
			return line{}, fmt.Errorf("field \"id\": %w", err)
		}
		l.m.External = g.id
	} else {
		l.m.External = im.contentID(l.conv, at, l.m)
	}
	return l, nil
}

// stringField sets *to from the string field name of fields, reporting whether it was there.
// null counts as absent.
func stringField(fields jsonargs.Fields, name string, to *string) (bool, error) {
	raw := fields.Get(name)
	if !jsonargs.Given(raw) {
		return false, nil
	}
	s, err := jsonargs.String(raw)
	switch {
	case errors.Is(err, jsonargs.ErrSurrogate):
		return false, fmt.Errorf("field %q has %w", name, err)
	case err != nil:
		return false, fmt.Errorf("field %q must be a string, got %s", name, jsonargs.Kind(raw))
	}
	*to = s
	return true, nil
}

// prefixedActor is spaces.ParseActor with the "person:" or "agent:" prefix required.
func prefixedActor(s string) (string, error) {
	if !strings.HasPrefix(s, "person:") && !strings.HasPrefix(s, "agent:") {
		return "", fmt.Errorf("%w, got %q", spaces.ErrBadActor, truncate(s, 80))
	}
	a, err := spaces.ParseActor(s)
	if err != nil {
		return "", err
	}
	return a.String(), nil
}
