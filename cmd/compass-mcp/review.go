package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/tools"
)

// The person's side of who wrote what and of the review of the agents' changes: docs blame,
// and (below) proposals and comments. docs.go hands these subcommands here.

const reviewUsage = `

Who wrote each line:
  docs blame DOC                         every line with the version that last changed it`

// reviewCommands are the docs subcommands of this file, each with its own flags.
var reviewCommands = map[string]func(sub string, args []string, stdin io.Reader, stdout, stderr io.Writer) error{
	"blame": blameCmd,
}

// reviewArgs parses a review subcommand's flags (define adds its own) and positional
// arguments, of which it must have least to most (words says which, for the refusal), and
// opens the data; close closes it.
func reviewArgs(sub string, args []string, stdout, stderr io.Writer, least, most int, words string, define func(*flag.FlagSet)) (p docsSession, pos []string, close func(), err error) {
	var c config
	fs := flags("docs "+sub, &c)
	if define != nil {
		define(fs)
	}
	if pos, err = parse(fs, args); err != nil {
		return p, nil, nil, err
	}
	if len(pos) < least || len(pos) > most {
		return p, nil, nil, usageError{fmt.Sprintf("docs %s takes %s; got %s", sub, words, plural(len(pos), "argument"))}
	}
	file, err := c.open()
	if err != nil {
		return p, nil, nil, err
	}
	p = docsSession{store: docstore.New(file, c.space), db: file, me: docstore.Author{By: spaces.Person(c.me).String()}, out: stdout, errs: stderr}
	return p, pos, func() { file.Close() }, nil
}

// blameCmd prints every line of a document with the version that last changed it.
func blameCmd(sub string, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	p, pos, done, err := reviewArgs(sub, args, stdout, stderr, 1, 1, "a document (docs blame DOC)", nil)
	if err != nil {
		return err
	}
	defer done()
	bl, err := p.store.Blame(pos[0])
	if err != nil {
		return p.explain(err, pos[0])
	}
	d := bl.Document
	fmt.Fprintf(p.out, "%s (%s), version %d, %s, each with the version that last changed it:\n", d.Title, d.ID, d.Version, plural(len(bl.Lines), "line"))
	return p.store.Names(func(names spaces.Names) {
		who := map[int]string{}
		wide := map[string]int{}
		for n, v := range bl.Versions {
			who[n] = v.Author.Show(names)
			wide["who"] = max(wide["who"], len([]rune(who[n])))
			wide["kind"] = max(wide["kind"], len(v.Kind))
		}
		num := len(fmt.Sprint(len(bl.Lines)))
		ver := len(fmt.Sprint(d.Version)) + 1
		for _, r := range bl.Runs {
			v := bl.Versions[r.Version]
			head := fmt.Sprintf("%-*s %-*s %s%s %s", ver, fmt.Sprintf("v%d", v.Number), wide["kind"], v.Kind, who[r.Version], strings.Repeat(" ", wide["who"]-len([]rune(who[r.Version]))), v.At.Local().Format(tools.TimeLayout))
			for i := range r.Count {
				n := r.First + i
				fmt.Fprintf(p.out, "%*d  %s | %s\n", num, n, head, bl.Lines[n-1])
			}
		}
	})
}
