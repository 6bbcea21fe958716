// Package reliability holds tests only: they drive the built compass-mcp binary as its
// users' clients do, and as nobody should: killed mid-write, written by many clients at
// once, shared by two processes, and fed every kind of bad input. The figures they print
// (go test -v ./e2e/reliability) are in docs/RELIABILITY.md, with the commands behind them.
package reliability
