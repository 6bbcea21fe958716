package tools

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// mcp-go's info lines (one a request, one a swept session) are debug lines for us: shown
// only at COMPASS_LOG=debug; its warnings always.
func TestQuieter(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var buf bytes.Buffer
		l := Quieter(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level})))
		l.Info("Sweeping expired session")
		l.With("session", "x").Info("Sweeping expired session, with attributes")
		l.Warn("a warning")
		got := buf.String()
		if swept := strings.Contains(got, "Sweeping"); swept != (level == slog.LevelDebug) {
			t.Errorf("at %s, mcp-go's info lines shown: %v; want %v\n%s", level, swept, level == slog.LevelDebug, got)
		}
		if !strings.Contains(got, "a warning") {
			t.Errorf("at %s, a warning was dropped:\n%s", level, got)
		}
	}
}
