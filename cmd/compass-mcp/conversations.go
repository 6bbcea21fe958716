package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/threads"
)

// importConversations reads JSON Lines or a Claude export (FILE, or - for stdin) into the space.
func importConversations(args []string, stdin io.Reader, stdout io.Writer) error {
	if wantsClaudeCode(args) {
		return importClaudeCode(args, stdout)
	}
	var c config
	fs := flags("import", &c)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{"import takes one FILE (JSON Lines, or a Claude export's conversations.json), or - for stdin"}
	}
	in := stdin
	if pos[0] != "-" {
		f, err := os.Open(pos[0])
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	in, done, err := settled(in)
	if err != nil {
		return err
	}
	defer done()
	db, err := c.open()
	if err != nil {
		return err
	}
	defer db.Close()
	start, said := time.Now(), time.Now()
	progress := func(done int) {
		// Said only when it takes longer than a moment, and then every couple of seconds.
		if time.Since(start) > time.Second && time.Since(said) > 2*time.Second {
			fmt.Fprintf(os.Stderr, "compass-mcp: %d messages read…\n", done)
			said = time.Now()
		}
	}
	sum, err := threads.New(db, c.space).Import(in, c.me, progress)
	if err != nil {
		return fmt.Errorf("nothing was imported: %w", err)
	}
	fmt.Fprintf(stdout, "Imported %s and %s into space %s; %s already there.\n",
		plural(sum.Conversations, "conversation"), plural(sum.Messages, "message"), c.space, plural(sum.Skipped, "message"))
	return nil
}

// spoolLimit is how much of an input settled keeps aside before importing it.
const spoolLimit = 64 << 20

// settled returns in, or, unless it is a regular file, what it gives, read ahead into a
// temporary file up to spoolLimit. An import reads its input inside one transaction: input
// that comes slowly (stdin, a pipe) would hold the data file, and keep out the server
// sharing it, for as long as the other end takes to write. An input longer than the limit
// is read ahead that far, then read on from where it is, inside the transaction as before:
// so the space kept aside is bounded, and an input that is refused (a line past 16 MiB, a
// Claude conversation past 64 MiB) is refused without being read whole. done removes the
// copy.
func settled(in io.Reader) (r io.Reader, done func(), err error) {
	if f, ok := in.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return f, func() {}, nil
		}
	}
	tmp, err := os.CreateTemp("", "compass-import-*")
	if err != nil {
		return nil, nil, fmt.Errorf("keeping the input aside until it is all there: %w", err)
	}
	done = func() {
		tmp.Close()
		os.Remove(tmp.Name())
	}
	n, err := io.CopyN(tmp, in, spoolLimit)
	if err != nil && err != io.EOF {
		done()
		return nil, nil, fmt.Errorf("reading the input: %w", err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		done()
		return nil, nil, err
	}
	if n < spoolLimit {
		return tmp, done, nil
	}
	return io.MultiReader(tmp, in), done, nil
}

// say adds one message to a conversation, creating it if new.
func say(args []string, stdout io.Writer) error {
	var c config
	fs := flags("say", &c)
	from := fs.String("from", "", `who says it: person:ID or agent:NAME (default: person:<--for>)`)
	to := fs.String("to", "", "if set, the agent addressed: agent:NAME")
	title := fs.String("title", "", "if set, the conversation's title")
	private := fs.Bool("private", false, "if set, an agent's private step: kept, never shown by the tools")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return usageError{"say takes CONVERSATION TEXT: compass-mcp say pricing 'We settled on 12 a month.'"}
	}
	if err := c.check(); err != nil {
		return err
	}
	if *from == "" {
		*from = spaces.Person(c.me).String()
	}
	m := threads.Message{Text: strings.Join(pos[1:], " "), Private: *private}
	for _, a := range []struct {
		flag string
		val  *string
		to   *string
	}{{"from", from, &m.From}, {"to", to, &m.To}} {
		if *a.val == "" {
			continue
		}
		actor, err := spaces.ParseActor(*a.val)
		if err != nil || !strings.Contains(*a.val, ":") {
			return usageError{fmt.Sprintf("--%s takes person:ID or agent:NAME; got %q", a.flag, *a.val)}
		}
		*a.to = actor.String()
	}
	db, err := c.open()
	if err != nil {
		return err
	}
	defer db.Close()
	saved, err := threads.New(db, c.space).Say(pos[0], *title, m)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Added message %s to conversation %s.\n", saved.ID, pos[0])
	return nil
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
