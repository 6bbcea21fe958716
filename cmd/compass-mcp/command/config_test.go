package command

import (
	"flag"
	"io"
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args, pos []string
		to        string
	}{
		{[]string{"conv", "hello", "--to", "agent:n"}, []string{"conv", "hello"}, "agent:n"},
		{[]string{"--to", "agent:n", "conv", "hello"}, []string{"conv", "hello"}, "agent:n"},
		{[]string{"--", "-conv", "-5% off"}, []string{"-conv", "-5% off"}, ""},
		{[]string{"conv", "--to", "agent:n", "--", "--to", "-x"}, []string{"conv", "--to", "-x"}, "agent:n"},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		to := fs.String("to", "", "")
		pos, err := parse(fs, tc.args)
		if err != nil || !slices.Equal(pos, tc.pos) || *to != tc.to {
			t.Errorf("parse(%q) = %q, to %q, %v; want %q, to %q", tc.args, pos, *to, err, tc.pos, tc.to)
		}
	}
}
