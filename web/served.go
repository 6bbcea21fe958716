package web

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
)

// The page keeps two things of its own in the data file:
//
//	web/store          this store's random id (see StoreID)
//	web/pages/<random> a page served on this store, one record each (see Announce)
//
// The sign-in codes and signed-in browsers beside them, under web/codes and web/sessions,
// are package access's (see its Layout).
var (
	webBucket = []byte("web")
	storeKey  = []byte("store")
	pageKey   = []byte("page")  // the one page record of older versions, read still
	pagesKey  = []byte("pages") // a record each page served
)

// storePath answers with the store's id, so that another compass-mcp on the same data
// file can tell that the page at an address is this store's, not another's.
const storePath = "/.well-known/compass-store"

// StoreID returns the data file's random id, made on first use. A copy of the file (a
// backup) has the same id; fileID tells the two apart.
func StoreID(ctx context.Context, db kv.DB) (string, error) {
	var id string
	err := db.View(ctx, func(tx kv.Tx) error {
		if w := tx.Bucket(webBucket); w != nil {
			id = string(w.Get(storeKey))
		}
		return nil
	})
	if err != nil || id != "" {
		return id, err
	}
	err = db.Update(ctx, func(tx kv.Tx) error {
		w, err := tx.CreateBucketIfNotExists(webBucket)
		if err != nil {
			return err
		}
		if id = string(w.Get(storeKey)); id == "" {
			var b [16]byte
			rand.Read(b[:])
			id = hex.EncodeToString(b[:])
			return w.Put(storeKey, []byte(id))
		}
		return nil
	})
	return id, err
}

type announced struct {
	URL string    `json:"url"`
	At  time.Time `json:"at"`
}

// maxAnnounced is how many pages' records a data file keeps: the oldest go past it (a page
// that stopped without withdrawing its record, killed, leaves one).
const maxAnnounced = 32

// Announce records in the data file that the page is served at url (like
// http://127.0.0.1:7411), so that other compass-mcp processes on the file link to it. Every
// page has a record of its own: the one withdraw removes, when the page stops, is this
// one's only, so that a page that comes and goes leaves the others announced.
//
// withdraw runs as the page stops, when the context that served it is done: it has its own.
func Announce(ctx context.Context, db kv.DB, url string) (withdraw func() error, err error) {
	if _, err := StoreID(ctx, db); err != nil {
		return nil, err
	}
	var b [8]byte
	rand.Read(b[:])
	key := []byte(hex.EncodeToString(b[:]))
	raw, _ := json.Marshal(announced{URL: strings.TrimRight(url, "/"), At: time.Now()})
	err = db.Update(ctx, func(tx kv.Tx) error {
		pages, err := pagesBucket(tx)
		if err != nil {
			return err
		}
		if err := pages.Put(key, raw); err != nil {
			return err
		}
		all := records(pages)
		for _, old := range all[min(len(all), maxAnnounced):] {
			if err := pages.Delete(old.key); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return db.Update(ctx, func(tx kv.Tx) error {
			pages, err := pagesBucket(tx)
			if err != nil {
				return err
			}
			return pages.Delete(key)
		})
	}, nil
}

func pagesBucket(tx kv.Tx) (kv.Bucket, error) {
	w, err := tx.CreateBucketIfNotExists(webBucket)
	if err != nil {
		return nil, err
	}
	return w.CreateBucketIfNotExists(pagesKey)
}

type record struct {
	key []byte
	announced
}

// records is the pages announced in b, newest first.
func records(b kv.Bucket) []record {
	var out []record
	b.ForEach(func(k, v []byte) error {
		var a announced
		if json.Unmarshal(v, &a) == nil && a.URL != "" {
			out = append(out, record{bytes.Clone(k), a})
		}
		return nil
	})
	slices.SortFunc(out, func(a, b record) int { return b.At.Compare(a.At) })
	return out
}

// fileID names the data file at path by where it is: a hash of its absolute path with links
// resolved, so that a page can say which file it serves without saying where that is.
func fileID(path string) string {
	if path == "" {
		return ""
	}
	if !strings.Contains(path, "://") { // a file's path, not a database's URL
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		if real, err := filepath.EvalSymlinks(path); err == nil {
			path = real
		}
	}
	h := sha256.Sum256([]byte(path))
	return hex.EncodeToString(h[:16])
}

// Served returns the address of the newest page announced on the data file at path (open
// as db) that is still served and answers with this store's id and this file: a page of
// another store, or of a copy of this one, or none, is not linked to. The pages announced
// are asked at once, each for half a second at most.
func Served(ctx context.Context, db kv.DB, path string) (string, bool) {
	var (
		found []announced
		store string
	)
	err := db.View(ctx, func(tx kv.Tx) error {
		found, store = nil, "" // the View may run again
		w := tx.Bucket(webBucket)
		if w == nil {
			return nil
		}
		store = string(w.Get(storeKey))
		if pages := w.Bucket(pagesKey); pages != nil {
			for _, r := range records(pages) {
				found = append(found, r.announced)
			}
		}
		var a announced // as compass-mcp before 0.2 announced its page: one record for all
		if raw := w.Get(pageKey); raw != nil && json.Unmarshal(raw, &a) == nil && a.URL != "" {
			found = append(found, a)
		}
		return nil
	})
	if err != nil || len(found) == 0 || store == "" {
		return "", false
	}
	alive := make([]chan bool, len(found))
	for i, a := range found {
		alive[i] = make(chan bool, 1)
		go func() { alive[i] <- answers(ctx, a.URL, store+" "+fileID(path)) }()
	}
	url, ok := "", false
	for i, a := range found {
		if <-alive[i] && !ok {
			url, ok = a.URL, true
		}
	}
	return url, ok
}

// answers reports whether the page at url says it serves the store and file of id store.
func answers(ctx context.Context, url, store string) bool {
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+storePath, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 100))
	return resp.StatusCode == http.StatusOK && string(body) == store
}

// storeID answers from memory: the process asking may be holding the data file while it
// asks (it checks the page in the middle of a tool call), so this must not wait for it.
func (s *Site) storeID(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, s.store+" "+fileID(s.cfg.Path))
}
