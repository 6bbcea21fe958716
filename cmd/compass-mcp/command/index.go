package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/semantic"
)

var indexHelp = subcommand{name: "index", args: "[--wait] [--status] --embeddings URL --embeddings-model NAME",
	does: "brings the space's semantic index (search by meaning) up to date and exits; --status says how far it is",
	more: `The semantic tier is off unless --embeddings names an OpenAI-compatible embeddings endpoint
(Ollama: http://127.0.0.1:11434/v1); serve keeps the index up to date in the background, and this
command does it now, a line a step (a bar on a terminal). --wait waits for an endpoint that is
down (trying again for up to 10 minutes) instead of failing at once. The endpoint's key, if it
needs one, is read from COMPASS_EMBEDDINGS_KEY only. Document text goes to that endpoint and
nowhere else (docs/PRIVACY.md).`}

// embeddingFlags adds the semantic tier's flags.
func embeddingFlags(fs *flag.FlagSet, c *config) {
	fs.StringVar(&c.embeddings, "embeddings", env("COMPASS_EMBEDDINGS", ""), "if set, the `URL` of an OpenAI-compatible embeddings endpoint (such as Ollama's http://127.0.0.1:11434/v1): search adds meaning to words; document text is sent there (key, if needed: COMPASS_EMBEDDINGS_KEY) [COMPASS_EMBEDDINGS]")
	fs.StringVar(&c.embeddingsModel, "embeddings-model", env("COMPASS_EMBEDDINGS_MODEL", ""), "the embeddings endpoint's model `name`, such as nomic-embed-text [COMPASS_EMBEDDINGS_MODEL]")
}

// semanticClient is the client --embeddings asks for, nil when it names none.
func (c *config) semanticClient() (*semantic.Client, error) {
	if c.embeddings == "" {
		return nil, nil
	}
	u, err := url.Parse(c.embeddings)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, usageError{"--embeddings: an http:// or https:// URL of an OpenAI-compatible endpoint, such as http://127.0.0.1:11434/v1 (a key goes in COMPASS_EMBEDDINGS_KEY, not the URL)"}
	}
	if c.embeddingsModel == "" {
		return nil, usageError{"--embeddings needs --embeddings-model (or COMPASS_EMBEDDINGS_MODEL): the endpoint's model, such as nomic-embed-text"}
	}
	if ip := net.ParseIP(u.Hostname()); (ip == nil || !ip.IsLoopback()) && u.Hostname() != "localhost" {
		slog.Info("search by meaning: document text is sent to an embeddings endpoint off this machine", "url", u.Redacted())
	}
	return &semantic.Client{URL: c.embeddings, Model: c.embeddingsModel, Key: os.Getenv("COMPASS_EMBEDDINGS_KEY")}, nil
}

// semanticTier is the semantic tier of db, nil when --embeddings names no endpoint; when
// serving, each space's index is kept up to date in the background until stopMeaning.
func (c *config) semanticTier(db kv.DB) (*semantic.Tier, error) {
	client, err := c.semanticClient()
	if client == nil || err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.stopMeaning = cancel
	return semantic.NewTier(ctx, db, client, semantic.Options{}, c.serving), nil
}

func indexCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c config
	fs := flags(indexHelp, &c)
	embeddingFlags(fs, &c)
	wait := fs.Bool("wait", false, "wait for an endpoint that is down, trying again for up to 10 minutes, instead of failing at once")
	status := fs.Bool("status", false, "only say how far the index is: documents embedded of all, passages, model, dimensions")
	if rest, err := parse(fs, args); err != nil {
		return err
	} else if len(rest) > 0 {
		return usageError{fmt.Sprintf("index takes no arguments, got %q", rest)}
	}
	client, err := c.semanticClient()
	if err != nil {
		return err
	}
	if client == nil {
		return usageError{"index needs --embeddings URL and --embeddings-model NAME (or COMPASS_EMBEDDINGS, COMPASS_EMBEDDINGS_MODEL): search by meaning is off without them"}
	}
	db, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ix := semantic.NewIndex(db, c.space, client, semantic.Options{})
	if !*status {
		fi, err := os.Stderr.Stat()
		bar := err == nil && fi.Mode()&os.ModeCharDevice != 0
		last := time.Time{}
		progress := func(done, total int) {
			switch {
			case bar:
				width := 30
				filled := width
				if total > 0 {
					filled = width * done / total
				}
				fmt.Fprintf(stderr, "\r[%s%s] %d of %d documents", strings.Repeat("#", filled), strings.Repeat(" ", width-filled), done, total)
				if done == total {
					fmt.Fprintln(stderr)
				}
			case done == total || time.Since(last) >= 2*time.Second:
				last = time.Now()
				fmt.Fprintf(stderr, "index: %d of %d documents embedded\n", done, total)
			}
		}
		deadline := time.Now().Add(10 * time.Minute)
		for {
			err = ix.Update(ctx, progress)
			var ee *semantic.EndpointError
			if err == nil || !*wait || !errors.As(err, &ee) || time.Now().After(deadline) || ctx.Err() != nil {
				break
			}
			fmt.Fprintf(stderr, "index: the endpoint failed (%v); trying again in 10 s\n", err)
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Second):
			}
		}
		if err != nil {
			return fmt.Errorf("the semantic index is not up to date: %w", err)
		}
	}
	st, err := ix.Status(ctx)
	if err != nil {
		return err
	}
	dims := "not known yet"
	if st.Dims > 0 {
		dims = fmt.Sprint(st.Dims)
	}
	fmt.Fprintf(stdout, "Semantic index of %s: %d of %d documents embedded (%s), model %s, dimensions %s.\n", c.space, st.Embedded, st.Documents, Plural(st.Passages, "passage"), st.Model, dims)
	return nil
}
