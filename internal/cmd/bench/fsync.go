package main

import (
	"context"
	"os"
	"path/filepath"
	"time"
)

// fsyncCost times a 4 KB write and fsync in dir, n times: the floor under every durable
// write (a bbolt commit syncs twice: its pages, then its meta page).
func fsyncCost(dir string, n int) (summary, error) {
	f, err := os.Create(filepath.Join(dir, "fsync-probe"))
	if err != nil {
		return summary{}, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	page := make([]byte, 4096)
	s := newSeries(1)
	for i := range n {
		page[0] = byte(i)
		start := time.Now()
		if _, err := f.WriteAt(page, int64(i%16)*4096); err != nil {
			return summary{}, err
		}
		if err := f.Sync(); err != nil {
			return summary{}, err
		}
		s.add(0, time.Since(start))
	}
	return s.summary(), nil
}

func measureFsync(_ context.Context, o *options, _ binaries, r *report) error {
	n := 200
	if o.quick {
		n = 20
	}
	s, err := fsyncCost(o.work, n)
	r.fsync = s
	return err
}
