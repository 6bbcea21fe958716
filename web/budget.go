package web

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// A render's budget: the CPU time it may use, the wall time it may take, the HTML it may
// make, and the context that ends it when nobody waits for it any more. goldmark can't be
// told to stop, so the budget is checked from inside it, at every place goldmark calls
// code of ours: the reader its block parser reads lines through (budgetReader), an inline
// parser that goldmark asks first at every delimiter and bracket (checkpoint), the
// paragraph transformer that finds link reference definitions (boundedRefs), the AST
// transformers, and the writer the HTML is written to (budgetWriter). When the budget is
// spent a check panics with stopRender, which render recovers: goldmark keeps no state
// across parses but the parser.Context render made and drops.

var (
	// errOverBudget is what a render stops with when it used its CPU time.
	errOverBudget = errors.New("the render used its time")
	// errOverWall is what a render stops with when it took its wall time: the machine was
	// too busy to give it its CPU time, and another time it may finish.
	errOverWall = errors.New("the render took too long on a busy machine")
	// errTooMuchHTML is what a render stops with when it made more HTML than a page may hold.
	errTooMuchHTML = errors.New("the render made too much HTML")
)

// stopRender is what a check panics with; err says why.
type stopRender struct{ err error }

type budget struct {
	ctx      context.Context
	cpu      func() time.Duration // the render's thread's CPU clock
	cpuStart time.Duration
	limit    time.Duration // the CPU it may use
	wallEnd  time.Time     // and when it must end
	lastWall time.Time     // when cpu was last read
	spent    time.Duration // CPU used, as last read
	ticks    uint32
	html     int // HTML bytes written so far
	maxHTML  int
}

func newBudget(ctx context.Context, limit time.Duration, maxHTML int) *budget {
	clock := threadCPU()
	now := time.Now()
	return &budget{ctx: ctx, cpu: clock, cpuStart: clock(), limit: limit, wallEnd: now.Add(wallFor(limit)),
		lastWall: now, maxHTML: maxHTML}
}

// wallFor is the wall time a render with a CPU budget of limit may take: on a machine so
// busy that a render gets less than 1/wallTimes of a core, it ends anyway, and frees its
// slot (and its HTML is not kept: see renderWithin).
func wallFor(limit time.Duration) time.Duration { return time.Duration(wallTimes * float64(limit)) }

// wallTimes is a render's wall time over its CPU time; a var for tests.
var wallTimes = 4.0

// over returns why the render must stop, or nil. The thread's CPU clock is a system call:
// it is read at most once a millisecond, which is also all the CPU time can have grown by.
func (b *budget) over() error {
	if err := b.ctx.Err(); err != nil {
		return err
	}
	now := time.Now()
	if now.After(b.wallEnd) {
		return errOverWall
	}
	if now.Sub(b.lastWall) >= time.Millisecond {
		b.lastWall, b.spent = now, b.cpu()-b.cpuStart
	}
	if b.spent >= b.limit {
		return errOverBudget
	}
	return nil
}

// check stops the render if its budget is spent; it looks at the clock one call in 8, the
// work between two calls being small (a line looked at, a delimiter tried).
func (b *budget) check() {
	b.ticks++
	if b.ticks&7 == 0 {
		b.checkNow()
	}
}

func (b *budget) checkNow() {
	if err := b.over(); err != nil {
		panic(stopRender{err})
	}
}

// budgetKey holds a parse's budget in its parser.Context, for the hooks goldmark calls.
var budgetKey = parser.NewContextKey()

func budgetOf(pc parser.Context) *budget {
	b, _ := pc.Get(budgetKey).(*budget)
	if b == nil {
		// A parse without a budget (none is made outside render): unbounded, as goldmark is.
		b = &budget{ctx: context.Background(), cpu: func() time.Duration { return 0 }, limit: 1<<63 - 1, wallEnd: time.Now().Add(1 << 62)}
		pc.Set(budgetKey, b)
	}
	return b
}

// budgetReader is the reader goldmark's block parsing reads through: every line it looks
// at, and every time it measures where it is on a line (which costs the line's length:
// 2 MiB of nested > took hours that way), is a check.
type budgetReader struct {
	text.Reader
	b *budget
}

func (r budgetReader) PeekLine() ([]byte, text.Segment) { r.b.check(); return r.Reader.PeekLine() }
func (r budgetReader) LineOffset() int                  { r.b.check(); return r.Reader.LineOffset() }
func (r budgetReader) AdvanceLine()                     { r.b.check(); r.Reader.AdvanceLine() }
func (r budgetReader) Advance(n int)                    { r.b.check(); r.Reader.Advance(n) }

// checkpoint is an inline parser that parses nothing: goldmark asks it first at every byte
// another inline parser triggers on, so the budget is checked between any two links,
// emphases, code spans or raw HTML tried. (A link destination that never closes is looked
// for to the end of its block at every ]: 256 KiB of "[a](" took 31 s.)
type checkpoint struct{}

func (checkpoint) Trigger() []byte { return []byte("[]!*_~`<&\\") }

func (checkpoint) Parse(_ ast.Node, _ text.Reader, pc parser.Context) ast.Node {
	budgetOf(pc).check()
	return nil
}

// maxRefLines is the most lines a paragraph that may hold link reference definitions is
// searched for them: goldmark removes each definition it finds by copying the lines after
// it, so a paragraph of n definitions costs n² (a megabyte of "[a]:" lines, 6 s).
const maxRefLines = 4096

// boundedRefs is goldmark's link reference definition transformer, refused a paragraph
// that would cost it too much: the render stops there and the rest is shown as text.
type boundedRefs struct{}

func (boundedRefs) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	b := budgetOf(pc)
	b.checkNow()
	if node.Lines().Len() > maxRefLines {
		if first := node.Lines().At(0); first.Len() > 0 {
			if l, ok := indent3(first.Value(reader.Source())); ok && len(l) > 0 && l[0] == '[' {
				panic(stopRender{errOverBudget})
			}
		}
	}
	parser.LinkReferenceParagraphTransformer.Transform(node, reader, pc)
}

// budgetWriter is where goldmark writes a piece's HTML (through its own 4 KiB buffer): each
// write is a check, and counts against the HTML the render may make.
type budgetWriter struct {
	b   *budget
	out io.Writer
}

func (w budgetWriter) Write(p []byte) (int, error) {
	w.b.html += len(p)
	if w.b.html > w.b.maxHTML {
		panic(stopRender{errTooMuchHTML})
	}
	w.b.checkNow()
	return w.out.Write(p)
}

// budgetRead is what bluemonday reads a piece's HTML through, 16 KiB at a time, each a
// check: its cost grows with the HTML's length and nesting.
type budgetRead struct {
	b  *budget
	in io.Reader
}

func (r budgetRead) Read(p []byte) (int, error) {
	if err := r.b.over(); err != nil {
		return 0, err
	}
	return r.in.Read(p[:min(len(p), 16<<10)])
}
